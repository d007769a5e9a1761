//! Field tables: one declaration per Kubernetes field drives a kind's schema, the object sent
//! to the API and the value read back from it. The tables come from the kind catalog
//! ([`crate::catalog`]); this module knows how each shape converts.
//!
//! A [`Field`] names the Terraform attribute (snake_case, as hashicorp/kubernetes spells it)
//! and the Kubernetes JSON field (camelCase, dotted when hashicorp flattened a level), says how
//! the value is shaped on each side ([`Shape`]) and whether it is required, optional or filled
//! in by the server ([`Presence`]). Kubernetes objects nest as hashicorp nests them: as blocks
//! of at most one element.
//!
//! Reading follows the rules that keep the next plan empty after an apply:
//! - what the prior value does not have (an optional attribute that is null, a block that is
//!   absent) stays out: the server's defaults and other writers' fields never become a diff,
//!   and the engine gets back exactly the nulls it planned;
//! - a value equal in meaning to the prior one keeps the prior's spelling ("8080" for 8080,
//!   "0644" for 420); a quantity reads as the server spells it (`500m` for `0.5`), as
//!   hashicorp's state holds it: the plan keeps that for an equal configured one (the rules'
//!   equivalence, on a legacy-SDK resource);
//! - a zero value the server omits (`0`, `false`, `""`, empty collections) keeps the prior's.
//!
//! Reading from no prior (an import, or a list item the prior did not have) reads everything.
//! [`read_full`] reads everything the server has, its defaults too: a data source reports the
//! live object as it is.

use base64::Engine as _;
use plugin_runtime::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, NestedBlock, Nesting, Type, Value,
};
use serde_json::{Map, Value as Json};

use super::spec_quantity;

/// How one value is written on each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Str,
    Int,
    /// A Terraform number, a JSON number that may have a fraction.
    Number,
    Bool,
    /// A Terraform string holding a whole number (hashicorp's "nullable int"), a JSON integer.
    IntString,
    /// A Terraform string holding a number, a JSON number.
    NumString,
    /// A Terraform string holding "true" or "false", a JSON bool.
    BoolString,
    /// A Terraform string; JSON integer when it is a whole number, else a string ("http", "25%").
    IntOrString,
    /// A resource quantity string, compared by meaning.
    Quantity,
    /// A Terraform octal string ("0644"), a JSON integer (420).
    FileMode,
    /// A Terraform string naming a service port by number or name; JSON `{"number": 80}` or
    /// `{"name": "http"}` (networking/v1's backend port).
    PortRef,
    /// A Terraform string; JSON base64 of its bytes (a certificate in a status).
    Base64,
}

