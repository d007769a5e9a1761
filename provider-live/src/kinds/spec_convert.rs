//! Field tables: one declaration per Kubernetes field drives a kind's schema, the object sent
//! to the API and the value read back from it.
//!
//! A [`Field`] names the Terraform attribute (snake_case, as hashicorp/kubernetes spells it)
//! and the Kubernetes JSON field (camelCase), says how the value is shaped on each side
//! ([`Shape`]) and whether it is required, optional or filled in by the server ([`Presence`]).
//! Kubernetes objects nest as hashicorp nests them: as blocks of at most one element.
//!
//! Reading follows the rules that keep the next plan empty after an apply:
//! - a value equal in meaning to the prior one keeps the prior's spelling (quantities, "8080"
//!   for 8080, "0644" for 420);
//! - a zero value the server omits (`0`, `false`, `""`, empty collections) keeps the prior's;
//! - a block the prior does not have is left out when the server filled it with exactly its
//!   default ([`Field::server_default`]).

use plugin_runtime::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, NestedBlock, Nesting, Type, Value,
};
use serde_json::{Map, Value as Json};

use super::spec_quantity;
use super::spec_wait::WaitFlag;
use crate::kind::{Behaviour, Kind, KindInfo};

/// A kind whose object is its field table: schema, body and read-back all follow
/// [`TableKind::FIELDS`], plus the `wait_for_*` flag and `timeouts` when it has [`TableKind::WAIT`].
pub trait TableKind: Behaviour {
    const INFO: &'static KindInfo;
    /// The top-level fields (`spec`, `status`).
    const FIELDS: &'static [Field];
    const WAIT: Option<WaitFlag> = None;
}

impl<T: TableKind> Kind for T {
    fn info(&self) -> &'static KindInfo {
        T::INFO
    }

    fn block(&self) -> Block {
        let block = block(T::FIELDS, T::INFO.description);
        match &T::WAIT {
            Some(wait) => wait.extend_block(block),
            None => block,
        }
    }

    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        write(T::FIELDS, value, &AttributePath::default())
    }

    fn from_object(&self, object: &Json, prior: &Value) -> Value {
        let mut value = read(T::FIELDS, object, prior);
        if let Some(wait) = &T::WAIT {
            wait.read(&mut value, prior);
        }
        value
    }
}

/// How one value is written on each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Str,
    Int,
    Bool,
    /// A Terraform string holding a whole number (hashicorp's "nullable int"), a JSON integer.
    IntString,
    /// A Terraform string; JSON integer when it is a whole number, else a string ("http", "25%").
    IntOrString,
    /// A resource quantity string, compared by meaning.
    Quantity,
    /// A Terraform octal string ("0644"), a JSON integer (420).
    FileMode,
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
    /// A Kubernetes array of objects: a repeated block.
    Array(&'static [Field]),
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
    pub json: &'static str,
    pub shape: Shape,
    pub presence: Presence,
    pub doc: &'static str,
    /// For a block: the JSON the server fills in when the block is not configured.
    pub server_default: Option<&'static str>,
}

impl Field {
    const fn new(
        name: &'static str,
        json: &'static str,
        shape: Shape,
        presence: Presence,
        doc: &'static str,
    ) -> Field {
        Field {
            name,
            json,
            shape,
            presence,
            doc,
            server_default: None,
        }
    }

    pub const fn required(name: &'static str, json: &'static str, shape: Shape, doc: &'static str) -> Field {
        Field::new(name, json, shape, Presence::Required, doc)
    }

    pub const fn optional(name: &'static str, json: &'static str, shape: Shape, doc: &'static str) -> Field {
        Field::new(name, json, shape, Presence::Optional, doc)
    }

    pub const fn defaulted(name: &'static str, json: &'static str, shape: Shape, doc: &'static str) -> Field {
        Field::new(name, json, shape, Presence::OptionalComputed, doc)
    }

    pub const fn computed(name: &'static str, json: &'static str, shape: Shape, doc: &'static str) -> Field {
        Field::new(name, json, shape, Presence::Computed, doc)
    }

    /// The JSON (as text) the server writes into this block when it is not configured.
    pub const fn server_default(self, json: &'static str) -> Field {
        Field {
            server_default: Some(json),
            ..self
        }
    }

    /// The fields of a Terraform block (a non-computed object or array), `None` otherwise.
    fn block_fields(&self) -> Option<&'static [Field]> {
        match self.shape {
            Shape::Object(sub) | Shape::Array(sub) if self.presence != Presence::Computed => Some(sub),
            _ => None,
        }
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
                (Shape::Object(_), true) => NestedBlock::exactly_one(field.name, inner),
                (Shape::Object(_), false) => NestedBlock::at_most_one(field.name, inner),
                (_, true) => NestedBlock::new(field.name, Nesting::List, inner).items(1, 0),
                (_, false) => NestedBlock::new(field.name, Nesting::List, inner),
            };
            block = block.block(nested);
        } else {
            let ty = value_type(field.shape);
            block = block.attribute(match field.presence {
                Presence::Required => Attribute::required(field.name, ty, field.doc),
                Presence::Optional => Attribute::optional(field.name, ty, field.doc),
                Presence::OptionalComputed => Attribute::optional_computed(field.name, ty, field.doc),
                Presence::Computed => Attribute::computed(field.name, ty, field.doc),
            });
        }
    }
    block
}

