//! What the registries' strategies do to an object after the field manager has recorded the
//! request (so none of it is owned by the writer): status on create, generated selectors and
//! labels, template generations, requester identity, phase transition times.
//!
//! Changes before the field manager (defaults, the shaping in [`crate::kinds`]) are owned by
//! the writer; these are not, as on the real apiserver.

use serde_json::{Map, Value, json};

use crate::auth::UserInfo;
use crate::resources::ResourceType;

/// The registry's `PrepareForCreate`, for an object that already has its uid; `sent_labels`
/// tells whether the request carried labels of its own.
pub fn prepare_create(rt: &ResourceType, obj: &mut Value, user: &UserInfo, time: &str, sent_labels: bool) {
    match rt.kind {
        "Job" => {
            generate_job_selector(obj);
            // Defaulting gave a Job without labels its template's label map itself (Go map
            // aliasing), so the generated labels show up on the Job too.
            if !sent_labels && obj["spec"]["template"]["metadata"]["labels"].is_object() {
                obj["metadata"]["labels"] = obj["spec"]["template"]["metadata"]["labels"].clone();
            }
        }
        "PersistentVolume" => {
            obj["status"] = json!({"phase": "Pending", "lastPhaseTransitionTime": time});
        }
        "PersistentVolumeClaim" => obj["status"] = json!({"phase": "Pending"}),
        "ReplicationController"
        | "StatefulSet"
        | "DaemonSet"
        | "CronJob"
        | "Ingress"
        | "PodDisruptionBudget"
        | "ValidatingAdmissionPolicy"
        | "ResourceQuota" => obj["status"] = json!({}),
        "Pod" => {
            let qos = qos_class(&obj["spec"]);
            obj["status"] = json!({"phase": "Pending", "qosClass": qos});
        }
        "CertificateSigningRequest" => {
            let spec = &mut obj["spec"];
            spec["username"] = json!(user.name);
            spec["uid"] = json!(user.uid);
            spec["groups"] = json!(user.groups);
            if let Some(m) = spec.as_object_mut() {
                m.shift_remove("extra");
            }
            obj["status"] = json!({});
        }
        "APIService" => {
            obj["status"] = json!({});
            if obj["spec"].get("service").is_none_or(Value::is_null) {
                obj["status"]["conditions"] = json!([{
                    "type": "Available", "status": "True", "lastTransitionTime": time,
                    "reason": "Local", "message": "Local APIServices are always available",
                }]);
            }
        }
        _ => {}
    }
}

/// The registry's `PrepareForUpdate` of a main-resource write (status is kept elsewhere).
pub fn prepare_update(rt: &ResourceType, old: &Value, new: &mut Value) {
    match rt.kind {
        "DaemonSet" => {
            // A new pod template bumps the template generation the annotation carries.
            let key = "deprecated.daemonset.template.generation";
            let generation = old["metadata"]["annotations"][key]
                .as_str()
                .and_then(|g| g.parse::<i64>().ok())
                .unwrap_or(1);
            let bumped = generation + i64::from(old["spec"]["template"] != new["spec"]["template"]);
            new["metadata"]["annotations"][key] = json!(bumped.to_string());
        }
        // A request's spec is fixed once submitted; only approval and status change.
        "CertificateSigningRequest" => new["spec"] = old["spec"].clone(),
        "Service" => drop_type_dependent_fields(&old["spec"], &mut new["spec"]),
        _ => {}
    }
}

