//! Server-side apply first makes a typed object of the apply configuration: a scalar of the
//! wrong type fails the request with a 500 "failed to create typed patch object", for
//! built-in kinds as for custom ones (structured-merge-diff's wording, compared with a v1.36
//! apiserver: a string for an integer, a number for a string, a string for a boolean; several
//! at once are listed one a line after `errors:`). A keyed list (`x-kubernetes-list-type: map`)
//! holding a key twice fails the same way, `duplicate entries for key [name="A"]`, its items
//! named by their keys; a create or an update of such an object succeeds (v1.36).

use serde_json::{Value, json};

use crate::schema::{ListType, Type};
use crate::status::ApiError;

/// Why a value cannot be a scalar of type `expected` (`integer`, `number`, `string`,
/// `boolean`), in structured-merge-diff's words; `None` when it can.
pub fn scalar_mismatch(expected: &str, value: &Value) -> Option<String> {
    match (expected, value) {
        (_, Value::Null) => None,
        ("integer" | "number", Value::Number(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_)) => None,
        ("integer" | "number", v) => Some(format!("expected numeric (int or float), got {}", go_type(v))),
        ("string", v) => Some(format!(
            "expected string, got &value.valueUnstructured{{Value:{}}}",
            go_syntax(v)
        )),
        ("boolean", v) => Some(format!("expected boolean, got &{{{}}}", go_plain(v))),
        _ => None,
    }
}

/// Go's `%T` of a decoded JSON value.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

/// Go's `%#v` of a decoded JSON value.
fn go_syntax(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(m) => {
            let entries: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{}", go_syntax(v))).collect();
            format!("map[string]interface {{}}{{{}}}", entries.join(", "))
        }
        Value::Null => "interface {}(nil)".into(),
        other => other.to_string(),
    }
}

/// Go's `%v` of a decoded JSON value.
fn go_plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_plain).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(m) => {
            let entries: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_plain(v))).collect();
            format!("map[{}]", entries.join(" "))
        }
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// A keyed list item's key as structured-merge-diff prints it, `[containerPort=80,protocol="TCP"]`:
/// the key fields in their declared order, an omitted one by its default (ports' protocol).
fn item_key(keys: &[String], item_type: Option<Type>, item: &Value) -> String {
    let fields: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let default = || item_type.and_then(|t| t.field(k)).and_then(|t| t.default());
            let v = item.get(k).or_else(default)?;
            Some(format!("{k}={v}"))
        })
        .collect();
    format!("[{}]", fields.join(","))
}

/// The mistyped scalars and twice-held keys of a built-in kind's apply configuration, sorted
/// by path.
pub fn errors(schema: Type, config: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(schema, config, "", &mut out);
    out.sort();
    out
}

fn collect(schema: Type, value: &Value, path: &str, out: &mut Vec<String>) {
    if let Some(ty) = schema.scalar_type() {
        if let Some(e) = scalar_mismatch(ty, value) {
            out.push(format!("{path}: {e}"));
        }
        return;
    }
    match value {
        Value::Object(map) => {
            for (name, v) in map {
                if let Some(field) = schema.field(name) {
                    collect(field, v, &format!("{path}.{name}"), out);
                }
            }
        }
        Value::Array(items) => {
            let Some(item) = schema.items() else { return };
            let ListType::Map(keys) = schema.list_type() else {
                for (i, v) in items.iter().enumerate() {
                    collect(item, v, &format!("{path}[{i}]"), out);
                }
                return;
            };
            let named: Vec<String> = items.iter().map(|v| item_key(keys, Some(item), v)).collect();
            if let Some(twice) = named.iter().enumerate().find(|(i, k)| named[..*i].contains(k)) {
                out.push(format!("{path}: duplicate entries for key {}", twice.1));
                return;
            }
            for (v, key) in items.iter().zip(&named) {
                collect(item, v, &format!("{path}{key}"), out);
            }
        }
        _ => {}
    }
}

