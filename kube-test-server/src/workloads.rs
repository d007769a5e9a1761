//! The controllers that make Pods from templates, as kube-controller-manager v1.36's: the
//! ReplicaSet controller (the Deployment controller's sets, see [`crate::rollout`]; and
//! ReplicationControllers, which the same controller keeps), the
//! StatefulSet controller (ordinal names, ordered or parallel creation, claims from volume
//! claim templates, rolling updates from the highest ordinal down to the partition) and the
//! DaemonSet controller (a pod per node it should run on, pinned by node affinity, with the
//! controller's tolerations; rolling updates within `maxUnavailable`); Jobs are in
//! [`crate::jobs`]. Each writes its object's status from its Pods, as [`crate::kubelet`] left
//! them, through `status` as `kube-controller-manager`.

use serde_json::{Map, Value, json};

use crate::pass::{Pass, live, owned};
use crate::pods::{active, available, phase, pod_from, ready, ready_since, terminal};
use crate::resources::{
    DAEMONSETS, NODES, PERSISTENTVOLUMECLAIMS, PODS, REPLICASETS, REPLICATIONCONTROLLERS, ResourceType,
    STATEFULSETS,
};
use crate::rollout::{scaled, template_hash};
use crate::scheduler::{node_selector_matches, tolerates};

const MANAGER: &str = "kube-controller-manager";
const REVISION_LABEL: &str = "controller-revision-hash";
const DAEMON_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Runs the ReplicaSet, StatefulSet and DaemonSet controllers once over the cluster.
pub fn sync(pass: &mut Pass) {
    for rs in live(pass, &REPLICASETS) {
        replica_set(pass, &rs, REPLICASETS);
    }
    for rc in live(pass, &REPLICATIONCONTROLLERS) {
        replica_set(pass, &rc, REPLICATIONCONTROLLERS);
    }
    for set in live(pass, &STATEFULSETS) {
        stateful_set(pass, &set);
    }
    let nodes = pass.list(&NODES, None);
    for set in live(pass, &DAEMONSETS) {
        daemon_set(pass, &set, &nodes);
    }
}

/// A status with the zero counts left out (`omitempty`), but for those always written.
fn counts(fields: &[(&str, i64)], always: &[&str]) -> Value {
    let mut status = Map::new();
    for (field, value) in fields {
        if *value != 0 || always.contains(field) {
            status.insert((*field).into(), json!(value));
        }
    }
    Value::Object(status)
}

