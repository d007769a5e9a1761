//! Plain values, as resources see them: no msgpack, no gRPC.
//!
//! A [`Value`] is what cty calls a value; the [`Type`](crate::Type) that goes with it comes
//! from the schema. Collections keep their kind (list, set, map, object, tuple) so a value
//! read from the engine goes back with the same type, and a `dynamic` attribute can infer
//! its wire type from the value alone ([`Value::infer_type`]).

use std::collections::BTreeMap;
use std::fmt;

use crate::types::Type;

/// A cty value.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    /// Not known until apply. Refinements the engine sent are kept, but never written back:
    /// the runtime always answers plain unknowns.
    Unknown(Refinements),
    Bool(bool),
    Number(Number),
    String(String),
    List(Vec<Value>),
    Set(Vec<Value>),
    Map(BTreeMap<String, Value>),
    Object(BTreeMap<String, Value>),
    Tuple(Vec<Value>),
}

/// What the engine already knows about an unknown value (msgpack extension 12).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Refinements {
    pub not_null: bool,
    pub string_prefix: Option<String>,
    pub number_lower: Option<(Number, bool)>,
    pub number_upper: Option<(Number, bool)>,
    pub length_lower: Option<u64>,
    pub length_upper: Option<u64>,
}

/// A cty number. Integers stay exact whatever their size; other numbers keep the
/// decimal text they came with, so nothing is lost on the way through.
#[derive(Clone, Debug)]
pub enum Number {
    Int(i64),
    Float(f64),
    /// An integer outside i64, or a decimal that f64 cannot hold exactly, as decimal text.
    Decimal(String),
}

impl Number {
    /// Parses decimal text (as msgpack string numbers and JSON carry them).
    pub fn parse(text: &str) -> Option<Number> {
        let t = text.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Some(Number::Int(i));
        }
        let f: f64 = t.parse().ok()?;
        if !f.is_finite() {
            return None;
        }
        // Keep the text when f64 would round it (big integers, long decimals).
        if format_f64(f) == t {
            Some(Number::Float(f))
        } else {
            Some(Number::Decimal(t.to_string()))
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(*i),
            Number::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(*f as i64),
            Number::Float(_) => None,
            Number::Decimal(s) => s.parse().ok(),
        }
    }

    pub fn as_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
            Number::Decimal(s) => s.parse().unwrap_or(f64::NAN),
        }
    }

    pub fn is_integer(&self) -> bool {
        match self {
            Number::Int(_) => true,
            Number::Float(f) => f.fract() == 0.0,
            Number::Decimal(s) => !s.contains(['.', 'e', 'E']),
        }
    }
}

fn format_f64(f: f64) -> String {
    let s = f.to_string();
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{}", format_f64(*x)),
            Number::Decimal(s) => f.write_str(s),
        }
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Decimal(a), Number::Decimal(b)) => a == b,
            _ => {
                if let (Some(a), Some(b)) = (self.as_i64(), other.as_i64())
                    && self.is_integer()
                    && other.is_integer()
                {
                    return a == b;
                }
                self.as_f64() == other.as_f64()
            }
        }
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Number {
        Number::Int(i)
    }
}

impl From<f64> for Number {
    fn from(f: f64) -> Number {
        if f.fract() == 0.0 && f.abs() < 9.0e15 {
            Number::Int(f as i64)
        } else {
            Number::Float(f)
        }
    }
}

impl Value {
    pub fn unknown() -> Value {
        Value::Unknown(Refinements::default())
    }

    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    pub fn int(i: i64) -> Value {
        Value::Number(Number::Int(i))
    }

