//! Objects a fresh v1.36 apiserver creates for itself besides RBAC: the system
//! PriorityClasses (the Priority admission plugin resolves `system-*-critical` through them)
//! and a Local APIService per built-in group-version, owned by `kube-apiserver`.

use serde_json::{Value, json};

use crate::resources::{self, ResourceType};

/// `(group, version, groupPriorityMinimum, versionPriority)` as the recorded apiserver has them.
const LOCAL_API_SERVICES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("apps", "v1", 17800, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("networking.k8s.io", "v1", 17200, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("resource.k8s.io", "v1", 16200, 21),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("storage.k8s.io", "v1", 16800, 15),
];

fn managed(api_version: &str, time: &str, fields: Value) -> Value {
    json!([{
        "manager": "kube-apiserver", "operation": "Update", "apiVersion": api_version, "time": time,
        "fieldsType": "FieldsV1", "fieldsV1": fields,
    }])
}

/// The objects with the type they are stored as, stamped `time` (uids are added by the caller).
pub fn objects(time: &str) -> Vec<(ResourceType, Value)> {
    let mut out = Vec::new();
    for (name, value, description) in [
        (
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
        (
            "system-node-critical",
            2_000_001_000,
            "Used for system critical pods that must not be moved from their current node.",
        ),
    ] {
        let api_version = "scheduling.k8s.io/v1";
        out.push((
            resources::PRIORITYCLASSES,
            json!({
                "kind": "PriorityClass", "apiVersion": api_version,
                "metadata": {
                    "name": name, "generation": 1, "creationTimestamp": time,
                    "managedFields": managed(api_version, time, json!({"f:description": {}, "f:preemptionPolicy": {}, "f:value": {}})),
                },
                "value": value, "description": description, "preemptionPolicy": "PreemptLowerPriority",
            }),
        ));
    }
    for (group, version, group_priority, version_priority) in LOCAL_API_SERVICES {
        let api_version = "apiregistration.k8s.io/v1";
        let fields = json!({
            "f:metadata": {"f:labels": {".": {}, "f:kube-aggregator.kubernetes.io/automanaged": {}}},
            "f:spec": {"f:group": {}, "f:groupPriorityMinimum": {}, "f:version": {}, "f:versionPriority": {}},
        });
        let mut spec = json!({"group": group, "version": version, "groupPriorityMinimum": group_priority, "versionPriority": version_priority});
        if group.is_empty()
            && let Some(m) = spec.as_object_mut()
        {
            m.shift_remove("group");
        }
        out.push((
            resources::APISERVICES,
            json!({
                "kind": "APIService", "apiVersion": api_version,
                "metadata": {
                    "name": format!("{version}.{group}"), "creationTimestamp": time,
                    "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"},
                    "managedFields": managed(api_version, time, fields),
                },
                "spec": spec,
                "status": {"conditions": [{
                    "type": "Available", "status": "True", "lastTransitionTime": time,
                    "reason": "Local", "message": "Local APIServices are always available",
                }]},
            }),
        ));
    }
    out
}
