//! Per-kind behaviour of the registries that is not defaulting or validation: which fields a
//! kind has, what a write keeps from the stored object, generated values (Service cluster IPs,
//! Secret `stringData`), and the autoscaling/v1 view of HorizontalPodAutoscalers.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::resources::{self, ResourceType};

/// Top-level fields a kind's schema has besides apiVersion/kind/metadata.
pub fn known_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "ConfigMap" => &["data", "binaryData", "immutable"],
        "Secret" => &["data", "stringData", "type", "immutable"],
        "ServiceAccount" => &["secrets", "imagePullSecrets", "automountServiceAccountToken"],
        "Role" => &["rules"],
        "ClusterRole" => &["rules", "aggregationRule"],
        "RoleBinding" | "ClusterRoleBinding" => &["subjects", "roleRef"],
        "Lease" | "NetworkPolicy" => &["spec"],
        _ => &["spec", "status"],
    }
}

/// Kinds whose `metadata.generation` tracks spec changes.
pub fn has_generation(kind: &str) -> bool {
    matches!(kind, "Deployment" | "NetworkPolicy")
}

/// Kinds with a status subresource: writes to the main resource keep the stored status.
pub fn has_status(kind: &str) -> bool {
    matches!(
        kind,
        "Deployment" | "HorizontalPodAutoscaler" | "Service" | "Namespace"
    )
}

/// Go package name of the internal type, for conversion error messages.
pub fn internal_package(group: &str) -> &str {
    match group {
        "" => "core",
        "networking.k8s.io" => "networking",
        "rbac.authorization.k8s.io" => "rbac",
        "coordination.k8s.io" => "coordination",
        other => other,
    }
}

/// Shapes a new object before defaulting and validation.
pub fn prepare_create(rt: &ResourceType, obj: &mut Value) {
    match rt.kind {
        "Namespace" => {
            let name = obj["metadata"]["name"].clone();
            let meta = obj["metadata"].as_object_mut().expect("metadata is an object");
            let labels = meta.entry("labels").or_insert_with(|| json!({}));
            labels["kubernetes.io/metadata.name"] = name;
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
        }
        "Secret" => fold_string_data(obj),
        "Deployment" => obj["status"] = json!({}),
        "HorizontalPodAutoscaler" => obj["status"] = json!({"desiredReplicas": 0, "currentMetrics": null}),
        "Service" => {
            if let Some(ip) = obj["spec"]["clusterIP"].as_str().filter(|ip| !ip.is_empty())
                && obj["spec"].get("clusterIPs").is_none()
            {
                obj["spec"]["clusterIPs"] = json!([ip]);
            }
            obj["status"] = json!({"loadBalancer": {}});
        }
        _ => {}
    }
}

/// Whether a Service still needs a cluster IP allocated.
pub fn needs_cluster_ip(obj: &Value) -> bool {
    let spec = &obj["spec"];
    let kind_ok = matches!(
        spec["type"].as_str(),
        None | Some("ClusterIP" | "NodePort" | "LoadBalancer")
    );
    kind_ok && spec["clusterIP"].as_str().is_none_or(str::is_empty)
}

pub fn set_cluster_ip(obj: &mut Value, ip: &str) {
    obj["spec"]["clusterIP"] = json!(ip);
    obj["spec"]["clusterIPs"] = json!([ip]);
}

/// Shapes the new version of an object from the stored one before validation.
pub fn prepare_update(rt: &ResourceType, old: &Value, new: &mut Value) {
    if has_status(rt.kind) {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.shift_remove("status");
                }
            }
        }
    }
    match rt.kind {
        "Namespace" => {
            new["spec"] = old["spec"].clone();
            let name = old["metadata"]["name"].clone();
            let meta = new["metadata"].as_object_mut().expect("metadata is an object");
            meta.entry("labels").or_insert_with(|| json!({}))["kubernetes.io/metadata.name"] = name;
        }
        "Secret" => fold_string_data(new),
        "Service" => {
            // A PUT that leaves out the cluster IP keeps the allocated one.
            let spec = &mut new["spec"];
            if spec["clusterIP"].as_str().is_none_or(str::is_empty) {
                spec["clusterIP"] = old["spec"]["clusterIP"].clone();
            }
            if spec.get("clusterIPs").is_none() || spec["clusterIPs"].as_array().is_some_and(Vec::is_empty) {
                let ip = spec["clusterIP"].clone();
                spec["clusterIPs"] = if ip == old["spec"]["clusterIP"] {
                    old["spec"]["clusterIPs"].clone()
                } else {
                    json!([ip])
                };
            }
        }
        _ => {}
    }
}

