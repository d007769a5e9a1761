//! cty's msgpack encoding: null is nil, unknown is an extension value, a `dynamic`
//! value is a `[type JSON, value]` pair, numbers are ints, floats or decimal strings.
//!
//! A pair's type is kept on the decoded value ([`Value::typed`]) and written back as it
//! came, so the engine gets exactly the type it sent (a null `map(string)` stays one).

use std::collections::BTreeMap;

use super::{CodecError, CodecErrorKind, MAX_DEPTH, complete_object, each_element, element_type, wrong_type};
use crate::diagnostics::PathStep;
use crate::types::Type;
use crate::value::{Number, Refinements, Value};

/// Extension code of an unknown value carrying refinements (code 0 and any payload of
/// at most one byte mean a plain unknown).
const REFINED_UNKNOWN: i8 = 12;
/// A plain unknown: fixext1, code 0, payload 0, as cty writes it.
const PLAIN_UNKNOWN: [u8; 3] = [0xd4, 0, 0];
/// cty refuses larger refinement payloads as abusive; so do we.
const MAX_REFINEMENTS_LEN: usize = 1024;

/// Decodes one msgpack value of type `ty`; the whole input must be that one value.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let mut reader = Reader { buf: bytes, pos: 0 };
    let value = reader.value(ty, 0)?;
    match bytes.len() - reader.pos {
        0 => Ok(value),
        extra => Err(CodecErrorKind::TrailingBytes(extra).into()),
    }
}

/// Encodes `value` as type `ty`. Unknowns are written plain: refinements never go back.
pub fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, value, ty)?;
    Ok(out)
}

