//! The OpenAPI v3 documents, as a real apiserver publishes them: `/openapi/v3` lists one
//! document per group-version, custom ones included, each at a URL whose `hash` changes with
//! its content; a document has a PATCH operation per resource (kubectl learns from it that the
//! server validates fields itself, `fieldValidation`) and the component schemas of its kinds,
//! each kind's carrying `x-kubernetes-group-version-kind`, with every definition it references
//! (clients such as `kubernetes_manifest` type values with them).
//!
//! Built-in kinds' schemas are the real apiserver's (`schema/openapi.json`, without
//! descriptions); a custom kind's is its served version's `openAPIV3Schema` with `apiVersion`,
//! `kind` and `metadata` (ObjectMeta) added, as the apiserver publishes it.

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::{Map, Value, json};

use crate::state::Shared;
use crate::{crd, discovery, schema};

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Built-in group-versions listed at `/openapi/v3` (as `api/v1`, `apis/GROUP/VERSION`).
fn group_versions() -> Vec<(String, String)> {
    let mut out = vec![(String::new(), "v1".to_string())];
    for g in discovery::groups()["groups"].as_array().into_iter().flatten() {
        for v in g["versions"].as_array().into_iter().flatten() {
            out.push((
                g["name"].as_str().unwrap_or("").to_string(),
                v["version"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

fn prefix(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: the index of group-version documents. A custom group-version whose
/// CustomResourceDefinitions are gone stays listed with its last URL, whose document is then
/// empty: kube-apiserver shows that for a moment after a CRD's deletion, and here the moment
/// lasts, so clients meet it every time.
pub fn root(st: &Shared) -> Value {
    let mut paths = Map::new();
    for (g, v) in group_versions() {
        let p = prefix(&g, &v);
        let url = format!("/openapi/v3/{p}?hash=kube-test-server");
        paths.insert(p, json!({"serverRelativeURL": url}));
    }
    let mut published = st.openapi_published.lock().unwrap_or_else(|e| e.into_inner());
    for custom in crd::openapi_schemas(st) {
        let p = prefix(&custom.group, &custom.version);
        let mut hasher = DefaultHasher::new();
        custom
            .kinds
            .iter()
            .for_each(|(kind, schema)| (kind, schema.to_string()).hash(&mut hasher));
        let url = format!("/openapi/v3/{p}?hash={:016X}", hasher.finish());
        published.insert(p, url);
    }
    for (p, url) in published.iter() {
        paths
            .entry(p.clone())
            .or_insert_with(|| json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`: one PATCH operation per resource
/// and the kinds' schemas.
pub fn group_version(st: &Shared, path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let (doc, schemas) = match discovery::group_version(&group, &version) {
        Some(doc) => (doc, built_in_schemas(&group, &version)),
        None => {
            let doc = crd::group_version(st, &group, &version)?;
            (doc, custom_schemas(st, &group, &version))
        }
    };
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.36.2"},
        "paths": operations(&group, &version, &doc),
        "components": {"schemas": schemas},
    }))
}

/// A PATCH operation per resource of a discovery document that can be patched.
fn operations(group: &str, version: &str, doc: &Value) -> Map<String, Value> {
    let mut paths = Map::new();
    for r in doc["resources"].as_array().into_iter().flatten() {
        let name = r["name"].as_str().unwrap_or("");
        if name.contains('/')
            || !r["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|x| x == "patch"))
        {
            continue;
        }
        let scope = if r["namespaced"] == true {
            "namespaces/{namespace}/"
        } else {
            ""
        };
        let op = json!({
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": group, "version": version, "kind": r["kind"]},
            "parameters": [
                {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                {"name": "force", "in": "query", "schema": {"type": "boolean"}},
            ],
            "responses": {"200": {"description": "OK"}},
        });
        paths.insert(
            format!("/{}/{scope}{name}/{{name}}", prefix(group, version)),
            json!({"patch": op}),
        );
    }
    paths
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "version": version, "kind": kind}])
}

/// The built-in kinds of a group-version with every definition they reference.
fn built_in_schemas(group: &str, version: &str) -> Map<String, Value> {
    let extract = schema::raw();
    let mut out = Map::new();
    let mut roots = Vec::new();
    let own = format!("{group}/{version}/");
    for (key, name) in extract["kinds"].as_object().into_iter().flatten() {
        let (Some(kind), Some(name)) = (key.strip_prefix(&own), name.as_str()) else {
            continue;
        };
        let mut def = published(&extract["definitions"][name]);
        def["x-kubernetes-group-version-kind"] = gvk(group, version, kind);
        out.insert(name.to_string(), def);
        roots.push(name.to_string());
    }
    add_referenced(&mut out, roots);
    out
}

/// The custom kinds of a group-version, as the apiserver publishes their schemas.
fn custom_schemas(st: &Shared, group: &str, version: &str) -> Map<String, Value> {
    let mut out = Map::new();
    let kinds = crd::openapi_schemas(st)
        .into_iter()
        .find(|p| p.group == group && p.version == version)
        .map(|p| p.kinds)
        .unwrap_or_default();
    // `example.com` -> `com.example`, as the apiserver names the definitions.
    let reversed: Vec<&str> = group.split('.').rev().collect();
    for (kind, mut def) in kinds {
        if let Some(props) = def
            .as_object_mut()
            .map(|d| d.entry("properties").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
        {
            props.insert("apiVersion".into(), json!({"type": "string"}));
            props.insert("kind".into(), json!({"type": "string"}));
            props.insert(
                "metadata".into(),
                json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}]}),
            );
        }
        def["x-kubernetes-group-version-kind"] = gvk(group, version, &kind);
        out.insert(format!("{}.{version}.{kind}", reversed.join(".")), def);
    }
    add_referenced(&mut out, vec![OBJECT_META.to_string()]);
    out
}

/// Adds the extract's definitions of `names` and everything they reference to `out`.
fn add_referenced(out: &mut Map<String, Value>, mut pending: Vec<String>) {
    let definitions = &schema::raw()["definitions"];
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let Some(def) = definitions.get(&name) else {
            continue;
        };
        schema::references(def, &mut pending);
        out.entry(name).or_insert_with(|| published(def));
    }
}

/// An extract definition in the published form: `$ref`s as `#/components/schemas/NAME`,
/// wrapped in `allOf` as the apiserver writes them.
fn published(node: &Value) -> Value {
    match node {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        out.insert(
                            "allOf".into(),
                            json!([{"$ref": format!("#/components/schemas/{r}")}]),
                        );
                    }
                    ("default" | "enum", _) => {
                        out.insert(k.clone(), v.clone());
                    }
                    _ => {
                        out.insert(k.clone(), published(v));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(published).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_built_in_kind_is_published_with_its_references() {
        let schemas = built_in_schemas("networking.k8s.io", "v1");
        let ingress = &schemas["io.k8s.api.networking.v1.Ingress"];
        assert_eq!(
            ingress["x-kubernetes-group-version-kind"],
            gvk("networking.k8s.io", "v1", "Ingress")
        );
        assert_eq!(
            ingress["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.networking.v1.IngressSpec"
        );
        let port = &schemas["io.k8s.api.networking.v1.ServiceBackendPort"];
        assert_eq!(port["properties"]["number"]["type"], "integer");
        assert!(schemas.contains_key(OBJECT_META));
        let service = built_in_schemas("", "v1");
        assert_eq!(
            service["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"],
            "int-or-string"
        );
    }
}
