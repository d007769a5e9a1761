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

use serde_json::{Value, json};

use crate::Cluster;

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
                // When each object was first seen being deleted, by uid.
                let mut deleting = HashMap::new();
                while !stop.load(Ordering::Relaxed) {
                    release_deleted(&kubeconfig, &markers, &mut deleting);
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

/// One pass: every deleted volume or claim of the markers loses its protection finalizer,
/// [`RELEASE_DELAY`] after it was first seen being deleted.
fn release_deleted(kubeconfig: &Path, markers: &[String], deleting: &mut HashMap<String, Instant>) {
    let kubectl = |args: &[&str]| crate::cluster::kubectl_with(kubeconfig, args);
    let listed = kubectl(&[
        "get",
        "persistentvolumes,persistentvolumeclaims",
        "-A",
        "-o",
        "json",
    ]);
    let Ok(list) = serde_json::from_str::<Value>(&listed.stdout) else {
        return;
    };
    for item in list["items"].as_array().into_iter().flatten() {
        let meta = &item["metadata"];
        let (name, namespace) = (
            meta["name"].as_str().unwrap_or_default(),
            meta["namespace"].as_str(),
        );
        let ours = markers
            .iter()
            .any(|m| name.contains(m.as_str()) || namespace.is_some_and(|ns| ns.contains(m.as_str())));
        let finalizers: Vec<&str> = meta["finalizers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !ours || meta["deletionTimestamp"].is_null() || !finalizers.iter().any(|f| PROTECTION.contains(f))
        {
            continue;
        }
        let uid = meta["uid"].as_str().unwrap_or_default().to_string();
        if deleting.entry(uid).or_insert_with(Instant::now).elapsed() < RELEASE_DELAY {
            continue;
        }
        let kept: Vec<&str> = finalizers
            .into_iter()
            .filter(|f| !PROTECTION.contains(f))
            .collect();
        let patch = json!({"metadata": {"finalizers": kept}}).to_string();
        let resource = if namespace.is_some() {
            "persistentvolumeclaim"
        } else {
            "persistentvolume"
        };
        let mut args = vec!["patch", resource, name, "--type=merge", "-p", patch.as_str()];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        // A claim or volume already gone is fine: the next pass no longer sees it.
        let _ = kubectl(&args);
    }
}
