//! Plain values, as resources see them: no msgpack, no gRPC.
//!
//! A [`Value`] is what cty calls a value; the [`Type`](crate::Type) that goes with it comes
//! from the schema. Collections keep their kind (list, set, map, object, tuple) so a value
//! read from the engine goes back with the same type.
//!
//! A `dynamic` attribute has no type in the schema: the engine sends each value with its
//! own, and expects exactly that type back. Most values say their type by their content
//! ([`Value::infer_type`]), but a null, an empty collection or a map of nulls cannot tell
//! `map(string)` from `object({})`. Those few places carry the type they were sent with
//! ([`Value::Typed`], made by [`Value::typed`]), so a value goes back as it came, and a
//! value taken out of it (an output, an attribute) still knows its type.

use std::collections::BTreeMap;
use std::fmt;

use crate::types::Type;

/// A cty value. Equality is cty's: a set equals another with the same elements in any order.
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// No value: an unset optional attribute, an absent block, an object that is gone.
    #[default]
    Null,
    /// Not known until apply. Refinements the engine sent are kept, but never written back:
    /// the runtime always answers plain unknowns.
    Unknown(Refinements),
    /// A `bool`.
    Bool(bool),
    /// A `number`.
    Number(Number),
    /// A `string`.
    String(String),
    /// A `list(T)`: elements of one type, in order.
    List(Vec<Value>),
    /// A `set(T)`: elements of one type, order not significant.
    Set(Vec<Value>),
    /// A `map(T)`: any keys, values of one type.
    Map(BTreeMap<String, Value>),
    /// An `object({...})`: the attributes its type names, each of its own type.
    Object(BTreeMap<String, Value>),
    /// A `tuple([...])`: a fixed number of elements, each of its own type.
    Tuple(Vec<Value>),
    /// A value whose content does not say its type (a typed null, an empty list, ...),
    /// with that type. Only [`Value::typed`] makes one; the accessors below look through it.
    Typed(Typed),
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Unknown(a), Value::Unknown(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => a == b,
            (Value::Set(a), Value::Set(b)) => {
                // The engine orders a set's elements its own way: compare them as a multiset.
                let mut unmatched: Vec<&Value> = b.iter().collect();
                a.len() == b.len()
                    && a.iter().all(|x| match unmatched.iter().position(|y| *y == x) {
                        Some(i) => {
                            unmatched.swap_remove(i);
                            true
                        }
                        None => false,
                    })
            }
            (Value::Map(a), Value::Map(b)) | (Value::Object(a), Value::Object(b)) => a == b,
            (Value::Typed(a), Value::Typed(b)) => a == b,
            _ => false,
        }
    }
}

/// A value with the type its content alone does not say: never `dynamic`, never nested.
#[derive(Clone, Debug, PartialEq)]
pub struct Typed {
    ty: Type,
    value: Box<Value>,
}

impl Typed {
    /// The type the value was sent with.
    pub fn ty(&self) -> &Type {
        &self.ty
    }

    /// The plain value.
    pub fn value(&self) -> &Value {
        &self.value
    }
}

/// What the engine already knows about an unknown value (msgpack extension 12).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Refinements {
    /// The value will not be null.
    pub not_null: bool,
    /// A string's known beginning.
    pub string_prefix: Option<String>,
    /// A number's lower bound, and whether the bound itself is allowed.
    pub number_lower: Option<(Number, bool)>,
    /// A number's upper bound, and whether the bound itself is allowed.
    pub number_upper: Option<(Number, bool)>,
    /// A collection's fewest elements.
    pub length_lower: Option<u64>,
    /// A collection's most elements.
    pub length_upper: Option<u64>,
}

/// A cty number. Integers stay exact whatever their size; other numbers keep the
/// decimal text they came with, so nothing is lost on the way through.
#[derive(Clone, Debug)]
pub enum Number {
    /// An integer that fits i64.
    Int(i64),
    /// A number f64 holds exactly as written.
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