    /// An object value from `(name, value)` pairs.
    pub fn object<I, K>(attributes: I) -> Value
    where
        I: IntoIterator<Item = (K, Value)>,
        K: Into<String>,
    {
        Value::Object(attributes.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// A map of strings, or null when `entries` is `None`.
    pub fn string_map<I, K, V>(entries: I) -> Value
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.into(), Value::String(v.into())))
                .collect(),
        )
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// True when this value itself is unknown (not looking inside collections).
    pub fn is_unknown(&self) -> bool {
        matches!(self, Value::Unknown(_))
    }

    /// True when neither this value nor anything inside it is unknown.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().all(Value::is_wholly_known),
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            _ => true,
        }
    }

    /// An object's attribute; `Null` for a missing attribute or a non-object.
    pub fn get(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        match self {
            Value::Object(m) | Value::Map(m) => m.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// Mutable access to an object's attribute (inserted as null when missing).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self {
            Value::Object(m) | Value::Map(m) => Some(m.entry(name.to_string()).or_insert(Value::Null)),
            _ => None,
        }
    }

    /// Sets an object's attribute; no effect on a non-object.
    pub fn set(&mut self, name: &str, value: Value) {
        if let Value::Object(m) | Value::Map(m) = self {
            m.insert(name.to_string(), value);
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple; empty for anything else (null included).
    pub fn elements(&self) -> &[Value] {
        match self {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v,
            _ => &[],
        }
    }

    /// Entries of a map or object; `None` for anything else.
    pub fn entries(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Map(m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The type a `dynamic` attribute sends on the wire for this value. Lists and sets
    /// whose elements disagree in type, and empty ones, fall back to tuples; unknown and
    /// null values are `dynamic`.
    pub fn infer_type(&self) -> Type {
        match self {
            Value::Null | Value::Unknown(_) => Type::Dynamic,
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(v) | Value::Set(v) => {
                let types: Vec<Type> = v.iter().map(Value::infer_type).collect();
                match types.first() {
                    Some(first) if types.iter().all(|t| t == first) && *first != Type::Dynamic => {
                        if matches!(self, Value::List(_)) {
                            Type::list(first.clone())
                        } else {
                            Type::set(first.clone())
                        }
                    }
                    _ => Type::Tuple(types),
                }
            }
            Value::Tuple(v) => Type::Tuple(v.iter().map(Value::infer_type).collect()),
            Value::Map(m) => {
                let types: Vec<Type> = m.values().map(Value::infer_type).collect();
                match types.first() {
                    Some(first) if types.iter().all(|t| t == first) && *first != Type::Dynamic => {
                        Type::map(first.clone())
                    }
                    _ => Type::Object(m.iter().map(|(k, v)| (k.clone(), v.infer_type())).collect()),
                }
            }
            Value::Object(m) => Type::Object(m.iter().map(|(k, v)| (k.clone(), v.infer_type())).collect()),
        }
    }

    /// Plain JSON, for values that leave Terraform (Kubernetes objects, recorded outputs).
    /// Unknowns become null: callers only convert wholly known values.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null | Value::Unknown(_) => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => match n {
                Number::Int(i) => J::from(*i),
                Number::Float(f) => serde_json::Number::from_f64(*f).map(J::Number).unwrap_or(J::Null),
                Number::Decimal(s) => serde_json::from_str(s).unwrap_or(J::Null),
            },
            Value::String(s) => J::String(s.clone()),
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => {
                J::Array(v.iter().map(Value::to_json).collect())
            }
            Value::Map(m) | Value::Object(m) => {
                J::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }

    /// A value from plain JSON, typed the way Terraform types JSON it did not declare:
    /// arrays are tuples and objects are objects.
    pub fn from_json(json: &serde_json::Value) -> Value {
        use serde_json::Value as J;
        match json {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => Value::Number(
                n.as_i64()
                    .map(Number::Int)
                    .or_else(|| Number::parse(&n.to_string()))
                    .unwrap_or(Number::Float(n.as_f64().unwrap_or(0.0))),
            ),
            J::String(s) => Value::String(s.clone()),
            J::Array(a) => Value::Tuple(a.iter().map(Value::from_json).collect()),
            J::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), Value::from_json(v))).collect()),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::int(i)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map(Into::into).unwrap_or(Value::Null)
    }
}
