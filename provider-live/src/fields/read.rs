//! Reading: a resource value from the live object, by the rules that keep the next plan empty
//! (the module above lists them).

use base64::Engine as _;
use plugin_runtime::{AttributePath, Value};
use serde_json::{Map, Value as Json};

use super::write::{configured, write_scalar};
use super::*;

/// The value of a field table read from a live Kubernetes object (or sub-object), shaped like
/// `prior` wherever the two mean the same. Every attribute is present (null when absent) and
/// every block is a list (`single` ones an object or null).
pub fn read(fields: &[Field], live: &Json, prior: &Value) -> Value {
    read_in(fields, live, prior, false)
}

/// The value of a field table read from a live object as it is: every field the object has,
/// the server's defaults and the keys Kubernetes wrote included (a data source's read).
pub fn read_full(fields: &[Field], live: &Json) -> Value {
    read_in(fields, live, &Value::Null, true)
}

/// [`read`], or with `full` [`read_full`] (whose prior is always null).
pub(super) fn read_in(fields: &[Field], live: &Json, prior: &Value, full: bool) -> Value {
    // With no prior (an import, a new list item) everything the object has is read.
    let fresh = prior.is_null() || prior.is_unknown();
    Value::Object(
        fields
            .iter()
            .map(|f| {
                let p = prior.get(f.name);
                let absent = if full {
                    false
                } else if fresh {
                    is_server_default(f, live)
                } else {
                    // A block the server fills in (hashicorp's optional computed ones, such as
                    // a Deployment's `strategy`) reads as it is, as hashicorp's state holds it.
                    let computed = f.presence == Presence::Computed
                        || (f.presence == Presence::OptionalComputed && f.is_block());
                    !computed && left_out(f, p)
                };
                let value = if absent {
                    empty(f)
                } else {
                    read_field(f, live, p, full)
                };
                (f.name.to_string(), value)
            })
            .collect(),
    )
}

/// An optional field holding what the server fills in by default (the catalog knows it
/// inside atomic values: a field selector's `apiVersion: v1`, an empty `objectSelector`).
pub(super) fn is_server_default(field: &Field, live: &Json) -> bool {
    field.presence == Presence::Optional
        && field.json != INLINE
        && field.server_default.is_some_and(|default| {
            lookup(live, field.json)
                .is_some_and(|value| serde_json::from_str::<Json>(default).is_ok_and(|d| d == *value))
        })
}

/// An optional field the prior does not have: it stays out (server defaults, others' fields).
/// A required one is always read.
pub(super) fn left_out(field: &Field, prior: &Value) -> bool {
    if prior.is_unknown() || field.presence == Presence::Required {
        return false;
    }
    match field.shape {
        Shape::Local(_) => false,
        _ if field.object_fields().is_some() => {
            prior.is_null() || prior.elements().is_empty() && !matches!(field.shape, Shape::Single(_))
        }
        _ => field.presence == Presence::Optional && prior.is_null(),
    }
}

/// The value of a field that is not there: no blocks, or null.
pub(super) fn empty(field: &Field) -> Value {
    match field.shape {
        Shape::Single(_) => Value::Null,
        _ if field.is_block() => Value::List(Vec::new()),
        _ => Value::Null,
    }
}

