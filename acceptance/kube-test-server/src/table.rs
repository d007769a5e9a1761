//! Server-side printing (`meta.k8s.io/v1` Table) of the stored kinds, with the columns
//! kubectl shows for them, so `kubectl get` prints like it does against a real cluster.

use serde_json::{Value, json};

/// Whether the client asks for a Table (`kubectl get` without `-o`).
pub fn wanted(accept: &str) -> bool {
    accept
        .split(',')
        .next()
        .is_some_and(|first| first.contains("as=Table") && first.contains("g=meta.k8s.io"))
}

/// `(name, type)` of each column after Name; Age is added where the kind shows it.
fn columns(kind: &str) -> &'static [(&'static str, &'static str)] {
    match kind {
        "Namespace" => &[("Status", "string")],
        "ConfigMap" => &[("Data", "integer")],
        "Secret" => &[("Type", "string"), ("Data", "integer")],
        "Service" => &[
            ("Type", "string"),
            ("Cluster-IP", "string"),
            ("External-IP", "string"),
            ("Port(s)", "string"),
        ],
        "ServiceAccount" => &[("Secrets", "integer")],
        "Deployment" => &[
            ("Ready", "string"),
            ("Up-to-date", "integer"),
            ("Available", "integer"),
        ],
        "HorizontalPodAutoscaler" => &[
            ("Reference", "string"),
            ("Targets", "string"),
            ("MinPods", "string"),
            ("MaxPods", "integer"),
            ("Replicas", "integer"),
        ],
        "NetworkPolicy" => &[("Pod-Selector", "string")],
        "RoleBinding" | "ClusterRoleBinding" => &[("Role", "string")],
        "Lease" => &[("Holder", "string")],
        _ => &[],
    }
}

/// Columns after Age that only `-o wide` shows (priority 1).
fn wide_columns(kind: &str) -> &'static [&'static str] {
    match kind {
        "Service" => &["Selector"],
        "Deployment" => &["Containers", "Images", "Selector"],
        _ => &[],
    }
}

fn wide_cells(kind: &str, o: &Value) -> Vec<Value> {
    let containers = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let joined = |field: &str| {
        let parts: Vec<&str> = containers.iter().filter_map(|c| c[field].as_str()).collect();
        json!(parts.join(","))
    };
    match kind {
        "Service" => vec![json!(selector_text(&o["spec"]["selector"]))],
        "Deployment" => {
            vec![
                joined("name"),
                joined("image"),
                json!(selector_text(&o["spec"]["selector"]["matchLabels"])),
            ]
        }
        _ => vec![],
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

fn cells(kind: &str, o: &Value) -> Vec<Value> {
    let spec = &o["spec"];
    let status = &o["status"];
    match kind {
        "Namespace" => vec![status["phase"].clone()],
        "ConfigMap" => vec![json!(len(&o["data"]) + len(&o["binaryData"]))],
        "Secret" => vec![o["type"].clone(), json!(len(&o["data"]))],
        "Service" => {
            let ports: Vec<String> = spec["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap_or("TCP")))
                .collect();
            let ports = if ports.is_empty() {
                "<none>".to_string()
            } else {
                ports.join(",")
            };
            vec![
                spec["type"].clone(),
                spec["clusterIP"].clone(),
                json!("<none>"),
                json!(ports),
            ]
        }
        "ServiceAccount" => vec![json!(len(&o["secrets"]))],
        "Deployment" => vec![
            json!(format!(
                "{}/{}",
                status["readyReplicas"].as_i64().unwrap_or(0),
                spec["replicas"].as_i64().unwrap_or(1)
            )),
            int(&status["updatedReplicas"]),
            int(&status["availableReplicas"]),
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
            ]
        }
        "NetworkPolicy" => vec![json!(selector_text(&spec["podSelector"]["matchLabels"]))],
        "RoleBinding" | "ClusterRoleBinding" => {
            vec![json!(format!(
                "{}/{}",
                o["roleRef"]["kind"].as_str().unwrap_or(""),
                o["roleRef"]["name"].as_str().unwrap_or("")
            ))]
        }
        "Lease" => vec![spec["holderIdentity"].clone()],
        _ => vec![],
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
    for (name, ty) in columns(kind) {
        defs.push(json!({"name": name, "type": ty, "format": "", "description": "", "priority": 0}));
    }
    let created_at = matches!(kind, "Role" | "ClusterRole");
    let last = if created_at { "Created At" } else { "Age" };
    defs.push(json!({"name": last, "type": if created_at { "date" } else { "string" }, "format": "", "description": "", "priority": 0}));
    for name in wide_columns(kind) {
        defs.push(json!({"name": name, "type": "string", "format": "", "description": "", "priority": 1}));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let stamp = o["metadata"]["creationTimestamp"].as_str().unwrap_or("");
            let mut row = vec![o["metadata"]["name"].clone()];
            row.extend(cells(kind, o));
            row.push(json!(if created_at { stamp.to_string() } else { age(stamp) }));
            row.extend(wide_cells(kind, o));
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
