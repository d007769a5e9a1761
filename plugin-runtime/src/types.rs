//! The cty type system as the plugin protocol spells it.
//!
//! Schemas carry attribute types as cty type JSON (`"string"`, `["list","number"]`,
//! `["object",{"a":"bool"}]`, ...). The codec needs the type to decode msgpack, since
//! msgpack alone cannot tell a list from a set or an object from a map.

use std::collections::BTreeMap;

use serde_json::json;

/// A cty type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `string`.
    String,
    /// `number`: arbitrary precision, see [`crate::Number`].
    Number,
    /// `bool`.
    Bool,
    /// Any type, chosen by the value: encoded on the wire with its concrete type beside it.
    Dynamic,
    /// `list(T)`: ordered elements of one type.
    List(Box<Type>),
    /// `set(T)`: unordered, distinct elements of one type.
    Set(Box<Type>),
    /// `map(T)`: string keys, values of one type.
    Map(Box<Type>),
    /// `object({...})`: named attributes, each of its own type.
    Object(BTreeMap<String, Type>),
    /// `tuple([...])`: a fixed sequence of types.
    Tuple(Vec<Type>),
}

/// A type JSON document that is not a cty type.
#[derive(Debug, thiserror::Error)]
#[error("invalid cty type {0}")]
pub struct TypeError(pub String);

impl Type {
    /// `list(element)`.
    pub fn list(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    /// `set(element)`.
    pub fn set(element: Type) -> Type {
        Type::Set(Box::new(element))
    }

    /// `map(element)`.
    pub fn map(element: Type) -> Type {
        Type::Map(Box::new(element))
    }

    /// `object({...})` of `(name, type)` pairs.
    pub fn object<I, K>(attributes: I) -> Type
    where
        I: IntoIterator<Item = (K, Type)>,
        K: Into<String>,
    {
        Type::Object(attributes.into_iter().map(|(k, t)| (k.into(), t)).collect())
    }

    /// The type as cty type JSON.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Type::String => json!("string"),
            Type::Number => json!("number"),
            Type::Bool => json!("bool"),
            Type::Dynamic => json!("dynamic"),
            Type::List(e) => json!(["list", e.to_json()]),
            Type::Set(e) => json!(["set", e.to_json()]),
            Type::Map(e) => json!(["map", e.to_json()]),
            Type::Object(attrs) => {
                let fields: serde_json::Map<String, serde_json::Value> =
                    attrs.iter().map(|(k, t)| (k.clone(), t.to_json())).collect();
                json!(["object", fields])
            }
            Type::Tuple(elems) => {
                json!(["tuple", elems.iter().map(Type::to_json).collect::<Vec<_>>()])
            }
        }
    }

    /// Serialized cty type JSON, as schemas and dynamic values carry it: the bytes
    /// `serde_json::to_vec(&self.to_json())` gives, written directly (a schema holds thousands).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Type::String => out.extend_from_slice(b"\"string\""),
            Type::Number => out.extend_from_slice(b"\"number\""),
            Type::Bool => out.extend_from_slice(b"\"bool\""),
            Type::Dynamic => out.extend_from_slice(b"\"dynamic\""),
            Type::List(e) => write_collection(out, "list", e),
            Type::Set(e) => write_collection(out, "set", e),
            Type::Map(e) => write_collection(out, "map", e),
            Type::Object(attrs) => {
                out.extend_from_slice(b"[\"object\",{");
                for (i, (name, t)) in attrs.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut *out, name).expect("a string serializes");
                    out.push(b':');
                    t.write_json(out);
                }
                out.extend_from_slice(b"}]");
            }
            Type::Tuple(elems) => {
                out.extend_from_slice(b"[\"tuple\",[");
                for (i, t) in elems.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    t.write_json(out);
                }
                out.extend_from_slice(b"]]");
            }
        }
    }

    /// Parses cty type JSON. Optional-attribute markers (a third element of an object
    /// type) are accepted and ignored: they only matter for type conversion in the engine.
    pub fn from_json(value: &serde_json::Value) -> Result<Type, TypeError> {
        let bad = || TypeError(value.to_string());
        match value {
            serde_json::Value::String(s) => match s.as_str() {
                "string" => Ok(Type::String),
                "number" => Ok(Type::Number),
                "bool" => Ok(Type::Bool),
                "dynamic" => Ok(Type::Dynamic),
                _ => Err(bad()),
            },
            serde_json::Value::Array(parts) => {
                let kind = parts.first().and_then(|k| k.as_str()).ok_or_else(bad)?;
                let arg = parts.get(1).ok_or_else(bad)?;
                match kind {
                    "list" => Ok(Type::list(Type::from_json(arg)?)),
                    "set" => Ok(Type::set(Type::from_json(arg)?)),
                    "map" => Ok(Type::map(Type::from_json(arg)?)),
                    "object" => {
                        let fields = arg.as_object().ok_or_else(bad)?;
                        let mut attrs = BTreeMap::new();
                        for (k, t) in fields {
                            attrs.insert(k.clone(), Type::from_json(t)?);
                        }
                        Ok(Type::Object(attrs))
                    }
                    "tuple" => {
                        let elems = arg.as_array().ok_or_else(bad)?;
                        Ok(Type::Tuple(
                            elems.iter().map(Type::from_json).collect::<Result<_, _>>()?,
                        ))
                    }
                    _ => Err(bad()),
                }
            }
            _ => Err(bad()),
        }
    }

    /// [`Type::from_json`] on serialized JSON, as schemas and dynamic values carry it.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Type, TypeError> {
        let value: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|_| TypeError(String::from_utf8_lossy(bytes).into_owned()))?;
        Type::from_json(&value)
    }
}

/// `["list",<element>]` and its kin.
fn write_collection(out: &mut Vec<u8>, kind: &str, element: &Type) {
    out.extend_from_slice(b"[\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",");
    element.write_json(out);
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::Type;

    /// The direct writer gives the bytes serde_json gives for the same JSON, names escaped.
    #[test]
    fn type_json_bytes_are_serde_jsons() {
        let object = Type::Object(BTreeMap::from([
            ("b \"quoted\"".to_string(), Type::list(Type::Number)),
            ("a".to_string(), Type::map(Type::set(Type::Bool))),
            ("é\n".to_string(), Type::Tuple(vec![Type::String, Type::Dynamic])),
        ]));
        for t in [
            Type::String,
            Type::Dynamic,
            Type::list(object.clone()),
            Type::Tuple(vec![]),
            Type::Object(BTreeMap::new()),
            object,
        ] {
            let expected = serde_json::to_vec(&t.to_json()).expect("serializes");
            assert_eq!(
                String::from_utf8(t.to_json_bytes()).expect("UTF-8"),
                String::from_utf8(expected).expect("UTF-8")
            );
            assert_eq!(Type::from_json_bytes(&t.to_json_bytes()).expect("parses back"), t);
        }
    }
}