/// Writes `status` over the object's, keeping fields it does not name (conditions, ...).
fn write_status(pass: &mut Pass, rt: ResourceType, obj: &Value, status: Value) {
    let mut new = obj.clone();
    let mut merged = Map::new();
    for (key, value) in obj["status"].as_object().into_iter().flatten() {
        if matches!(key.as_str(), "conditions" | "collisionCount") {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged.extend(status.as_object().cloned().unwrap_or_default());
    new["status"] = Value::Object(merged);
    pass.update(rt, obj, new, MANAGER, Some("status"));
}

/// The `ActivePods` order of deletion: unscheduled before scheduled, pending before running,
/// not ready before ready, newer before older.
fn deletion_order(pods: &mut [Value]) {
    pods.sort_by_key(|p| {
        let phase = match phase(p) {
            "Pending" => 0,
            "Running" => 2,
            _ => 1,
        };
        let created = p["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or("")
            .to_string();
        (
            p["spec"]["nodeName"].is_string(),
            phase,
            ready_since(p).is_some(),
            std::cmp::Reverse(created),
        )
    });
}

/// A ReplicaSet or ReplicationController (`rt`): its pods made or deleted to its size.
fn replica_set(pass: &mut Pass, rs: &Value, rt: ResourceType) {
    let pods = owned(pass, &PODS, rs);
    let api_version = rt.api_version(rt.storage_version());
    let mut running: Vec<Value> = pods.into_iter().filter(active).collect();
    let want = rs["spec"]["replicas"].as_i64().unwrap_or(1).max(0) as usize;
    if running.len() < want {
        for _ in running.len()..want {
            if let Some(pod) = pass.create(PODS, pod_from(rs, &api_version, rt.kind, None), MANAGER) {
                running.push(pod);
            }
        }
    } else if running.len() > want {
        deletion_order(&mut running);
        let surplus = running.len() - want;
        for pod in running.drain(..surplus) {
            pass.delete(PODS, &pod);
        }
    }
    let min_ready = rs["spec"]["minReadySeconds"].as_f64().unwrap_or(0.0);
    let template_labels = rs["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let labelled = running
        .iter()
        .filter(|p| {
            template_labels
                .iter()
                .all(|(k, v)| p["metadata"]["labels"][k] == *v)
        })
        .count();
    let ready = running.iter().filter(|p| ready(p)).count();
    let available = running.iter().filter(|p| available(pass, p, min_ready)).count();
    let mut status = counts(
        &[
            ("replicas", running.len() as i64),
            ("fullyLabeledReplicas", labelled as i64),
            ("readyReplicas", ready as i64),
            ("availableReplicas", available as i64),
            (
                "observedGeneration",
                rs["metadata"]["generation"].as_i64().unwrap_or(1),
            ),
        ],
        &["replicas"],
    );
    if rt == REPLICASETS {
        status["terminatingReplicas"] = json!(0);
    }
    write_status(pass, rt, rs, status);
}

/// A StatefulSet pod's ordinal, from its name.
fn ordinal(set_name: &str, pod: &Value) -> Option<usize> {
    pod["metadata"]["name"]
        .as_str()?
        .strip_prefix(set_name)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

fn revision_of(pod: &Value) -> &str {
    pod["metadata"]["labels"][REVISION_LABEL].as_str().unwrap_or("")
}

/// Pod `index` of a StatefulSet, with its claims from the volume claim templates.
fn stateful_pod(pass: &mut Pass, set: &Value, index: usize, revision: &str) -> Option<Value> {
    let name = set["metadata"]["name"].as_str().unwrap_or("");
    let pod_name = format!("{name}-{index}");
    let mut pod = pod_from(set, "apps/v1", "StatefulSet", Some(&pod_name));
    let labels = &mut pod["metadata"]["labels"];
    labels[REVISION_LABEL] = json!(revision);
    labels["statefulset.kubernetes.io/pod-name"] = json!(pod_name);
    labels["apps.kubernetes.io/pod-index"] = json!(index.to_string());
    pod["spec"]["hostname"] = json!(pod_name);
    if let Some(service) = set["spec"]["serviceName"].as_str().filter(|s| !s.is_empty()) {
        pod["spec"]["subdomain"] = json!(service);
    }
    for template in set["spec"]["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let volume = template["metadata"]["name"].as_str().unwrap_or("");
        let claim = format!("{volume}-{pod_name}");
        let namespace = set["metadata"]["namespace"].as_str().unwrap_or("");
        if pass.get(&PERSISTENTVOLUMECLAIMS, namespace, &claim).is_none() {
            let mut labels = template["metadata"]["labels"].clone();
            for (k, v) in set["spec"]["selector"]["matchLabels"]
                .as_object()
                .into_iter()
                .flatten()
            {
                labels[k] = v.clone();
            }
            let object = json!({
                "metadata": {"name": claim, "namespace": namespace, "labels": labels},
                "spec": template["spec"],
            });
            pass.create(PERSISTENTVOLUMECLAIMS, object, MANAGER)?;
        }
        let volumes = pod["spec"]["volumes"].as_array_mut();
        let mut kept: Vec<Value> = volumes
            .map(std::mem::take)
            .unwrap_or_default()
            .into_iter()
            .filter(|v| v["name"] != volume)
            .collect();
        kept.push(json!({"name": volume, "persistentVolumeClaim": {"claimName": claim}}));
        pod["spec"]["volumes"] = json!(kept);
    }
    pass.create(PODS, pod, MANAGER)
}

fn stateful_set(pass: &mut Pass, set: &Value) {
    let name = set["metadata"]["name"].as_str().unwrap_or("").to_string();
    let replicas = set["spec"]["replicas"].as_i64().unwrap_or(1).max(0) as usize;
    let ordered = set["spec"]["podManagementPolicy"] != "Parallel";
    let update = format!("{name}-{}", template_hash(&set["spec"]["template"]));
    let mut pods: Vec<(usize, Value)> = owned(pass, &PODS, set)
        .into_iter()
        .filter_map(|p| ordinal(&name, &p).map(|i| (i, p)))
        .collect();
    pods.sort_by_key(|(i, _)| *i);
    let healthy = |p: &Value| phase(p) == "Running" && ready(p);
    // Failed pods are deleted, and made again below.
    for (_, pod) in pods.iter().filter(|(_, p)| terminal(p)) {
        pass.delete(PODS, pod);
    }
    pods.retain(|(_, p)| !terminal(p));
    let all_healthy = pods.iter().all(|(_, p)| healthy(p));
    // Beyond the size: the highest ordinal first (one at a time when ordered).
    let condemned: Vec<Value> = pods
        .iter()
        .rev()
        .filter(|(i, _)| *i >= replicas)
        .map(|(_, p)| p.clone())
        .take(if ordered {
            usize::from(all_healthy)
        } else {
            usize::MAX
        })
        .collect();
    for pod in &condemned {
        pass.delete(PODS, pod);
    }
    pods.retain(|(i, _)| *i < replicas);
    // Missing ordinals: the lowest first, each once those below it run and are ready.
    let mut blocked = false;
    for index in 0..replicas {
        if let Some((_, pod)) = pods.iter().find(|(i, _)| *i == index) {
            blocked |= ordered && !healthy(pod);
            continue;
        }
        if blocked {
            break;
        }
        if let Some(pod) = stateful_pod(pass, set, index, &update) {
            blocked |= ordered;
            pods.push((index, pod));
        }
    }
    pods.sort_by_key(|(i, _)| *i);
    // Rolling update: the highest ordinal at or above the partition on another revision goes
    // once every pod runs and is ready.
    let strategy = &set["spec"]["updateStrategy"];
    let rolling = strategy["type"] != "OnDelete";
    let partition = strategy["rollingUpdate"]["partition"].as_u64().unwrap_or(0) as usize;
    let settled = pods.len() == replicas && pods.iter().all(|(_, p)| healthy(p));
    if rolling && settled {
        let stale = pods
            .iter()
            .rev()
            .find(|(i, p)| *i >= partition && revision_of(p) != update);
        if let Some((_, pod)) = stale {
            pass.delete(PODS, pod);
        }
    }
    let min_ready = set["spec"]["minReadySeconds"].as_f64().unwrap_or(0.0);
    let current = set["status"]["currentRevision"]
        .as_str()
        .filter(|r| !r.is_empty())
        .unwrap_or(&update)
        .to_string();
    let on = |revision: &str| pods.iter().filter(|(_, p)| revision_of(p) == revision).count() as i64;
    let ready_count = pods.iter().filter(|(_, p)| ready(p)).count() as i64;
    let available_count = pods.iter().filter(|(_, p)| available(pass, p, min_ready)).count() as i64;
    let (updated, total) = (on(&update), pods.len() as i64);
    // `completeRollingUpdate`: every pod updated and ready makes the update revision current.
    let (current, current_count) = if rolling && updated == total && ready_count == total {
        (update.clone(), updated)
    } else {
        (current.clone(), on(&current))
    };
    let mut status = counts(
        &[
            (
                "observedGeneration",
                set["metadata"]["generation"].as_i64().unwrap_or(1),
            ),
            ("replicas", total),
            ("readyReplicas", ready_count),
            ("currentReplicas", current_count),
            ("updatedReplicas", updated),
            ("availableReplicas", available_count),
            ("collisionCount", 0),
        ],
        &["replicas", "availableReplicas", "collisionCount"],
    );
    status["currentRevision"] = json!(current);
    status["updateRevision"] = json!(update);
    write_status(pass, STATEFULSETS, set, status);
}

/// The tolerations the DaemonSet controller gives its pods.
fn daemon_tolerations() -> Vec<Value> {
    let mut list = vec![];
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        list.push(json!({"key": key, "operator": "Exists", "effect": "NoExecute"}));
    }
    for key in [
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
    ] {
        list.push(json!({"key": key, "operator": "Exists", "effect": "NoSchedule"}));
    }
    list
}

/// `NodeShouldRunDaemonPod`: the node's labels match, and its taints are tolerated.
fn should_run(pod_spec: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let selected = pod_spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels[k] == *v);
    let required = &pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let affine = required.is_null() || node_selector_matches(required, node);
    let taints = node["spec"]["taints"].as_array().cloned().unwrap_or_default();
    selected
        && affine
        && taints
            .iter()
            .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
            .all(|t| tolerates(pod_spec, t))
}

/// The node a DaemonSet pod is for: bound there, or pinned there by its node affinity.
fn daemon_node(pod: &Value) -> Option<String> {
    if let Some(node) = pod["spec"]["nodeName"].as_str() {
        return Some(node.to_string());
    }
    let terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"]
        .as_array()?;
    terms.iter().find_map(|t| {
        t["matchFields"].as_array()?.iter().find_map(|f| {
            (f["key"] == "metadata.name").then(|| f["values"][0].as_str().map(str::to_string))?
        })
    })
}

fn daemon_pod(set: &Value, node: &str, generation: &str, revision: &str) -> Value {
    let mut pod = pod_from(set, "apps/v1", "DaemonSet", None);
    pod["metadata"]["labels"][REVISION_LABEL] = json!(revision);
    pod["metadata"]["labels"]["pod-template-generation"] = json!(generation);
    let pin = json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]});
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = pin;
    let mut tolerations = pod["spec"]["tolerations"].as_array().cloned().unwrap_or_default();
    for t in daemon_tolerations() {
        if !tolerations
            .iter()
            .any(|have| have["key"] == t["key"] && have["effect"] == t["effect"])
        {
            tolerations.push(t);
        }
    }
    pod["spec"]["tolerations"] = json!(tolerations);
    pod
}

