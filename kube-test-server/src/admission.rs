//! The admission plugins of the recorded apiserver's default chain that change or refuse
//! objects: ServiceAccount (a Pod's API-access volume), DefaultTolerationSeconds, Priority,
//! LimitRanger, StorageObjectInUseProtection, DefaultStorageClass and ResourceQuota.
//!
//! Mutating plugins run after the field manager, so nothing they set is owned by the writer.

use serde_json::{Map, Value, json};

use crate::defaults::Quantity;
use crate::meta;
use crate::resources::{self, ResourceType};
use crate::status::{self, ApiError};
use crate::store::Store;

/// Where the ServiceAccount admission plugin mounts a Pod's API credentials.
const TOKEN_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Runs the mutating plugins on a new object in `namespace`.
pub fn mutate_create(
    rt: &ResourceType,
    obj: &mut Value,
    store: &Store,
    namespace: &str,
) -> Result<(), ApiError> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let forbidden = |message: &str| status::forbidden(rt.target(Some(&name)), message);
    match rt.kind {
        "Pod" => {
            service_account(obj, store, namespace).map_err(|m| forbidden(&m))?;
            default_tolerations(&mut obj["spec"]);
            priority(obj, store).map_err(|m| forbidden(&m))?;
            limit_ranger(obj, store, namespace).map_err(|m| forbidden(&m))?;
        }
        "PersistentVolumeClaim" => {
            add_finalizer(obj, "kubernetes.io/pvc-protection");
            default_storage_class(obj, store);
        }
        "PersistentVolume" => add_finalizer(obj, "kubernetes.io/pv-protection"),
        _ => {}
    }
    Ok(())
}

/// Runs the mutating plugins that also act on an update: DefaultTolerationSeconds adds its
/// tolerations back to a pod whose new spec lacks them (an apply that replaces the atomic
/// list), so the update does not remove them.
pub fn mutate_update(rt: &ResourceType, obj: &mut Value) {
    if rt.kind == "Pod" {
        default_tolerations(&mut obj["spec"]);
    }
}

fn add_finalizer(obj: &mut Value, finalizer: &str) {
    let meta = &mut obj["metadata"];
    if !meta["finalizers"].is_array() {
        meta["finalizers"] = json!([]);
    }
    let list = meta["finalizers"].as_array_mut().expect("just made an array");
    if !list.iter().any(|f| f == finalizer) {
        list.push(json!(finalizer));
    }
}

/// Sets `serviceAccountName`, checks the account exists and mounts its projected token, the
/// cluster CA bundle and the namespace.
fn service_account(pod: &mut Value, store: &Store, namespace: &str) -> Result<(), String> {
    let spec = &mut pod["spec"];
    let account = match spec["serviceAccountName"].as_str().filter(|s| !s.is_empty()) {
        Some(a) => a.to_string(),
        None => spec["serviceAccount"]
            .as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("default")
            .to_string(),
    };
    spec["serviceAccountName"] = json!(account);
    spec["serviceAccount"] = json!(account);
    let Some(sa) = store.get(&resources::SERVICEACCOUNTS.key(), namespace, &account) else {
        return Err(format!(
            "error looking up service account {namespace}/{account}: serviceaccount \"{account}\" not found"
        ));
    };
    if spec["imagePullSecrets"].as_array().is_none_or(Vec::is_empty)
        && let Some(secrets) = sa["imagePullSecrets"].as_array().filter(|s| !s.is_empty())
    {
        spec["imagePullSecrets"] = json!(secrets);
    }
    let automount = spec["automountServiceAccountToken"]
        .as_bool()
        .or_else(|| sa["automountServiceAccountToken"].as_bool())
        .unwrap_or(true);
    if !automount {
        return Ok(());
    }
    let volume = format!("kube-api-access-{}", meta::name_suffix());
    let mut mounted = false;
    for key in ["initContainers", "containers"] {
        for c in spec
            .get_mut(key)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let mounts = c["volumeMounts"].as_array().cloned().unwrap_or_default();
            if mounts.iter().any(|m| m["mountPath"] == TOKEN_PATH) {
                continue;
            }
            let mut mounts = mounts;
            mounts.push(json!({"name": volume, "readOnly": true, "mountPath": TOKEN_PATH}));
            c["volumeMounts"] = json!(mounts);
            mounted = true;
        }
    }
    if mounted {
        let mut volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
        // The recorded (OpenShift-fork) apiserver also projects its service CA bundle.
        volumes.push(json!({"name": volume, "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            {"configMap": {"name": "openshift-service-ca.crt", "items": [{"key": "service-ca.crt", "path": "service-ca.crt"}]}}
        ], "defaultMode": 420}}));
        spec["volumes"] = json!(volumes);
    }
    Ok(())
}

