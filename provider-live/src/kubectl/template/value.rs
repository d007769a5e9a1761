//! The values a template computes with, as cty has them: null, booleans, numbers, strings, lists
//! and maps (keys in lexical order, as cty keeps an object's), and the conversions HCL makes
//! between them (`"3"` is a number where one is needed, `"true"` a boolean).
//! Messages say what was wrong with a value, never what it was: a value may be sensitive.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value as Json;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    List(Vec<Value>),
    Map(BTreeMap<String, Value>),
}

/// Why a value cannot be used where it is.
#[derive(Debug, PartialEq)]
pub struct Mismatch(pub String);

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Value {
    /// The type's name as Terraform says it ("string", "list", ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Map(_) => "map",
        }
    }

    fn wrong(&self, wanted: &str) -> Mismatch {
        match self {
            Value::Null => Mismatch(format!("a null value where a {wanted} is required")),
            other => Mismatch(format!("a {} where a {wanted} is required", other.kind())),
        }
    }

    /// The value as a string: numbers and booleans convert, as HCL converts them.
    pub fn to_text(&self) -> Result<String, Mismatch> {
        match self {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(format_number(*n)),
            Value::Bool(b) => Ok(b.to_string()),
            other => Err(other.wrong("string")),
        }
    }

    /// The value as a number: a string converts when it is a decimal number.
    pub fn to_number(&self) -> Result<f64, Mismatch> {
        match self {
            Value::Number(n) => Ok(*n),
            Value::String(s) => parse_number(s)
                .ok_or_else(|| Mismatch("a string that is not a number where a number is required".into())),
            other => Err(other.wrong("number")),
        }
    }

    /// The value as a whole number (an index, a count).
    pub fn to_integer(&self) -> Result<i64, Mismatch> {
        let n = self.to_number()?;
        if n.fract() != 0.0 || n.abs() > 9e15 {
            return Err(Mismatch(
                "a fractional or too large number where a whole number is required".into(),
            ));
        }
        Ok(n as i64)
    }

    /// The value as a boolean: the strings `true` and `false` convert.
    pub fn to_bool(&self) -> Result<bool, Mismatch> {
        match self {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if s == "true" => Ok(true),
            Value::String(s) if s == "false" => Ok(false),
            Value::String(_) => Err(Mismatch(
                "a string other than \"true\" or \"false\" where a bool is required".into(),
            )),
            other => Err(other.wrong("bool")),
        }
    }

    pub fn as_list(&self) -> Result<&[Value], Mismatch> {
        match self {
            Value::List(items) => Ok(items),
            other => Err(other.wrong("list")),
        }
    }

    pub fn as_map(&self) -> Result<&BTreeMap<String, Value>, Mismatch> {
        match self {
            Value::Map(entries) => Ok(entries),
            other => Err(other.wrong("map")),
        }
    }

    /// A list of strings (elements converted).
    pub fn to_texts(&self) -> Result<Vec<String>, Mismatch> {
        self.as_list()?.iter().map(Value::to_text).collect()
    }

    pub fn to_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) if n.fract() == 0.0 && n.abs() < 9e15 => Json::from(*n as i64),
            Value::Number(n) => serde_json::Number::from_f64(*n).map_or(Json::Null, Json::Number),
            Value::String(s) => Json::String(s.clone()),
            Value::List(items) => Json::Array(items.iter().map(Value::to_json).collect()),
            Value::Map(entries) => {
                Json::Object(entries.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }

    pub fn from_json(json: &Json) -> Value {
        match json {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.as_f64().unwrap_or_default()),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::List(items.iter().map(Value::from_json).collect()),
            Json::Object(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::List(items)
    }
}

/// A number as cty writes it: all its digits, no exponent (`1e21` is `1000000000000000000000`).
pub fn format_number(n: f64) -> String {
    if n == 0.0 { "0".to_string() } else { n.to_string() }
}

/// A decimal number as cty reads one from a string: a sign, digits, a fraction, an exponent.
pub fn parse_number(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    let ok = !(whole.is_empty() && fraction.is_empty()) && digits(whole) && digits(fraction) && exponent_ok;
    ok.then(|| s.parse::<f64>().ok())
        .flatten()
        .filter(|n| n.is_finite())
}
