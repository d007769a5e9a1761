//! Defaulting of the storage, policy, networking-class and admission kinds, after
//! `pkg/apis/{core,storage,networking,scheduling,admissionregistration}/v1`.

use serde_json::{Map, Value, json};

use super::{child, ensure};

/// `SetDefaults_<Kind>` of these kinds.
pub(super) fn object(kind: &str, obj: &mut Map<String, Value>) {
    match kind {
        "PersistentVolume" => {
            let spec = child(obj, "spec");
            ensure(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
            ensure(spec, "volumeMode", json!("Filesystem"));
            ensure(child(obj, "status"), "phase", json!("Pending"));
        }
        "PersistentVolumeClaim" => ensure(child(obj, "status"), "phase", json!("Pending")),
        "IngressClass" => {
            if let Some(parameters) = obj
                .get_mut("spec")
                .and_then(|s| s.get_mut("parameters"))
                .and_then(Value::as_object_mut)
            {
                ensure(parameters, "scope", json!("Cluster"));
            }
        }
        "StorageClass" => {
            ensure(obj, "reclaimPolicy", json!("Delete"));
            ensure(obj, "volumeBindingMode", json!("Immediate"));
        }
        "CSIDriver" => {
            let spec = child(obj, "spec");
            ensure(spec, "attachRequired", json!(true));
            ensure(spec, "podInfoOnMount", json!(false));
            ensure(spec, "storageCapacity", json!(false));
            ensure(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
            if spec
                .get("volumeLifecycleModes")
                .is_none_or(|m| m.as_array().is_none_or(Vec::is_empty))
            {
                spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
            }
            ensure(spec, "requiresRepublish", json!(false));
            ensure(spec, "seLinuxMount", json!(false));
        }
        "PriorityClass" => ensure(obj, "preemptionPolicy", json!("PreemptLowerPriority")),
        "ValidatingAdmissionPolicy" => ensure(child(obj, "spec"), "failurePolicy", json!("Fail")),
        _ => {}
    }
}

/// Defaulting functions of nested types (`io.k8s.api.` stripped).
pub(super) fn nested(definition: &str, map: &mut Map<String, Value>) {
    match definition {
        "core.v1.LimitRangeItem" => limit_range_item(map),
        "admissionregistration.v1.ValidatingWebhook" | "admissionregistration.v1.MutatingWebhook" => {
            ensure(map, "failurePolicy", json!("Fail"));
            ensure(map, "matchPolicy", json!("Equivalent"));
            ensure(map, "namespaceSelector", json!({}));
            ensure(map, "objectSelector", json!({}));
            ensure(map, "timeoutSeconds", json!(10));
            if definition.ends_with("MutatingWebhook") {
                ensure(map, "reinvocationPolicy", json!("Never"));
            }
        }
        "admissionregistration.v1.RuleWithOperations"
        | "admissionregistration.v1.NamedRuleWithOperations" => {
            ensure(map, "scope", json!("*"));
        }
        "admissionregistration.v1.ServiceReference" => ensure(map, "port", json!(443)),
        "admissionregistration.v1.MatchResources" => {
            ensure(map, "matchPolicy", json!("Equivalent"));
            ensure(map, "namespaceSelector", json!({}));
            ensure(map, "objectSelector", json!({}));
        }
        "admissionregistration.v1.ParamRef" => ensure(map, "parameterNotFoundAction", json!("Deny")),
        _ => {}
    }
}

/// A Container limit: `default` from `max`, `defaultRequest` from `default`, then from `min`.
fn limit_range_item(item: &mut Map<String, Value>) {
    if item.get("type").and_then(Value::as_str) != Some("Container") {
        return;
    }
    let listed = |item: &Map<String, Value>, key: &str| {
        item.get(key)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (max, min) = (listed(item, "max"), listed(item, "min"));
    let mut default = listed(item, "default");
    for (k, v) in max {
        default.entry(k).or_insert(v);
    }
    let mut request = listed(item, "defaultRequest");
    for (k, v) in default.iter().chain(min.iter()) {
        request.entry(k.clone()).or_insert(v.clone());
    }
    for (key, values) in [("default", default), ("defaultRequest", request)] {
        if !values.is_empty() {
            item.insert(key.into(), Value::Object(values));
        }
    }
}