/// Tolerates not-ready and unreachable nodes for 300 s unless the pod says otherwise.
fn default_tolerations(spec: &mut Value) {
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let tolerated = tolerations.iter().any(|t| {
            let effect_ok = t["effect"]
                .as_str()
                .is_none_or(|e| e.is_empty() || e == "NoExecute");
            let key_ok =
                t["key"] == key || (t["key"].as_str().is_none_or(str::is_empty) && t["operator"] == "Exists");
            effect_ok && key_ok
        });
        if !tolerated {
            tolerations.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
            );
        }
    }
    spec["tolerations"] = json!(tolerations);
}

/// Resolves `priorityClassName` (or the global default class) into `priority` and
/// `preemptionPolicy`.
fn priority(pod: &mut Value, store: &Store) -> Result<(), String> {
    let spec = &mut pod["spec"];
    let classes: Vec<&Value> = store.list(&resources::PRIORITYCLASSES.key(), None).collect();
    let class = match spec["priorityClassName"].as_str().filter(|s| !s.is_empty()) {
        Some(name) => Some(
            classes
                .iter()
                .find(|c| c["metadata"]["name"] == name)
                .copied()
                .ok_or_else(|| format!("no PriorityClass with name {name} was found"))?,
        ),
        None => classes
            .iter()
            .find(|c| c["globalDefault"] == json!(true))
            .copied(),
    };
    let value = class.and_then(|c| c["value"].as_i64()).unwrap_or(0);
    if let Some(given) = spec["priority"].as_i64()
        && given != value
    {
        return Err(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"
        ));
    }
    if let Some(c) = class {
        spec["priorityClassName"] = c["metadata"]["name"].clone();
    }
    spec["priority"] = json!(value);
    let policy = class
        .and_then(|c| c["preemptionPolicy"].as_str())
        .unwrap_or("PreemptLowerPriority");
    if spec["preemptionPolicy"].as_str().is_none_or(str::is_empty) {
        spec["preemptionPolicy"] = json!(policy);
    }
    Ok(())
}

/// Applies each LimitRange of the namespace: container defaults (noted in an annotation), then
/// its minimum, maximum and ratio constraints.
fn limit_ranger(pod: &mut Value, store: &Store, namespace: &str) -> Result<(), String> {
    let ranges: Vec<Value> = store
        .list(&resources::LIMITRANGES.key(), Some(namespace))
        .cloned()
        .collect();
    for range in &ranges {
        let items: Vec<&Value> = range["spec"]["limits"].as_array().into_iter().flatten().collect();
        if let Some(container_item) = items.iter().find(|i| i["type"] == "Container") {
            let mut notes = Vec::new();
            for (key, label) in [("containers", "container"), ("initContainers", "init container")] {
                let containers = pod["spec"].get_mut(key).and_then(Value::as_array_mut);
                for c in containers.into_iter().flatten() {
                    merge_container_defaults(c, container_item, label, &mut notes);
                }
            }
            if !notes.is_empty() {
                let meta = &mut pod["metadata"];
                if !meta["annotations"].is_object() {
                    meta["annotations"] = json!({});
                }
                meta["annotations"]["kubernetes.io/limit-ranger"] =
                    json!(format!("LimitRanger plugin set: {}", notes.join("; ")));
            }
        }
        let mut errors = Vec::new();
        for item in &items {
            match item["type"].as_str() {
                Some("Container") => {
                    for key in ["initContainers", "containers"] {
                        for c in pod["spec"][key].as_array().into_iter().flatten() {
                            check_limits(item, &c["resources"], "Container", &mut errors);
                        }
                    }
                }
                Some("Pod") => check_limits(item, &pod_totals(&pod["spec"]), "Pod", &mut errors),
                _ => {}
            }
        }
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(format!("[{}]", errors.join(", "))),
        }
    }
    Ok(())
}