/// The shape of a field.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    One(Scalar),
    List(Scalar),
    Set(Scalar),
    Map(Scalar),
    /// A Kubernetes object: a block of at most one element.
    Object(&'static [Field]),
    /// A Kubernetes object as a block nested `single` (a Terraform object, not a list).
    Single(&'static [Field]),
    /// A Kubernetes array of objects: a repeated block.
    Array(&'static [Field]),
    /// A Kubernetes array of objects whose order does not matter: a block set.
    ArraySet(&'static [Field]),
    /// A setting that exists only in Terraform (`wait_for_rollout`): never sent, read back as
    /// configured.
    Local(Type0),
    /// A path hashicorp has and Kubernetes does not: in the schema, an error when configured.
    Unsupported(Unsupported),
}

/// The Terraform shape of an [`Shape::Unsupported`] path.
#[derive(Clone, Copy, Debug)]
pub enum Unsupported {
    Block(&'static [Field]),
    Attribute(Type0),
}

/// A plain Terraform type, `Copy` so tables stay static.
#[derive(Clone, Copy, Debug)]
pub enum Type0 {
    One(Scalar),
    List(Scalar),
    Set(Scalar),
    Map(Scalar),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Required,
    Optional,
    /// Optional, and filled in by the server when not configured.
    OptionalComputed,
    /// Set by the server only; never sent.
    Computed,
}

/// One Kubernetes field as a Terraform attribute or block.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    /// The JSON field, dotted when hashicorp flattened levels (`service.name`); [`INLINE`] for
    /// a Terraform level whose fields are the enclosing object's.
    pub json: &'static str,
    pub shape: Shape,
    /// An object or array shown as a nested attribute (`spec = { ... }`) instead of a block.
    pub attribute: bool,
    /// What the API server fills in when nobody sets it (JSON text): an import leaves it out
    /// of an optional attribute, as the user never wrote it.
    pub server_default: Option<&'static str>,
    pub presence: Presence,
    pub doc: &'static str,
}

/// The `json` of a Terraform level with no Kubernetes level of its own (hashicorp's
/// `persistent_volume_source`, a webhook's `object_selector.label_selector`).
pub const INLINE: &str = "~";

impl Field {
    /// The fields of an object or array shape.
    fn object_fields(&self) -> Option<&'static [Field]> {
        match self.shape {
            Shape::Object(sub)
            | Shape::Single(sub)
            | Shape::Array(sub)
            | Shape::ArraySet(sub)
            | Shape::Unsupported(Unsupported::Block(sub)) => Some(sub),
            _ => None,
        }
    }

    /// The fields of a Terraform block (not a computed one or a nested attribute).
    fn block_fields(&self) -> Option<&'static [Field]> {
        if self.presence == Presence::Computed || self.attribute {
            return None;
        }
        self.object_fields()
    }

    fn is_block(&self) -> bool {
        self.block_fields().is_some()
    }
}

/// The schema block of a field table.
pub fn block(fields: &[Field], description: &str) -> Block {
    let mut block = Block::new(description);
    for field in fields {
        if let Some(sub) = field.block_fields() {
            let inner = self::block(sub, field.doc);
            let required = field.presence == Presence::Required;
            let nested = match (field.shape, required) {
                (Shape::Single(_), true) => NestedBlock::new(field.name, Nesting::Single, inner).items(1, 1),
                (Shape::Single(_), false) => NestedBlock::new(field.name, Nesting::Single, inner),
                (Shape::Object(_), true) => NestedBlock::exactly_one(field.name, inner),
                (Shape::Object(_), false) => NestedBlock::at_most_one(field.name, inner),
                (Shape::ArraySet(_), true) => NestedBlock::new(field.name, Nesting::Set, inner).items(1, 0),
                (Shape::ArraySet(_), false) => NestedBlock::new(field.name, Nesting::Set, inner),
                (_, true) => NestedBlock::new(field.name, Nesting::List, inner).items(1, 0),
                (_, false) => NestedBlock::new(field.name, Nesting::List, inner),
            };
            block = block.block(NestedBlock {
                computed: field.presence == Presence::OptionalComputed,
                ..nested
            });
        } else {
            block = block.attribute(attribute(field));
        }
    }
    block
}

/// A field as an attribute; objects and arrays configured as nested attributes carry their
/// own attributes' flags.
fn attribute(field: &Field) -> Attribute {
    let ty = value_type(field.shape);
    let mut attribute = match field.presence {
        Presence::Required => Attribute::required(field.name, ty, field.doc),
        Presence::Optional => Attribute::optional(field.name, ty, field.doc),
        Presence::OptionalComputed => Attribute::optional_computed(field.name, ty, field.doc),
        Presence::Computed => Attribute::computed(field.name, ty, field.doc),
    };
    // A quantity means what it weighs: `1Gi` is `1024Mi` ([`spec_quantity::SameQuantity`]).
    if matches!(
        field.shape,
        Shape::One(Scalar::Quantity) | Shape::Map(Scalar::Quantity)
    ) {
        attribute.rules.equivalence = Some(std::sync::Arc::new(spec_quantity::SameQuantity));
    }
    match (field.attribute, field.shape, field.object_fields()) {
        (true, shape, Some(sub)) if field.presence != Presence::Computed => {
            let nesting = match shape {
                Shape::Single(_) => Nesting::Single,
                Shape::ArraySet(_) => Nesting::Set,
                _ => Nesting::List,
            };
            attribute.nested(nesting, sub.iter().map(self::attribute).collect())
        }
        _ => attribute,
    }
}

fn scalar_type(scalar: Scalar) -> Type {
    match scalar {
        Scalar::Int | Scalar::Number => Type::Number,
        Scalar::Bool => Type::Bool,
        _ => Type::String,
    }
}

fn plain_type(ty: Type0) -> Type {
    match ty {
        Type0::One(s) => scalar_type(s),
        Type0::List(s) => Type::list(scalar_type(s)),
        Type0::Set(s) => Type::set(scalar_type(s)),
        Type0::Map(s) => Type::map(scalar_type(s)),
    }
}

fn object_type(sub: &[Field]) -> Type {
    Type::object(sub.iter().map(|f| (f.name, value_type(f.shape))))
}

fn value_type(shape: Shape) -> Type {
    match shape {
        Shape::One(s) => scalar_type(s),
        Shape::Local(ty) => plain_type(ty),
        Shape::List(s) => Type::list(scalar_type(s)),
        Shape::Set(s) => Type::set(scalar_type(s)),
        Shape::Map(s) => Type::map(scalar_type(s)),
        Shape::Single(sub) => object_type(sub),
        Shape::ArraySet(sub) => Type::set(object_type(sub)),
        Shape::Object(sub) | Shape::Array(sub) => Type::list(object_type(sub)),
        Shape::Unsupported(Unsupported::Block(sub)) => Type::list(object_type(sub)),
        Shape::Unsupported(Unsupported::Attribute(ty)) => plain_type(ty),
    }
}

/// A configured value the Kubernetes API cannot take.
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    #[error("{0:?} is not a whole number")]
    NotWholeNumber(String),
    #[error("{0:?} is not a number")]
    NotNumber(String),
    #[error("{0:?} is not true or false")]
    NotBool(String),
    #[error("{0:?} is not a Kubernetes quantity (like \"500m\", \"0.5\" or \"128Mi\")")]
    NotQuantity(String),
    #[error("{0:?} is not an octal file mode (like \"0644\")")]
    NotFileMode(String),
    #[error("expected {0}")]
    WrongType(&'static str),
    #[error("{0}")]
    Unsupported(&'static str),
}

/// A [`BadValue`] at an attribute path.
#[derive(Debug, thiserror::Error)]
#[error("invalid value for {path}: {bad}")]
pub struct InvalidAttribute {
    pub path: AttributePath,
    pub bad: BadValue,
}

impl From<InvalidAttribute> for Diagnostic {
    fn from(err: InvalidAttribute) -> Diagnostic {
        Diagnostic::error(format!("Invalid value for {}", err.path), err.bad.to_string()).at(err.path)
    }
}

fn bad(bad: BadValue, path: AttributePath) -> Diagnostics {
    Diagnostics::from(Diagnostic::from(InvalidAttribute { path, bad }))
}

/// Puts `value` at the dotted JSON path `json` of `out`, creating the levels between.
fn insert(out: &mut Map<String, Json>, json: &str, value: Json) {
    match json.split_once('.') {
        None => {
            out.insert(json.to_string(), value);
        }
        Some((head, rest)) => {
            let level = out
                .entry(head.to_string())
                .or_insert_with(|| Json::Object(Map::new()));
            if let Json::Object(map) = level {
                insert(map, rest, value);
            }
        }
    }
}

/// The value at the dotted JSON path `json` of `live`, when it is there and not null.
fn lookup<'a>(live: &'a Json, json: &str) -> Option<&'a Json> {
    json.split('.')
        .try_fold(live, |at, part| at.get(part))
        .filter(|j| !j.is_null())
}