    /// The number as an integer, when it is a whole number that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Number::Int(i) => Some(*i),
            Number::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Some(*f as i64),
            Number::Float(_) => None,
            Number::Decimal(s) => s.parse().ok(),
        }
    }

    /// The number as f64, rounded where it must be (NaN for unreadable decimal text).
    pub fn as_f64(&self) -> f64 {
        match self {
            Number::Int(i) => *i as f64,
            Number::Float(f) => *f,
            Number::Decimal(s) => s.parse().unwrap_or(f64::NAN),
        }
    }

    /// Whether the number is whole, however it is held.
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
    /// An unknown value with no refinements.
    pub fn unknown() -> Value {
        Value::Unknown(Refinements::default())
    }

    /// A string value.
    pub fn string(s: impl Into<String>) -> Value {
        Value::String(s.into())
    }

    /// A whole number value.
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

    /// `value` as a value of type `ty`: wherever its content would not say its type (a
    /// typed null or unknown, an empty collection, ...) it is wrapped in [`Value::Typed`],
    /// so that `infer_type` gives back exactly `ty`. Elsewhere nothing changes: resources
    /// see the plain values they always did. A `dynamic` `ty` leaves `value` as it is.
    pub fn typed(ty: &Type, value: Value) -> Value {
        annotate(ty, value).0
    }

    /// Whether the value is null (looking through [`Value::Typed`]).
    pub fn is_null(&self) -> bool {
        matches!(self.plain(), Value::Null)
    }

    /// True when this value itself is unknown (not looking inside collections).
    pub fn is_unknown(&self) -> bool {
        matches!(self.plain(), Value::Unknown(_))
    }

    /// Whether this is Go's zero value of its type (`""`, `0`, `false`, an empty collection),
    /// which the legacy SDK reads an unset value as and Kubernetes omits.
    pub fn is_zero(&self) -> bool {
        match self.plain() {
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == 0.0,
            Value::String(s) => s.is_empty(),
            Value::List(items) | Value::Set(items) => items.is_empty(),
            Value::Map(entries) => entries.is_empty(),
            _ => false,
        }
    }

    /// True when neither this value nor anything inside it is unknown.
    pub fn is_wholly_known(&self) -> bool {
        match self {
            Value::Unknown(_) => false,
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v.iter().all(Value::is_wholly_known),
            Value::Map(m) | Value::Object(m) => m.values().all(Value::is_wholly_known),
            Value::Typed(t) => t.value.is_wholly_known(),
            _ => true,
        }
    }

    /// The value without the type a [`Value::Typed`] carries, for matching on its kind.
    pub fn plain(&self) -> &Value {
        match self {
            Value::Typed(t) => &t.value,
            other => other,
        }
    }

    /// Drops a [`Value::Typed`] wrapper before a change inside it: a changed value's type
    /// is inferred again from its content.
    fn plain_mut(&mut self) -> &mut Value {
        if let Value::Typed(t) = self {
            *self = std::mem::take(&mut *t.value);
        }
        self
    }

    /// An object's attribute; `Null` for a missing attribute or a non-object.
    pub fn get(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        match self.plain() {
            Value::Object(m) | Value::Map(m) => m.get(name).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// Mutable access to an object's attribute (inserted as null when missing).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Value> {
        match self.plain_mut() {
            Value::Object(m) | Value::Map(m) => Some(m.entry(name.to_string()).or_insert(Value::Null)),
            _ => None,
        }
    }

    /// Sets an object's attribute; no effect on a non-object.
    pub fn set(&mut self, name: &str, value: Value) {
        if let Value::Object(m) | Value::Map(m) = self.plain_mut() {
            m.insert(name.to_string(), value);
        }
    }

    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<&str> {
        match self.plain() {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The bool, if the value is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.plain() {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as an integer, if the value is a whole number that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.plain() {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// Elements of a list, set or tuple; empty for anything else (null included).
    pub fn elements(&self) -> &[Value] {
        match self.plain() {
            Value::List(v) | Value::Set(v) | Value::Tuple(v) => v,
            _ => &[],
        }
    }

    /// Entries of a map or object; `None` for anything else.
    pub fn entries(&self) -> Option<&BTreeMap<String, Value>> {
        match self.plain() {
            Value::Map(m) | Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The type a `dynamic` attribute sends on the wire for this value: the type it was
    /// sent with where it carries one. Otherwise lists and sets whose elements disagree in
    /// type, and empty ones, fall back to tuples, maps to objects; untyped unknown and null
    /// values are `dynamic`.
    pub fn infer_type(&self) -> Type {
        match self {
            Value::Null | Value::Unknown(_) => Type::Dynamic,
            Value::Bool(_) => Type::Bool,
            Value::Number(_) => Type::Number,
            Value::String(_) => Type::String,
            Value::List(v) => sequence_type(Type::list, v.iter().map(Value::infer_type).collect()),
            Value::Set(v) => sequence_type(Type::set, v.iter().map(Value::infer_type).collect()),
            Value::Tuple(v) => Type::Tuple(v.iter().map(Value::infer_type).collect()),
            Value::Map(m) => map_type(m.iter().map(|(k, v)| (k.clone(), v.infer_type())).collect()),
            Value::Object(m) => Type::Object(m.iter().map(|(k, v)| (k.clone(), v.infer_type())).collect()),
            Value::Typed(t) => t.ty.clone(),
        }
    }

    /// Plain JSON, for values that leave Terraform (Kubernetes objects, recorded outputs).
    /// Unknowns become null: callers only convert wholly known values.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null | Value::Unknown(_) => J::Null,
            Value::Typed(t) => t.value.to_json(),
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

/// A list's or set's type from its elements' types (`wrap` makes the list or set type):
/// a tuple unless they agree on one type that is not `dynamic`.
fn sequence_type(wrap: fn(Type) -> Type, types: Vec<Type>) -> Type {
    match types.first() {
        Some(first) if *first != Type::Dynamic && types.iter().all(|t| t == first) => wrap(first.clone()),
        _ => Type::Tuple(types),
    }
}

/// A map's type from its entries' types: an object unless they agree on one type that is
/// not `dynamic`.
fn map_type(types: BTreeMap<String, Type>) -> Type {
    let mut each = types.values();
    match each.next() {
        Some(first) if *first != Type::Dynamic && each.all(|t| t == first) => Type::map(first.clone()),
        _ => Type::Object(types),
    }
}

/// [`Value::typed`], returning the type the result infers beside it, so each level is
/// inferred from its children's types instead of walking the whole value again.
fn annotate(ty: &Type, value: Value) -> (Value, Type) {
    if *ty == Type::Dynamic {
        let inferred = value.infer_type();
        return (value, inferred);
    }
    // An older type gives way to `ty`.
    let plain = match value {
        Value::Typed(t) => *t.value,
        other => other,
    };
    let each = |types: &mut Vec<Type>, element: &Type, v: Value| {
        let (v, t) = annotate(element, v);
        types.push(t);
        v
    };
    let (value, inferred) = match (ty, plain) {
        (Type::List(e), Value::List(items)) => {
            let mut types = Vec::with_capacity(items.len());
            let items = items.into_iter().map(|v| each(&mut types, e, v)).collect();
            (Value::List(items), sequence_type(Type::list, types))
        }
        (Type::Set(e), Value::Set(items)) => {
            let mut types = Vec::with_capacity(items.len());
            let items = items.into_iter().map(|v| each(&mut types, e, v)).collect();
            (Value::Set(items), sequence_type(Type::set, types))
        }
        (Type::Tuple(elements), Value::Tuple(items)) if elements.len() == items.len() => {
            let mut types = Vec::with_capacity(items.len());
            let items = items
                .into_iter()
                .zip(elements)
                .map(|(v, e)| each(&mut types, e, v))
                .collect();
            (Value::Tuple(items), Type::Tuple(types))
        }
        (Type::Map(e), Value::Map(entries)) => {
            let mut types = BTreeMap::new();
            let entries = entries
                .into_iter()
                .map(|(k, v)| {
                    let (v, t) = annotate(e, v);
                    types.insert(k.clone(), t);
                    (k, v)
                })
                .collect();
            (Value::Map(entries), map_type(types))
        }
        (Type::Object(attributes), Value::Object(entries)) => {
            let mut types = BTreeMap::new();
            let entries = entries
                .into_iter()
                .map(|(k, v)| {
                    let (v, t) = match attributes.get(&k) {
                        Some(a) => annotate(a, v),
                        None => {
                            let t = v.infer_type();
                            (v, t)
                        }
                    };
                    types.insert(k.clone(), t);
                    (k, v)
                })
                .collect();
            (Value::Object(entries), Type::Object(types))
        }
        (_, other) => {
            let inferred = other.infer_type();
            (other, inferred)
        }
    };
    if inferred == *ty {
        (value, inferred)
    } else {
        let typed = Typed {
            ty: ty.clone(),
            value: Box::new(value),
        };
        (Value::Typed(typed), ty.clone())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_equal_in_any_order_lists_are_not() {
        let (a, b) = (Value::string("a"), Value::string("b"));
        assert_eq!(
            Value::Set(vec![a.clone(), b.clone()]),
            Value::Set(vec![b.clone(), a.clone()])
        );
        assert_ne!(
            Value::List(vec![a.clone(), b.clone()]),
            Value::List(vec![b.clone(), a.clone()])
        );
        assert_ne!(
            Value::Set(vec![a.clone(), a.clone()]),
            Value::Set(vec![a.clone(), b.clone()])
        );
        assert_ne!(Value::Set(vec![a.clone()]), Value::List(vec![a]));
    }
}