/// The head of the next msgpack item; arrays and maps give their length, their
/// contents follow in the input.
enum Head<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(&'a [u8]),
    Bin(&'a [u8]),
    Array(usize),
    Map(usize),
    Ext(i8, &'a [u8]),
}

impl Head<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Head::Nil => "null",
            Head::Bool(_) => "bool",
            Head::Int(_) | Head::UInt(_) | Head::Float(_) => "number",
            Head::Str(_) => "string",
            Head::Bin(_) => "binary",
            Head::Array(_) => "array",
            Head::Map(_) => "map",
            Head::Ext(..) => "extension",
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecErrorKind> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let end = end.ok_or(CodecErrorKind::Truncated)?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn uint(&mut self, width: usize) -> Result<u64, CodecErrorKind> {
        Ok(self
            .take(width)?
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    fn len(&mut self, width: usize) -> Result<usize, CodecErrorKind> {
        // Widths are at most 4 bytes, so the length always fits a usize on 64-bit targets.
        Ok(self.uint(width)? as usize)
    }

    fn head(&mut self) -> Result<Head<'a>, CodecErrorKind> {
        let marker = self.take(1)?[0];
        Ok(match marker {
            0x00..=0x7f => Head::Int(i64::from(marker)),
            0x80..=0x8f => Head::Map(usize::from(marker & 0x0f)),
            0x90..=0x9f => Head::Array(usize::from(marker & 0x0f)),
            0xa0..=0xbf => Head::Str(self.take(usize::from(marker & 0x1f))?),
            0xc0 => Head::Nil,
            0xc2 => Head::Bool(false),
            0xc3 => Head::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (marker - 0xc4))?;
                Head::Bin(self.take(n)?)
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (marker - 0xc7))?;
                let code = self.take(1)?[0] as i8;
                Head::Ext(code, self.take(n)?)
            }
            0xca => Head::Float(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => Head::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Head::UInt(self.uint(1 << (marker - 0xcc))?),
            0xd0 => Head::Int(i64::from(self.uint(1)? as u8 as i8)),
            0xd1 => Head::Int(i64::from(self.uint(2)? as u16 as i16)),
            0xd2 => Head::Int(i64::from(self.uint(4)? as u32 as i32)),
            0xd3 => Head::Int(self.uint(8)? as i64),
            0xd4..=0xd8 => {
                let code = self.take(1)?[0] as i8;
                Head::Ext(code, self.take(1 << (marker - 0xd4))?)
            }
            0xd9..=0xdb => {
                let n = self.len(1 << (marker - 0xd9))?;
                Head::Str(self.take(n)?)
            }
            0xdc | 0xdd => Head::Array(self.len(2 << (marker - 0xdc))?),
            0xde | 0xdf => Head::Map(self.len(2 << (marker - 0xde))?),
            0xe0..=0xff => Head::Int(i64::from(marker as i8)),
            0xc1 => return Err(CodecErrorKind::BadMarker(marker)),
        })
    }

    fn value(&mut self, ty: &Type, depth: usize) -> Result<Value, CodecError> {
        if depth > MAX_DEPTH {
            return Err(CodecErrorKind::TooDeep.into());
        }
        let head = self.head()?;
        match head {
            Head::Nil => return Ok(Value::Null),
            Head::Ext(code, payload) => return unknown(code, payload, ty).map_err(Into::into),
            _ => {}
        }
        match (ty, head) {
            (Type::Dynamic, Head::Array(2)) => {
                let type_json = match self.head()? {
                    Head::Str(b) | Head::Bin(b) => b,
                    _ => return Err(CodecErrorKind::BadDynamic.into()),
                };
                let actual = Type::from_json_bytes(type_json).map_err(CodecErrorKind::from)?;
                let value = self.value(&actual, depth + 1)?;
                Ok(Value::typed(&actual, value))
            }
            (Type::Dynamic, _) => Err(CodecErrorKind::BadDynamic.into()),
            (Type::String, Head::Str(b) | Head::Bin(b)) => Ok(Value::String(utf8(b)?.to_string())),
            (Type::Number, Head::Int(i)) => Ok(Value::Number(Number::Int(i))),
            (Type::Number, Head::UInt(u)) => Ok(Value::Number(
                i64::try_from(u).map_or_else(|_| Number::Decimal(u.to_string()), Number::Int),
            )),
            // cty numbers are finite: NaN and infinities are not numbers.
            (Type::Number, Head::Float(f)) if f.is_finite() => Ok(Value::Number(Number::from(f))),
            (Type::Number, Head::Float(f)) => Err(CodecErrorKind::BadNumber(f.to_string()).into()),
            (Type::Number, Head::Str(b)) => {
                let text = utf8(b)?;
                let number = Number::parse(text).ok_or_else(|| CodecErrorKind::BadNumber(text.into()))?;
                Ok(Value::Number(number))
            }
            (Type::Bool, Head::Bool(b)) => Ok(Value::Bool(b)),
            (Type::List(_) | Type::Set(_) | Type::Tuple(_), Head::Array(n)) => {
                if let Type::Tuple(elems) = ty
                    && elems.len() != n
                {
                    return Err(CodecErrorKind::TupleLength {
                        expected: elems.len(),
                        found: n,
                    }
                    .into());
                }
                let items = each_element(n, |i| {
                    let ety = element_type(ty, i).expect("tuple length checked above");
                    self.value(ety, depth + 1)
                })?;
                Ok(match ty {
                    Type::List(_) => Value::List(items),
                    Type::Set(_) => Value::Set(items),
                    _ => Value::Tuple(items),
                })
            }
            (Type::Map(ety), Head::Map(n)) => {
                let mut entries = BTreeMap::new();
                for _ in 0..n {
                    let key = self.key()?;
                    let value = self
                        .value(ety, depth + 1)
                        .map_err(|e| e.within(PathStep::Key(key.clone())))?;
                    entries.insert(key, value);
                }
                Ok(Value::Map(entries))
            }
            (Type::Object(attrs), Head::Map(n)) => {
                let mut found = BTreeMap::new();
                for _ in 0..n {
                    let key = self.key()?;
                    let Some(aty) = attrs.get(&key) else {
                        return Err(CodecErrorKind::UnsupportedAttribute(key).into());
                    };
                    let value = self
                        .value(aty, depth + 1)
                        .map_err(|e| e.within(PathStep::Attribute(key.clone())))?;
                    found.insert(key, value);
                }
                Ok(complete_object(attrs, found))
            }
            (_, head) => Err(wrong_type(ty, head.kind())),
        }
    }

    fn key(&mut self) -> Result<String, CodecError> {
        match self.head()? {
            Head::Str(b) => Ok(utf8(b)?.to_string()),
            _ => Err(CodecErrorKind::NonStringKey.into()),
        }
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, CodecErrorKind> {
    std::str::from_utf8(bytes).map_err(|_| CodecErrorKind::BadUtf8)
}

/// An unknown value from its extension; refinements that cannot apply to `ty` are refused
/// as cty does, keys it does not know are skipped for forward compatibility.
fn unknown(code: i8, payload: &[u8], ty: &Type) -> Result<Value, CodecErrorKind> {
    let bad = CodecErrorKind::BadUnknown;
    if payload.len() <= 1 {
        return Ok(Value::unknown());
    }
    if code != REFINED_UNKNOWN {
        return Err(bad("unsupported msgpack extension type"));
    }
    if payload.len() > MAX_REFINEMENTS_LEN {
        return Err(bad("refinements too large"));
    }
    let mut reader = Reader { buf: payload, pos: 0 };
    let Head::Map(count) = reader.head()? else {
        return Err(bad("refinements are not a map"));
    };
    let mut refinements = Refinements::default();
    for _ in 0..count {
        let key = match reader.head()? {
            Head::Int(k) => k,
            Head::UInt(k) => i64::try_from(k).unwrap_or(i64::MAX),
            _ => return Err(bad("refinement key is not an integer")),
        };
        match key {
            1 => match reader.head()? {
                Head::Bool(is_null) => refinements.not_null = !is_null,
                _ => return Err(bad("nullness refinement is not a bool")),
            },
            2 => {
                if *ty != Type::String {
                    return Err(bad("string prefix refinement on a non-string"));
                }
                match reader.head()? {
                    Head::Str(b) => refinements.string_prefix = Some(utf8(b)?.to_string()),
                    _ => return Err(bad("string prefix refinement is not a string")),
                }
            }
            3 | 4 => {
                if *ty != Type::Number {
                    return Err(bad("number bound refinement on a non-number"));
                }
                let bound_ty = Type::Tuple(vec![Type::Number, Type::Bool]);
                let bound = match reader.value(&bound_ty, 0).map_err(|e| e.kind)? {
                    Value::Tuple(items) => match items.as_slice() {
                        [Value::Number(n), Value::Bool(inclusive)] => (n.clone(), *inclusive),
                        _ => return Err(bad("number bound refinement is not a [number, bool] pair")),
                    },
                    _ => return Err(bad("number bound refinement is not a [number, bool] pair")),
                };
                if key == 3 {
                    refinements.number_lower = Some(bound);
                } else {
                    refinements.number_upper = Some(bound);
                }
            }
            5 | 6 => {
                if !matches!(ty, Type::List(_) | Type::Set(_) | Type::Map(_)) {
                    return Err(bad("length bound refinement on a non-collection"));
                }
                let bound = match reader.head()? {
                    Head::Int(n) => u64::try_from(n).map_err(|_| bad("negative length bound"))?,
                    Head::UInt(n) => n,
                    _ => return Err(bad("length bound refinement is not an integer")),
                };
                if key == 5 {
                    refinements.length_lower = Some(bound);
                } else {
                    refinements.length_upper = Some(bound);
                }
            }
            _ => reader.skip(0)?,
        }
    }
    // cty never refines dynamic values; it drops what it finds there, and so do we.
    if *ty == Type::Dynamic {
        refinements = Refinements::default();
    }
    Ok(Value::Unknown(refinements))
}

impl Reader<'_> {
    /// Skips one whole item (an unknown refinement's value).
    fn skip(&mut self, depth: usize) -> Result<(), CodecErrorKind> {
        if depth > MAX_DEPTH {
            return Err(CodecErrorKind::TooDeep);
        }
        match self.head()? {
            Head::Array(n) => (0..n).try_for_each(|_| self.skip(depth + 1)),
            Head::Map(n) => (0..n * 2).try_for_each(|_| self.skip(depth + 1)),
            _ => Ok(()),
        }
    }
}

fn write_value(out: &mut Vec<u8>, value: &Value, ty: &Type) -> Result<(), CodecError> {
    if *ty == Type::Dynamic {
        // The value's own type beside it: the one it was sent with, if it carries one.
        let actual = value.infer_type();
        if actual != Type::Dynamic {
            out.push(0x92);
            write_bin(out, &actual.to_json_bytes());
            return write_value(out, value, &actual);
        }
    }
    // Where the type is known, it decides; a carried type only matters in dynamic positions.
    match (value.plain(), ty) {
        (Value::Null, _) => out.push(0xc0),
        (Value::Unknown(_), _) => out.extend_from_slice(&PLAIN_UNKNOWN),
        (Value::String(s), Type::String) => write_str(out, s),
        (Value::Number(n), Type::Number) => write_number(out, n),
        (Value::Bool(b), Type::Bool) => out.push(if *b { 0xc3 } else { 0xc2 }),
        (
            Value::List(items) | Value::Set(items) | Value::Tuple(items),
            Type::List(_) | Type::Set(_) | Type::Tuple(_),
        ) => {
            if let Type::Tuple(elems) = ty
                && elems.len() != items.len()
            {
                return Err(CodecErrorKind::TupleLength {
                    expected: elems.len(),
                    found: items.len(),
                }
                .into());
            }
            write_len(out, items.len(), [0x90, 0xdc, 0xdd]);
            each_element(items.len(), |i| {
                let ety = element_type(ty, i).expect("tuple length checked above");
                write_value(out, &items[i], ety)
            })?;
        }
        (Value::Map(entries) | Value::Object(entries), Type::Map(ety)) => {
            write_len(out, entries.len(), [0x80, 0xde, 0xdf]);
            for (key, item) in entries {
                write_str(out, key);
                write_value(out, item, ety).map_err(|e| e.within(PathStep::Key(key.clone())))?;
            }
        }
        (Value::Map(entries) | Value::Object(entries), Type::Object(attrs)) => {
            if let Some(extra) = entries.keys().find(|k| !attrs.contains_key(*k)) {
                return Err(CodecErrorKind::UnsupportedAttribute(extra.clone()).into());
            }
            write_len(out, attrs.len(), [0x80, 0xde, 0xdf]);
            for (name, aty) in attrs {
                write_str(out, name);
                let item = entries.get(name).unwrap_or(&Value::Null);
                write_value(out, item, aty).map_err(|e| e.within(PathStep::Attribute(name.clone())))?;
            }
        }
        (other, _) => return Err(wrong_type(ty, value_kind(other))),
    }
    Ok(())
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Unknown(_) => "unknown",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::List(_) => "list",
        Value::Set(_) => "set",
        Value::Map(_) => "map",
        Value::Object(_) => "object",
        Value::Tuple(_) => "tuple",
        Value::Typed(t) => value_kind(t.value()),
    }
}

