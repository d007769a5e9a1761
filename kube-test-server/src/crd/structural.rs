//! What the apiserver does with a custom resource through its CRD version's structural schema
//! (`openAPIV3Schema`), in the order it does it: pruning of fields the schema does not declare
//! (unless `x-kubernetes-preserve-unknown-fields`), `default` values and dropping of
//! non-nullable nulls, then type checks (`spec.size in body must be of type integer`), required
//! fields and enums; and the typed-patch check server-side apply makes first, which refuses
//! undeclared fields and mistyped values outright (a 500, as the real server answers).
//!
//! `apiVersion`, `kind` and `metadata` at the root (and in `x-kubernetes-embedded-resource`
//! objects) are the API's, not the schema's: root metadata is pruned to ObjectMeta.

use serde_json::{Map, Value};

use crate::validation::FieldError;

/// One schema node.
#[derive(Clone, Copy)]
pub struct Node<'a>(pub &'a Value);

impl<'a> Node<'a> {
    fn flag(&self, key: &str) -> bool {
        self.0[key].as_bool().unwrap_or(false)
    }

    fn ty(&self) -> Option<&'a str> {
        self.0["type"].as_str()
    }

    fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.0["properties"].as_object()
    }

    fn items(&self) -> Option<Node<'a>> {
        self.0.get("items").filter(|i| i.is_object()).map(Node)
    }

    /// The schema of the values of a map (`additionalProperties: {schema}`).
    fn values(&self) -> Option<Node<'a>> {
        self.0
            .get("additionalProperties")
            .filter(|a| a.is_object())
            .map(Node)
    }

    /// Whether keys the schema does not name are kept as they are.
    fn keeps_unknown(&self) -> bool {
        self.flag("x-kubernetes-preserve-unknown-fields")
            || self.0["additionalProperties"] == Value::Bool(true)
    }

    /// The schema of field `name` of an object.
    fn field(&self, name: &str) -> Option<Node<'a>> {
        self.properties()
            .and_then(|p| p.get(name))
            .map(Node)
            .or_else(|| self.values())
    }

    /// Whether this object carries the API's own fields (the root, embedded resources).
    fn is_resource(&self, root: bool) -> bool {
        root || self.flag("x-kubernetes-embedded-resource")
    }
}

/// `path.name` (or `name` at the root).
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

const API_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Removes the fields `schema` does not declare from `value`, returning their paths in
/// document order (the decoder's "unknown field" warnings).
pub fn prune(schema: Node, value: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    prune_at(schema, value, "", true, &mut out);
    out
}

fn prune_at(schema: Node, value: &mut Value, path: &str, root: bool, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let resource = schema.is_resource(root);
            let keeps_unknown = schema.keeps_unknown();
            let mut dropped = Vec::new();
            for (name, v) in map.iter_mut() {
                let p = child(path, name);
                if resource && API_FIELDS.contains(&name.as_str()) {
                    if root && name == "metadata" {
                        prune_metadata(v, &p, out);
                    }
                    continue;
                }
                match schema.field(name) {
                    Some(field) => prune_at(field, v, &p, false, out),
                    None if keeps_unknown => {}
                    None => {
                        out.push(p);
                        dropped.push(name.clone());
                    }
                }
            }
            map.retain(|k, _| !dropped.contains(k));
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                for (i, v) in items.iter_mut().enumerate() {
                    prune_at(item, v, &format!("{path}[{i}]"), false, out);
                }
            }
        }
        _ => {}
    }
}

/// Root metadata is ObjectMeta, pruned by the built-in schema.
fn prune_metadata(meta: &mut Value, path: &str, out: &mut Vec<String>) {
    let Some(object_meta) = crate::schema::of("v1", "ConfigMap").and_then(|t| t.field("metadata")) else {
        return;
    };
    out.extend(
        object_meta
            .unknown_fields(meta)
            .into_iter()
            .map(|f| child(path, &f)),
    );
    object_meta.prune(meta);
}

/// Fills `default`s of missing fields and drops nulls the schema does not allow (replaced by
/// the default where there is one), as the apiserver's structural defaulting.
pub fn default(schema: Node, value: &mut Value) {
    default_at(schema, value, true);
}

