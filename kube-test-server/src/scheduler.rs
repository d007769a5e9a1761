//! Simulated nodes and the scheduler, after `../shared/realk8s/nodes.py` (the nodes of `make
//! test-real`'s cluster), so both clusters look alike: nodes `realk8s-node-1..2`, Ready, with
//! cpu 8, memory 32Gi, 110 pods, zone labels, an InternalIP each and the annotation
//! `realk8s.local/simulated`. The scheduler binds pods of the default scheduler to those nodes
//! that pass its filters (cordon, taints, node selector and required node affinity, host
//! ports, cpu/memory/pods requests, the claims' nodes), spreading a controller's pods; a pod
//! that fits nowhere stays Pending with `PodScheduled=False`, reason `Unschedulable` and the
//! scheduler's message (`0/2 nodes are available: 2 Insufficient cpu.`). Claims of a
//! `WaitForFirstConsumer` class get the chosen node (`volume.kubernetes.io/selected-node`)
//! and the pod waits for them to bind. Required pod (anti-)affinity is evaluated; preferences,
//! spread constraints and preemption are not.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::defaults::Quantity;
use crate::pass::{Pass, controller_uid};
use crate::pods::terminal;
use crate::resources::{NODES, PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STORAGECLASSES};

/// How many nodes a cluster with nodes has (realk8s' default).
pub const NODE_COUNT: usize = 2;
/// The annotation of the simulated nodes; pods are scheduled only onto those.
pub const SIMULATED: &str = "realk8s.local/simulated";
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
const CAPACITY: [(&str, &str); 6] = [
    ("cpu", "8"),
    ("memory", "32Gi"),
    ("pods", "110"),
    ("ephemeral-storage", "100Gi"),
    ("hugepages-1Gi", "0"),
    ("hugepages-2Mi", "0"),
];