/// Writes a length with the fix, 16-bit or 32-bit marker of its family.
fn write_len(out: &mut Vec<u8>, len: usize, markers: [u8; 3]) {
    if len < 16 {
        out.push(markers[0] | len as u8);
    } else if let Ok(n) = u16::try_from(len) {
        out.push(markers[1]);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(markers[2]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    let len = s.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if let Ok(n) = u8::try_from(len) {
        out.extend_from_slice(&[0xd9, n]);
    } else if let Ok(n) = u16::try_from(len) {
        out.push(0xda);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

fn write_bin(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    if let Ok(n) = u8::try_from(len) {
        out.extend_from_slice(&[0xc4, n]);
    } else if let Ok(n) = u16::try_from(len) {
        out.push(0xc5);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0xc6);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

/// 2^63: doubles below it in magnitude (and -2^63) are exact i64 values when integral.
const I64_RANGE: f64 = 9_223_372_036_854_775_808.0;

/// Integers as msgpack ints, other exact floats as float64, the rest as decimal text:
/// the same choice cty makes, so nothing is rounded on the way.
fn write_number(out: &mut Vec<u8>, n: &Number) {
    match n {
        Number::Int(i) => write_int(out, *i),
        // Every integral double in i64's range converts exactly (2^63 itself does not fit).
        Number::Float(f) if f.fract() == 0.0 && (-I64_RANGE..I64_RANGE).contains(f) => {
            write_int(out, *f as i64)
        }
        Number::Float(f) => {
            out.push(0xcb);
            out.extend_from_slice(&f.to_bits().to_be_bytes());
        }
        Number::Decimal(text) => match text.parse::<u64>() {
            Ok(u) => {
                out.push(0xcf);
                out.extend_from_slice(&u.to_be_bytes());
            }
            Err(_) => write_str(out, text),
        },
    }
}

fn write_int(out: &mut Vec<u8>, i: i64) {
    if (0..=0x7f).contains(&i) || (-32..0).contains(&i) {
        out.push(i as u8);
    } else if let Ok(v) = i8::try_from(i) {
        out.extend_from_slice(&[0xd0, v as u8]);
    } else if let Ok(v) = i16::try_from(i) {
        out.push(0xd1);
        out.extend_from_slice(&v.to_be_bytes());
    } else if let Ok(v) = i32::try_from(i) {
        out.push(0xd2);
        out.extend_from_slice(&v.to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}
