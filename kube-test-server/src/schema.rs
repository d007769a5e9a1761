//! The real apiserver's OpenAPI v3 schema of every built-in kind (`schema/openapi.json`,
//! extracted by the `openapi_extract` tool), so that generic behaviour follows the same
//! definitions the apiserver generates from its Go types:
//!
//! - Go serialisation and declarative defaults: a property with a `default` is always present
//!   on a real object (zero values of non-`omitempty` fields, empty structs, `+default`
//!   markers such as ports' `protocol: TCP`), see [`Type::fill_defaults`];
//! - unknown fields at any depth (`fieldValidation` Strict/Warn), see [`Type::unknown_fields`];
//! - list and map types for server-side apply, and patch strategies and merge keys for
//!   strategic merge patches;
//! - the zero object a create is compared with for `managedFields`, see [`Type::zero`].
//!
//! Parsed once per process, on first use.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

const EXTRACT: &str = include_str!("schema/openapi.json");

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// One schema node: a definition or a property.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    #[serde(rename = "type")]
    ty: Option<String>,
    #[serde(default)]
    properties: BTreeMap<String, Node>,
    items: Option<Box<Node>>,
    additional_properties: Option<Box<Node>>,
    #[serde(rename = "$ref")]
    reference: Option<String>,
    /// `Some(Null)` for fields the encoder writes as `null` when unset.
    #[serde(default, deserialize_with = "present")]
    default: Option<Value>,
    #[serde(rename = "x-kubernetes-list-type")]
    list_type: Option<String>,
    #[serde(rename = "x-kubernetes-list-map-keys", default)]
    list_map_keys: Vec<String>,
    #[serde(rename = "x-kubernetes-map-type")]
    map_type: Option<String>,
    #[serde(rename = "x-kubernetes-patch-strategy")]
    patch_strategy: Option<String>,
    #[serde(rename = "x-kubernetes-patch-merge-key")]
    patch_merge_key: Option<String>,
}

/// Keeps an explicit `null` as `Some(Null)` (serde's `Option` would make it `None`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Extract {
    /// `group/version/Kind` -> definition name.
    kinds: HashMap<String, String>,
    definitions: HashMap<String, Node>,
}

fn extract() -> &'static Extract {
    static PARSED: OnceLock<Extract> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(EXTRACT).expect("the embedded schema extract is valid"))
}

/// The extract as plain JSON (`kinds`, `definitions`), for the OpenAPI documents the server
/// publishes.
pub fn raw() -> &'static Value {
    static RAW: OnceLock<Value> = OnceLock::new();
    RAW.get_or_init(|| serde_json::from_str(EXTRACT).expect("the embedded schema extract is valid"))
}

/// How server-side apply treats a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    /// Items are identified by these fields.
    Map(&'static [String]),
    Set,
}

/// A node in context: property nodes carry list/map annotations, their `$ref` the structure.
#[derive(Clone, Copy)]
pub struct Type {
    node: &'static Node,
}

impl std::fmt::Debug for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.node.reference.as_deref().unwrap_or("<inline>"))
    }
}

/// The schema of `kind` served as `api_version` (`apps/v1`, `v1`).
pub fn of(api_version: &str, kind: &str) -> Option<Type> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let ex = extract();
    let name = ex.kinds.get(&format!("{group}/{version}/{kind}"))?;
    ex.definitions.get(name).map(|node| Type { node })
}

/// The schema of an object, by its own `apiVersion` and `kind`.
pub fn of_object(obj: &Value) -> Option<Type> {
    of(obj["apiVersion"].as_str()?, obj["kind"].as_str()?)
}

