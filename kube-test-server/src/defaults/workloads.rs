//! Defaulting of Pods and the kinds that carry pod templates (Deployment, StatefulSet,
//! DaemonSet, ReplicationController, Job, CronJob), after `pkg/apis/{core,apps,batch}/v1`.

use serde_json::{Map, Value, json};

use super::{child, ensure, is_empty_map, items};

/// `SetDefaults_<Kind>` of the workload kinds.
pub(super) fn object(kind: &str, obj: &mut Map<String, Value>) {
    match kind {
        "Pod" => pod(obj),
        "Deployment" => deployment(obj),
        "StatefulSet" => stateful_set(obj),
        "DaemonSet" => daemon_set(obj),
        "ReplicationController" => replication_controller(obj),
        "Job" => job(obj),
        "CronJob" => cron_job(obj),
        _ => {}
    }
}

/// Defaulting functions of the nested types of pod specs (`io.k8s.api.` stripped).
pub(super) fn nested(definition: &str, map: &mut Map<String, Value>) {
    match definition {
        "core.v1.PodSpec" => pod_spec(map),
        "core.v1.Container" | "core.v1.EphemeralContainer" => container(map),
        "core.v1.Probe" => {
            ensure(map, "timeoutSeconds", json!(1));
            ensure(map, "periodSeconds", json!(10));
            ensure(map, "successThreshold", json!(1));
            ensure(map, "failureThreshold", json!(3));
        }
        "core.v1.HTTPGetAction" => {
            ensure(map, "path", json!("/"));
            ensure(map, "scheme", json!("HTTP"));
        }
        "core.v1.ObjectFieldSelector" => ensure(map, "apiVersion", json!("v1")),
        // A non-pointer Quantity: never omitted, zero is "0".
        "core.v1.ResourceFieldSelector" => ensure(map, "divisor", json!("0")),
        "core.v1.ServiceAccountTokenProjection" => ensure(map, "expirationSeconds", json!(3600)),
        "core.v1.SecretVolumeSource"
        | "core.v1.ConfigMapVolumeSource"
        | "core.v1.DownwardAPIVolumeSource"
        | "core.v1.ProjectedVolumeSource" => ensure(map, "defaultMode", json!(420)),
        "core.v1.HostPathVolumeSource" => ensure(map, "type", json!("")),
        "core.v1.PersistentVolumeClaimSpec" => ensure(map, "volumeMode", json!("Filesystem")),
        "core.v1.PersistentVolumeClaim" => ensure(child(map, "status"), "phase", json!("Pending")),
        _ => {}
    }
}

fn pod(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    ensure(spec, "enableServiceLinks", json!(true));
    // Limits without requests also set the requests (only for Pods, not templates).
    for key in ["initContainers", "containers"] {
        for c in items(spec, key) {
            let resources = child(c, "resources");
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                continue;
            };
            let requests = child(resources, "requests");
            for (name, value) in limits {
                requests.entry(name).or_insert(value);
            }
        }
    }
}

fn pod_spec(spec: &mut Map<String, Value>) {
    ensure(spec, "restartPolicy", json!("Always"));
    ensure(spec, "terminationGracePeriodSeconds", json!(30));
    ensure(spec, "dnsPolicy", json!("ClusterFirst"));
    ensure(spec, "securityContext", json!({}));
    ensure(spec, "schedulerName", json!("default-scheduler"));
    if spec.get("hostNetwork") == Some(&json!(true)) {
        for key in ["initContainers", "containers"] {
            for c in items(spec, key) {
                for port in items(c, "ports") {
                    if port.get("hostPort").is_none_or(|p| p == 0) {
                        let number = port.get("containerPort").cloned().unwrap_or(json!(0));
                        port.insert("hostPort".into(), number);
                    }
                }
            }
        }
    }
}

fn container(c: &mut Map<String, Value>) {
    ensure(c, "terminationMessagePath", json!("/dev/termination-log"));
    ensure(c, "terminationMessagePolicy", json!("File"));
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let policy = if image_uses_latest(image) {
        "Always"
    } else {
        "IfNotPresent"
    };
    ensure(c, "imagePullPolicy", json!(policy));
}

/// `:latest` or no tag at all means the kubelet must always pull; a digest or another tag not.
fn image_uses_latest(image: &str) -> bool {
    if image.contains('@') {
        return false;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, tag)) => tag == "latest",
        None => true,
    }
}