fn merge_container_defaults(c: &mut Value, item: &Value, label: &str, notes: &mut Vec<String>) {
    let name = c["name"].as_str().unwrap_or("").to_string();
    let resources = &mut c["resources"];
    if !resources.is_object() {
        *resources = json!({});
    }
    let mut set_requests = Vec::new();
    let mut set_limits = Vec::new();
    for (list, defaults, set) in [
        ("limits", &item["default"], &mut set_limits),
        ("requests", &item["defaultRequest"], &mut set_requests),
    ] {
        for (k, v) in defaults.as_object().into_iter().flatten() {
            if resources[list].get(k).is_none() {
                if !resources[list].is_object() {
                    resources[list] = json!({});
                }
                resources[list][k] = v.clone();
                set.push(k.clone());
            }
        }
        meta::sort_keys(&mut resources[list]);
    }
    for (set, what) in [(set_requests, "request"), (set_limits, "limit")] {
        if !set.is_empty() {
            let mut set = set;
            set.sort();
            notes.push(format!("{} {what} for {label} {name}", set.join(", ")));
        }
    }
}

/// The summed requests and limits of a pod's containers (as a `resources` object).
fn pod_totals(spec: &Value) -> Value {
    let mut totals = json!({"requests": {}, "limits": {}});
    for c in spec["containers"].as_array().into_iter().flatten() {
        for list in ["requests", "limits"] {
            for (k, v) in c["resources"][list].as_object().into_iter().flatten() {
                let add = Quantity::parse(v.as_str().unwrap_or(""));
                let sum = match (
                    totals[list]
                        .get(k)
                        .and_then(Value::as_str)
                        .and_then(Quantity::parse),
                    add,
                ) {
                    (Some(t), Some(a)) => t.add(&a),
                    (None, a) => a,
                    (t, None) => t,
                };
                if let Some(s) = sum {
                    totals[list][k] = json!(s.canonical());
                }
            }
        }
    }
    totals
}

/// LimitRanger's min/max/ratio checks of one `resources` against one limit item.
fn check_limits(item: &Value, resources: &Value, kind: &str, errors: &mut Vec<String>) {
    let get = |list: &str, k: &str| resources[list][k].as_str().and_then(Quantity::parse);
    for (k, v) in item["min"].as_object().into_iter().flatten() {
        let Some(min) = v.as_str().and_then(Quantity::parse) else {
            continue;
        };
        match get("requests", k) {
            None => errors.push(format!(
                "minimum {k} usage per {kind} is {}.  No request is specified",
                min.canonical()
            )),
            Some(r) if r < min => errors.push(format!(
                "minimum {k} usage per {kind} is {}, but request is {}",
                min.canonical(),
                r.canonical()
            )),
            _ => {}
        }
    }
    for (k, v) in item["max"].as_object().into_iter().flatten() {
        let Some(max) = v.as_str().and_then(Quantity::parse) else {
            continue;
        };
        match get("limits", k) {
            None => errors.push(format!(
                "maximum {k} usage per {kind} is {}.  No limit is specified",
                max.canonical()
            )),
            Some(l) if l > max => errors.push(format!(
                "maximum {k} usage per {kind} is {}, but limit is {}",
                max.canonical(),
                l.canonical()
            )),
            _ => {}
        }
    }
}