fn daemon_set(pass: &mut Pass, set: &Value, nodes: &[Value]) {
    let generation = set["metadata"]["annotations"][DAEMON_GENERATION]
        .as_str()
        .unwrap_or("1")
        .to_string();
    let revision = template_hash(&set["spec"]["template"]);
    let mut spec = set["spec"]["template"]["spec"].clone();
    spec["tolerations"] = json!(
        spec["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .cloned()
            .chain(daemon_tolerations())
            .collect::<Vec<_>>()
    );
    let pods = owned(pass, &PODS, set);
    let min_ready = set["spec"]["minReadySeconds"].as_f64().unwrap_or(0.0);
    let current = |p: &Value| p["metadata"]["labels"]["pod-template-generation"] == generation.as_str();
    let strategy = &set["spec"]["updateStrategy"];
    let rolling = strategy["type"] != "OnDelete";
    let eligible: Vec<&Value> = nodes.iter().filter(|n| should_run(&spec, n)).collect();
    let max_unavailable = scaled(
        &strategy["rollingUpdate"]["maxUnavailable"],
        eligible.len() as i64,
        true,
    )
    .max(1);
    let (mut desired, mut scheduled, mut misscheduled) = (0, 0, 0);
    let (mut ready_count, mut updated, mut available_count) = (0, 0, 0);
    let mut stale = Vec::new();
    for pod in pods.iter().filter(|p| terminal(p)) {
        pass.delete(PODS, pod);
    }
    for node in nodes {
        let name = node["metadata"]["name"].as_str().unwrap_or("");
        let here: Vec<&Value> = pods
            .iter()
            .filter(|p| !terminal(p) && daemon_node(p).as_deref() == Some(name))
            .collect();
        if !eligible.iter().any(|n| n["metadata"]["name"] == name) {
            misscheduled += i64::from(here.iter().any(|p| p["spec"]["nodeName"].is_string()));
            for pod in here {
                pass.delete(PODS, pod);
            }
            continue;
        }
        desired += 1;
        let Some(pod) = here.first() else {
            pass.create(PODS, daemon_pod(set, name, &generation, &revision), MANAGER);
            continue;
        };
        scheduled += 1;
        ready_count += i64::from(ready(pod));
        let is_available = available(pass, pod, min_ready);
        available_count += i64::from(is_available);
        if current(pod) {
            updated += 1;
        } else {
            stale.push(((*pod).clone(), is_available));
        }
    }
    // Rolling update: old pods go, unavailable ones first, while fewer than maxUnavailable of
    // the set's pods are unavailable.
    if rolling {
        stale.sort_by_key(|(_, is_available)| *is_available);
        let mut unavailable = desired - available_count;
        for (pod, is_available) in stale {
            if is_available && unavailable >= max_unavailable {
                break;
            }
            unavailable += i64::from(is_available);
            pass.delete(PODS, &pod);
        }
    }
    let status = counts(
        &[
            ("currentNumberScheduled", scheduled),
            ("numberMisscheduled", misscheduled),
            ("desiredNumberScheduled", desired),
            ("numberReady", ready_count),
            (
                "observedGeneration",
                set["metadata"]["generation"].as_i64().unwrap_or(1),
            ),
            ("updatedNumberScheduled", updated),
            ("numberAvailable", available_count),
            ("numberUnavailable", desired - available_count),
        ],
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        ],
    );
    write_status(pass, DAEMONSETS, set, status);
}