/// Whether a value is configured: not null, not unknown, not an empty block list.
fn configured(value: &Value) -> bool {
    !value.is_null()
        && !value.is_unknown()
        && !matches!(value, Value::List(v) | Value::Set(v) if v.is_empty())
}

/// The Kubernetes JSON of the configured (non-null, known) fields of `value`.
pub fn write(
    fields: &[Field],
    value: &Value,
    path: &AttributePath,
) -> Result<Map<String, Json>, Diagnostics> {
    let mut out = Map::new();
    let mut diagnostics = Diagnostics::new();
    for field in fields {
        let v = value.get(field.name);
        if field.presence == Presence::Computed || v.is_null() || v.is_unknown() {
            continue;
        }
        let at = path.clone().attribute(field.name);
        match write_field(field, v, &at) {
            Ok(Some(Json::Object(inner))) if field.json == INLINE => out.extend(inner),
            Ok(Some(json)) => insert(&mut out, field.json, json),
            Ok(None) => {}
            Err(d) => diagnostics.extend(d),
        }
    }
    if diagnostics.has_errors() {
        Err(diagnostics)
    } else {
        Ok(out)
    }
}

fn write_items(sub: &[Field], value: &Value, path: &AttributePath) -> Result<Option<Json>, Diagnostics> {
    if value.elements().is_empty() {
        return Ok(None);
    }
    let mut items = Vec::new();
    let mut diagnostics = Diagnostics::new();
    for (i, element) in value.elements().iter().enumerate() {
        match write(sub, element, &path.clone().index(i as i64)) {
            Ok(map) => items.push(Json::Object(map)),
            Err(d) => diagnostics.extend(d),
        }
    }
    if diagnostics.has_errors() {
        return Err(diagnostics);
    }
    Ok(Some(Json::Array(items)))
}