/// Gives a claim without a class the cluster's default StorageClass, if one is marked.
fn default_storage_class(claim: &mut Value, store: &Store) {
    if claim["spec"]
        .get("storageClassName")
        .is_some_and(|c| !c.is_null())
    {
        return;
    }
    let default = store
        .list(&resources::STORAGECLASSES.key(), None)
        .filter(|c| c["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true")
        .max_by(|a, b| {
            a["metadata"]["creationTimestamp"]
                .as_str()
                .cmp(&b["metadata"]["creationTimestamp"].as_str())
        });
    if let Some(class) = default {
        claim["spec"]["storageClassName"] = class["metadata"]["name"].clone();
    }
}

/// What a new object adds to a ResourceQuota's `used`, by quota resource name.
fn quota_usage(rt: &ResourceType, obj: &Value) -> Map<String, Value> {
    let mut usage = Map::new();
    let count = |usage: &mut Map<String, Value>, key: String| {
        usage.insert(key, json!("1"));
    };
    count(
        &mut usage,
        if rt.group.is_empty() {
            format!("count/{}", rt.resource)
        } else {
            format!("count/{}.{}", rt.resource, rt.group)
        },
    );
    match rt.kind {
        "Pod"
        | "ConfigMap"
        | "Secret"
        | "Service"
        | "PersistentVolumeClaim"
        | "ReplicationController"
        | "ResourceQuota" => {
            count(&mut usage, rt.resource.to_string());
        }
        _ => {}
    }
    match rt.kind {
        "Pod" => {
            let totals = pod_totals(&obj["spec"]);
            for list in ["requests", "limits"] {
                for (k, v) in totals[list].as_object().into_iter().flatten() {
                    usage.insert(format!("{list}.{k}"), v.clone());
                    if list == "requests" {
                        usage.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        "Service" => match obj["spec"]["type"].as_str() {
            Some("LoadBalancer") => count(&mut usage, "services.loadbalancers".into()),
            Some("NodePort") => count(&mut usage, "services.nodeports".into()),
            _ => {}
        },
        "PersistentVolumeClaim" => {
            if let Some(storage) = obj["spec"]["resources"]["requests"].get("storage") {
                usage.insert("requests.storage".into(), storage.clone());
            }
        }
        _ => {}
    }
    usage
}

/// A quota status write the quota admission makes (manager `kube-apiserver`, status).
pub struct QuotaCharge {
    pub quota: Value,
}

/// ResourceQuota admission for a create: quotas whose status lists `hard` limits are enforced
/// (403 `exceeded quota`) and charged. Returns the updated quotas to store before the object.
pub fn charge_quota(
    rt: &ResourceType,
    obj: &Value,
    store: &Store,
    namespace: &str,
) -> Result<Vec<QuotaCharge>, ApiError> {
    if !rt.namespaced {
        return Ok(Vec::new());
    }
    let usage = quota_usage(rt, obj);
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    let mut charges = Vec::new();
    for quota in store.list(&resources::RESOURCEQUOTAS.key(), Some(namespace)) {
        let Some(hard) = quota["status"]["hard"].as_object().filter(|h| !h.is_empty()) else {
            continue;
        };
        let used = quota["status"]["used"].as_object().cloned().unwrap_or_default();
        let mut new_used = used.clone();
        // key=requested, key=used, key=limited for each exceeded resource.
        let mut exceeded: Vec<[String; 3]> = Vec::new();
        for (key, limit) in hard {
            let Some(delta) = usage.get(key).and_then(Value::as_str).and_then(Quantity::parse) else {
                continue;
            };
            let current = used
                .get(key)
                .and_then(Value::as_str)
                .and_then(Quantity::parse)
                .unwrap_or_else(|| Quantity::parse("0").expect("zero parses"));
            let (Some(total), Some(limit)) = (current.add(&delta), limit.as_str().and_then(Quantity::parse))
            else {
                continue;
            };
            if total > limit {
                exceeded.push([&delta, &current, &limit].map(|q| format!("{key}={}", q.canonical())));
            }
            new_used.insert(key.clone(), json!(total.canonical()));
        }
        if !exceeded.is_empty() {
            exceeded.sort();
            let join = |i: usize| {
                exceeded
                    .iter()
                    .map(|e| e[i].as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let message = format!(
                "exceeded quota: {}, requested: {}, used: {}, limited: {}",
                quota["metadata"]["name"].as_str().unwrap_or(""),
                join(0),
                join(1),
                join(2),
            );
            return Err(status::forbidden(rt.target(Some(name)), &message));
        }
        if new_used != used {
            let mut updated = quota.clone();
            updated["status"]["used"] = Value::Object(new_used);
            charges.push(QuotaCharge { quota: updated });
        }
    }
    Ok(charges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::step;

    #[test]
    fn limit_ranger_fills_and_refuses_like_the_transcript() {
        let mut store = Store::new();
        let range = step("21-storage-policy.json", 14)["response"]["body"].clone();
        store.put(&resources::LIMITRANGES.key(), range);
        let mut pod = step("21-storage-policy.json", 15)["body"].clone();
        pod["metadata"]["namespace"] = json!("g-21-storage-policy");
        limit_ranger(&mut pod, &store, "g-21-storage-policy").unwrap();
        let expected = step("21-storage-policy.json", 15)["response"]["body"].clone();
        assert_eq!(
            pod["metadata"]["annotations"],
            expected["metadata"]["annotations"]
        );
        assert_eq!(
            pod["spec"]["containers"][0]["resources"],
            expected["spec"]["containers"][0]["resources"]
        );
        let mut too_big = step("21-storage-policy.json", 16)["body"].clone();
        let message = limit_ranger(&mut too_big, &store, "g-21-storage-policy").unwrap_err();
        assert_eq!(message, "maximum cpu usage per Container is 2, but limit is 3");
    }

    #[test]
    fn default_tolerations_once() {
        let mut spec = json!({"tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]});
        default_tolerations(&mut spec);
        assert_eq!(spec["tolerations"].as_array().unwrap().len(), 2);
    }
}
