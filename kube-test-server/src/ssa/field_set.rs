//! Field sets as structured-merge-diff sees them: paths of `f:` fields, `k:` keyed items and
//! `v:` set values, the schema that says which lists are keyed, and the comparison of two objects.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::schema::{self, ListType};

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Element {
    /// A struct field or map key (`f:name`).
    Field(String),
    /// An associative-list item, by its key fields as compact JSON (`k:{"name":"web"}`).
    Key(String),
    /// A set-list item, by its JSON value (`v:"kubernetes"`).
    Value(String),
    /// A list index (`i:0`), only read from foreign managedFields.
    Index(usize),
}

pub(super) type Path = Vec<Element>;
pub(super) type FieldSet = BTreeSet<Path>;

/// Which lists are associative and which maps atomic, from the kind's OpenAPI schema. Kinds
/// without one (none of the served kinds) get atomic lists and granular maps, as SMD deduces.
/// `names` are the field names from the root, list items skipped.
pub(super) struct Schema {
    pub(super) root: Option<schema::Type>,
}

impl Schema {
    pub(super) fn for_object(obj: &Value) -> Self {
        Schema {
            root: schema::of_object(obj),
        }
    }

    pub(super) fn at(&self, names: &[String]) -> Option<schema::Type> {
        self.root?.at(names)
    }

    pub(super) fn list_type(&self, names: &[String]) -> ListType {
        self.at(names).map_or(ListType::Atomic, |t| t.list_type())
    }

    pub(super) fn atomic_map(&self, names: &[String]) -> bool {
        self.at(names).is_some_and(|t| t.is_atomic())
    }

    /// Whether the items of the list at `names` are atomic structs (`k:` entries without
    /// fields, replaced as a whole by an apply).
    pub(super) fn atomic_items(&self, names: &[String]) -> bool {
        self.at(names)
            .and_then(|t| t.items())
            .is_some_and(|t| t.is_atomic())
    }

    /// The path element of a list item, or None when it lacks its key fields.
    pub(super) fn item_element(&self, names: &[String], list: ListType, item: &Value) -> Option<Element> {
        match list {
            ListType::Set => Some(Element::Value(item.to_string())),
            ListType::Map(keys) => {
                let item_type = self.at(names).and_then(|t| t.items());
                let mut key = Map::new();
                let mut sorted = keys.to_vec();
                sorted.sort();
                for k in sorted {
                    // A key field with a schema default (ports' protocol) counts when omitted.
                    let default = || item_type.and_then(|t| t.field(&k)).and_then(|t| t.default());
                    let Some(v) = item.get(&k).or_else(default) else {
                        continue;
                    };
                    key.insert(k, v.clone());
                }
                (!key.is_empty()).then(|| Element::Key(Value::Object(key).to_string()))
            }
            ListType::Atomic => None,
        }
    }
}

pub(super) fn child(path: &Path, e: Element) -> Path {
    let mut p = path.clone();
    p.push(e);
    p
}

pub(super) fn named(names: &[String], name: &str) -> Vec<String> {
    let mut n = names.to_vec();
    n.push(name.to_string());
    n
}

/// The items of a keyed list with their path elements (items without keys are skipped).
pub(super) fn keyed_items<'v>(
    schema: &Schema,
    names: &[String],
    list: ListType,
    items: &'v [Value],
) -> Vec<(Element, &'v Value)> {
    items
        .iter()
        .filter_map(|i| schema.item_element(names, list, i).map(|e| (e, i)))
        .collect()
}

/// Whether a keyed list holds the key `e` more than once. kube-apiserver stores such lists when
/// created or updated (not applied), and structured-merge-diff then owns and compares each such
/// item whole: `k:{"name":"A"}: {}` (v1.36).
pub(super) fn held_twice(items: &[(Element, &Value)], e: &Element) -> bool {
    items.iter().filter(|(x, _)| x == e).count() > 1
}