fn write_field(field: &Field, value: &Value, path: &AttributePath) -> Result<Option<Json>, Diagnostics> {
    let scalar = |s: Scalar, v: &Value, p: AttributePath| write_scalar(s, v).map_err(|b| bad(b, p));
    Ok(match field.shape {
        // A string that stands for another JSON type ("nullable int", a quantity, a file
        // mode) is unset when empty, as hashicorp's expanders take it.
        Shape::One(s) if s != Scalar::Str && value.as_str() == Some("") => None,
        Shape::One(s) => Some(scalar(s, value, path.clone())?),
        // Unknown elements only occur while validating, where they wait for apply.
        Shape::List(s) | Shape::Set(s) => Some(Json::Array(
            value
                .elements()
                .iter()
                .enumerate()
                .filter(|(_, v)| !v.is_unknown())
                .map(|(i, v)| scalar(s, v, path.clone().index(i as i64)))
                .collect::<Result<_, _>>()?,
        )),
        // A null element (a variable left null) is no entry: the plan drops it too.
        Shape::Map(s) => Some(Json::Object(
            value
                .entries()
                .into_iter()
                .flatten()
                .filter(|(_, v)| !v.is_null() && !v.is_unknown())
                .map(|(k, v)| Ok((k.clone(), scalar(s, v, path.clone().key(k))?)))
                .collect::<Result<_, Diagnostics>>()?,
        )),
        Shape::Object(sub) => match value.elements().first() {
            Some(element) => Some(Json::Object(write(sub, element, &path.clone().index(0))?)),
            None => None,
        },
        Shape::Single(sub) => Some(Json::Object(write(sub, value, path)?)),
        Shape::Array(sub) | Shape::ArraySet(sub) => write_items(sub, value, path)?,
        Shape::Local(_) => None,
        Shape::Unsupported(_) if !configured(value) => None,
        Shape::Unsupported(_) => return Err(bad(BadValue::Unsupported(field.doc), path.clone())),
    })
}

