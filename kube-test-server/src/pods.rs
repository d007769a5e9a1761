//! Pods as the controllers read them (phase, terminal, active, ready, available) and as they
//! make them from an owner's pod template.

use serde_json::{Map, Value, json};

use crate::pass::{self, Pass};

/// A Pod of `owner` (a `kind` of `api_version`) from its pod `template`, named `name` or
/// generated from the owner's name.
pub fn pod_from(owner: &Value, api_version: &str, kind: &str, name: Option<&str>) -> Value {
    let template = &owner["spec"]["template"];
    let mut metadata = Map::new();
    match name {
        Some(name) => metadata.insert("name".into(), json!(name)),
        None => metadata.insert(
            "generateName".into(),
            json!(format!("{}-", owner["metadata"]["name"].as_str().unwrap_or(""))),
        ),
    };
    metadata.insert("namespace".into(), owner["metadata"]["namespace"].clone());
    for key in ["labels", "annotations"] {
        if template["metadata"][key].is_object() {
            metadata.insert(key.into(), template["metadata"][key].clone());
        }
    }
    metadata.insert(
        "ownerReferences".into(),
        pass::owner_reference(owner, api_version, kind),
    );
    json!({"metadata": metadata, "spec": template["spec"]})
}

pub fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("Pending")
}

/// Succeeded or Failed: its containers will not run again.
pub fn terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Not terminal and not being deleted (`FilterActivePods`).
pub fn active(pod: &Value) -> bool {
    !terminal(pod) && pod["metadata"].get("deletionTimestamp").is_none()
}

/// When the pod became Ready, if it is.
pub fn ready_since(pod: &Value) -> Option<f64> {
    let condition = pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")?;
    Some(
        condition["lastTransitionTime"]
            .as_str()
            .and_then(crate::meta::epoch)
            .unwrap_or(0.0),
    )
}

pub fn ready(pod: &Value) -> bool {
    active(pod) && ready_since(pod).is_some()
}

/// Ready for `min_ready` seconds; asks for a pass when it will be.
pub fn available(pass: &mut Pass, pod: &Value, min_ready: f64) -> bool {
    if !active(pod) {
        return false;
    }
    match ready_since(pod) {
        Some(since) if since + min_ready <= pass.now => true,
        Some(since) => {
            pass.wake_at(since + min_ready);
            false
        }
        None => false,
    }
}
