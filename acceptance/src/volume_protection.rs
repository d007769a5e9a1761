//! A stand-in for the pv- and pvc-protection controllers, which a bare control plane
//! (`make test-real`) does not run and the test server does not model: without them a deleted
//! PersistentVolume or claim stays Terminating for ever behind its `kubernetes.io/pv-protection`
//! / `pvc-protection` finalizer. While a [`VolumeProtection`] lives, a thread removes that
//! finalizer from deleted volumes and claims whose name or namespace contains one of its
//! markers (the test's run ids), as the controllers would once no Pod uses them (no Pod ever
//! runs in the tests that use it): a moment ([`RELEASE_DELAY`]) after the delete, so that
//! whatever waits for the object to go really waits. On a cluster that runs the controllers it
//! does nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::json;

use crate::Cluster;
use crate::requests;

/// The finalizers the protection controllers own.
const PROTECTION: [&str; 2] = ["kubernetes.io/pv-protection", "kubernetes.io/pvc-protection"];

/// How often the stand-in looks.
const PERIOD: Duration = Duration::from_millis(300);

/// How long after a delete the stand-in releases the object: a real controller answers soon,
/// but not at once.
const RELEASE_DELAY: Duration = Duration::from_secs(1);

/// Runs the stand-in until dropped.
pub struct VolumeProtection {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl VolumeProtection {
    /// Starts the stand-in for objects named with one of `markers`, unless `cluster` runs the
    /// real controllers.
    pub fn start(cluster: &Cluster, markers: &[&str]) -> VolumeProtection {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = (!cluster.removes_volume_finalizers()).then(|| {
            let stop = stop.clone();
            let kubeconfig = cluster.kubeconfig().to_path_buf();
            let markers: Vec<String> = markers.iter().map(|m| m.to_string()).collect();
            std::thread::spawn(move || {
                // In the test process, not through kubectl: a kubectl start costs ~60 ms of
                // CPU, and the stand-in looks a few times a second for the whole test.
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the volume-protection stand-in");
                let client = runtime
                    .block_on(client(&kubeconfig))
                    .unwrap_or_else(|e| panic!("volume-protection stand-in: {e}"));
                // When each object was first seen being deleted, by uid.
                let mut deleting = HashMap::new();
                while !stop.load(Ordering::Relaxed) {
                    // Not while another test counts the requests it makes (see `requests`).
                    let traffic = requests::shared();
                    runtime.block_on(release_deleted(&client, &markers, &mut deleting));
                    drop(traffic);
                    std::thread::sleep(PERIOD);
                }
            })
        });
        VolumeProtection { stop, thread }
    }
}

impl Drop for VolumeProtection {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A client for the cluster `kubeconfig` names, as its current context.
async fn client(kubeconfig: &Path) -> Result<kube::Client, String> {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let file = Kubeconfig::read_from(kubeconfig).map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    kube::Client::try_from(config).map_err(|e| e.to_string())
}

/// One pass: every deleted volume or claim of the markers loses its protection finalizer,
/// [`RELEASE_DELAY`] after it was first seen being deleted. A failed request is left to the
/// next pass (an object already gone is no longer listed).
async fn release_deleted(client: &kube::Client, markers: &[String], deleting: &mut HashMap<String, Instant>) {
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    if let Ok(list) = volumes.list(&ListParams::default()).await {
        for volume in list.items {
            if let Some((name, patch)) = release(&volume.metadata, markers, deleting) {
                let _ = volumes.patch(&name, &PatchParams::default(), &patch).await;
            }
        }
    }
    let claims: Api<PersistentVolumeClaim> = Api::all(client.clone());
    if let Ok(list) = claims.list(&ListParams::default()).await {
        for claim in list.items {
            let namespace = claim.metadata.namespace.clone().unwrap_or_default();
            if let Some((name, patch)) = release(&claim.metadata, markers, deleting) {
                let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &namespace);
                let _ = claims.patch(&name, &PatchParams::default(), &patch).await;
            }
        }
    }
}

/// The object's name and the patch that drops its protection finalizer, when it is one of the
/// markers', is being deleted, still has that finalizer, and was first seen so at least
/// [`RELEASE_DELAY`] ago.
fn release(
    meta: &ObjectMeta,
    markers: &[String],
    deleting: &mut HashMap<String, Instant>,
) -> Option<(String, Patch<serde_json::Value>)> {
    let name = meta.name.as_deref().unwrap_or_default();
    let namespace = meta.namespace.as_deref();
    let ours = markers
        .iter()
        .any(|m| name.contains(m.as_str()) || namespace.is_some_and(|ns| ns.contains(m.as_str())));
    let finalizers = meta.finalizers.as_deref().unwrap_or_default();
    if !ours
        || meta.deletion_timestamp.is_none()
        || !finalizers.iter().any(|f| PROTECTION.contains(&f.as_str()))
    {
        return None;
    }
    let uid = meta.uid.clone().unwrap_or_default();
    if deleting.entry(uid).or_insert_with(Instant::now).elapsed() < RELEASE_DELAY {
        return None;
    }
    let kept: Vec<&String> = finalizers
        .iter()
        .filter(|f| !PROTECTION.contains(&f.as_str()))
        .collect();
    Some((
        name.to_string(),
        Patch::Merge(json!({"metadata": {"finalizers": kept}})),
    ))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn claim(name: &str, deleted: bool, finalizers: &[&str]) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some("default".to_string()),
            uid: Some(format!("uid-{name}")),
            deletion_timestamp: deleted.then(|| Time(Default::default())),
            finalizers: Some(finalizers.iter().map(|f| f.to_string()).collect()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn only_a_deleted_object_of_the_markers_loses_only_the_protection_finalizer_after_the_delay() {
        let markers = ["run1".to_string()];
        let mut deleting = HashMap::new();
        let finalizers = ["kubernetes.io/pvc-protection", "example.com/keep"];
        let ours = claim("data-run1", true, &finalizers);
        assert!(release(&claim("data-other", true, &finalizers), &markers, &mut deleting).is_none());
        assert!(release(&claim("data-run1", false, &finalizers), &markers, &mut deleting).is_none());
        assert!(
            release(
                &claim("data-run1", true, &["example.com/keep"]),
                &markers,
                &mut deleting
            )
            .is_none()
        );
        // First seen being deleted now: not before RELEASE_DELAY.
        assert!(release(&ours, &markers, &mut deleting).is_none());
        *deleting.get_mut("uid-data-run1").expect("seen") -= RELEASE_DELAY;
        let (name, patch) = release(&ours, &markers, &mut deleting).expect("released");
        assert_eq!(name, "data-run1");
        let Patch::Merge(body) = patch else {
            panic!("a merge patch")
        };
        assert_eq!(body, json!({"metadata": {"finalizers": ["example.com/keep"]}}));
    }
}