fn scalar_type(scalar: Scalar) -> Type {
    match scalar {
        Scalar::Int => Type::Number,
        Scalar::Bool => Type::Bool,
        _ => Type::String,
    }
}

fn value_type(shape: Shape) -> Type {
    match shape {
        Shape::One(s) => scalar_type(s),
        Shape::List(s) => Type::list(scalar_type(s)),
        Shape::Set(s) => Type::set(scalar_type(s)),
        Shape::Map(s) => Type::map(scalar_type(s)),
        Shape::Object(sub) | Shape::Array(sub) => {
            Type::list(Type::object(sub.iter().map(|f| (f.name, value_type(f.shape)))))
        }
    }
}

/// A configured value the Kubernetes API cannot take.
#[derive(Debug, thiserror::Error)]
pub enum BadValue {
    #[error("{0:?} is not a whole number")]
    NotWholeNumber(String),
    #[error("{0:?} is not a Kubernetes quantity (like \"500m\", \"0.5\" or \"128Mi\")")]
    NotQuantity(String),
    #[error("{0:?} is not an octal file mode (like \"0644\")")]
    NotFileMode(String),
    #[error("expected {0}")]
    WrongType(&'static str),
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
        match write_field(field.shape, v, &at) {
            Ok(Some(json)) => {
                out.insert(field.json.to_string(), json);
            }
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

fn write_field(shape: Shape, value: &Value, path: &AttributePath) -> Result<Option<Json>, Diagnostics> {
    let bad = |bad: BadValue, path: AttributePath| {
        Diagnostics::from(Diagnostic::from(InvalidAttribute { path, bad }))
    };
    let scalar = |s: Scalar, v: &Value, p: AttributePath| write_scalar(s, v).map_err(|b| bad(b, p));
    Ok(match shape {
        Shape::One(s) => Some(scalar(s, value, path.clone())?),
        Shape::List(s) | Shape::Set(s) => Some(Json::Array(
            value
                .elements()
                .iter()
                .enumerate()
                .map(|(i, v)| scalar(s, v, path.clone().index(i as i64)))
                .collect::<Result<_, _>>()?,
        )),
        Shape::Map(s) => Some(Json::Object(
            value
                .entries()
                .into_iter()
                .flatten()
                .map(|(k, v)| Ok((k.clone(), scalar(s, v, path.clone().key(k))?)))
                .collect::<Result<_, Diagnostics>>()?,
        )),
        Shape::Object(sub) => match value.elements().first() {
            Some(element) => Some(Json::Object(write(sub, element, &path.clone().index(0))?)),
            None => None,
        },
        Shape::Array(sub) => {
            if value.elements().is_empty() {
                None
            } else {
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
                Some(Json::Array(items))
            }
        }
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
        _ => {
            let text = value.as_str().ok_or_else(|| wrong("a string"))?;
            match scalar {
                Scalar::IntString => text
                    .trim()
                    .parse::<i64>()
                    .map(Json::from)
                    .map_err(|_| BadValue::NotWholeNumber(text.to_string())),
                Scalar::IntOrString => Ok(text
                    .parse::<i64>()
                    .map(Json::from)
                    .unwrap_or_else(|_| Json::from(text))),
                Scalar::Quantity if !spec_quantity::is_valid(text) => {
                    Err(BadValue::NotQuantity(text.to_string()))
                }
                Scalar::FileMode => i64::from_str_radix(text.trim(), 8)
                    .map(Json::from)
                    .map_err(|_| BadValue::NotFileMode(text.to_string())),
                _ => Ok(Json::from(text)),
            }
        }
    }
}

/// The value of a field table read from a live Kubernetes object (or sub-object), shaped like
/// `prior` wherever the two mean the same. Every attribute is present (null when absent) and
/// every block is a list.
pub fn read(fields: &[Field], live: &Json, prior: &Value) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|f| {
                let live = live.get(f.json).filter(|j| !j.is_null());
                (f.name.to_string(), read_field(f, live, prior.get(f.name)))
            })
            .collect(),
    )
}

fn read_field(field: &Field, live: Option<&Json>, prior: &Value) -> Value {
    let first = || prior.elements().first().unwrap_or(&Value::Null);
    match field.shape {
        Shape::Object(sub) => match live {
            Some(l) if !left_out(field, l, prior) => Value::List(vec![read(sub, l, first())]),
            _ => Value::List(Vec::new()),
        },
        Shape::Array(sub) => match live.and_then(Json::as_array) {
            Some(items) if !left_out(field, live.unwrap_or(&Json::Null), prior) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| read(sub, item, prior.elements().get(i).unwrap_or(&Value::Null)))
                    .collect(),
            ),
            _ => Value::List(Vec::new()),
        },
        shape => read_plain(shape, live.filter(|l| !is_empty_collection(l)), prior),
    }
}

