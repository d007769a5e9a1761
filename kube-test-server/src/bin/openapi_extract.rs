//! Regenerates `src/schema/openapi.json`, the compact schema the server validates, defaults
//! and merges with, from a real apiserver's OpenAPI v3 documents:
//!
//! ```text
//! cargo run -p kube-test-server --bin openapi_extract -- \
//!     reference/openapi/*.json > kube-test-server/src/schema/openapi.json
//! ```
//!
//! (`reference/openapi/` holds a v1.36 apiserver's documents, refreshed by `make openapi`.)
//! Only definitions reachable
//! from a kind are kept, without descriptions, so the server parses it in a few milliseconds.

use std::collections::{BTreeMap, BTreeSet};

use kube_test_server::references;
use serde_json::{Map, Value, json};

/// Keys of a schema node the server uses; everything else (descriptions, unions) goes.
const KEPT: &[&str] = &[
    "type",
    "properties",
    "items",
    "additionalProperties",
    "$ref",
    "default",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
];

/// `+default` markers on `omitempty` fields: the defaulter sets the zero value and the
/// encoder drops it again, so a real apiserver never shows them.
const OMITTED_DEFAULTS: &[(&str, &str)] = &[
    ("io.k8s.api.core.v1.ReplicationControllerSpec", "minReadySeconds"),
    ("io.k8s.api.core.v1.LocalObjectReference", "name"),
    ("io.k8s.api.core.v1.ConfigMapEnvSource", "name"),
    ("io.k8s.api.core.v1.ConfigMapKeySelector", "name"),
    ("io.k8s.api.core.v1.ConfigMapProjection", "name"),
    ("io.k8s.api.core.v1.ConfigMapVolumeSource", "name"),
    ("io.k8s.api.core.v1.SecretEnvSource", "name"),
    ("io.k8s.api.core.v1.SecretKeySelector", "name"),
    ("io.k8s.api.core.v1.SecretProjection", "name"),
    ("io.k8s.api.core.v1.AzureDiskVolumeSource", "readOnly"),
];

/// Slice, map and pointer fields without `omitempty`: the encoder writes `null` when they are
/// unset (OpenAPI's `required` does not tell: newer types mark `omitempty` fields required).
/// Recorded as a `null` default.
const NULL_DEFAULTS: &[(&str, &str)] = &[
    ("io.k8s.api.core.v1.PodSpec", "containers"),
    ("io.k8s.api.core.v1.LimitRangeSpec", "limits"),
    ("io.k8s.api.core.v1.NodeSelector", "nodeSelectorTerms"),
    ("io.k8s.api.apps.v1.DeploymentSpec", "selector"),
    ("io.k8s.api.apps.v1.DaemonSetSpec", "selector"),
    ("io.k8s.api.apps.v1.ReplicaSetSpec", "selector"),
    ("io.k8s.api.apps.v1.StatefulSetSpec", "selector"),
    ("io.k8s.api.rbac.v1.Role", "rules"),
    ("io.k8s.api.rbac.v1.ClusterRole", "rules"),
    ("io.k8s.api.rbac.v1.PolicyRule", "verbs"),
    (
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus",
        "currentMetrics",
    ),
    ("io.k8s.api.authentication.v1.TokenRequestSpec", "audiences"),
    ("io.k8s.api.authentication.v1.TokenRequestSpec", "boundObjectRef"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "ports"),
    ("io.k8s.api.discovery.v1.Endpoint", "addresses"),
    ("io.k8s.api.networking.v1.HTTPIngressRuleValue", "paths"),
];

fn main() {
    let mut definitions: BTreeMap<String, Value> = BTreeMap::new();
    let mut kinds: BTreeMap<String, String> = BTreeMap::new();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"));
        let schemas = doc["components"]["schemas"]
            .as_object()
            .unwrap_or_else(|| panic!("{path} has no components.schemas"));
        for (name, schema) in schemas {
            if !name.starts_with("io.k8s.apimachinery") && !name.ends_with("List") {
                for gvk in schema["x-kubernetes-group-version-kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let key = format!(
                        "{}/{}/{}",
                        gvk["group"].as_str().unwrap_or(""),
                        gvk["version"].as_str().unwrap_or(""),
                        gvk["kind"].as_str().unwrap_or("")
                    );
                    kinds.insert(key, name.clone());
                }
            }
            definitions
                .entry(name.clone())
                .or_insert_with(|| strip(name, schema));
        }
    }
    let mut reachable = BTreeSet::new();
    let mut pending: Vec<String> = kinds.values().cloned().collect();
    while let Some(name) = pending.pop() {
        if !reachable.insert(name.clone()) {
            continue;
        }
        if let Some(def) = definitions.get(&name) {
            references(def, &mut pending);
        }
    }
    definitions.retain(|name, _| reachable.contains(name));
    let out = json!({"kinds": kinds, "definitions": definitions});
    println!("{}", serde_json::to_string(&out).expect("JSON serialises"));
}

/// A node with only the kept keys, `allOf: [{$ref}]` flattened to `$ref`.
fn strip(def: &str, node: &Value) -> Value {
    let Some(map) = node.as_object() else {
        return node.clone();
    };
    let mut out = Map::new();
    if let Some(r) = map
        .get("allOf")
        .and_then(|a| a.get(0))
        .and_then(|a| a.get("$ref"))
    {
        out.insert("$ref".into(), short_ref(r));
    }
    for (key, value) in map {
        // `format` only where it changes the type: an int-or-string field takes either.
        let int_or_string = key == "format" && value == "int-or-string";
        if !KEPT.contains(&key.as_str()) && !int_or_string {
            continue;
        }
        let value = match key.as_str() {
            "$ref" => short_ref(value),
            "items" | "additionalProperties" if value.is_object() => strip(def, value),
            "properties" => {
                let props: Map<String, Value> = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, p)| {
                        let mut p = strip(def, p);
                        if let Some(m) = p.as_object_mut() {
                            if OMITTED_DEFAULTS.contains(&(def, name.as_str())) {
                                m.remove("default");
                            }
                            if NULL_DEFAULTS.contains(&(def, name.as_str())) {
                                m.insert("default".into(), Value::Null);
                            }
                        }
                        (name.clone(), p)
                    })
                    .collect();
                Value::Object(props)
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// `#/components/schemas/NAME` -> `NAME`.
fn short_ref(r: &Value) -> Value {
    json!(r.as_str().unwrap_or("").rsplit('/').next().unwrap_or(""))
}