pub(super) fn read_items(sub: &[Field], live: Option<&Json>, prior: &Value, full: bool) -> Vec<Value> {
    let items = live
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let known = matches!(prior, Value::List(_));
    // Items admission added to what we sent (a pod's service account token volume and its
    // mounts) were never configured: read the items the prior has, by name where they have one.
    // An empty name is no name: hashicorp's state holds "" for one never set.
    let names: Vec<&str> = prior
        .elements()
        .iter()
        .filter_map(|p| p.get("name").as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let named = known && !names.is_empty() && names.len() == prior.elements().len();
    items
        .iter()
        .filter(|item| {
            !named
                || item
                    .get("name")
                    .and_then(Json::as_str)
                    .is_some_and(|n| names.contains(&n))
        })
        .take(if known { prior.elements().len() } else { usize::MAX })
        .enumerate()
        .map(|(i, item)| {
            let p = if named {
                let name = item.get("name").and_then(Json::as_str);
                prior.elements().iter().find(|p| p.get("name").as_str() == name)
            } else {
                prior.elements().get(i)
            };
            read_in(sub, item, p.unwrap_or(&Value::Null), full)
        })
        .collect()
}

pub(super) fn read_field(field: &Field, parent: &Json, prior: &Value, full: bool) -> Value {
    let first = || prior.elements().first().unwrap_or(&Value::Null);
    let live = || {
        if field.json == INLINE {
            // Present when it holds something the user sets.
            let sub = field.object_fields().unwrap_or(&[]);
            let inner = read(sub, parent, &Value::Null);
            has_settings(sub, &inner).then_some(parent)
        } else {
            lookup(parent, field.json)
        }
    };
    match field.shape {
        Shape::Object(sub) => match live() {
            Some(l) => Value::List(vec![read_in(sub, l, first(), full)]),
            // An empty block (`security_context {}`) the server did not echo back.
            None if prior.elements().len() == 1 && !has_settings(sub, first()) => {
                Value::List(vec![read(sub, &Json::Object(Map::new()), first())])
            }
            None => Value::List(Vec::new()),
        },
        Shape::Single(sub) => match live() {
            Some(l) => read_in(sub, l, prior, full),
            None => Value::Null,
        },
        Shape::Array(sub) => Value::List(read_items(sub, live(), prior, full)),
        Shape::ArraySet(sub) => Value::Set(
            live()
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .map(|item| {
                    let same = prior.elements().iter().find(|p| {
                        write(sub, p, &AttributePath::default())
                            .is_ok_and(|w| w.iter().all(|(k, v)| item.get(k) == Some(v)))
                    });
                    read_in(sub, item, same.unwrap_or(&Value::Null), full)
                })
                .collect(),
        ),
        Shape::Local(_) => match prior {
            Value::Unknown(_) => Value::Null,
            v => v.clone(),
        },
        Shape::Unsupported(_) => empty(field),
        Shape::Map(_) => {
            // The keys the user manages: the server's own (a job's controller-uid label on its
            // pod template) and other writers' stay out, like metadata's labels. On an import,
            // labels and annotations (of a pod template) lose the keys Kubernetes writes itself.
            let live = live().filter(|l| !is_empty_collection(l));
            let keys = prior.entries().filter(|_| prior.is_wholly_known());
            let import = !full && prior.entries().is_none() && matches!(field.name, "labels" | "annotations");
            let keep = |k: &str| match keys {
                Some(keys) => keys.contains_key(k),
                None => crate::metadata::user_key(k, &[]),
            };
            match (live, keys.is_some() || import) {
                (Some(Json::Object(map)), true) => {
                    let kept = Json::Object(
                        map.iter()
                            .filter(|(k, _)| keep(k))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    );
                    read_plain(
                        field.shape,
                        Some(&kept).filter(|l| !is_empty_collection(l)),
                        prior,
                    )
                }
                (live, _) => read_plain(field.shape, live, prior),
            }
        }
        shape => read_plain(shape, live().filter(|l| !is_empty_collection(l)), prior),
    }
}

/// Whether a block value sets anything (beyond computed fields).
pub(super) fn has_settings(fields: &[Field], value: &Value) -> bool {
    fields
        .iter()
        .any(|f| f.presence != Presence::Computed && configured(value.get(f.name)))
}

pub(super) fn is_empty_collection(json: &Json) -> bool {
    match json {
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
        _ => false,
    }
}

pub(super) fn read_plain(shape: Shape, live: Option<&Json>, prior: &Value) -> Value {
    let prior_known = !prior.is_null() && prior.is_wholly_known();
    match live {
        None if prior_known && prior.is_zero() => prior.clone(),
        None => Value::Null,
        Some(l) if prior_known && same_meaning(shape, prior, l) => prior.clone(),
        Some(l) => from_json(shape, l),
    }
}

pub(super) fn same_meaning(shape: Shape, prior: &Value, live: &Json) -> bool {
    let same = |s: Scalar, p: &Value, l: &Json| match (write_scalar(s, p), s) {
        (Ok(Json::Number(a)), _) => l.as_f64().is_some_and(|b| a.as_f64() == Some(b)),
        (Ok(written), _) => written == *l,
        (Err(_), _) => false,
    };
    match shape {
        Shape::One(s) => same(s, prior, live),
        Shape::List(s) => live.as_array().is_some_and(|items| {
            items.len() == prior.elements().len()
                && prior.elements().iter().zip(items).all(|(p, l)| same(s, p, l))
        }),
        Shape::Set(s) => live.as_array().is_some_and(|items| {
            items.len() == prior.elements().len()
                && prior
                    .elements()
                    .iter()
                    .all(|p| items.iter().any(|l| same(s, p, l)))
                && items
                    .iter()
                    .all(|l| prior.elements().iter().any(|p| same(s, p, l)))
        }),
        Shape::Map(s) => match (prior.entries(), live.as_object()) {
            (Some(p), Some(l)) => {
                p.len() == l.len() && p.iter().all(|(k, pv)| l.get(k).is_some_and(|lv| same(s, pv, lv)))
            }
            _ => false,
        },
        _ => false,
    }
}

pub(super) fn from_json(shape: Shape, live: &Json) -> Value {
    let items = || live.as_array().into_iter().flatten();
    match shape {
        Shape::One(s) => scalar_from_json(s, live),
        Shape::List(s) => Value::List(items().map(|j| scalar_from_json(s, j)).collect()),
        Shape::Set(s) => Value::Set(items().map(|j| scalar_from_json(s, j)).collect()),
        Shape::Map(s) => Value::Map(
            live.as_object()
                .into_iter()
                .flatten()
                .map(|(k, j)| (k.clone(), scalar_from_json(s, j)))
                .collect(),
        ),
        _ => Value::Null,
    }
}

pub(super) fn scalar_from_json(scalar: Scalar, live: &Json) -> Value {
    match (scalar, live) {
        (Scalar::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Scalar::Int, Json::Number(n)) => n.as_i64().map(Value::int).unwrap_or(Value::Null),
        (Scalar::Number, Json::Number(n)) => match n.as_i64() {
            Some(i) => Value::int(i),
            None => n
                .as_f64()
                .map(|f| Value::Number(plugin_runtime::Number::Float(f)))
                .unwrap_or(Value::Null),
        },
        (Scalar::FileMode, Json::Number(n)) => n
            .as_i64()
            .map(|m| Value::String(format!("{m:04o}")))
            .unwrap_or(Value::Null),
        (Scalar::PortRef, Json::Object(port)) => match (port.get("number"), port.get("name")) {
            (Some(Json::Number(n)), _) => Value::String(n.to_string()),
            (_, Some(Json::String(name))) => Value::String(name.clone()),
            _ => Value::Null,
        },
        (Scalar::Base64, Json::String(s)) => base64::engine::general_purpose::STANDARD
            .decode(s)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .map(Value::String)
            .unwrap_or(Value::Null),
        (Scalar::Bool | Scalar::Int | Scalar::Number, _) => Value::Null,
        (_, Json::String(s)) => Value::String(s.clone()),
        (_, Json::Number(n)) => Value::String(n.to_string()),
        (_, Json::Bool(b)) => Value::String(b.to_string()),
        _ => Value::Null,
    }
}
