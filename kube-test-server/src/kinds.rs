//! Per-kind behaviour of the registries that is not defaulting or validation: which fields a
//! kind has, what a write keeps from the stored object, generated values (Service cluster IPs,
//! Secret `stringData`), and the autoscaling/v1 view of HorizontalPodAutoscalers.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::resources::{self, ResourceType};

/// Go package name of the internal type, for conversion error messages.
pub fn internal_package(group: &str) -> &str {
    match group {
        "" => "core",
        other => other.split('.').next().unwrap_or(other),
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
        "CustomResourceDefinition" => crate::crd::initial_status(obj),
        "Deployment" => obj["status"] = json!({}),
        "DaemonSet" => {
            // The template generation (an annotation in apps/v1) starts at 1.
            let meta = obj["metadata"].as_object_mut().expect("metadata is an object");
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if !annotations.is_object() {
                *annotations = json!({});
            }
            let key = "deprecated.daemonset.template.generation";
            if annotations[key]
                .as_str()
                .and_then(|g| g.parse::<i64>().ok())
                .is_none_or(|g| g < 1)
            {
                annotations[key] = json!("1");
            }
        }
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

/// Shapes the new version of an object from the stored one before validation.
pub fn prepare_update(rt: &ResourceType, old: &Value, new: &mut Value) {
    if rt.status {
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
            if spec["type"] == "ExternalName" {
                return;
            }
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
    if rt.custom {
        // Unstructured JSON: the served version (conversion `None`), keys sorted at every
        // level like Go maps.
        let mut out = obj.clone();
        out["apiVersion"] = json!(rt.api_version(version));
        sort_all_keys(&mut out);
        return out;
    }
    if version == rt.storage_version() {
        // Stored objects are already in canonical order.
        return obj.clone();
    }
    let mut out = to_version(rt, version, obj);
    crate::meta::canonicalize(&mut out);
    out
}

fn sort_all_keys(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.sort_keys();
            map.values_mut().for_each(sort_all_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(sort_all_keys),
        _ => {}
    }
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

/// The label selector of a scalable object as the Scale subresource prints it
/// (`k=v,k2 in (a,b)`, terms sorted by key): a `LabelSelector`, or a ReplicationController's
/// plain map.
pub fn selector_string(obj: &Value) -> String {
    let selector = &obj["spec"]["selector"];
    let is_label_selector =
        selector.get("matchLabels").is_some() || selector.get("matchExpressions").is_some();
    let labels = if is_label_selector {
        &selector["matchLabels"]
    } else {
        selector
    };
    let mut parts: Vec<(String, String)> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))))
        .collect();
    for e in selector["matchExpressions"].as_array().into_iter().flatten() {
        let key = e["key"].as_str().unwrap_or("").to_string();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut sorted = values.clone();
        sorted.sort();
        let term = match e["operator"].as_str() {
            Some("In") => format!("{key} in ({})", sorted.join(",")),
            Some("NotIn") => format!("{key} notin ({})", sorted.join(",")),
            Some("Exists") => key.clone(),
            _ => format!("!{key}"),
        };
        parts.push((key, term));
    }
    parts.sort();
    parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}