fn default_at(schema: Node, value: &mut Value, root: bool) {
    match value {
        Value::Object(map) => {
            let resource = schema.is_resource(root);
            if let Some(props) = schema.properties() {
                for (name, prop) in props {
                    if resource && API_FIELDS.contains(&name.as_str()) {
                        continue;
                    }
                    let prop = Node(prop);
                    let default = prop.0.get("default");
                    match map.get(name) {
                        None => {
                            if let Some(d) = default {
                                map.insert(name.clone(), d.clone());
                            }
                        }
                        Some(Value::Null) if !prop.flag("nullable") => match default {
                            Some(d) => {
                                map.insert(name.clone(), d.clone());
                            }
                            None => {
                                map.remove(name);
                            }
                        },
                        Some(_) => {}
                    }
                }
            }
            for (name, v) in map.iter_mut() {
                if resource && API_FIELDS.contains(&name.as_str()) {
                    continue;
                }
                if let Some(field) = schema.field(name) {
                    default_at(field, v, false);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                items.iter_mut().for_each(|v| default_at(item, v, false));
            }
        }
        _ => {}
    }
}

/// The JSON type name the validator reports for a value.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `value` is of the schema's type.
fn type_fits(schema: Node, value: &Value) -> bool {
    let actual = type_of(value);
    if schema.flag("x-kubernetes-int-or-string") {
        return matches!(actual, "integer" | "string");
    }
    match schema.ty() {
        None => true,
        Some("number") => matches!(actual, "integer" | "number"),
        Some(expected) => expected == actual || (actual == "null" && schema.flag("nullable")),
    }
}

/// Type, required-field and enum errors of a (pruned, defaulted) object.
pub fn validate(schema: Node, value: &Value) -> Vec<FieldError> {
    let mut out = Vec::new();
    validate_at(schema, value, "", true, &mut out);
    out
}

fn validate_at(schema: Node, value: &Value, path: &str, root: bool, out: &mut Vec<FieldError>) {
    if !type_fits(schema, value) {
        let (expected, actual) = (schema.ty().unwrap_or("object"), type_of(value));
        out.push(FieldError {
            field: path.to_string(),
            reason: "FieldValueTypeInvalid",
            message: format!(
                "Invalid value: \"{actual}\": {path} in body must be of type {expected}: \"{actual}\""
            ),
        });
        return;
    }
    if let Some(allowed) = schema.0["enum"].as_array()
        && !allowed.contains(value)
    {
        let supported: Vec<&str> = allowed.iter().filter_map(Value::as_str).collect();
        out.push(FieldError::not_supported(path, value, &supported));
    }
    match value {
        Value::Object(map) => {
            let resource = schema.is_resource(root);
            for name in schema.0["required"].as_array().into_iter().flatten() {
                if let Some(name) = name.as_str()
                    && !map.contains_key(name)
                {
                    out.push(FieldError::required(child(path, name), ""));
                }
            }
            for (name, v) in map {
                if resource && API_FIELDS.contains(&name.as_str()) {
                    continue;
                }
                if let Some(field) = schema.field(name) {
                    validate_at(field, v, &child(path, name), false, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.items() {
                for (i, v) in items.iter().enumerate() {
                    validate_at(item, v, &format!("{path}[{i}]"), false, out);
                }
            }
        }
        _ => {}
    }
}

/// Why server-side apply cannot make a typed object of an apply configuration: a field the
/// schema does not declare, or a value of the wrong type (structured-merge-diff's wording,
/// `.spec.zzz: field not declared in schema`). `None` when it can.
pub fn typed_patch_error(schema: Node, config: &Value) -> Option<String> {
    typed_at(schema, config, "", true)
}

fn typed_at(schema: Node, value: &Value, path: &str, root: bool) -> Option<String> {
    if value.is_null() {
        return None;
    }
    if !type_fits(schema, value) {
        let expected = match schema.ty() {
            Some(scalar @ ("integer" | "number" | "string" | "boolean")) => {
                let e = crate::typed_patch::scalar_mismatch(scalar, value)?;
                return Some(format!("{path}: {e}"));
            }
            Some("object") => "map",
            Some("array") => "list",
            Some(other) => other,
            None => return None,
        };
        let got = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Some(format!(
            "{path}: expected {expected}, got &value.valueUnstructured{{Value:{got}}}"
        ));
    }
    match value {
        Value::Object(map) => {
            let resource = schema.is_resource(root);
            for (name, v) in map {
                if resource && API_FIELDS.contains(&name.as_str()) {
                    continue;
                }
                let p = format!("{path}.{name}");
                match schema.field(name) {
                    Some(field) => {
                        if let Some(e) = typed_at(field, v, &p, false) {
                            return Some(e);
                        }
                    }
                    None if schema.keeps_unknown() => {}
                    None => return Some(format!("{p}: field not declared in schema")),
                }
            }
            None
        }
        Value::Array(items) => {
            let item = schema.items()?;
            items
                .iter()
                .enumerate()
                .find_map(|(i, v)| typed_at(item, v, &format!("{path}[{i}]"), false))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn widget_schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["color"], "properties": {
            "size": {"type": "integer", "default": 3},
            "color": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }}}})
    }

    #[test]
    fn unknown_fields_are_pruned_unless_preserved() {
        let schema = widget_schema();
        let mut obj = json!({"apiVersion": "g/v1", "kind": "Widget",
            "metadata": {"name": "w", "bogus": 1, "labels": {"a": "b"}},
            "spec": {"color": "red", "unknown": 1, "extra": {"any": {"x": 1}}, "labels": {"k": "v"}}, "top": "x"});
        let unknown = prune(Node(&schema), &mut obj);
        assert_eq!(unknown, ["metadata.bogus", "spec.unknown", "top"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "g/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"a": "b"}},
            "spec": {"color": "red", "extra": {"any": {"x": 1}}, "labels": {"k": "v"}}})
        );
    }

    #[test]
    fn defaults_fill_missing_fields_and_replace_nulls() {
        let schema = widget_schema();
        let mut obj = json!({"spec": {"color": "red", "tags": null}});
        default(Node(&schema), &mut obj);
        assert_eq!(obj, json!({"spec": {"color": "red", "size": 3}}));
        let mut obj = json!({"spec": {"size": null}});
        default(Node(&schema), &mut obj);
        assert_eq!(obj["spec"]["size"], 3);
    }

    #[test]
    fn type_errors_read_like_the_apiserver() {
        let schema = widget_schema();
        let errors = validate(
            Node(&schema),
            &json!({"spec": {"color": 5, "size": "big", "tags": "a"}}),
        );
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "spec.color: Invalid value: \"integer\": spec.color in body must be of type string: \"integer\"",
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
                "spec.tags: Invalid value: \"string\": spec.tags in body must be of type array: \"string\"",
            ]
        );
        assert_eq!(errors[0].reason, "FieldValueTypeInvalid");
        let missing = validate(Node(&schema), &json!({"spec": {"color": "green"}}));
        let text: Vec<String> = missing.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            ["spec.color: Unsupported value: \"green\": supported values: \"red\", \"blue\""]
        );
        let missing = validate(Node(&schema), &json!({"spec": {}}));
        assert_eq!(missing[0].to_string(), "spec.color: Required value");
    }

    #[test]
    fn apply_refuses_undeclared_and_mistyped_fields() {
        let schema = widget_schema();
        let node = Node(&schema);
        assert_eq!(
            typed_patch_error(node, &json!({"spec": {"color": "red", "zzz": 1}})).as_deref(),
            Some(".spec.zzz: field not declared in schema")
        );
        assert_eq!(
            typed_patch_error(node, &json!({"spec": {"color": 7}})).as_deref(),
            Some(".spec.color: expected string, got &value.valueUnstructured{Value:7}")
        );
        let fine = json!({"apiVersion": "g/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"color": "red", "size": null, "extra": {"free": true}}});
        assert_eq!(typed_patch_error(node, &fine), None);
    }
}