/// The simulated nodes as a fresh cluster registers them.
pub fn nodes(time: &str) -> Vec<Value> {
    (1..=NODE_COUNT)
        .map(|i| {
            let name = format!("realk8s-node-{i}");
            let zone = format!("realk8s-zone-{}", ["a", "b", "c"][(i - 1) % 3]);
            let capacity: serde_json::Map<String, Value> =
                CAPACITY.iter().map(|(k, v)| ((*k).into(), json!(v))).collect();
            let condition = |kind: &str, status: &str, reason: &str, message: &str| {
                json!({"type": kind, "status": status, "reason": reason, "message": message,
                       "lastHeartbeatTime": time, "lastTransitionTime": time})
            };
            json!({
                "kind": "Node", "apiVersion": "v1",
                "metadata": {
                    "name": name,
                    "annotations": {SIMULATED: "true", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                    "labels": {
                        "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                        "node.kubernetes.io/instance-type": "realk8s-sim",
                        "topology.kubernetes.io/region": "realk8s", "topology.kubernetes.io/zone": zone,
                    },
                },
                "spec": {"podCIDR": format!("10.244.{i}.0/24"), "podCIDRs": [format!("10.244.{i}.0/24")],
                         "providerID": format!("realk8s://{name}")},
                "status": {
                    "capacity": capacity, "allocatable": capacity,
                    "conditions": [
                        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status (simulated)"),
                    ],
                    "addresses": [{"type": "InternalIP", "address": format!("127.0.0.{}", i + 1)},
                                  {"type": "Hostname", "address": name}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                    "nodeInfo": {
                        "architecture": "amd64", "operatingSystem": "linux", "osImage": "Linux",
                        "containerRuntimeVersion": "realk8s://simulated", "kubeletVersion": "v1.36.0",
                        "kubeProxyVersion": "", "kernelVersion": "", "bootID": "", "machineID": "", "systemUUID": "",
                    },
                },
            })
        })
        .collect()
}

/// The simulated nodes of the store, in their order.
pub fn simulated(pass: &Pass) -> Vec<Value> {
    let mut nodes: Vec<Value> = pass
        .list(&NODES, None)
        .into_iter()
        .filter(|n| n["metadata"]["annotations"][SIMULATED] == "true")
        .collect();
    nodes.sort_by_key(node_index);
    nodes
}

/// N of `realk8s-node-N`.
pub fn node_index(node: &Value) -> usize {
    node["metadata"]["name"]
        .as_str()
        .and_then(|n| n.rsplit('-').next()?.parse().ok())
        .unwrap_or(0)
}

fn quantity(value: &Value) -> f64 {
    match value {
        Value::String(s) => Quantity::parse(s).map_or(0.0, |q| q.as_f64()),
        Value::Number(n) => n.as_f64().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// `matchExpressions` / `matchFields` requirement against labels or fields.
fn requirement(expr: &Value, values: &serde_json::Map<String, Value>) -> bool {
    let key = expr["key"].as_str().unwrap_or("");
    let have = values.get(key).and_then(Value::as_str);
    let list: Vec<&str> = expr["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let number = |s: &str| s.parse::<i64>().ok();
    match expr["operator"].as_str().unwrap_or("") {
        "In" => have.is_some_and(|v| list.contains(&v)),
        "NotIn" => have.is_none_or(|v| !list.contains(&v)),
        "Exists" => have.is_some(),
        "DoesNotExist" => have.is_none(),
        "Gt" => have
            .and_then(number)
            .zip(list.first().and_then(|v| number(v)))
            .is_some_and(|(a, b)| a > b),
        "Lt" => have
            .and_then(number)
            .zip(list.first().and_then(|v| number(v)))
            .is_some_and(|(a, b)| a < b),
        _ => false,
    }
}

/// A `NodeSelector` (terms ORed, requirements ANDed) against a node.
pub fn node_selector_matches(selector: &Value, node: &Value) -> bool {
    let labels = node["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut fields = serde_json::Map::new();
    fields.insert("metadata.name".into(), node["metadata"]["name"].clone());
    selector["nodeSelectorTerms"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|term| {
            let exprs = term["matchExpressions"].as_array().cloned().unwrap_or_default();
            let by_field = term["matchFields"].as_array().cloned().unwrap_or_default();
            !(exprs.is_empty() && by_field.is_empty())
                && exprs.iter().all(|e| requirement(e, &labels))
                && by_field.iter().all(|e| requirement(e, &fields))
        })
}

/// Whether a pod spec's tolerations tolerate `taint`.
pub fn tolerates(pod_spec: &Value, taint: &Value) -> bool {
    pod_spec["tolerations"].as_array().into_iter().flatten().any(|t| {
        if t["effect"].as_str().is_some_and(|e| !e.is_empty()) && t["effect"] != taint["effect"] {
            return false;
        }
        if t["operator"] == "Exists" {
            return t["key"].as_str().is_none_or(str::is_empty) || t["key"] == taint["key"];
        }
        let value = |v: &Value| v.as_str().unwrap_or("").to_string();
        t["key"] == taint["key"] && value(&t["value"]) == value(&taint["value"])
    })
}

/// A pod's requests as the scheduler counts them: containers summed, init containers at their
/// largest (sidecars added), overhead added; `spec.resources` when set.
fn requests(spec: &Value) -> BTreeMap<String, f64> {
    let mut total = BTreeMap::new();
    let read = |c: &Value| -> Vec<(String, f64)> {
        c["resources"]["requests"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), quantity(v)))
            .collect()
    };
    if spec["resources"]["requests"].is_object() {
        for (k, v) in read(spec) {
            *total.entry(k).or_insert(0.0) += v;
        }
        return total;
    }
    for c in spec["containers"].as_array().into_iter().flatten() {
        for (k, v) in read(c) {
            *total.entry(k).or_insert(0.0) += v;
        }
    }
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        for (k, v) in read(c) {
            let entry = total.entry(k).or_insert(0.0);
            *entry = if c["restartPolicy"] == "Always" {
                *entry + v
            } else {
                entry.max(v)
            };
        }
    }
    for (k, v) in spec["overhead"].as_object().into_iter().flatten() {
        *total.entry(k.clone()).or_insert(0.0) += quantity(v);
    }
    total
}

fn host_ports(spec: &Value) -> Vec<(String, i64)> {
    spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .filter_map(|p| {
            let port = p["hostPort"].as_i64().filter(|p| *p > 0)?;
            Some((p["protocol"].as_str().unwrap_or("TCP").to_string(), port))
        })
        .collect()
}

/// What the pod's claims require: an error while one is missing or unbound, else the bound
/// volumes' node affinities and the unbound claims of `WaitForFirstConsumer` classes.
fn volume_check(pass: &Pass, pod: &Value) -> Result<(Vec<Value>, Vec<Value>), String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let (mut terms, mut waiting) = (Vec::new(), Vec::new());
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let claim = if let Some(name) = volume["persistentVolumeClaim"]["claimName"].as_str() {
            name.to_string()
        } else if volume.get("ephemeral").is_some() {
            format!(
                "{}-{}",
                pod["metadata"]["name"].as_str().unwrap_or(""),
                volume["name"].as_str().unwrap_or("")
            )
        } else {
            continue;
        };
        let Some(pvc) = pass.get(&PERSISTENTVOLUMECLAIMS, namespace, &claim) else {
            return Err(if volume.get("ephemeral").is_some() {
                format!(
                    "waiting for ephemeral volume controller to create the persistentvolumeclaim \"{claim}\""
                )
            } else {
                format!("persistentvolumeclaim \"{claim}\" not found")
            });
        };
        if pvc["metadata"].get("deletionTimestamp").is_some() {
            return Err(format!("persistentvolumeclaim \"{claim}\" is being deleted"));
        }
        if let Some(volume_name) = pvc["spec"]["volumeName"].as_str()
            && pvc["status"]["phase"] == "Bound"
        {
            if let Some(pv) = pass.get(&PERSISTENTVOLUMES, "", volume_name) {
                let required = &pv["spec"]["nodeAffinity"]["required"];
                if required.is_object() {
                    terms.push(required.clone());
                }
            }
            continue;
        }
        let class = pvc["spec"]["storageClassName"].as_str().unwrap_or("");
        let delayed = pass
            .get(&STORAGECLASSES, "", class)
            .is_some_and(|c| c["volumeBindingMode"] == "WaitForFirstConsumer");
        if delayed && pvc["spec"]["volumeName"].is_null() {
            waiting.push(pvc);
        } else {
            return Err("pod has unbound immediate PersistentVolumeClaims".into());
        }
    }
    Ok((terms, waiting))
}

/// Why the pod does not fit `node` (empty: it fits).
fn filter(pod: &Value, node: &Value, usage: &Usage, terms: &[Value]) -> Vec<String> {
    let spec = &pod["spec"];
    let name = node["metadata"]["name"].as_str().unwrap_or("");
    let cordon = json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"});
    if node["spec"]["unschedulable"] == true && !tolerates(spec, &cordon) {
        return vec!["node(s) were unschedulable".into()];
    }
    for taint in node["spec"]["taints"].as_array().into_iter().flatten() {
        if matches!(taint["effect"].as_str(), Some("NoSchedule" | "NoExecute")) && !tolerates(spec, taint) {
            return vec![format!(
                "node(s) had untolerated taint {{{}: {}}}",
                taint["key"].as_str().unwrap_or(""),
                taint["value"].as_str().unwrap_or("")
            )];
        }
    }
    let labels = &node["metadata"]["labels"];
    let required = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let selected = spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels[k] == *v);
    if !selected || (required.is_object() && !node_selector_matches(required, node)) {
        return vec!["node(s) didn't match Pod's node affinity/selector".into()];
    }
    let wanted = host_ports(spec);
    let taken = usage.ports.get(name).cloned().unwrap_or_default();
    if wanted.iter().any(|p| taken.contains(p)) {
        return vec!["node(s) didn't have free ports for the requested pod ports".into()];
    }
    let allocatable = &node["status"]["allocatable"];
    let used = usage.requests.get(name).cloned().unwrap_or_default();
    let mut why: Vec<String> = requests(spec)
        .into_iter()
        .filter(|(resource, amount)| {
            *amount > 0.0
                && allocatable.get(resource).is_some()
                && used.get(resource).copied().unwrap_or(0.0) + amount > quantity(&allocatable[resource])
        })
        .map(|(resource, _)| format!("Insufficient {resource}"))
        .collect();
    let pods = usage.pods.get(name).copied().unwrap_or(0) as f64;
    if pods + 1.0 > quantity(&allocatable["pods"]).max(1.0) {
        why.push("Too many pods".into());
    }
    if why.is_empty() && !terms.iter().all(|t| node_selector_matches(t, node)) {
        why.push("node(s) had volume node affinity conflict".into());
    }
    if why.is_empty() {
        why.extend(pod_affinity(pod, node, usage));
    }
    why
}