fn deployment(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    ensure(spec, "replicas", json!(1));
    let strategy = child(spec, "strategy");
    ensure(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = child(strategy, "rollingUpdate");
        ensure(rolling, "maxUnavailable", json!("25%"));
        ensure(rolling, "maxSurge", json!("25%"));
    }
    ensure(spec, "revisionHistoryLimit", json!(10));
    ensure(spec, "progressDeadlineSeconds", json!(600));
}

fn stateful_set(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    ensure(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = child(spec, "updateStrategy");
    ensure(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        ensure(child(strategy, "rollingUpdate"), "partition", json!(0));
    }
    let retention = child(spec, "persistentVolumeClaimRetentionPolicy");
    ensure(retention, "whenDeleted", json!("Retain"));
    ensure(retention, "whenScaled", json!("Retain"));
    ensure(spec, "replicas", json!(1));
    ensure(spec, "revisionHistoryLimit", json!(10));
    for claim in items(spec, "volumeClaimTemplates") {
        ensure(claim, "apiVersion", json!("v1"));
        ensure(claim, "kind", json!("PersistentVolumeClaim"));
    }
}

fn daemon_set(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    let strategy = child(spec, "updateStrategy");
    ensure(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = child(strategy, "rollingUpdate");
        ensure(rolling, "maxUnavailable", json!(1));
        ensure(rolling, "maxSurge", json!(0));
    }
    ensure(spec, "revisionHistoryLimit", json!(10));
}

/// Copies the template's labels to `obj`'s labels when it has none.
fn labels_from_template(obj: &mut Map<String, Value>, template_labels: Option<Value>) {
    let Some(labels) = template_labels.filter(|l| !is_empty_map(Some(l))) else {
        return;
    };
    let meta = child(obj, "metadata");
    if is_empty_map(meta.get("labels")) {
        meta.insert("labels".into(), labels);
    }
}

fn replication_controller(obj: &mut Map<String, Value>) {
    let template_labels = obj
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .cloned();
    if let Some(labels) = template_labels.clone().filter(|l| !is_empty_map(Some(l))) {
        let spec = child(obj, "spec");
        if is_empty_map(spec.get("selector")) {
            spec.insert("selector".into(), labels);
        }
    }
    labels_from_template(obj, template_labels);
    ensure(child(obj, "spec"), "replicas", json!(1));
}

fn job(obj: &mut Map<String, Value>) {
    let template_labels = obj
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .cloned();
    let spec = child(obj, "spec");
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    ensure(spec, "parallelism", json!(1));
    let per_index = spec.get("backoffLimitPerIndex").is_some_and(|b| !b.is_null());
    ensure(spec, "backoffLimit", json!(if per_index { i32::MAX } else { 6 }));
    ensure(spec, "completionMode", json!("NonIndexed"));
    ensure(spec, "suspend", json!(false));
    let failure_policy = spec.get("podFailurePolicy").is_some_and(|p| !p.is_null());
    ensure(
        spec,
        "podReplacementPolicy",
        json!(if failure_policy {
            "Failed"
        } else {
            "TerminatingOrFailed"
        }),
    );
    ensure(spec, "manualSelector", json!(false));
    if let Some(policy) = spec.get_mut("podFailurePolicy").and_then(Value::as_object_mut) {
        for rule in items(policy, "rules") {
            for pattern in items(rule, "onPodConditions") {
                if pattern.get("status").is_none_or(|s| s.is_null() || s == "") {
                    pattern.insert("status".into(), json!("True"));
                }
            }
        }
    }
    labels_from_template(obj, template_labels);
}

fn cron_job(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    ensure(spec, "concurrencyPolicy", json!("Allow"));
    ensure(spec, "suspend", json!(false));
    ensure(spec, "successfulJobsHistoryLimit", json!(3));
    ensure(spec, "failedJobsHistoryLimit", json!(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_pull_policy_by_tag() {
        assert!(image_uses_latest("busybox:latest"));
        assert!(image_uses_latest("nginx"));
        assert!(image_uses_latest("localhost:5000/nginx"));
        assert!(!image_uses_latest("nginx:1.27.0"));
        assert!(!image_uses_latest("nginx@sha256:abc"));
    }
}