/// SMD's `ToFieldSet`: the leaves, list items, empty maps and atomics of a configuration.
pub(super) fn to_set(value: &Value, path: &Path, names: &[String], schema: &Schema, out: &mut FieldSet) {
    let Value::Object(map) = value else { return };
    for (k, v) in map {
        let p = child(path, Element::Field(k.clone()));
        let n = named(names, k);
        match v {
            Value::Object(m) if !m.is_empty() && !schema.atomic_map(&n) => to_set(v, &p, &n, schema, out),
            Value::Array(items) => match schema.list_type(&n) {
                ListType::Atomic => {
                    out.insert(p);
                }
                list => {
                    let keyed = keyed_items(schema, &n, list, items);
                    for (e, item) in &keyed {
                        let ip = child(&p, e.clone());
                        if !schema.atomic_items(&n) && !held_twice(&keyed, e) {
                            to_set(item, &ip, &n, schema, out);
                        }
                        out.insert(ip);
                    }
                }
            },
            _ => {
                out.insert(p);
            }
        }
    }
}

/// What changed between two objects.
#[derive(Default)]
pub(super) struct Diff {
    pub(super) added: FieldSet,
    pub(super) modified: FieldSet,
    pub(super) removed: FieldSet,
}

/// SMD's `Compare`. `None` is an absent field, `Some(Null)` a present null (which, unlike an
/// absent one, does not make the container "added").
pub(super) fn compare(
    old: Option<&Value>,
    new: Option<&Value>,
    path: &Path,
    names: &[String],
    schema: &Schema,
    diff: &mut Diff,
) {
    let shape = match (old, new) {
        (None, None) => return,
        (Some(Value::Null) | None, Some(v)) | (Some(v), Some(Value::Null) | None) => v,
        (Some(o), Some(_)) => o,
    };
    let as_map = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let as_list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let container = match shape {
        Value::Object(_) if !schema.atomic_map(names) => {
            let (o, n) = (as_map(old), as_map(new));
            let same_shape = old.is_none_or(|v| v.is_object() || v.is_null())
                && new.is_none_or(|v| v.is_object() || v.is_null());
            if same_shape {
                let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
                for k in keys {
                    let p = child(path, Element::Field(k.clone()));
                    compare(o.get(k), n.get(k), &p, &named(names, k), schema, diff);
                }
            }
            same_shape
        }
        Value::Array(_) if schema.list_type(names) != ListType::Atomic => {
            let list = schema.list_type(names);
            let same_shape = old.is_none_or(|v| v.is_array() || v.is_null())
                && new.is_none_or(|v| v.is_array() || v.is_null());
            if same_shape {
                let (o, n) = (as_list(old), as_list(new));
                let (o, n) = (
                    keyed_items(schema, names, list, &o),
                    keyed_items(schema, names, list, &n),
                );
                let keys: BTreeSet<&Element> = o.iter().chain(n.iter()).map(|(e, _)| e).collect();
                for e in keys {
                    let all = |items: &[(Element, &Value)]| {
                        items
                            .iter()
                            .filter(|(x, _)| x == e)
                            .map(|(_, v)| (*v).clone())
                            .collect::<Vec<_>>()
                    };
                    let (oi, ni) = (all(&o), all(&n));
                    let item_path = child(path, e.clone());
                    if schema.atomic_items(names) || held_twice(&o, e) || held_twice(&n, e) {
                        match (oi.is_empty(), ni.is_empty()) {
                            (true, false) => diff.added.insert(item_path),
                            (false, true) => diff.removed.insert(item_path),
                            (false, false) if oi != ni => diff.modified.insert(item_path),
                            _ => false,
                        };
                        continue;
                    }
                    compare(oi.first(), ni.first(), &item_path, names, schema, diff);
                }
            }
            same_shape
        }
        _ => false,
    };
    if container {
        if !path.is_empty() {
            if old.is_none() {
                diff.added.insert(path.clone());
            } else if new.is_none() {
                diff.removed.insert(path.clone());
            }
        }
        return;
    }
    match (old, new) {
        (None, Some(_)) => diff.added.insert(path.clone()),
        (Some(_), None) => diff.removed.insert(path.clone()),
        (Some(o), Some(n)) if o != n => diff.modified.insert(path.clone()),
        _ => false,
    };
}