/// Merges Secret `stringData` into `data` (base64) and drops it, as the apiserver does.
fn fold_string_data(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let Some(Value::Object(string_data)) = map.shift_remove("stringData") else {
        return;
    };
    let data = map.entry("data").or_insert_with(|| Value::Object(Map::new()));
    if !data.is_object() {
        *data = Value::Object(Map::new());
    }
    for (k, v) in string_data {
        let text = v.as_str().unwrap_or_default();
        data[&k] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
    crate::meta::sort_keys(data);
}

/// Whether two objects differ outside metadata and status (a spec change bumps generation).
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut m = v.as_object().cloned().unwrap_or_default();
        for k in ["metadata", "status", "kind", "apiVersion"] {
            m.shift_remove(k);
        }
        m
    };
    strip(old) != strip(new)
}

/// A stored object as a client reading `version` sees it, in canonical key order.
pub fn present(rt: &ResourceType, version: &str, obj: &Value) -> Value {
    if version == rt.storage_version() {
        // Stored objects are already in canonical order.
        return obj.clone();
    }
    let mut out = to_version(rt, version, obj);
    crate::meta::canonicalize(&mut out);
    out
}

/// Converts a stored object to the served version (only HPAs have two versions).
pub fn to_version(rt: &ResourceType, version: &str, obj: &Value) -> Value {
    if *rt != resources::HPAS || version != "v1" {
        return obj.clone();
    }
    let mut out = obj.clone();
    out["apiVersion"] = json!("autoscaling/v1");
    let spec = &obj["spec"];
    let mut v1spec = Map::new();
    v1spec.insert("scaleTargetRef".into(), spec["scaleTargetRef"].clone());
    if let Some(min) = spec.get("minReplicas") {
        v1spec.insert("minReplicas".into(), min.clone());
    }
    v1spec.insert("maxReplicas".into(), spec["maxReplicas"].clone());
    if let Some(cpu) = cpu_utilization(spec) {
        v1spec.insert("targetCPUUtilizationPercentage".into(), json!(cpu));
    }
    out["spec"] = Value::Object(v1spec);
    let status = &obj["status"];
    let mut v1status = Map::new();
    v1status.insert(
        "currentReplicas".into(),
        status.get("currentReplicas").cloned().unwrap_or(json!(0)),
    );
    v1status.insert(
        "desiredReplicas".into(),
        status.get("desiredReplicas").cloned().unwrap_or(json!(0)),
    );
    out["status"] = Value::Object(v1status);
    out
}

fn cpu_utilization(spec: &Value) -> Option<i64> {
    spec["metrics"].as_array()?.iter().find_map(|m| {
        (m["type"] == "Resource" && m["resource"]["name"] == "cpu")
            .then(|| m["resource"]["target"]["averageUtilization"].as_i64())
            .flatten()
    })
}

/// Converts an object written through a non-storage version to the storage version.
pub fn from_version(rt: &ResourceType, version: &str, obj: &Value) -> Value {
    if *rt != resources::HPAS || version != "v1" {
        return obj.clone();
    }
    let mut out = obj.clone();
    out["apiVersion"] = json!("autoscaling/v2");
    let spec = &obj["spec"];
    let mut v2 = Map::new();
    v2.insert("scaleTargetRef".into(), spec["scaleTargetRef"].clone());
    if let Some(min) = spec.get("minReplicas") {
        v2.insert("minReplicas".into(), min.clone());
    }
    v2.insert("maxReplicas".into(), spec["maxReplicas"].clone());
    if let Some(cpu) = spec.get("targetCPUUtilizationPercentage") {
        v2.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]),
        );
    }
    out["spec"] = Value::Object(v2);
    if let Some(m) = out.as_object_mut() {
        m.shift_remove("status");
    }
    out
}

/// The label selector of a Deployment as the Scale subresource prints it (`k=v,k2=v2`).
pub fn selector_string(deployment: &Value) -> String {
    let mut parts: Vec<String> = deployment["spec"]["selector"]["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    parts.sort();
    parts.join(",")
}
