//! The controllers the recorded cluster ran, reduced to what clients can observe: namespace
//! contents (`default` ServiceAccount, `kube-root-ca.crt`), namespace deletion, foreground
//! deletion, and the Deployment controller (its model lives in [`crate::rollout`]).

use std::time::Duration;

use serde_json::{Value, json};

use crate::meta;
use crate::resources::{self, ResourceType};
use crate::state::{Rollout, Shared};
use crate::store::Store;

/// How long the Deployment controller takes to notice a write.
const ROLLOUT_DELAY: Duration = Duration::from_millis(300);
/// How long the garbage collector takes to finish a foreground deletion.
const FOREGROUND_DELAY: Duration = Duration::from_millis(200);

const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// What the serviceaccount controller and the root-CA publisher put into a new namespace (in
/// that order, as in most recorded runs).
pub fn populate_namespace(store: &mut Store, ca_pem: &str, namespace: &str, time: &str) {
    let sa = json!({
        "kind": "ServiceAccount", "apiVersion": "v1",
        "metadata": {"name": "default", "namespace": namespace, "uid": meta::new_uid(), "creationTimestamp": time},
    });
    store.put(&resources::SERVICEACCOUNTS.key(), sa);
    let cm = json!({
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {
            "name": "kube-root-ca.crt", "namespace": namespace, "uid": meta::new_uid(),
            "creationTimestamp": time,
            "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
            "managedFields": [{
                "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": time,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:ca.crt": {}}, "f:metadata": {"f:annotations": {".": {}, "f:kubernetes.io/description": {}}}},
            }],
        },
        "data": {"ca.crt": ca_pem},
    });
    store.put(&resources::CONFIGMAPS.key(), cm);
}

fn spawn(fut: impl std::future::Future<Output = ()> + Send + 'static) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(fut);
    }
}

/// Empties a Terminating namespace, then removes it.
pub fn schedule_namespace_cleanup(st: &Shared, namespace: &str) {
    let st = st.clone();
    let namespace = namespace.to_string();
    spawn(async move {
        tokio::time::sleep(st.namespace_grace / 4).await;
        {
            let mut store = st.store();
            for rt in resources::ALL.iter().filter(|r| r.namespaced) {
                let names: Vec<String> = store
                    .list(&rt.key(), Some(&namespace))
                    .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
                    .collect();
                for name in names {
                    store.remove(&rt.key(), &namespace, &name);
                }
            }
        }
        st.written.notify_one();
        tokio::time::sleep(st.namespace_grace * 3 / 4).await;
        st.store().remove(&resources::NAMESPACES.key(), "", &namespace);
        st.written.notify_one();
    });
}

/// Lets the garbage collector finish a foreground deletion (there are never dependents).
pub fn schedule_foreground_removal(st: &Shared, rt: ResourceType, namespace: &str, name: &str) {
    let st = st.clone();
    let (namespace, name) = (namespace.to_string(), name.to_string());
    spawn(async move {
        tokio::time::sleep(FOREGROUND_DELAY).await;
        st.store().remove(&rt.key(), &namespace, &name);
        st.written.notify_one();
    });
}

/// Lets the Deployment controller ([`crate::rollout`]) catch up with a Deployment shortly after
/// each write, per the server's rollout mode.
pub fn schedule_rollout(st: &Shared, deployment: &Value) {
    if st.rollout() == Rollout::Off {
        return;
    }
    let st = st.clone();
    let (namespace, name) = crate::store::ns_name(deployment);
    spawn(async move {
        tokio::time::sleep(ROLLOUT_DELAY).await;
        let key = resources::DEPLOYMENTS.key();
        let mut store = st.store();
        let mut sets = st.replica_sets.lock().unwrap_or_else(|e| e.into_inner());
        // Deployments deleted since (with their namespace, say) take their sets with them.
        let uids: std::collections::HashSet<String> = store
            .list(&key, None)
            .filter_map(|d| d["metadata"]["uid"].as_str().map(str::to_string))
            .collect();
        sets.retain(|uid| uids.contains(uid));
        let Some(current) = store.get(&key, &namespace, &name).cloned() else {
            return;
        };
        if let Some(updated) = sets.sync(&current, st.rollout()) {
            store.put(&key, updated);
            drop((sets, store));
            st.written.notify_one();
        }
    });
}
