//! API discovery documents, as recorded from kube-apiserver v1.36 (the transcripts' documents
//! and, for the other group-versions, the same apiserver build's), served verbatim.

use std::sync::OnceLock;

use serde_json::{Value, json};

const VERSION: &str = include_str!("discovery/version.json");
const API: &str = include_str!("discovery/api.json");
const APIS: &str = include_str!("discovery/apis.json");
const AGGREGATED_API: &str = include_str!("discovery/aggregated-api.json");
const AGGREGATED_APIS: &str = include_str!("discovery/aggregated-apis.json");

/// Recorded `APIResourceList`s by group-version (every group-version the server lists).
const RECORDED: &[(&str, &str)] = &[
    ("v1", include_str!("discovery/api-v1.json")),
    (
        "admissionregistration.k8s.io/v1",
        include_str!("discovery/admissionregistration.k8s.io-v1.json"),
    ),
    (
        "apiextensions.k8s.io/v1",
        include_str!("discovery/apiextensions.k8s.io-v1.json"),
    ),
    (
        "apiregistration.k8s.io/v1",
        include_str!("discovery/apiregistration.k8s.io-v1.json"),
    ),
    ("apps/v1", include_str!("discovery/apps-v1.json")),
    (
        "authentication.k8s.io/v1",
        include_str!("discovery/authentication.k8s.io-v1.json"),
    ),
    (
        "authorization.k8s.io/v1",
        include_str!("discovery/authorization.k8s.io-v1.json"),
    ),
    ("autoscaling/v1", include_str!("discovery/autoscaling-v1.json")),
    ("autoscaling/v2", include_str!("discovery/autoscaling-v2.json")),
    ("batch/v1", include_str!("discovery/batch-v1.json")),
    (
        "certificates.k8s.io/v1",
        include_str!("discovery/certificates.k8s.io-v1.json"),
    ),
    (
        "coordination.k8s.io/v1",
        include_str!("discovery/coordination.k8s.io-v1.json"),
    ),
    (
        "discovery.k8s.io/v1",
        include_str!("discovery/discovery.k8s.io-v1.json"),
    ),
    (
        "events.k8s.io/v1",
        include_str!("discovery/events.k8s.io-v1.json"),
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        include_str!("discovery/flowcontrol.apiserver.k8s.io-v1.json"),
    ),
    (
        "networking.k8s.io/v1",
        include_str!("discovery/networking.k8s.io-v1.json"),
    ),
    ("node.k8s.io/v1", include_str!("discovery/node.k8s.io-v1.json")),
    ("policy/v1", include_str!("discovery/policy-v1.json")),
    (
        "rbac.authorization.k8s.io/v1",
        include_str!("discovery/rbac.authorization.k8s.io-v1.json"),
    ),
    (
        "resource.k8s.io/v1",
        include_str!("discovery/resource.k8s.io-v1.json"),
    ),
    (
        "scheduling.k8s.io/v1",
        include_str!("discovery/scheduling.k8s.io-v1.json"),
    ),
    (
        "storage.k8s.io/v1",
        include_str!("discovery/storage.k8s.io-v1.json"),
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
    RECORDED
        .iter()
        .find(|(k, _)| *k == gv)
        .map(|(_, text)| parse(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every group-version of aggregated discovery has its recorded document.
    #[test]
    fn every_group_version_is_recorded() {
        for g in aggregated_apis()["items"].as_array().unwrap() {
            for v in g["versions"].as_array().unwrap() {
                let (group, version) = (
                    g["metadata"]["name"].as_str().unwrap(),
                    v["version"].as_str().unwrap(),
                );
                assert!(group_version(group, version).is_some(), "{group}/{version}");
            }
        }
    }
}