/// A Service whose type changes loses what only the old type needed, unless the request set it
/// anew: cluster IPs and IP families (to ExternalName), node ports, the health check port, the
/// external traffic policy and the load balancer fields.
fn drop_type_dependent_fields(old: &Value, new: &mut Value) {
    let kind = |s: &Value| s["type"].as_str().unwrap_or("ClusterIP").to_string();
    let (old_type, new_type) = (kind(old), kind(new));
    if old_type == new_type {
        return;
    }
    let Some(spec) = new.as_object_mut() else { return };
    let drop_if_same = |spec: &mut Map<String, Value>, key: &str| {
        if spec.get(key) == old.get(key) {
            spec.shift_remove(key);
        }
    };
    if new_type == "ExternalName" {
        for key in [
            "clusterIP",
            "clusterIPs",
            "ipFamilies",
            "ipFamilyPolicy",
            "internalTrafficPolicy",
        ] {
            drop_if_same(spec, key);
        }
    }
    let node_ports = |t: &str| matches!(t, "NodePort" | "LoadBalancer");
    if node_ports(&old_type) && !node_ports(&new_type) {
        let old_ports: Vec<Option<i64>> = old["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| p["nodePort"].as_i64())
            .collect();
        let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
        let ports = ports.into_iter().flatten().collect::<Vec<_>>();
        let same = ports.len() == old_ports.len()
            && ports
                .iter()
                .zip(&old_ports)
                .all(|(p, o)| p["nodePort"].as_i64() == *o);
        if same {
            for p in ports {
                if let Some(m) = p.as_object_mut() {
                    m.shift_remove("nodePort");
                }
            }
        }
        if new_type != "ClusterIP"
            || spec
                .get("externalIPs")
                .is_none_or(|e| e.as_array().is_none_or(Vec::is_empty))
        {
            spec.shift_remove("externalTrafficPolicy");
        }
    }
    if old_type == "LoadBalancer" && new_type != "LoadBalancer" {
        for key in [
            "healthCheckNodePort",
            "allocateLoadBalancerNodePorts",
            "loadBalancerClass",
        ] {
            drop_if_same(spec, key);
        }
    }
}

/// The warnings a write of `obj` answers with (the strategies' `WarningsOnCreate/Update`).
pub fn warnings(rt: &ResourceType, obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if rt.custom {
        return out;
    }
    match rt.kind {
        "PersistentVolume" if obj["spec"]["persistentVolumeReclaimPolicy"] == "Recycle" => out.push(
            "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use dynamic provisioning.".into(),
        ),
        "CSIDriver"
            if obj["spec"]["tokenRequests"].as_array().is_some_and(|t| !t.is_empty())
                && obj["spec"].get("serviceAccountTokenInSecrets").is_none() =>
        {
            out.push("spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes".into());
        }
        _ => {}
    }
    out
}

/// Jobs get a selector on their own uid and matching template labels unless the user
/// chose a selector (`manualSelector: true`).
fn generate_job_selector(job: &mut Value) {
    if job["spec"]["manualSelector"] == json!(true) {
        return;
    }
    let uid = job["metadata"]["uid"].clone();
    let name = job["metadata"]["name"].clone();
    let template_meta = &mut job["spec"]["template"]["metadata"];
    if !template_meta["labels"].is_object() {
        template_meta["labels"] = json!({});
    }
    let labels = &mut template_meta["labels"];
    for (key, value) in [
        ("batch.kubernetes.io/controller-uid", &uid),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("job-name", &name),
    ] {
        labels[key] = value.clone();
    }
    crate::meta::sort_keys(labels);
    // A selector the user gave anyway gets the uid label added (and validation refuses it).
    let selector = &mut job["spec"]["selector"];
    if !selector.is_object() {
        *selector = json!({});
    }
    if !selector["matchLabels"].is_object() {
        selector["matchLabels"] = json!({});
    }
    selector["matchLabels"]["batch.kubernetes.io/controller-uid"] = uid;
    crate::meta::sort_keys(&mut selector["matchLabels"]);
}

/// The pod's quality of service: Guaranteed when every container limits cpu and memory with
/// equal requests, BestEffort without any requests or limits, Burstable otherwise.
pub fn qos_class(pod_spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|k| pod_spec[*k].as_array().into_iter().flatten())
        .collect();
    let resources = |c: &Value, list: &str| -> Map<String, Value> {
        c["resources"][list]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| matches!(k.as_str(), "cpu" | "memory"))
                    .filter(|(_, v)| {
                        v.as_str()
                            .and_then(crate::defaults::Quantity::parse)
                            .is_some_and(|q| !q.is_zero())
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    if containers
        .iter()
        .all(|c| resources(c, "requests").is_empty() && resources(c, "limits").is_empty())
    {
        return "BestEffort";
    }
    let guaranteed = containers.iter().all(|c| {
        let (requests, limits) = (resources(c, "requests"), resources(c, "limits"));
        ["cpu", "memory"].iter().all(|r| {
            let parse = |m: &Map<String, Value>| {
                m.get(*r)
                    .and_then(Value::as_str)
                    .and_then(crate::defaults::Quantity::parse)
            };
            match (parse(&requests), parse(&limits)) {
                (Some(req), Some(lim)) => req == lim,
                (None, Some(_)) => true,
                _ => false,
            }
        })
    });
    if guaranteed { "Guaranteed" } else { "Burstable" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qos_classes() {
        let spec = |resources: Value| json!({"containers": [{"name": "c", "resources": resources}]});
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1Gi"}})
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
    }

    #[test]
    fn job_selector_on_uid() {
        let mut job = json!({"metadata": {"name": "j", "uid": "u-1"}, "spec": {"manualSelector": false, "template": {"metadata": {"labels": {"app": "x"}}}}});
        generate_job_selector(&mut job);
        assert_eq!(
            job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
            "u-1"
        );
        assert_eq!(job["spec"]["template"]["metadata"]["labels"]["job-name"], "j");
        assert_eq!(job["spec"]["template"]["metadata"]["labels"]["app"], "x");
    }
}