impl Type {
    /// The definition behind a `$ref`, or the node itself.
    fn body(&self) -> &'static Node {
        match &self.node.reference {
            Some(r) => extract().definitions.get(r).unwrap_or(self.node),
            None => self.node,
        }
    }

    fn is_struct(&self) -> bool {
        !self.body().properties.is_empty()
    }

    fn is_map(&self) -> bool {
        self.body().additional_properties.is_some()
    }

    /// Free-form content (`RawExtension`, `FieldsV1`): anything goes inside.
    fn is_free_form(&self) -> bool {
        let b = self.body();
        b.ty.as_deref() == Some("object") && b.properties.is_empty() && b.additional_properties.is_none()
    }

    /// `integer`, `number`, `string` or `boolean` for a scalar field (not for int-or-string
    /// and quantities, which take either).
    pub fn scalar_type(&self) -> Option<&'static str> {
        let ty = self.body().ty.as_deref()?;
        ["integer", "number", "string", "boolean"]
            .into_iter()
            .find(|s| *s == ty)
    }

    /// The type of field `name` of a struct, or of any value of a map.
    pub fn field(&self, name: &str) -> Option<Type> {
        let b = self.body();
        b.properties
            .get(name)
            .or(b.additional_properties.as_deref())
            .map(|node| Type { node })
    }

    /// The item type of a list.
    pub fn items(&self) -> Option<Type> {
        self.body().items.as_deref().map(|node| Type { node })
    }

    /// The type at a path of field names from here (list items are stepped into implicitly).
    pub fn at(&self, names: &[String]) -> Option<Type> {
        let mut t = *self;
        for name in names {
            if let Some(items) = t.items() {
                t = items;
            }
            t = t.field(name)?;
        }
        Some(t)
    }

    /// The declared default (including Go zero values of non-`omitempty` fields).
    pub fn default(&self) -> Option<&'static Value> {
        self.node.default.as_ref()
    }

    pub fn list_type(&self) -> ListType {
        match self.node.list_type.as_deref() {
            Some("map") => ListType::Map(&self.node.list_map_keys),
            Some("set") => ListType::Set,
            _ => ListType::Atomic,
        }
    }

    /// Whether a map or struct is replaced as a whole (`x-kubernetes-map-type: atomic`); a
    /// property's own annotation (`granular` on PV `claimRef`) wins over its type's.
    pub fn is_atomic(&self) -> bool {
        match &self.node.map_type {
            Some(t) => t == "atomic",
            None => self.body().map_type.as_deref() == Some("atomic"),
        }
    }

    /// The strategic merge key of a list with patch strategy `merge`.
    pub fn merge_key(&self) -> Option<&'static str> {
        let merges = self
            .node
            .patch_strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|p| p == "merge"));
        merges.then_some(self.node.patch_merge_key.as_deref()).flatten()
    }

    /// Whether a list of scalars merges as a set under a strategic merge patch.
    pub fn merges_scalars(&self) -> bool {
        let merges = self
            .node
            .patch_strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|p| p == "merge"));
        merges && self.node.patch_merge_key.is_none()
    }

    /// Fills every declared default into `value` and the objects inside it, as decoding into
    /// the Go type, defaulting and encoding do: a missing or null field with a default gets it.
    pub fn fill_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) if self.is_struct() => {
                for (name, prop) in &self.body().properties {
                    if let Some(d) = &prop.default
                        && map.get(name).is_none_or(Value::is_null)
                    {
                        map.insert(name.clone(), d.clone());
                    }
                }
                for (name, v) in map.iter_mut() {
                    if let Some(t) = self.field(name) {
                        t.fill_defaults(v);
                    }
                }
            }
            Value::Object(map) if self.is_map() => {
                if let Some(t) = self.field("") {
                    for v in map.values_mut() {
                        t.fill_defaults(v);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(t) = self.items() {
                    for item in items {
                        t.fill_defaults(item);
                    }
                }
            }
            _ => {}
        }
    }

    /// Calls `f` with the definition name of every struct in `value`, parents before children
    /// (the order of generated Go defaulters, so a parent's defaults can create children).
    pub fn visit_structs(&self, value: &mut Value, f: &mut dyn FnMut(&str, &mut Map<String, Value>)) {
        match value {
            Value::Object(map) if self.is_struct() => {
                if let Some(name) = &self.node.reference {
                    f(name, map);
                }
                for (name, v) in map.iter_mut() {
                    if let Some(t) = self.body().properties.get(name).map(|node| Type { node }) {
                        t.visit_structs(v, f);
                    }
                }
            }
            Value::Object(map) if self.is_map() => {
                if let Some(t) = self.field("") {
                    map.values_mut().for_each(|v| t.visit_structs(v, f));
                }
            }
            Value::Array(items) => {
                if let Some(t) = self.items() {
                    items.iter_mut().for_each(|i| t.visit_structs(i, f));
                }
            }
            _ => {}
        }
    }

    /// Calls `f` on every `resource.Quantity` value in `value`.
    pub fn visit_quantities(&self, value: &mut Value, f: &mut dyn FnMut(&mut Value)) {
        if self.node.reference.as_deref() == Some(QUANTITY) {
            f(value);
            return;
        }
        match value {
            Value::Object(map) if self.is_struct() => {
                for (name, v) in map.iter_mut() {
                    if let Some(t) = self.body().properties.get(name).map(|node| Type { node }) {
                        t.visit_quantities(v, f);
                    }
                }
            }
            Value::Object(map) if self.is_map() => {
                if let Some(t) = self.field("") {
                    map.values_mut().for_each(|v| t.visit_quantities(v, f));
                }
            }
            Value::Array(items) => {
                if let Some(t) = self.items() {
                    items.iter_mut().for_each(|i| t.visit_quantities(i, f));
                }
            }
            _ => {}
        }
    }

    /// The zero value of a struct as the Go encoder writes it: the zero values of
    /// non-`omitempty` fields (defaults that are zero; `+default` markers such as
    /// `replicas: 1` only come with defaulting).
    pub fn zero(&self) -> Value {
        let mut out = Map::new();
        for (name, prop) in &self.body().properties {
            let t = Type { node: prop };
            match &prop.default {
                Some(Value::Object(d)) if d.is_empty() && t.is_struct() => {
                    out.insert(name.clone(), t.zero());
                }
                Some(d) if is_zero_value(d) => {
                    out.insert(name.clone(), d.clone());
                }
                Some(_) | None => {}
            }
        }
        Value::Object(out)
    }

    /// Paths of fields the type does not have, in document order, like the apiserver's strict
    /// decoder reports them (`spec.foo`, `spec.containers[0].bar`).
    pub fn unknown_fields(&self, value: &Value) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_unknown(value, "", &mut out);
        out
    }

    fn collect_unknown(&self, value: &Value, path: &str, out: &mut Vec<String>) {
        if self.is_free_form() {
            return;
        }
        match value {
            Value::Object(map) if self.is_struct() => {
                for (name, v) in map {
                    let p = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    match self.body().properties.get(name) {
                        Some(node) => Type { node }.collect_unknown(v, &p, out),
                        None => out.push(p),
                    }
                }
            }
            Value::Object(map) if self.is_map() => {
                if let Some(t) = self.field("") {
                    for (key, v) in map {
                        t.collect_unknown(v, &format!("{path}[{key}]"), out);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(t) = self.items() {
                    for (i, item) in items.iter().enumerate() {
                        t.collect_unknown(item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            _ => {}
        }
    }

    /// Removes the fields [`Type::unknown_fields`] reports (the decoder drops them).
    pub fn prune(&self, value: &mut Value) {
        if self.is_free_form() {
            return;
        }
        match value {
            Value::Object(map) if self.is_struct() => {
                let body = self.body();
                map.retain(|name, _| body.properties.contains_key(name));
                for (name, v) in map.iter_mut() {
                    if let Some(node) = body.properties.get(name) {
                        Type { node }.prune(v);
                    }
                }
            }
            Value::Object(map) if self.is_map() => {
                if let Some(t) = self.field("") {
                    map.values_mut().for_each(|v| t.prune(v));
                }
            }
            Value::Array(items) => {
                if let Some(t) = self.items() {
                    items.iter_mut().for_each(|i| t.prune(i));
                }
            }
            _ => {}
        }
    }
}

/// Every `$ref` in an OpenAPI schema `node` (values under `default` and `enum` are data, not
/// schema), pushed onto `out`: the definitions it references. The extract tool and the published
/// documents both follow them.
pub fn references(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(m) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => out.push(r.clone()),
                    ("default" | "enum", _) => {}
                    _ => references(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| references(i, out)),
        _ => {}
    }
}

/// Go's zero values as JSON: `null`, `""`, `0`, `false` and empty objects and lists.
fn is_zero_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_resolve() {
        let d = of("apps/v1", "Deployment").unwrap();
        let containers = d
            .at(&["spec", "template", "spec", "containers"].map(String::from))
            .unwrap();
        let keys = |t: Type| match t.list_type() {
            ListType::Map(keys) => keys.to_vec(),
            other => panic!("{other:?}"),
        };
        assert_eq!(keys(containers), ["name"]);
        assert_eq!(containers.merge_key(), Some("name"));
        let ports = containers.at(&["ports".to_string()]).unwrap();
        assert_eq!(keys(ports), ["containerPort", "protocol"]);
        assert!(
            d.at(&["spec".to_string(), "selector".to_string()])
                .unwrap()
                .is_atomic()
        );
        assert!(of("v1", "Nothing").is_none());
        let finalizers = of("v1", "ConfigMap")
            .unwrap()
            .at(&["metadata".to_string(), "finalizers".to_string()])
            .unwrap();
        assert_eq!(finalizers.list_type(), ListType::Set);
        assert!(finalizers.merges_scalars());
    }

    #[test]
    fn defaults_follow_go_serialisation() {
        let rc = of("v1", "ReplicationController").unwrap();
        let mut obj = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}]}}}});
        rc.fill_defaults(&mut obj);
        assert_eq!(obj["spec"]["replicas"], 1);
        assert_eq!(obj["spec"].get("minReadySeconds"), None);
        assert_eq!(
            obj["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"],
            "TCP"
        );
        assert_eq!(
            obj["spec"]["template"]["spec"]["containers"][0]["resources"],
            json!({})
        );
        assert_eq!(obj["status"], json!({"replicas": 0}));
        let zero = of("apps/v1", "Deployment").unwrap().zero();
        assert_eq!(zero["spec"]["selector"], Value::Null);
        assert_eq!(zero["spec"]["template"]["spec"]["containers"], Value::Null);
    }

    #[test]
    fn unknown_fields_at_any_depth() {
        let d = of("apps/v1", "Deployment").unwrap();
        let mut obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "bogus": 1, "labels": {"a": "b"}},
            "spec": {"foo": 1, "template": {"spec": {"containers": [{"name": "c", "bar": 2}]}}}, "extra": true});
        assert_eq!(
            d.unknown_fields(&obj),
            [
                "metadata.bogus",
                "spec.foo",
                "spec.template.spec.containers[0].bar",
                "extra"
            ]
        );
        d.prune(&mut obj);
        assert!(d.unknown_fields(&obj).is_empty());
        assert_eq!(obj["metadata"]["labels"]["a"], "b");
    }
}