fn write_scalar(scalar: Scalar, value: &Value) -> Result<Json, BadValue> {
    let wrong = BadValue::WrongType;
    match scalar {
        Scalar::Bool => value.as_bool().map(Json::Bool).ok_or_else(|| wrong("a bool")),
        Scalar::Int => match value {
            Value::Number(n) => n
                .as_i64()
                .filter(|_| n.is_integer())
                .map(Json::from)
                .ok_or_else(|| BadValue::NotWholeNumber(n.to_string())),
            _ => Err(wrong("a number")),
        },
        Scalar::Number => match value {
            Value::Number(n) if n.is_integer() => {
                Ok(n.as_i64().map(Json::from).unwrap_or(Json::from(n.as_f64())))
            }
            Value::Number(n) => Ok(Json::from(n.as_f64())),
            _ => Err(wrong("a number")),
        },
        _ => {
            let text = value.as_str().ok_or_else(|| wrong("a string"))?;
            let whole = || text.trim().parse::<i64>();
            match scalar {
                Scalar::IntString => whole()
                    .map(Json::from)
                    .map_err(|_| BadValue::NotWholeNumber(text.to_string())),
                Scalar::NumString => match whole() {
                    Ok(i) => Ok(Json::from(i)),
                    Err(_) => text
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|f| f.is_finite())
                        .map(Json::from)
                        .ok_or_else(|| BadValue::NotNumber(text.to_string())),
                },
                Scalar::BoolString => match text.trim() {
                    "true" => Ok(Json::Bool(true)),
                    "false" => Ok(Json::Bool(false)),
                    _ => Err(BadValue::NotBool(text.to_string())),
                },
                Scalar::IntOrString => Ok(text
                    .parse::<i64>()
                    .map(Json::from)
                    .unwrap_or_else(|_| Json::from(text))),
                Scalar::PortRef => Ok(match text.parse::<i64>() {
                    Ok(n) => serde_json::json!({"number": n}),
                    Err(_) => serde_json::json!({"name": text}),
                }),
                Scalar::Quantity if !spec_quantity::is_valid(text) => {
                    Err(BadValue::NotQuantity(text.to_string()))
                }
                Scalar::FileMode => i64::from_str_radix(text.trim(), 8)
                    .map(Json::from)
                    .map_err(|_| BadValue::NotFileMode(text.to_string())),
                Scalar::Base64 => Ok(Json::from(
                    base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
                )),
                _ => Ok(Json::from(text)),
            }
        }
    }
}

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
fn read_in(fields: &[Field], live: &Json, prior: &Value, full: bool) -> Value {
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
fn is_server_default(field: &Field, live: &Json) -> bool {
    field.presence == Presence::Optional
        && field.json != INLINE
        && field.server_default.is_some_and(|default| {
            lookup(live, field.json)
                .is_some_and(|value| serde_json::from_str::<Json>(default).is_ok_and(|d| d == *value))
        })
}

/// An optional field the prior does not have: it stays out (server defaults, others' fields).
/// A required one is always read.
fn left_out(field: &Field, prior: &Value) -> bool {
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
fn empty(field: &Field) -> Value {
    match field.shape {
        Shape::Single(_) => Value::Null,
        _ if field.is_block() => Value::List(Vec::new()),
        _ => Value::Null,
    }
}

fn read_items(sub: &[Field], live: Option<&Json>, prior: &Value, full: bool) -> Vec<Value> {
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

fn read_field(field: &Field, parent: &Json, prior: &Value, full: bool) -> Value {
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
fn has_settings(fields: &[Field], value: &Value) -> bool {
    fields
        .iter()
        .any(|f| f.presence != Presence::Computed && configured(value.get(f.name)))
}

fn is_empty_collection(json: &Json) -> bool {
    match json {
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn read_plain(shape: Shape, live: Option<&Json>, prior: &Value) -> Value {
    let prior_known = !prior.is_null() && prior.is_wholly_known();
    match live {
        None if prior_known && is_zero(prior) => prior.clone(),
        None => Value::Null,
        Some(l) if prior_known && same_meaning(shape, prior, l) => prior.clone(),
        Some(l) => from_json(shape, l),
    }
}

/// The values Go's `omitempty` drops, so a server never echoes them back.
pub(crate) fn is_zero(value: &Value) -> bool {
    match value {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == 0.0,
        Value::String(s) => s.is_empty(),
        Value::List(v) | Value::Set(v) => v.is_empty(),
        Value::Map(m) => m.is_empty(),
        _ => false,
    }
}

fn same_meaning(shape: Shape, prior: &Value, live: &Json) -> bool {
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

fn from_json(shape: Shape, live: &Json) -> Value {
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

fn scalar_from_json(scalar: Scalar, live: &Json) -> Value {
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

/// Helpers for the kinds' tests: golden transcripts, hand-built values, and the engine's
/// "is there a diff" rule.
#[cfg(test)]
pub mod test_support {
    use super::*;

    /// The request and response bodies of one step of a kube-golden transcript (the in-repo
    /// copy in `acceptance/kube-golden/`).
    pub fn golden(file: &str, step: usize) -> (Json, Json) {
        let path = format!("{}/../acceptance/kube-golden/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: Json = serde_json::from_str(&text).expect("golden JSON");
        let s = &doc["steps"][step];
        (s["body"].clone(), s["response"]["body"].clone())
    }

    pub fn s(text: &str) -> Value {
        Value::string(text)
    }

    pub fn obj<const N: usize>(attributes: [(&str, Value); N]) -> Value {
        Value::object(attributes)
    }

    /// A list of blocks (or of plain values).
    pub fn list<const N: usize>(elements: [Value; N]) -> Value {
        Value::List(elements.into())
    }

    pub fn strings<const N: usize>(items: [&str; N]) -> Value {
        Value::List(items.iter().map(|t| s(t)).collect())
    }

    pub fn map<const N: usize>(entries: [(&str, &str); N]) -> Value {
        Value::string_map(entries)
    }

    /// Sends the configuration as golden `step` of `file` did, reads the answer back without
    /// a diff, and checks a refresh of that state is stable. Returns the state.
    pub fn golden_round_trip(fields: &[Field], file: &str, step: usize, config: &Value) -> Value {
        let (request, response) = golden(file, step);
        let planned = planned_create(fields, config);
        let sent = write(fields, &planned, &AttributePath::default()).unwrap();
        assert_eq!(Json::Object(sent), serde_json::json!({"spec": request["spec"]}));
        let state = read(fields, &response, &planned);
        assert_eq!(diff(fields, config, &state), Vec::<String>::new());
        assert_eq!(read(fields, &response, &state), state, "refresh is stable");
        state
    }

    /// A field, for hand-made tables in tests.
    pub const fn field(name: &'static str, json: &'static str, shape: Shape, presence: Presence) -> Field {
        Field {
            name,
            json,
            shape,
            presence,
            attribute: false,
            server_default: None,
            doc: "A test field.",
        }
    }

    /// A configuration value as the engine sends it: every attribute present (null when not
    /// set) and every block a list.
    pub fn complete(fields: &[Field], partial: &Value) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|f| {
                    let v = partial.get(f.name);
                    let full = match f.block_fields() {
                        Some(sub) => Value::List(v.elements().iter().map(|e| complete(sub, e)).collect()),
                        None => v.clone(),
                    };
                    (f.name.to_string(), full)
                })
                .collect(),
        )
    }

    /// The planned value of a create: computed attributes not configured are unknown.
    pub fn planned_create(fields: &[Field], config: &Value) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|f| {
                    let v = config.get(f.name);
                    let planned = if let Some(sub) = f.block_fields() {
                        Value::List(v.elements().iter().map(|e| planned_create(sub, e)).collect())
                    } else if v.is_null()
                        && f.presence != Presence::Optional
                        && f.presence != Presence::Required
                    {
                        Value::unknown()
                    } else {
                        v.clone()
                    };
                    (f.name.to_string(), planned)
                })
                .collect(),
        )
    }

    /// Where a plan of `config` against `state` would show a change, as the engine decides
    /// it: configured values must match, unconfigured non-computed ones must be null, and
    /// block counts must agree. Empty when the plan is empty.
    pub fn diff(fields: &[Field], config: &Value, state: &Value) -> Vec<String> {
        let mut out = Vec::new();
        diff_into(fields, config, state, "", &mut out);
        out
    }

    fn diff_into(fields: &[Field], config: &Value, state: &Value, at: &str, out: &mut Vec<String>) {
        for f in fields {
            let path = format!("{at}.{}", f.name);
            let (c, s) = (config.get(f.name), state.get(f.name));
            if s.is_unknown() || !s.is_wholly_known() {
                out.push(format!("{path}: unknown in state"));
                continue;
            }
            if let Some(sub) = f.block_fields() {
                // A computed block the configuration leaves out is planned as read.
                if f.presence == Presence::OptionalComputed && c.elements().is_empty() {
                    continue;
                }
                if c.elements().len() != s.elements().len() {
                    out.push(format!(
                        "{path}: {} blocks configured, {} in state",
                        c.elements().len(),
                        s.elements().len()
                    ));
                    continue;
                }
                for (i, (ce, se)) in c.elements().iter().zip(s.elements()).enumerate() {
                    diff_into(sub, ce, se, &format!("{path}[{i}]"), out);
                }
            } else if c.is_null() {
                if matches!(f.presence, Presence::Optional | Presence::Required) && !s.is_null() {
                    out.push(format!("{path}: not configured but {s:?} in state"));
                }
            } else if !same_value(f.shape, c, s) {
                out.push(format!("{path}: configured {c:?}, state {s:?}"));
            }
        }
    }

    /// Equal, or (quantities) equal in meaning: what the plan of a legacy-SDK resource keeps.
    fn same_value(shape: Shape, a: &Value, b: &Value) -> bool {
        let same_quantity = |x: &Value, y: &Value| match (x.as_str(), y.as_str()) {
            (Some(x), Some(y)) => spec_quantity::same(x, y),
            _ => x == y,
        };
        match (shape, a, b) {
            (Shape::One(Scalar::Quantity), _, _) => same_quantity(a, b),
            (Shape::Map(Scalar::Quantity), Value::Map(x), Value::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same_quantity(v, w)))
            }
            (_, Value::Set(x), Value::Set(y)) => x.len() == y.len() && x.iter().all(|v| y.contains(v)),
            _ => a == b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use serde_json::json;

    use Presence::{Optional, OptionalComputed as Defaulted, Required};

    static INNER: &[Field] = &[
        field("name", "name", Shape::One(Scalar::Str), Required),
        field("protocol", "protocol", Shape::One(Scalar::Str), Defaulted),
    ];
    static FIELDS: &[Field] = &[
        field("cpu", "cpu", Shape::One(Scalar::Quantity), Optional),
        field("limits", "limits", Shape::Map(Scalar::Quantity), Optional),
        field(
            "target_port",
            "targetPort",
            Shape::One(Scalar::IntOrString),
            Optional,
        ),
        field("replicas", "replicas", Shape::One(Scalar::IntString), Defaulted),
        field("mode", "defaultMode", Shape::One(Scalar::FileMode), Optional),
        field("delay", "initialDelaySeconds", Shape::One(Scalar::Int), Optional),
        field("values", "values", Shape::Set(Scalar::Str), Optional),
        field("port", "ports", Shape::Array(INNER), Optional),
        field("strategy", "strategy", Shape::Object(INNER), Optional),
        field("backend", "service.port", Shape::One(Scalar::PortRef), Optional),
        field("local", "-", Shape::Local(Type0::One(Scalar::Bool)), Optional),
    ];

    fn config() -> Value {
        complete(
            FIELDS,
            &obj([
                ("cpu", s("0.5")),
                ("limits", map([("memory", "1024Mi"), ("cpu", "2")])),
                ("target_port", s("8080")),
                ("mode", s("0644")),
                ("delay", Value::int(0)),
                ("values", Value::Set(vec![s("b"), s("a")])),
                ("port", list([obj([("name", s("http"))])])),
            ]),
        )
    }

    #[test]
    fn writes_camel_case_json_of_configured_fields_only() {
        let out = write(
            FIELDS,
            &planned_create(FIELDS, &config()),
            &AttributePath::default(),
        )
        .unwrap();
        assert_eq!(
            Json::Object(out),
            json!({
                "cpu": "0.5", "limits": {"cpu": "2", "memory": "1024Mi"}, "targetPort": 8080,
                "defaultMode": 420, "initialDelaySeconds": 0, "values": ["b", "a"],
                "ports": [{"name": "http"}]
            })
        );
    }

    #[test]
    fn reads_back_the_configured_spelling_when_the_server_canonicalises_except_quantities() {
        let live = json!({
            "cpu": "500m", "limits": {"cpu": "2", "memory": "1Gi"}, "targetPort": 8080, "defaultMode": 420,
            "values": ["a", "b"], "ports": [{"name": "http", "protocol": "TCP"}], "replicas": 1,
            "strategy": {"name": "RollingUpdate", "protocol": "TCP"}
        });
        let state = read(FIELDS, &live, &planned_create(FIELDS, &config()));
        assert_eq!(diff(FIELDS, &config(), &state), Vec::<String>::new());
        assert_eq!(
            state.get("cpu"),
            &s("500m"),
            "the server's spelling of a quantity"
        );
        assert_eq!(state.get("limits").get("memory"), &s("1Gi"));
        assert_eq!(state.get("delay"), &Value::int(0), "omitted zero keeps the prior");
        assert_eq!(state.get("replicas"), &s("1"));
        assert_eq!(state.get("port").elements()[0].get("protocol"), &s("TCP"));
        assert_eq!(state.get("strategy"), &list([]), "server default left out");
        assert_eq!(read(FIELDS, &live, &state), state, "a refresh changes nothing");
    }

    #[test]
    fn reads_real_changes_and_non_default_blocks() {
        let live = json!({"cpu": "1", "limits": {"cpu": "2"}, "strategy": {"name": "Recreate"}});
        let state = read(FIELDS, &live, &config());
        assert_eq!(state.get("cpu"), &s("1"));
        assert_eq!(state.get("limits"), &map([("cpu", "2")]));
        assert_eq!(state.get("target_port"), &Value::Null);
        assert_eq!(state.get("port"), &list([]));
        assert_eq!(
            state.get("strategy"),
            &list([]),
            "a block the prior lacks stays out"
        );
        // cpu, limits, target_port, mode, values, port; the omitted zero delay is no diff.
        assert_eq!(diff(FIELDS, &config(), &state).len(), 6);
    }

    #[test]
    fn import_reads_from_nothing() {
        let live = json!({"targetPort": "http", "defaultMode": 493, "strategy": {"name": "RollingUpdate", "protocol": "TCP"}});
        let state = read(FIELDS, &live, &Value::Null);
        assert_eq!(state.get("target_port"), &s("http"));
        assert_eq!(state.get("mode"), &s("0755"));
        assert_eq!(
            state.get("strategy").elements().len(),
            1,
            "no prior: everything is read"
        );
    }

    #[test]
    fn a_full_read_keeps_the_servers_defaults_and_every_label() {
        static META: &[Field] = &[field("labels", "labels", Shape::Map(Scalar::Str), Optional)];
        static TABLE: &[Field] = &[
            Field {
                server_default: Some("\"Cluster\""),
                ..field("policy", "policy", Shape::One(Scalar::Str), Optional)
            },
            field("meta", "metadata", Shape::Object(META), Optional),
        ];
        let live =
            json!({"policy": "Cluster", "metadata": {"labels": {"controller-uid": "u", "app": "web"}}});
        let imported = read(TABLE, &live, &Value::Null);
        assert_eq!(
            imported.get("policy"),
            &Value::Null,
            "an import leaves the default out"
        );
        let full = read_full(TABLE, &live);
        assert_eq!(full.get("policy"), &s("Cluster"));
        assert_eq!(
            full.get("meta").elements()[0].get("labels"),
            &map([("app", "web"), ("controller-uid", "u")])
        );
    }

    #[test]
    fn flattened_ports_and_terraform_only_settings() {
        let planned = complete(
            FIELDS,
            &obj([("backend", s("http")), ("local", Value::Bool(false))]),
        );
        let sent = write(FIELDS, &planned, &AttributePath::default()).unwrap();
        assert_eq!(Json::Object(sent), json!({"service": {"port": {"name": "http"}}}));
        let state = read(FIELDS, &json!({"service": {"port": {"number": 80}}}), &planned);
        assert_eq!(state.get("backend"), &s("80"));
        assert_eq!(state.get("local"), &Value::Bool(false), "read back as configured");
    }

    #[test]
    fn bad_values_are_errors_at_their_path() {
        let bad = obj([
            ("cpu", s("lots")),
            ("replicas", s("two")),
            ("mode", s("rw")),
            ("limits", map([("memory", "1 GB")])),
        ]);
        let err = write(
            FIELDS,
            &complete(FIELDS, &bad),
            &AttributePath::root("spec").index(0),
        )
        .unwrap_err();
        let paths: Vec<String> = err
            .0
            .iter()
            .map(|d| d.attribute.clone().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "spec[0].cpu",
                "spec[0].limits[\"memory\"]",
                "spec[0].replicas",
                "spec[0].mode"
            ]
        );
        assert!(
            err.0[0].detail.contains("\"lots\" is not a Kubernetes quantity"),
            "{}",
            err.0[0].detail
        );
    }

    #[test]
    fn schema_nests_objects_as_blocks_of_one() {
        let b = block(FIELDS, "Test.");
        assert_eq!(b.find_block("strategy").unwrap().max_items, 1);
        assert_eq!(b.find_block("port").unwrap().max_items, 0);
        let replicas = b.find_attribute("replicas").unwrap();
        assert!(replicas.optional && replicas.computed && replicas.ty == Type::String);
        assert_eq!(b.find_attribute("values").unwrap().ty, Type::set(Type::String));
    }
}
