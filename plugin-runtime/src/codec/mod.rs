//! Values on the wire: cty's msgpack and JSON encodings, always read against a [`Type`].
//!
//! The engine sends `DynamicValue`s as msgpack (JSON only for legacy paths such as stored
//! state); the runtime answers msgpack. Neither encoding says on its own whether an array
//! is a list, a set or a tuple, so every entry point takes the type from the schema.
//! Malformed input is a [`CodecError`] naming the attribute path, never a panic.
//!
//! In a `dynamic` position the value comes with its own type; that exact type stays with
//! the decoded value ([`Value::typed`]) and goes back on encode: the engine refuses a plan
//! whose `map(string)` came back as an object, or whose empty `list(string)` as a tuple.

mod json;
mod msgpack;

use std::fmt;

use crate::diagnostics::{AttributePath, PathStep};
use crate::types::{Type, TypeError};
use crate::value::Value;

pub use json::decode as decode_json;
pub(crate) use json::{Json, parse as parse_json, typed as decode_parsed_json};
pub use msgpack::{decode as decode_msgpack, encode as encode_msgpack};

/// Decodes a `DynamicValue`'s two fields: msgpack when present, else JSON, else null
/// (the engine leaves both empty for an absent value).
pub fn decode_dynamic_value(msgpack: &[u8], json: &[u8], ty: &Type) -> Result<Value, CodecError> {
    if !msgpack.is_empty() {
        decode_msgpack(msgpack, ty)
    } else if !json.is_empty() {
        decode_json(json, ty)
    } else {
        Ok(Value::Null)
    }
}

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

/// A value that could not be decoded or encoded, and where in it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub struct CodecError {
    /// Where in the value it went wrong.
    pub path: AttributePath,
    /// What went wrong there.
    pub kind: CodecErrorKind,
}

/// What was wrong with the bytes, or with a value for its type.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecErrorKind {
    /// The bytes end before the value does.
    #[error("the input ends in the middle of a value")]
    Truncated,
    /// Bytes follow a complete value (how many).
    #[error("{0} unexpected bytes after the value")]
    TrailingBytes(usize),
    /// A byte that starts no msgpack value.
    #[error("invalid msgpack marker byte 0x{0:02x}")]
    BadMarker(u8),
    /// JSON that does not parse (serde_json's message).
    #[error("invalid JSON: {0}")]
    BadJson(String),
    /// The value does not have the type the schema says.
    #[error("a {expected} is required, found {found}")]
    WrongType {
        /// The schema's type, written as in configurations.
        expected: String,
        /// What was found instead.
        found: &'static str,
    },
    /// A number's text does not parse (the text).
    #[error("{0:?} is not a number")]
    BadNumber(String),
    /// A string's bytes are not UTF-8.
    #[error("a string is not valid UTF-8")]
    BadUtf8,
    /// A map or object key that is not a string.
    #[error("map keys must be strings")]
    NonStringKey,
    /// An object attribute its type does not have (the name).
    #[error("unsupported attribute {0:?}")]
    UnsupportedAttribute(String),
    /// A tuple with the wrong number of elements.
    #[error("a tuple of {expected} elements is required, found {found}")]
    TupleLength {
        /// As many as its type has.
        expected: usize,
        /// As many as the input has.
        found: usize,
    },
    /// A `dynamic` value not sent as a `[type, value]` pair.
    #[error("a dynamic value must be a [type, value] pair")]
    BadDynamic,
    /// A `dynamic` value's type JSON does not parse as a type.
    #[error("a dynamic value names an invalid type: {0}")]
    BadType(String),
    /// A malformed unknown (msgpack extension), and what is wrong with it.
    #[error("invalid unknown value: {0}")]
    BadUnknown(&'static str),
    /// Nesting beyond the depth limit, refused to protect the stack.
    #[error("values nest deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

impl From<TypeError> for CodecErrorKind {
    fn from(e: TypeError) -> CodecErrorKind {
        CodecErrorKind::BadType(e.0)
    }
}

impl CodecError {
    /// The same error, one step further from the root.
    fn within(mut self, step: PathStep) -> CodecError {
        self.path.0.insert(0, step);
        self
    }
}

impl From<CodecErrorKind> for CodecError {
    fn from(kind: CodecErrorKind) -> CodecError {
        CodecError {
            path: AttributePath::default(),
            kind,
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.0.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "at {}: {}", self.path, self.kind)
        }
    }
}

/// A type as error messages name it: `list of string`, `object`.
fn type_name(ty: &Type) -> String {
    match ty {
        Type::String => "string".into(),
        Type::Number => "number".into(),
        Type::Bool => "bool".into(),
        Type::Dynamic => "value of any type".into(),
        Type::List(e) => format!("list of {}", type_name(e)),
        Type::Set(e) => format!("set of {}", type_name(e)),
        Type::Map(e) => format!("map of {}", type_name(e)),
        Type::Object(_) => "object".into(),
        Type::Tuple(_) => "tuple".into(),
    }
}

fn wrong_type(expected: &Type, found: &'static str) -> CodecError {
    CodecErrorKind::WrongType {
        expected: type_name(expected),
        found,
    }
    .into()
}

/// Runs `f` on each element, attributing errors to the element's index.
fn each_element<T>(
    count: usize,
    mut f: impl FnMut(usize) -> Result<T, CodecError>,
) -> Result<Vec<T>, CodecError> {
    (0..count)
        .map(|i| f(i).map_err(|e| e.within(PathStep::Index(i as i64))))
        .collect()
}

/// The element type of list, set and tuple types, per index.
fn element_type(ty: &Type, index: usize) -> Option<&Type> {
    match ty {
        Type::List(e) | Type::Set(e) => Some(e),
        Type::Tuple(elems) => elems.get(index),
        _ => None,
    }
}

/// Fills in attributes the input left out as null, as both encodings allow.
fn complete_object(
    attrs: &std::collections::BTreeMap<String, Type>,
    mut found: std::collections::BTreeMap<String, Value>,
) -> Value {
    for name in attrs.keys() {
        found.entry(name.clone()).or_insert(Value::Null);
    }
    Value::Object(found)
}

#[cfg(test)]
mod tests;