/// Required pod affinity and anti-affinity (the pod's, and the placed pods' against it).
fn pod_affinity(pod: &Value, node: &Value, usage: &Usage) -> Option<String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    let labels = &node["metadata"]["labels"];
    let matches = |term: &Value, owner_namespace: &str, other: &Value| {
        let namespaces: Vec<&str> = term["namespaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let other_namespace = other["metadata"]["namespace"].as_str().unwrap_or("");
        let in_scope = term["namespaceSelector"].is_object()
            || if namespaces.is_empty() {
                other_namespace == owner_namespace
            } else {
                namespaces.contains(&other_namespace)
            };
        in_scope
            && !term["labelSelector"].is_null()
            && crate::selectors::LabelSelector::from_label_selector(&term["labelSelector"])
                .is_ok_and(|s| s.matches_object(other))
    };
    // The topology domain of `key` the placed pod `other` is in.
    let domain = |other: &Value, key: &str| {
        let name = other["spec"]["nodeName"].as_str().unwrap_or("");
        usage.node_labels.get(name).and_then(|l| l.get(key)).cloned()
    };
    let required = |p: &Value, kind: &str| {
        p["spec"]["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let others: Vec<&Value> = usage
        .placed
        .iter()
        .filter(|o| o["metadata"]["uid"] != pod["metadata"]["uid"])
        .collect();
    for term in required(pod, "podAntiAffinity") {
        let key = term["topologyKey"].as_str().unwrap_or("");
        if let Some(value) = labels.get(key)
            && others
                .iter()
                .any(|o| matches(&term, namespace, o) && domain(o, key).as_ref() == Some(value))
        {
            return Some("node(s) didn't match pod anti-affinity rules".into());
        }
    }
    for other in &others {
        for term in required(other, "podAntiAffinity") {
            let key = term["topologyKey"].as_str().unwrap_or("");
            let owner = other["metadata"]["namespace"].as_str().unwrap_or("");
            if let Some(value) = labels.get(key)
                && matches(&term, owner, pod)
                && domain(other, key).as_ref() == Some(value)
            {
                return Some("node(s) didn't satisfy existing pods anti-affinity rules".into());
            }
        }
    }
    for term in required(pod, "podAffinity") {
        let key = term["topologyKey"].as_str().unwrap_or("");
        let matching: Vec<&&Value> = others.iter().filter(|o| matches(&term, namespace, o)).collect();
        let fits = match labels.get(key) {
            None => false,
            // The first pod of a group that selects itself may go anywhere.
            Some(_) if matching.is_empty() => matches(&term, namespace, pod),
            Some(value) => matching.iter().any(|o| domain(o, key).as_ref() == Some(value)),
        };
        if !fits {
            return Some("node(s) didn't match pod affinity rules".into());
        }
    }
    None
}

/// What the pods bound to each node take.
#[derive(Default)]
struct Usage {
    requests: HashMap<String, BTreeMap<String, f64>>,
    pods: HashMap<String, usize>,
    ports: HashMap<String, Vec<(String, i64)>>,
    /// Pods per node and controller uid, to spread a controller's pods.
    siblings: HashMap<(String, String), usize>,
    /// The pods placed on a node, and each node's labels (for pod affinity).
    placed: Vec<Value>,
    node_labels: HashMap<String, Value>,
}

impl Usage {
    fn of(pods: &[Value], nodes: &[Value]) -> Usage {
        let mut usage = Usage::default();
        for node in nodes {
            let name = node["metadata"]["name"].as_str().unwrap_or("").to_string();
            usage.node_labels.insert(name, node["metadata"]["labels"].clone());
        }
        for pod in pods.iter().filter(|p| !terminal(p)) {
            usage.add(pod);
        }
        usage
    }

    fn add(&mut self, pod: &Value) {
        let Some(node) = pod["spec"]["nodeName"].as_str() else {
            return;
        };
        let requests = self.requests.entry(node.to_string()).or_default();
        for (resource, amount) in self::requests(&pod["spec"]) {
            *requests.entry(resource).or_insert(0.0) += amount;
        }
        *self.pods.entry(node.to_string()).or_default() += 1;
        self.ports
            .entry(node.to_string())
            .or_default()
            .extend(host_ports(&pod["spec"]));
        if let Some(owner) = controller_uid(pod) {
            *self
                .siblings
                .entry((node.to_string(), owner.to_string()))
                .or_default() += 1;
        }
        self.placed.push(pod.clone());
    }
}

/// Schedules every pod of the default scheduler that waits for a node.
pub fn sync(pass: &mut Pass) {
    let pods = pass.list(&PODS, None);
    let nodes = simulated(pass);
    let mut usage = Usage::of(&pods, &nodes);
    for pod in &pods {
        let spec = &pod["spec"];
        let waiting = spec["nodeName"].as_str().is_none_or(str::is_empty)
            && !terminal(pod)
            && pod["metadata"].get("deletionTimestamp").is_none()
            && spec["schedulerName"]
                .as_str()
                .is_none_or(|s| s == "default-scheduler")
            && spec["schedulingGates"].as_array().is_none_or(Vec::is_empty);
        if waiting && let Some(bound) = schedule(pass, pod, &nodes, &usage) {
            usage.add(&bound);
        }
    }
}

/// Binds `pod` to the best node that fits, or records why none does.
fn schedule(pass: &mut Pass, pod: &Value, nodes: &[Value], usage: &Usage) -> Option<Value> {
    let message = match volume_check(pass, pod) {
        _ if nodes.is_empty() => "no nodes available to schedule pods".to_string(),
        Err(why) => format!("0/{} nodes are available: {why}.", nodes.len()),
        Ok((terms, waiting)) => {
            let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
            let mut fit = Vec::new();
            for node in nodes {
                let why = filter(pod, node, usage, &terms);
                if why.is_empty() {
                    fit.push(node);
                }
                for reason in why {
                    *reasons.entry(reason).or_default() += 1;
                }
            }
            if let Some(best) = best(pod, &fit, &waiting, usage) {
                if waiting.is_empty() {
                    return Some(bind(pass, pod, &best));
                }
                // WaitForFirstConsumer: the claims learn the node; the pod waits for them.
                for claim in waiting
                    .iter()
                    .filter(|c| c["metadata"]["annotations"][SELECTED_NODE] != best.as_str())
                {
                    let mut selected = claim.clone();
                    selected["metadata"]["annotations"][SELECTED_NODE] = json!(best);
                    pass.update(PERSISTENTVOLUMECLAIMS, claim, selected, "kube-scheduler", None);
                }
                return None;
            }
            let listed: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            format!("0/{} nodes are available: {}.", nodes.len(), listed.join(", "))
        }
    };
    unschedulable(pass, pod, &message);
    None
}

/// The node for a pod among those it fits: one its claims already chose, else the one with the
/// fewest of its controller's pods, then the fewest pods.
fn best(pod: &Value, fit: &[&Value], waiting: &[Value], usage: &Usage) -> Option<String> {
    let names: Vec<&str> = fit
        .iter()
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect();
    let chosen = waiting
        .iter()
        .filter_map(|c| c["metadata"]["annotations"][SELECTED_NODE].as_str())
        .find(|n| names.contains(n));
    if let Some(node) = chosen {
        return Some(node.to_string());
    }
    let owner = controller_uid(pod).unwrap_or("").to_string();
    fit.iter()
        .min_by_key(|n| {
            let name = n["metadata"]["name"].as_str().unwrap_or("").to_string();
            let siblings = usage
                .siblings
                .get(&(name.clone(), owner.clone()))
                .copied()
                .unwrap_or(0);
            (
                siblings,
                usage.pods.get(&name).copied().unwrap_or(0),
                node_index(n),
            )
        })
        .and_then(|n| n["metadata"]["name"].as_str().map(str::to_string))
}

/// `pods/binding`: the node name, and `PodScheduled=True`.
fn bind(pass: &mut Pass, pod: &Value, node: &str) -> Value {
    let mut bound = pod.clone();
    bound["spec"]["nodeName"] = json!(node);
    set_condition(
        &mut bound,
        json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": pass.time}),
    );
    let mut stored = bound.clone();
    // The binding is no field manager's write: the stored object keeps its entries.
    stored["metadata"]["managedFields"] = pod["metadata"]["managedFields"].clone();
    let key = PODS.key();
    pass.update(PODS, pod, stored, "kube-scheduler", Some("binding"));
    pass.store
        .get(
            &key,
            pod["metadata"]["namespace"].as_str().unwrap_or(""),
            pod["metadata"]["name"].as_str().unwrap_or(""),
        )
        .cloned()
        .unwrap_or(bound)
}

fn unschedulable(pass: &mut Pass, pod: &Value, message: &str) {
    let current = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "PodScheduled");
    if current.is_some_and(|c| c["status"] == "False" && c["message"] == message) {
        return;
    }
    let mut pending = pod.clone();
    set_condition(
        &mut pending,
        json!({"type": "PodScheduled", "status": "False", "lastProbeTime": null, "lastTransitionTime": pass.time,
               "reason": "Unschedulable", "message": message}),
    );
    pass.update(PODS, pod, pending, "kube-scheduler", Some("status"));
}

/// Puts a pod condition in place of the one of its type.
fn set_condition(pod: &mut Value, condition: Value) {
    let mut conditions = pod["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions.retain(|c| c["type"] != condition["type"]);
    conditions.push(condition);
    pod["status"]["conditions"] = json!(conditions);
}
