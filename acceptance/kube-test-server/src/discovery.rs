//! API discovery documents, as recorded from kube-apiserver v1.36.2.
//!
//! The legacy documents recorded in the transcripts are served verbatim; the other
//! group-version documents are derived from the recorded aggregated discovery.

use std::sync::OnceLock;

use serde_json::{Value, json};

const VERSION: &str = include_str!("discovery/version.json");
const API: &str = include_str!("discovery/api.json");
const APIS: &str = include_str!("discovery/apis.json");
const AGGREGATED_API: &str = include_str!("discovery/aggregated-api.json");
const AGGREGATED_APIS: &str = include_str!("discovery/aggregated-apis.json");

/// Recorded `APIResourceList`s by group-version.
const RECORDED: &[(&str, &str)] = &[
    ("v1", include_str!("discovery/api-v1.json")),
    ("apps/v1", include_str!("discovery/apps-v1.json")),
    ("autoscaling/v2", include_str!("discovery/autoscaling-v2.json")),
    (
        "networking.k8s.io/v1",
        include_str!("discovery/networking.k8s.io-v1.json"),
    ),
    (
        "rbac.authorization.k8s.io/v1",
        include_str!("discovery/rbac.authorization.k8s.io-v1.json"),
    ),
    (
        "coordination.k8s.io/v1",
        include_str!("discovery/coordination.k8s.io-v1.json"),
    ),
];

/// The media type of aggregated discovery.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("embedded discovery documents are valid JSON")
}

fn aggregated_apis() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| parse(AGGREGATED_APIS))
}

pub fn version() -> Value {
    parse(VERSION)
}

/// `/api`, with the address this server listens on.
pub fn core_versions(server_address: &str) -> Value {
    let mut doc = parse(API);
    doc["serverAddressByClientCIDRs"][0]["serverAddress"] = json!(server_address);
    doc
}

pub fn groups() -> Value {
    parse(APIS)
}

pub fn aggregated(core: bool) -> Value {
    if core {
        parse(AGGREGATED_API)
    } else {
        aggregated_apis().clone()
    }
}

/// `/apis/GROUP` (an `APIGroup`), if the group exists.
pub fn group(name: &str) -> Option<Value> {
    let doc = groups();
    let mut g = doc["groups"]
        .as_array()?
        .iter()
        .find(|g| g["name"] == name)?
        .clone();
    g["kind"] = json!("APIGroup");
    g["apiVersion"] = json!("v1");
    Some(g)
}

pub fn serves_group_version(group: &str, version: &str) -> bool {
    if group.is_empty() {
        return version == "v1";
    }
    aggregated_apis()["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| g["metadata"]["name"] == group)
        .flat_map(|g| g["versions"].as_array().into_iter().flatten())
        .any(|v| v["version"] == version)
}

/// The kind of `resource` if `group/version` lists it.
pub fn resource_kind(group: &str, version: &str, resource: &str) -> Option<String> {
    let doc = group_version(group, version)?;
    let r = doc["resources"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == resource)?;
    r["kind"].as_str().map(str::to_string)
}

/// `/api/v1` or `/apis/GROUP/VERSION` (an `APIResourceList`).
pub fn group_version(group: &str, version: &str) -> Option<Value> {
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    if let Some((_, text)) = RECORDED.iter().find(|(k, _)| *k == gv) {
        return Some(parse(text));
    }
    let agg = aggregated_apis();
    let versions = agg["items"]
        .as_array()?
        .iter()
        .find(|g| g["metadata"]["name"] == group)?["versions"]
        .as_array()?;
    let v = versions.iter().find(|v| v["version"] == version)?;
    let mut resources = Vec::new();
    for r in v["resources"].as_array().into_iter().flatten() {
        let namespaced = r["scope"] == "Namespaced";
        let mut entry = json!({
            "name": r["resource"], "singularName": r["singularResource"], "namespaced": namespaced,
            "kind": r["responseKind"]["kind"], "verbs": r["verbs"],
        });
        for key in ["shortNames", "categories"] {
            if r.get(key).is_some() {
                entry[key] = r[key].clone();
            }
        }
        resources.push(entry);
        for s in r["subresources"].as_array().into_iter().flatten() {
            resources.push(json!({
                "name": format!("{}/{}", r["resource"].as_str().unwrap_or(""), s["subresource"].as_str().unwrap_or("")),
                "singularName": "", "namespaced": namespaced,
                "kind": s["responseKind"]["kind"], "verbs": s["verbs"],
            }));
        }
    }
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
}
