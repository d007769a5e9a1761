//! The controllers the recorded cluster ran, reduced to what clients can observe: namespace
//! contents (`default` ServiceAccount, `kube-root-ca.crt`), namespace deletion, foreground
//! deletion, and (unlike the recording) a Deployment rollout that fills in status.

use std::time::Duration;

use serde_json::{Value, json};

use crate::meta;
use crate::resources::{self, ResourceType};
use crate::state::{Rollout, Shared};
use crate::store::Store;

/// How long a Deployment takes to "roll out".
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

/// Fills in a Deployment's status after a short delay, per the server's rollout mode.
pub fn schedule_rollout(st: &Shared, deployment: &Value) {
    let mode = st.rollout();
    if mode == Rollout::Off || deployment["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let st = st.clone();
    let (namespace, name) = crate::store::ns_name(deployment);
    spawn(async move {
        tokio::time::sleep(ROLLOUT_DELAY).await;
        let key = resources::DEPLOYMENTS.key();
        let mut store = st.store();
        let Some(current) = store.get(&key, &namespace, &name).cloned() else {
            return;
        };
        let status = rollout_status(&current, mode);
        if current["status"] == status {
            return;
        }
        let mut updated = current;
        updated["status"] = status;
        store.put(&key, updated);
        drop(store);
        st.written.notify_one();
    });
}

fn rollout_status(deployment: &Value, mode: Rollout) -> Value {
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let generation = deployment["metadata"]["generation"].as_i64().unwrap_or(1);
    let name = deployment["metadata"]["name"].as_str().unwrap_or("");
    let now = meta::now();
    let condition = |type_: &str, status: &str, reason: &str, message: String| json!({"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": message});
    let mut status = json!({"observedGeneration": generation});
    if replicas > 0 {
        status["replicas"] = json!(replicas);
        status["updatedReplicas"] = json!(replicas);
    }
    let ready = mode == Rollout::Ready;
    if ready && replicas > 0 {
        status["readyReplicas"] = json!(replicas);
        status["availableReplicas"] = json!(replicas);
    } else if replicas > 0 {
        status["unavailableReplicas"] = json!(replicas);
    }
    status["conditions"] = if ready {
        json!([
            condition(
                "Available",
                "True",
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.".into()
            ),
            condition(
                "Progressing",
                "True",
                "NewReplicaSetAvailable",
                format!("ReplicaSet \"{name}-5d4f8c7b9\" has successfully progressed.")
            ),
        ])
    } else {
        json!([
            condition(
                "Available",
                "False",
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.".into()
            ),
            condition(
                "Progressing",
                "True",
                "ReplicaSetUpdated",
                format!("ReplicaSet \"{name}-5d4f8c7b9\" is progressing.")
            ),
        ])
    };
    status
}
