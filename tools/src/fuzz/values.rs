//! Random cty types and values of them, as the engine could send them: nulls and unknowns
//! anywhere, and in `dynamic` positions a value of a random type that carries it the way the
//! codec's decoder does ([`Value::typed`]), so a decoded value compares equal. Also cty's
//! JSON for such a value, as stored state holds it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use plugin_runtime::{Number, Type, Value};

use super::rng::Rng;

/// Attribute and map key names: plain, empty, spaced, non-ASCII, and ones resources read.
const NAMES: [&str; 12] = [
    "a",
    "b",
    "id",
    "name",
    "",
    "x y",
    "é",
    "values",
    "kind",
    "namespace",
    "metadata",
    "k/v",
];

/// Strings the configuration validators treat specially, beside random ones.
const STRINGS: [&str; 34] = [
    "",
    "a",
    "default",
    "network",
    "app-planner",
    "Not_An_Estate!",
    "User",
    "Group",
    "ServiceAccount",
    "tofu-estate",
    "v1",
    "apps/v1",
    "ConfigMap",
    "Deployment",
    "30s",
    "1h30m",
    "1.5m",
    "250ms",
    "99999999999999999999h",
    "5 minutes",
    "0.000000001s",
    "metadata.annotations",
    "spec.replicas",
    r#"metadata.annotations["a/b"].x[0]"#,
    "^ok$",
    "(unclosed",
    "[[[[",
    "héllo",
    "😀",
    "\u{0}",
    "line\nbreak",
    "quote\"back\\slash",
    "${x}",
    "-1",
];

/// A random type at most `depth` levels deep.
pub fn any_type(rng: &mut Rng, depth: usize) -> Type {
    if depth == 0 || rng.chance(40) {
        return rng
            .pick(&[Type::String, Type::Number, Type::Bool, Type::Dynamic])
            .clone();
    }
    let inner = depth - 1;
    match rng.below(5) {
        0 => Type::list(any_type(rng, inner)),
        1 => Type::set(any_type(rng, inner)),
        2 => Type::map(any_type(rng, inner)),
        3 => {
            let count = rng.below(4);
            Type::object((0..count).map(|_| (*rng.pick(&NAMES), any_type(rng, inner))))
        }
        _ => Type::Tuple((0..rng.below(3)).map(|_| any_type(rng, inner)).collect()),
    }
}

/// Whether generated values may hold unknowns (JSON cannot carry them).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unknowns {
    Allowed,
    None,
}

/// A random value of type `ty`.
pub fn value_of(rng: &mut Rng, ty: &Type, unknowns: Unknowns) -> Value {
    if rng.chance(8) {
        return Value::Null;
    }
    if unknowns == Unknowns::Allowed && rng.chance(4) {
        return Value::unknown();
    }
    let items = |rng: &mut Rng, ty: &Type| -> Vec<Value> {
        (0..rng.below(4)).map(|_| value_of(rng, ty, unknowns)).collect()
    };
    match ty {
        Type::String => Value::String(string(rng)),
        Type::Number => Value::Number(number(rng)),
        Type::Bool => Value::Bool(rng.chance(50)),
        Type::List(e) => Value::List(items(rng, e)),
        Type::Set(e) => Value::Set(items(rng, e)),
        Type::Tuple(elements) => Value::Tuple(elements.iter().map(|e| value_of(rng, e, unknowns)).collect()),
        Type::Map(e) => Value::Map(
            (0..rng.below(4))
                .map(|_| (rng.pick(&NAMES).to_string(), value_of(rng, e, unknowns)))
                .collect::<BTreeMap<_, _>>(),
        ),
        Type::Object(attributes) => Value::Object(
            attributes
                .iter()
                .map(|(name, a)| (name.clone(), value_of(rng, a, unknowns)))
                .collect(),
        ),
        Type::Dynamic => {
            let actual = any_type(rng, 2);
            let value = value_of(rng, &actual, unknowns);
            Value::typed(&actual, value)
        }
    }
}

/// A string: one the validators know, or random text (ASCII, digits and units, anything).
pub fn string(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 | 1 => rng.pick(&STRINGS).to_string(),
        2 => (0..rng.below(12))
            .map(|_| *rng.pick(&['a', 'z', '0', '9', '.', 'h', 'm', 's', '-', '_', '/', ' ']))
            .collect(),
        _ => (0..rng.below(8))
            .filter_map(|_| char::from_u32(rng.next_u64() as u32 % 0x11_0000))
            .collect(),
    }
}

/// A number as cty sends them: small and large integers, finite doubles, and integers or
/// decimals beyond 64 bits.
pub fn number(rng: &mut Rng) -> Number {
    match rng.below(5) {
        0 => Number::Int(rng.below(200) as i64 - 100),
        1 => Number::Int(rng.next_u64() as i64),
        2 => {
            let f = f64::from_bits(rng.next_u64());
            Number::from(if f.is_finite() { f } else { 0.5 })
        }
        3 => Number::Float((rng.below(2000) as f64 - 1000.0) / 8.0),
        _ => {
            let mut digits = (1 + rng.below(9)).to_string();
            for _ in 0..18 + rng.below(20) {
                digits.push(char::from(b'0' + rng.below(10) as u8));
            }
            if rng.chance(30) {
                digits.push_str(".5");
            }
            Number::parse(&digits).expect("digits are a number")
        }
    }
}

/// `value` of type `ty` in cty's JSON: a `dynamic` position holds `{"value", "type"}`.
/// Unknowns have no JSON: `value` holds none.
pub fn cty_json(value: &Value, ty: &Type) -> String {
    let mut out = String::new();
    write_json(&mut out, value, ty);
    out
}

fn write_json(out: &mut String, value: &Value, ty: &Type) {
    if *ty == Type::Dynamic {
        let actual = value.infer_type();
        if actual == Type::Dynamic {
            out.push_str("null");
        } else {
            out.push_str("{\"value\": ");
            write_json(out, value, &actual);
            let _ = write!(out, ", \"type\": {}}}", actual.to_json());
        }
        return;
    }
    let element = |i: usize| match ty {
        Type::List(e) | Type::Set(e) => e.as_ref(),
        Type::Tuple(elements) => &elements[i],
        _ => &Type::Dynamic,
    };
    match value {
        Value::Typed(t) => write_json(out, t.value(), ty),
        Value::Null | Value::Unknown(_) => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&exact_text(n)),
        Value::String(s) => out.push_str(&serde_json::to_string(s).expect("strings serialize")),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json(out, item, element(i));
            }
            out.push(']');
        }
        Value::Map(entries) | Value::Object(entries) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let item_type = match ty {
                    Type::Map(e) => e.as_ref(),
                    Type::Object(attributes) => attributes.get(key).unwrap_or(&Type::Dynamic),
                    _ => &Type::Dynamic,
                };
                let _ = write!(out, "{}: ", serde_json::to_string(key).expect("keys serialize"));
                write_json(out, item, item_type);
            }
            out.push('}');
        }
    }
}

/// 2^63: integral doubles below it in magnitude are exact i64 values.
const I64_RANGE: f64 = 9_223_372_036_854_775_808.0;

/// A number's exact decimal text, as cty writes it. An integral double within i64 is its
/// integer: the shortest text that reads back as the double ("1849004055319843600") is
/// another integer than the double's own (1849004055319843584).
fn exact_text(n: &Number) -> String {
    match n {
        Number::Float(f) if f.fract() == 0.0 && (-I64_RANGE..I64_RANGE).contains(f) => {
            (*f as i64).to_string()
        }
        other => other.to_string(),
    }
}
