//! Writing: the Kubernetes JSON of a resource value's configured fields, each converted to
//! the type the API takes, or an error naming the attribute path of a value it cannot take.

use base64::Engine as _;
use plugin_runtime::{AttributePath, Diagnostic, Diagnostics, Value};
use serde_json::{Map, Value as Json};

use super::*;

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

pub(super) fn bad(bad: BadValue, path: AttributePath) -> Diagnostics {
    Diagnostics::from(Diagnostic::from(InvalidAttribute { path, bad }))
}

/// Puts `value` at the dotted JSON path `json` of `out`, creating the levels between.
pub(super) fn insert(out: &mut Map<String, Json>, json: &str, value: Json) {
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

/// Whether a value is configured: not null, not unknown, not an empty block list.
pub(super) fn configured(value: &Value) -> bool {
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

pub(super) fn write_items(
    sub: &[Field],
    value: &Value,
    path: &AttributePath,
) -> Result<Option<Json>, Diagnostics> {
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

pub(super) fn write_field(
    field: &Field,
    value: &Value,
    path: &AttributePath,
) -> Result<Option<Json>, Diagnostics> {
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

pub(super) fn write_scalar(scalar: Scalar, value: &Value) -> Result<Json, BadValue> {
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
                Scalar::Quantity if !quantity::is_valid(text) => Err(BadValue::NotQuantity(text.to_string())),
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
