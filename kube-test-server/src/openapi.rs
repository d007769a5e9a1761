//! A minimal OpenAPI v3 surface: enough for kubectl to learn that every PATCH supports the
//! `fieldValidation` query parameter, so it leaves validation to the server instead of
//! downloading full schemas (which this server does not have).

use serde_json::{Map, Value, json};

use crate::discovery;

/// Group-versions listed at `/openapi/v3` (as `api/v1`, `apis/GROUP/VERSION`).
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

/// `/openapi/v3`: the index of group-version documents.
pub fn root() -> Value {
    let paths: Map<String, Value> = group_versions()
        .into_iter()
        .map(|(g, v)| {
            let p = prefix(&g, &v);
            let url = format!("/openapi/v3/{p}?hash=kube-test-server");
            (p, json!({"serverRelativeURL": url}))
        })
        .collect();
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1`, `/openapi/v3/apis/GROUP/VERSION`: one PATCH operation per resource.
pub fn group_version(path: &str) -> Option<Value> {
    let (group, version) = match path.split('/').collect::<Vec<_>>().as_slice() {
        ["api", v] => (String::new(), v.to_string()),
        ["apis", g, v] => (g.to_string(), v.to_string()),
        _ => return None,
    };
    let doc = discovery::group_version(&group, &version)?;
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
            format!("/{}/{scope}{name}/{{name}}", prefix(&group, &version)),
            json!({"patch": op}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.36.2"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