/// A block the prior does not have, holding exactly what the server fills in by default.
fn left_out(field: &Field, live: &Json, prior: &Value) -> bool {
    let prior_has_it = prior.is_unknown() || !prior.elements().is_empty();
    field.presence != Presence::Computed
        && !prior_has_it
        && field
            .server_default
            .and_then(|d| serde_json::from_str::<Json>(d).ok())
            .is_some_and(|d| d == *live)
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
fn is_zero(value: &Value) -> bool {
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
        (Ok(Json::String(a)), Scalar::Quantity) => l.as_str().is_some_and(|b| spec_quantity::same(&a, b)),
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
        Shape::Object(_) | Shape::Array(_) => false,
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
        Shape::Object(_) | Shape::Array(_) => Value::Null,
    }
}

fn scalar_from_json(scalar: Scalar, live: &Json) -> Value {
    match (scalar, live) {
        (Scalar::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Scalar::Int, Json::Number(n)) => n.as_i64().map(Value::int).unwrap_or(Value::Null),
        (Scalar::FileMode, Json::Number(n)) => n
            .as_i64()
            .map(|m| Value::String(format!("{m:04o}")))
            .unwrap_or(Value::Null),
        (Scalar::Bool | Scalar::Int, _) => Value::Null,
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
    pub fn golden_round_trip<K: TableKind>(kind: &K, file: &str, step: usize, config: &Value) -> Value {
        let (request, response) = golden(file, step);
        let planned = planned_create(K::FIELDS, config);
        let sent = kind.to_object(&planned).unwrap();
        assert_eq!(Json::Object(sent), serde_json::json!({"spec": request["spec"]}));
        let state = kind.from_object(&response, &planned);
        assert_eq!(diff(K::FIELDS, config, &state), Vec::<String>::new());
        assert_eq!(kind.from_object(&response, &state), state, "refresh is stable");
        state
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
            } else if !same_value(c, s) {
                out.push(format!("{path}: configured {c:?}, state {s:?}"));
            }
        }
    }

    fn same_value(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Set(x), Value::Set(y)) => x.len() == y.len() && x.iter().all(|v| y.contains(v)),
            _ => a == b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use serde_json::json;

    static INNER: &[Field] = &[
        Field::required("name", "name", Shape::One(Scalar::Str), "Name."),
        Field::defaulted("protocol", "protocol", Shape::One(Scalar::Str), "Protocol."),
    ];
    static FIELDS: &[Field] = &[
        Field::optional("cpu", "cpu", Shape::One(Scalar::Quantity), "A quantity."),
        Field::optional("limits", "limits", Shape::Map(Scalar::Quantity), "Quantities."),
        Field::optional(
            "target_port",
            "targetPort",
            Shape::One(Scalar::IntOrString),
            "Port.",
        ),
        Field::defaulted("replicas", "replicas", Shape::One(Scalar::IntString), "Replicas."),
        Field::optional("mode", "defaultMode", Shape::One(Scalar::FileMode), "Mode."),
        Field::optional("delay", "initialDelaySeconds", Shape::One(Scalar::Int), "Delay."),
        Field::optional("values", "values", Shape::Set(Scalar::Str), "Values."),
        Field::optional("port", "ports", Shape::Array(INNER), "Ports."),
        Field::optional("strategy", "strategy", Shape::Object(INNER), "Strategy.")
            .server_default(r#"{"name": "RollingUpdate", "protocol": "TCP"}"#),
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
    fn reads_back_the_configured_spelling_when_the_server_canonicalises() {
        let live = json!({
            "cpu": "500m", "limits": {"cpu": "2", "memory": "1Gi"}, "targetPort": 8080, "defaultMode": 420,
            "values": ["a", "b"], "ports": [{"name": "http", "protocol": "TCP"}], "replicas": 1,
            "strategy": {"name": "RollingUpdate", "protocol": "TCP"}
        });
        let state = read(FIELDS, &live, &planned_create(FIELDS, &config()));
        assert_eq!(diff(FIELDS, &config(), &state), Vec::<String>::new());
        assert_eq!(state.get("cpu"), &s("0.5"));
        assert_eq!(state.get("limits").get("memory"), &s("1024Mi"));
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
        assert_eq!(state.get("strategy").elements().len(), 1);
        // cpu, limits, target_port, mode, values, port, strategy; the omitted zero delay is no diff.
        assert_eq!(diff(FIELDS, &config(), &state).len(), 7);
    }

    #[test]
    fn import_reads_from_nothing() {
        let live = json!({"targetPort": "http", "defaultMode": 493, "strategy": {"name": "RollingUpdate", "protocol": "TCP"}});
        let state = read(FIELDS, &live, &Value::Null);
        assert_eq!(state.get("target_port"), &s("http"));
        assert_eq!(state.get("mode"), &s("0755"));
        assert_eq!(state.get("strategy"), &list([]));
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