/// The 500 of an apply configuration that cannot be typed.
pub fn failure(config: &Value, api_version: &str, kind: &str, errors: &[String]) -> ApiError {
    let meta = &config["metadata"];
    let detail = match errors {
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    // The core group prints empty before its version: `/v1, Kind=ConfigMap`.
    let gv = if api_version.contains('/') {
        api_version.to_string()
    } else {
        format!("/{api_version}")
    };
    let message = format!(
        "failed to create typed patch object ({}/{}; {gv}, Kind={kind}): {detail}",
        meta["namespace"].as_str().unwrap_or(""),
        meta["name"].as_str().unwrap_or(""),
    );
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "code": 500});
    ApiError { code: 500, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answers of a v1.36 apiserver to `kubectl apply --server-side` of such values.
    #[test]
    fn mistyped_scalars_are_named_as_the_apiserver_names_them() {
        let ingress = crate::schema::of("networking.k8s.io/v1", "Ingress").unwrap();
        let config = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "probe", "namespace": "default"},
            "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": "80"}}}}]}}]}});
        let found = errors(ingress, &config);
        assert_eq!(
            failure(&config, "networking.k8s.io/v1", "Ingress", &found).body["message"],
            "failed to create typed patch object (default/probe; networking.k8s.io/v1, Kind=Ingress): \
             .spec.rules[0].http.paths[0].backend.service.port.number: expected numeric (int or float), \
             got string"
        );
        let config_map = crate::schema::of("v1", "ConfigMap").unwrap();
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "probe4", "namespace": "default"}, "data": {"a": true, "b": [1]}});
        let found = errors(config_map, &config);
        assert_eq!(
            failure(&config, "v1", "ConfigMap", &found).body["message"],
            "failed to create typed patch object (default/probe4; /v1, Kind=ConfigMap): errors:\n  \
             .data.a: expected string, got &value.valueUnstructured{Value:true}\n  \
             .data.b: expected string, got &value.valueUnstructured{Value:[]interface {}{1}}"
        );
        let deployment = crate::schema::of("apps/v1", "Deployment").unwrap();
        let config = json!({"spec": {"replicas": true, "paused": 1}});
        assert_eq!(
            errors(deployment, &config),
            [
                ".spec.paused: expected boolean, got &{1}",
                ".spec.replicas: expected numeric (int or float), got bool",
            ]
        );
        // Int-or-string and quantities take either; nulls are no values.
        let config = json!({"spec": {"replicas": null, "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
            "template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 1}}}]}}}});
        assert!(errors(deployment, &config).is_empty());
    }

    /// A v1.36 apiserver's answers to `kubectl apply --server-side` of a Deployment whose
    /// container holds env `A` twice, then env and ports twice (`kubectl create` of either
    /// succeeds, keeping both entries).
    #[test]
    fn keys_held_twice_are_named_by_their_list_and_key() {
        let deployment = crate::schema::of("apps/v1", "Deployment").unwrap();
        let container = |extra: Value| {
            let mut c = json!({"name": "c", "image": "nginx",
                "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]});
            c.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d1", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "d1"}}, "template": {
                    "metadata": {"labels": {"app": "d1"}}, "spec": {"containers": [c]}}}})
        };
        let config = container(json!({}));
        let found = errors(deployment, &config);
        assert_eq!(
            failure(&config, "apps/v1", "Deployment", &found).body["message"],
            "failed to create typed patch object (default/d1; apps/v1, Kind=Deployment): \
             .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]"
        );
        let config = container(json!({"ports": [{"containerPort": 80}, {"containerPort": 80}]}));
        let found = errors(deployment, &config);
        assert_eq!(
            failure(&config, "apps/v1", "Deployment", &found).body["message"],
            "failed to create typed patch object (default/d1; apps/v1, Kind=Deployment): errors:\n  \
             .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]\n  \
             .spec.template.spec.containers[name=\"c\"].ports: duplicate entries for key \
             [containerPort=80,protocol=\"TCP\"]"
        );
        // The same key with another protocol is another entry.
        let config = container(
            json!({"env": [], "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]}),
        );
        assert!(errors(deployment, &config).is_empty());
    }
}
