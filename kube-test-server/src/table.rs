//! Server-side printing (`meta.k8s.io/v1` Table) of the stored kinds, with the columns the
//! apiserver's printers give them (recorded from a v1.36 apiserver), so `kubectl get` prints
//! like it does against a real cluster.

use serde_json::{Value, json};

/// Whether the client asks for a Table (`kubectl get` without `-o`).
pub fn wanted(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

/// One column after Name: its name, type and priority (1 = only with `-o wide`).
type Column = (&'static str, &'static str, u8);

const AGE: Column = ("Age", "string", 0);
const CREATED_AT: Column = ("Created At", "date", 0);
const CONTAINERS: Column = ("Containers", "string", 1);
const IMAGES: Column = ("Images", "string", 1);
const SELECTOR: Column = ("Selector", "string", 1);

fn columns(kind: &str) -> &'static [Column] {
    match kind {
        "Namespace" => &[("Status", "string", 0), AGE],
        "CustomResourceDefinition" => &[("Created At", "date", 0)],
        "ConfigMap" => &[("Data", "integer", 0), AGE],
        "Secret" => &[("Type", "string", 0), ("Data", "integer", 0), AGE],
        "Service" => &[
            ("Type", "string", 0),
            ("Cluster-IP", "string", 0),
            ("External-IP", "string", 0),
            ("Port(s)", "string", 0),
            AGE,
            SELECTOR,
        ],
        "ServiceAccount" => &[("Secrets", "integer", 0), AGE],
        "Deployment" => &[
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        "HorizontalPodAutoscaler" => &[
            ("Reference", "string", 0),
            ("Targets", "string", 0),
            ("MinPods", "string", 0),
            ("MaxPods", "integer", 0),
            ("Replicas", "integer", 0),
            AGE,
        ],
        "NetworkPolicy" => &[("Pod-Selector", "string", 0), AGE],
        "RoleBinding" | "ClusterRoleBinding" => &[("Role", "string", 0), AGE],
        "Role" | "ClusterRole" | "LimitRange" => &[CREATED_AT],
        "Lease" => &[("Holder", "string", 0), AGE],
        "Pod" => &[
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            AGE,
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        "ReplicationController" => &[
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        "PersistentVolume" => &[
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("Reclaim Policy", "string", 0),
            ("Status", "string", 0),
            ("Claim", "string", 0),
            ("StorageClass", "string", 0),
            ("VolumeAttributesClass", "string", 0),
            ("Reason", "string", 0),
            AGE,
            ("VolumeMode", "string", 1),
        ],
        "PersistentVolumeClaim" => &[
            ("Status", "string", 0),
            ("Volume", "string", 0),
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("StorageClass", "string", 0),
            ("VolumeAttributesClass", "string", 0),
            AGE,
            ("VolumeMode", "string", 1),
        ],
        "Endpoints" => &[("Endpoints", "string", 0), AGE],
        "ResourceQuota" => &[("Request", "string", 0), ("Limit", "string", 0), AGE],
        "StatefulSet" => &[("Ready", "string", 0), AGE, CONTAINERS, IMAGES],
        "DaemonSet" => &[
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Node Selector", "string", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        "Job" => &[
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        "CronJob" => &[
            ("Schedule", "string", 0),
            ("Timezone", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        "Ingress" => &[
            ("Class", "string", 0),
            ("Hosts", "string", 0),
            ("Address", "string", 0),
            ("Ports", "string", 0),
            AGE,
        ],
        "IngressClass" => &[("Controller", "string", 0), ("Parameters", "string", 0), AGE],
        "EndpointSlice" => &[
            ("AddressType", "string", 0),
            ("Ports", "string", 0),
            ("Endpoints", "string", 0),
            AGE,
        ],
        "StorageClass" => &[
            ("Provisioner", "string", 0),
            ("ReclaimPolicy", "string", 0),
            ("VolumeBindingMode", "string", 0),
            ("AllowVolumeExpansion", "string", 0),
            AGE,
        ],
        "CSIDriver" => &[
            ("AttachRequired", "boolean", 0),
            ("PodInfoOnMount", "boolean", 0),
            ("StorageCapacity", "boolean", 0),
            ("TokenRequests", "string", 0),
            ("RequiresRepublish", "boolean", 0),
            ("Modes", "string", 0),
            AGE,
        ],
        "PodDisruptionBudget" => &[
            ("Min Available", "string", 0),
            ("Max Unavailable", "string", 0),
            ("Allowed Disruptions", "integer", 0),
            AGE,
        ],
        "PriorityClass" => &[
            ("Value", "integer", 0),
            ("Global-Default", "boolean", 0),
            AGE,
            ("PreemptionPolicy", "string", 0),
        ],
        "RuntimeClass" => &[("Handler", "string", 0), AGE],
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            &[("Webhooks", "integer", 0), AGE]
        }
        "ValidatingAdmissionPolicy" => &[("Validations", "integer", 0), ("ParamKind", "string", 0), AGE],
        "ValidatingAdmissionPolicyBinding" => &[("PolicyName", "string", 0), ("ParamRef", "string", 0), AGE],
        "APIService" => &[("Service", "string", 0), ("Available", "string", 0), AGE],
        "CertificateSigningRequest" => &[
            AGE,
            ("SignerName", "string", 0),
            ("Requestor", "string", 0),
            ("RequestedDuration", "string", 0),
            ("Condition", "string", 0),
        ],
        _ => &[AGE],
    }
}

fn int(v: &Value) -> Value {
    json!(v.as_i64().unwrap_or(0))
}

fn len(v: &Value) -> usize {
    v.as_object()
        .map(|m| m.len())
        .or_else(|| v.as_array().map(Vec::len))
        .unwrap_or(0)
}

/// `a,b,c`, or `<none>` (`<unset>` where the printer says so) for nothing.
fn joined(parts: Vec<String>, empty: &str) -> Value {
    json!(if parts.is_empty() {
        empty.to_string()
    } else {
        parts.join(",")
    })
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn selector_text(labels: &Value) -> String {
    let parts: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(",")
    }
}

/// The containers' names or images of a pod spec, comma-joined.
fn container_field(pod_spec: &Value, field: &str) -> Value {
    let parts: Vec<&str> = pod_spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(parts.join(","))
}

/// The short access-mode names the PV/PVC printers use.
fn access_modes(spec: &Value) -> Value {
    let short: Vec<String> = strings(&spec["accessModes"])
        .iter()
        .map(|m| match m.as_str() {
            "ReadWriteOnce" => "RWO".to_string(),
            "ReadOnlyMany" => "ROX".to_string(),
            "ReadWriteMany" => "RWX".to_string(),
            "ReadWriteOncePod" => "RWOP".to_string(),
            other => other.to_string(),
        })
        .collect();
    json!(short.join(","))
}

fn or_none(v: &Value) -> Value {
    match v.as_str() {
        Some(s) if !s.is_empty() => json!(s),
        _ => json!("<none>"),
    }
}

fn int_or_string(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.to_string()),
        Value::String(s) => json!(s),
        _ => json!("N/A"),
    }
}

/// The cells after Name, one per column of [`columns`].
fn cells(kind: &str, o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let status = &o["status"];
    let template = &spec["template"]["spec"];
    let age = json!(age(o["metadata"]["creationTimestamp"].as_str().unwrap_or("")));
    let created = o["metadata"]["creationTimestamp"].clone();
    match kind {
        "Namespace" => vec![status["phase"].clone(), age],
        "CustomResourceDefinition" => vec![created.clone()],
        "ConfigMap" => vec![json!(len(&o["data"]) + len(&o["binaryData"])), age],
        "Secret" => vec![o["type"].clone(), json!(len(&o["data"])), age],
        "Service" => {
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    let protocol = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64() {
                        Some(n) => format!("{}:{n}/{protocol}", p["port"]),
                        None => format!("{}/{protocol}", p["port"]),
                    }
                })
                .collect();
            let external = match spec["type"].as_str() {
                Some("LoadBalancer") => json!("<pending>"),
                Some("ExternalName") => spec["externalName"].clone(),
                _ => json!("<none>"),
            };
            let cluster_ip = spec.get("clusterIP").cloned().unwrap_or(json!("<none>"));
            vec![
                spec["type"].clone(),
                cluster_ip,
                external,
                joined(ports, "<none>"),
                age,
                json!(selector_text(&spec["selector"])),
            ]
        }
        "ServiceAccount" => vec![json!(len(&o["secrets"])), age],
        "Deployment" => vec![
            json!(format!(
                "{}/{}",
                status["readyReplicas"].as_i64().unwrap_or(0),
                spec["replicas"].as_i64().unwrap_or(1)
            )),
            int(&status["updatedReplicas"]),
            int(&status["availableReplicas"]),
            age,
            container_field(template, "name"),
            container_field(template, "image"),
            json!(selector_text(&spec["selector"]["matchLabels"])),
        ],
        "HorizontalPodAutoscaler" => {
            let target = &spec["scaleTargetRef"];
            let targets: Vec<String> = spec["metrics"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    let r = &m["resource"];
                    match r["target"]["averageUtilization"].as_i64() {
                        Some(u) => format!("{}: <unknown>/{u}%", r["name"].as_str().unwrap_or("")),
                        None => format!(
                            "{}: <unknown>/{}",
                            r["name"].as_str().unwrap_or(""),
                            r["target"]["averageValue"].as_str().unwrap_or("")
                        ),
                    }
                })
                .collect();
            vec![
                json!(format!(
                    "{}/{}",
                    target["kind"].as_str().unwrap_or(""),
                    target["name"].as_str().unwrap_or("")
                )),
                json!(if targets.is_empty() {
                    "<none>".to_string()
                } else {
                    targets.join(", ")
                }),
                json!(spec["minReplicas"].as_i64().unwrap_or(1).to_string()),
                int(&spec["maxReplicas"]),
                int(&status["currentReplicas"]),
                age,
            ]
        }
        "NetworkPolicy" => vec![json!(selector_text(&spec["podSelector"]["matchLabels"])), age],
        "RoleBinding" | "ClusterRoleBinding" => vec![
            json!(format!(
                "{}/{}",
                o["roleRef"]["kind"].as_str().unwrap_or(""),
                o["roleRef"]["name"].as_str().unwrap_or("")
            )),
            age,
        ],
        "Role" | "ClusterRole" | "LimitRange" => vec![created],
        "Lease" => vec![spec["holderIdentity"].clone(), age],
        "Pod" => {
            let containers = len(&spec["containers"]);
            let phase = if o["metadata"].get("deletionTimestamp").is_some() {
                json!("Terminating")
            } else {
                status["phase"].clone()
            };
            vec![
                json!(format!("0/{containers}")),
                phase,
                json!("0"),
                age,
                or_none(&status["podIP"]),
                or_none(&spec["nodeName"]),
                or_none(&status["nominatedNodeName"]),
                json!("<none>"),
            ]
        }
        "ReplicationController" => vec![
            int(&spec["replicas"]),
            int(&status["replicas"]),
            int(&status["readyReplicas"]),
            age,
            container_field(template, "name"),
            container_field(template, "image"),
            json!(selector_text(&spec["selector"])),
        ],
        "PersistentVolume" => {
            let claim = &spec["claimRef"];
            let claim = if claim.is_object() {
                format!(
                    "{}/{}",
                    claim["namespace"].as_str().unwrap_or(""),
                    claim["name"].as_str().unwrap_or("")
                )
            } else {
                String::new()
            };
            let phase = if o["metadata"].get("deletionTimestamp").is_some() {
                json!("Terminating")
            } else {
                status["phase"].clone()
            };
            vec![
                spec["capacity"]["storage"].clone(),
                access_modes(spec),
                spec["persistentVolumeReclaimPolicy"].clone(),
                phase,
                json!(claim),
                json!(spec["storageClassName"].as_str().unwrap_or("")),
                json!(spec["volumeAttributesClassName"].as_str().unwrap_or("<unset>")),
                json!(status["reason"].as_str().unwrap_or("")),
                age,
                spec["volumeMode"].clone(),
            ]
        }
        "PersistentVolumeClaim" => {
            let phase = if o["metadata"].get("deletionTimestamp").is_some() {
                json!("Terminating")
            } else {
                status["phase"].clone()
            };
            let bound = spec["volumeName"].as_str().is_some_and(|v| !v.is_empty());
            vec![
                phase,
                json!(spec["volumeName"].as_str().unwrap_or("")),
                json!(if bound {
                    status["capacity"]["storage"].as_str().unwrap_or("")
                } else {
                    ""
                }),
                if bound { access_modes(status) } else { json!("") },
                json!(spec["storageClassName"].as_str().unwrap_or("")),
                json!(spec["volumeAttributesClassName"].as_str().unwrap_or("<unset>")),
                age,
                spec["volumeMode"].clone(),
            ]
        }
        "Endpoints" => {
            let mut endpoints = Vec::new();
            for subset in o["subsets"].as_array().into_iter().flatten() {
                for address in subset["addresses"].as_array().into_iter().flatten() {
                    for port in subset["ports"].as_array().into_iter().flatten() {
                        endpoints.push(format!(
                            "{}:{}",
                            address["ip"].as_str().unwrap_or(""),
                            port["port"]
                        ));
                    }
                }
            }
            vec![joined(endpoints, "<none>"), age]
        }
        "ResourceQuota" => {
            let hard = |prefix: &str| -> Value {
                let parts: Vec<String> = status["hard"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| k.starts_with(prefix))
                    .map(|(k, v)| {
                        let used = status["used"][k].as_str().unwrap_or("0");
                        format!("{k}: {used}/{}", v.as_str().unwrap_or(""))
                    })
                    .collect();
                json!(parts.join(", "))
            };
            vec![hard("requests."), hard("limits."), age]
        }
        "StatefulSet" => vec![
            json!(format!(
                "{}/{}",
                status["readyReplicas"].as_i64().unwrap_or(0),
                spec["replicas"].as_i64().unwrap_or(1)
            )),
            age,
            container_field(template, "name"),
            container_field(template, "image"),
        ],
        "DaemonSet" => vec![
            int(&status["desiredNumberScheduled"]),
            int(&status["currentNumberScheduled"]),
            int(&status["numberReady"]),
            int(&status["updatedNumberScheduled"]),
            int(&status["numberAvailable"]),
            json!(selector_text(&template["nodeSelector"])),
            age,
            container_field(template, "name"),
            container_field(template, "image"),
            json!(selector_text(&spec["selector"]["matchLabels"])),
        ],
        "Job" => vec![
            json!(if spec["suspend"] == json!(true) {
                "Suspended"
            } else {
                "Running"
            }),
            json!(format!(
                "{}/{}",
                status["succeeded"].as_i64().unwrap_or(0),
                spec["completions"].as_i64().unwrap_or(1)
            )),
            json!(""),
            age,
            container_field(template, "name"),
            container_field(template, "image"),
            json!(selector_text(&spec["selector"]["matchLabels"])),
        ],
        "CronJob" => {
            let job_template = &spec["jobTemplate"]["spec"];
            vec![
                spec["schedule"].clone(),
                or_none(&spec["timeZone"]),
                json!(if spec["suspend"] == json!(true) {
                    "True"
                } else {
                    "False"
                }),
                json!(len(&status["active"])),
                or_none(&status["lastScheduleTime"]),
                age,
                container_field(&job_template["template"]["spec"], "name"),
                container_field(&job_template["template"]["spec"], "image"),
                json!(selector_text(&job_template["selector"]["matchLabels"])),
            ]
        }
        "Ingress" => {
            let hosts: Vec<String> = spec["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| r["host"].as_str().unwrap_or("*").to_string())
                .collect();
            let ports = if spec["tls"].as_array().is_some_and(|t| !t.is_empty()) {
                "80, 443"
            } else {
                "80"
            };
            vec![
                or_none(&spec["ingressClassName"]),
                joined(hosts, "*"),
                json!(""),
                json!(ports),
                age,
            ]
        }
        "IngressClass" => {
            let p = &spec["parameters"];
            let parameters = if p.is_object() {
                let group = p["apiGroup"]
                    .as_str()
                    .map(|g| format!(".{g}"))
                    .unwrap_or_default();
                format!(
                    "{}{group}/{}",
                    p["kind"].as_str().unwrap_or(""),
                    p["name"].as_str().unwrap_or("")
                )
            } else {
                "<none>".into()
            };
            vec![spec["controller"].clone(), json!(parameters), age]
        }
        "EndpointSlice" => {
            let ports: Vec<String> = o["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| p["port"].to_string())
                .collect();
            let addresses: Vec<String> = o["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|e| strings(&e["addresses"]))
                .collect();
            vec![
                o["addressType"].clone(),
                joined(ports, "<unset>"),
                joined(addresses, "<unset>"),
                age,
            ]
        }
        "StorageClass" => vec![
            o["provisioner"].clone(),
            o["reclaimPolicy"].clone(),
            o["volumeBindingMode"].clone(),
            json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false)),
            age,
        ],
        "CSIDriver" => vec![
            spec["attachRequired"].clone(),
            spec["podInfoOnMount"].clone(),
            spec["storageCapacity"].clone(),
            json!("<unset>"),
            spec["requiresRepublish"].clone(),
            json!(strings(&spec["volumeLifecycleModes"]).join(",")),
            age,
        ],
        "PodDisruptionBudget" => vec![
            int_or_string(&spec["minAvailable"]),
            int_or_string(&spec["maxUnavailable"]),
            int(&status["disruptionsAllowed"]),
            age,
        ],
        "PriorityClass" => vec![
            int(&o["value"]),
            json!(o["globalDefault"].as_bool().unwrap_or(false)),
            age,
            o["preemptionPolicy"].clone(),
        ],
        "RuntimeClass" => vec![o["handler"].clone(), age],
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            vec![json!(len(&o["webhooks"])), age]
        }
        "ValidatingAdmissionPolicy" => {
            let kind = &spec["paramKind"];
            let param = if kind.is_object() {
                format!(
                    "{}/{}",
                    kind["apiVersion"].as_str().unwrap_or(""),
                    kind["kind"].as_str().unwrap_or("")
                )
            } else {
                "<unset>".into()
            };
            vec![json!(len(&spec["validations"])), json!(param), age]
        }
        "ValidatingAdmissionPolicyBinding" => {
            let param = match spec["paramRef"]["name"].as_str() {
                Some(n) => format!("{}/{n}", spec["paramRef"]["namespace"].as_str().unwrap_or("*")),
                None => "<unset>".into(),
            };
            vec![spec["policyName"].clone(), json!(param), age]
        }
        "APIService" => {
            let service = match spec["service"].as_object() {
                Some(s) => format!(
                    "{}/{}",
                    s.get("namespace").and_then(Value::as_str).unwrap_or(""),
                    s.get("name").and_then(Value::as_str).unwrap_or("")
                ),
                None => "Local".into(),
            };
            let available = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Available")
                .map_or("Unknown".to_string(), |c| {
                    let s = c["status"].as_str().unwrap_or("Unknown");
                    match c["reason"].as_str() {
                        Some(r) if s != "True" => format!("{s} ({r})"),
                        _ => s.to_string(),
                    }
                });
            vec![json!(service), json!(available), age]
        }
        "CertificateSigningRequest" => {
            let conditions: Vec<String> = status["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["type"].as_str().map(str::to_string))
                .collect();
            let duration = spec["expirationSeconds"]
                .as_i64()
                .map_or("<none>".to_string(), short_duration);
            vec![
                age,
                spec["signerName"].clone(),
                spec["username"].clone(),
                json!(duration),
                joined(conditions, "Pending"),
            ]
        }
        _ => vec![age],
    }
}

/// kubectl's duration for a CSR's requested lifetime (`24h`, `90m`, `10d`).
fn short_duration(seconds: i64) -> String {
    match seconds {
        s if s % 86_400 == 0 && s >= 172_800 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// kubectl's `HumanDuration` of the time since `stamp`.
fn age(stamp: &str) -> String {
    let parsed = time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339);
    let Ok(then) = parsed else {
        return "<unknown>".into();
    };
    let s = (time::OffsetDateTime::now_utc() - then).whole_seconds().max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    match () {
        _ if s < 120 => format!("{s}s"),
        _ if m < 10 && s % 60 != 0 => format!("{m}m{}s", s % 60),
        _ if m < 180 => format!("{m}m"),
        _ if h < 8 && m % 60 != 0 => format!("{h}h{}m", m % 60),
        _ if h < 48 => format!("{h}h"),
        _ if h < 192 && h % 24 != 0 => format!("{d}d{}h", h % 24),
        _ if d < 730 => format!("{d}d"),
        _ => format!("{}y{}d", d / 365, d % 365),
    }
}

/// A Table of `objects` (a List's items or one object) of `kind`.
pub fn render(kind: &str, objects: &[Value], resource_version: &Value) -> Value {
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
    ];
    for (name, ty, priority) in columns(kind) {
        defs.push(json!({"name": name, "type": ty, "format": "", "description": "", "priority": priority}));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = vec![o["metadata"]["name"].clone()];
            row.extend(cells(kind, o));
            let object = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]});
            json!({"cells": row, "object": object})
        })
        .collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": defs, "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stored kind prints one cell per column.
    #[test]
    fn cells_match_columns() {
        let object = json!({"metadata": {"name": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}, "status": {}});
        for rt in crate::resources::ALL {
            assert_eq!(
                cells(rt.kind, &object).len(),
                columns(rt.kind).len(),
                "{}",
                rt.kind
            );
        }
    }
}
