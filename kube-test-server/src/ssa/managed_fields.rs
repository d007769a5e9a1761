//! `metadata.managedFields` entries: decoding and encoding FieldsV1, the path strings conflict
//! messages use, and the order the apiserver stores entries in.

use super::field_set::{Element, FieldSet, Path, child};
use serde_json::{Map, Value, json};

/// One `managedFields` entry.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) manager: String,
    pub(super) operation: String,
    pub(super) api_version: String,
    pub(super) time: Option<String>,
    pub(super) subresource: Option<String>,
    pub(super) set: FieldSet,
}

impl Entry {
    pub(super) fn is(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.as_deref() == subresource
    }

    /// How conflict messages name this manager.
    pub(super) fn describe(&self) -> String {
        let name = crate::validation::go_quote(&self.manager);
        if self.operation == "Update" {
            format!("{name} using {}", self.api_version)
        } else {
            name
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), encode_set(&self.set));
        if let Some(s) = &self.subresource {
            m.insert("subresource".into(), json!(s));
        }
        Value::Object(m)
    }
}

pub(super) fn decode_entries(object: Option<&Value>) -> Vec<Entry> {
    let Some(entries) = object
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            let mut set = FieldSet::new();
            decode_set(e.get("fieldsV1").unwrap_or(&Value::Null), &Vec::new(), &mut set);
            Entry {
                manager: s("manager").unwrap_or_default(),
                operation: s("operation").unwrap_or_default(),
                api_version: s("apiVersion").unwrap_or_default(),
                time: s("time"),
                subresource: s("subresource"),
                set,
            }
        })
        .collect()
}

pub(super) fn decode_set(node: &Value, path: &Path, out: &mut FieldSet) {
    let Some(map) = node.as_object() else { return };
    for (k, v) in map {
        if k == "." {
            out.insert(path.clone());
            continue;
        }
        let element = if let Some(f) = k.strip_prefix("f:") {
            Element::Field(f.to_string())
        } else if let Some(key) = k.strip_prefix("k:") {
            // Re-serialise so key order and spacing match what this module produces.
            let parsed: Value = serde_json::from_str(key).unwrap_or(Value::Null);
            let mut sorted: Vec<(&String, &Value)> = parsed.as_object().into_iter().flatten().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let canonical: Map<String, Value> =
                sorted.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Element::Key(Value::Object(canonical).to_string())
        } else if let Some(value) = k.strip_prefix("v:") {
            Element::Value(value.to_string())
        } else if let Some(index) = k.strip_prefix("i:").and_then(|i| i.parse().ok()) {
            Element::Index(index)
        } else {
            continue;
        };
        let p = child(path, element);
        if v.as_object().is_none_or(Map::is_empty) {
            out.insert(p);
        } else {
            decode_set(v, &p, out);
        }
    }
}

pub(super) fn element_key(e: &Element) -> String {
    match e {
        Element::Field(f) => format!("f:{f}"),
        Element::Key(k) => format!("k:{k}"),
        Element::Value(v) => format!("v:{v}"),
        Element::Index(i) => format!("i:{i}"),
    }
}

/// The FieldsV1 tree: `"."` marks a member that also has children; children sorted.
pub(super) fn encode_set(set: &FieldSet) -> Value {
    fn build(set: &FieldSet, prefix: &[Element]) -> Value {
        let mut children: Vec<&Element> = set
            .iter()
            .filter(|p| p.len() > prefix.len() && p.starts_with(prefix))
            .map(|p| &p[prefix.len()])
            .collect();
        children.dedup();
        let mut node = Map::new();
        if !prefix.is_empty() && !children.is_empty() && set.contains(prefix) {
            node.insert(".".into(), json!({}));
        }
        for c in children {
            let mut p = prefix.to_vec();
            p.push(c.clone());
            node.insert(element_key(c), build(set, &p));
        }
        Value::Object(node)
    }
    build(set, &[])
}

/// SMD's path string, e.g. `.spec.template.spec.containers[name="web"].image`.
pub(super) fn path_string(path: &Path) -> String {
    path.iter()
        .map(|e| match e {
            Element::Field(f) => format!(".{f}"),
            Element::Key(k) => {
                let parsed: Value = serde_json::from_str(k).unwrap_or(Value::Null);
                let parts: Vec<String> = parsed
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            Element::Value(v) => format!("[={v}]"),
            Element::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// Sorted as the apiserver stores them: Apply before Update, then time, manager, subresource.
pub(super) fn store_entries(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        (
            a.operation.as_str(),
            a.time.as_deref().unwrap_or(""),
            a.manager.as_str(),
            a.subresource.as_deref(),
        )
            .cmp(&(
                b.operation.as_str(),
                b.time.as_deref().unwrap_or(""),
                b.manager.as_str(),
                b.subresource.as_deref(),
            ))
    });
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
    }
}

pub(super) fn without_managed_fields(object: &Value) -> Value {
    let mut o = object.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    o
}
