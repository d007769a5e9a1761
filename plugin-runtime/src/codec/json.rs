//! cty's JSON encoding, as stored state (`UpgradeResourceState`) and `DynamicValue.json`
//! carry it: a `dynamic` value is `{"value": .., "type": ..}` (its type kept on the decoded
//! value, as msgpack's), numbers keep their text.
//!
//! A small parser of its own keeps number text exact (serde_json would round integers
//! beyond 64 bits). Attributes that the current schema no longer has are dropped: stored
//! state may predate a schema change.

use std::collections::BTreeMap;

use super::{CodecError, CodecErrorKind, MAX_DEPTH, complete_object, each_element, element_type, wrong_type};
use crate::diagnostics::PathStep;
use crate::types::Type;
use crate::value::{Number, Value};

/// Decodes one JSON document as type `ty`.
pub fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    typed(&parse(bytes)?, ty)
}

/// Parses one JSON document without a type: stored state is rewritten as JSON
/// ([`crate::upgrade`]) before it is read against the current schema.
pub(crate) fn parse(bytes: &[u8]) -> Result<Json, CodecError> {
    let text = std::str::from_utf8(bytes).map_err(|_| CodecErrorKind::BadUtf8)?;
    let mut parser = Parser { text, pos: 0 };
    parser.document()
}

/// Parsed JSON with number text kept verbatim.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Json::Null => J::Null,
            Json::Bool(b) => J::Bool(*b),
            Json::Number(n) => serde_json::from_str(n).unwrap_or(J::Null),
            Json::String(s) => J::String(s.clone()),
            Json::Array(items) => J::Array(items.iter().map(Json::to_serde).collect()),
            Json::Object(fields) => {
                J::Object(fields.iter().map(|(k, v)| (k.clone(), v.to_serde())).collect())
            }
        }
    }
}

/// A parsed document read as type `ty`.
pub(crate) fn typed(json: &Json, ty: &Type) -> Result<Value, CodecError> {
    if let Json::Null = json {
        return Ok(Value::Null);
    }
    match (ty, json) {
        (Type::Dynamic, Json::Object(fields)) => {
            let field = |name: &str| fields.iter().find(|(k, _)| k == name).map(|(_, v)| v);
            let (Some(type_json), Some(value)) = (field("type"), field("value")) else {
                return Err(CodecErrorKind::BadDynamic.into());
            };
            let actual = Type::from_json(&type_json.to_serde()).map_err(CodecErrorKind::from)?;
            Ok(Value::typed(&actual, typed(value, &actual)?))
        }
        (Type::Dynamic, _) => Err(CodecErrorKind::BadDynamic.into()),
        // cty converts primitives into strings and back when the schema asks for them.
        (Type::String, Json::String(s) | Json::Number(s)) => Ok(Value::String(s.clone())),
        (Type::String, Json::Bool(b)) => Ok(Value::String(b.to_string())),
        (Type::Number, Json::Number(text) | Json::String(text)) => Number::parse(text)
            .map(Value::Number)
            .ok_or_else(|| CodecErrorKind::BadNumber(text.clone()).into()),
        (Type::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Type::Bool, Json::String(s)) if s == "true" || s == "false" => Ok(Value::Bool(s == "true")),
        (Type::List(_) | Type::Set(_) | Type::Tuple(_), Json::Array(items)) => {
            if let Type::Tuple(elems) = ty
                && elems.len() != items.len()
            {
                return Err(CodecErrorKind::TupleLength {
                    expected: elems.len(),
                    found: items.len(),
                }
                .into());
            }
            let values = each_element(items.len(), |i| {
                typed(
                    &items[i],
                    element_type(ty, i).expect("tuple length checked above"),
                )
            })?;
            Ok(match ty {
                Type::List(_) => Value::List(values),
                Type::Set(_) => Value::Set(values),
                _ => Value::Tuple(values),
            })
        }
        (Type::Map(ety), Json::Object(fields)) => {
            let mut entries = BTreeMap::new();
            for (key, item) in fields {
                let value = typed(item, ety).map_err(|e| e.within(PathStep::Key(key.clone())))?;
                entries.insert(key.clone(), value);
            }
            Ok(Value::Map(entries))
        }
        (Type::Object(attrs), Json::Object(fields)) => {
            let mut found = BTreeMap::new();
            for (key, item) in fields {
                if let Some(aty) = attrs.get(key) {
                    let value = typed(item, aty).map_err(|e| e.within(PathStep::Attribute(key.clone())))?;
                    found.insert(key.clone(), value);
                }
            }
            Ok(complete_object(attrs, found))
        }
        (_, other) => Err(wrong_type(ty, other.kind())),
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> CodecError {
        CodecErrorKind::BadJson(format!("{what} at byte {}", self.pos)).into()
    }

    fn document(&mut self) -> Result<Json, CodecError> {
        let value = self.value(0)?;
        self.skip_whitespace();
        if self.pos != self.text.len() {
            return Err(self.error("unexpected text after the value"));
        }
        Ok(value)
    }

    fn skip_whitespace(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start_matches([' ', '\t', '\n', '\r']).len();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), CodecError> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", byte as char)))
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, CodecError> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, CodecError> {
        if depth > MAX_DEPTH {
            return Err(CodecErrorKind::TooDeep.into());
        }
        self.skip_whitespace();
        match self.peek() {
            None => Err(CodecErrorKind::Truncated.into()),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_whitespace();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(Json::Array(items));
                        }
                        None => return Err(CodecErrorKind::Truncated.into()),
                        Some(_) => return Err(self.error("expected ',' or ']'")),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut fields = Vec::new();
                self.skip_whitespace();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(Json::Object(fields));
                }
                loop {
                    self.skip_whitespace();
                    if self.peek() != Some(b'"') {
                        return Err(self.error("expected an object key"));
                    }
                    let key = self.string()?;
                    self.expect(b':')?;
                    fields.push((key, self.value(depth + 1)?));
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(Json::Object(fields));
                        }
                        None => return Err(CodecErrorKind::Truncated.into()),
                        Some(_) => return Err(self.error("expected ',' or '}'")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn number(&mut self) -> Result<Json, CodecError> {
        let start = self.pos;
        let rest = &self.text.as_bytes()[start..];
        let len = rest
            .iter()
            .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            .unwrap_or(rest.len());
        let text = &self.text[start..start + len];
        // Validate the JSON number grammar loosely: it must parse as a float.
        if text.parse::<f64>().is_err() {
            return Err(self.error("invalid number"));
        }
        self.pos += len;
        Ok(Json::Number(text.to_string()))
    }

    fn string(&mut self) -> Result<String, CodecError> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(special) = rest.find(['"', '\\']) else {
                return Err(CodecErrorKind::Truncated.into());
            };
            out.push_str(&rest[..special]);
            self.pos += special + 1;
            if rest.as_bytes()[special] == b'"' {
                return Ok(out);
            }
            let Some(escape) = self.peek() else {
                return Err(CodecErrorKind::Truncated.into());
            };
            self.pos += 1;
            match escape {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let high = self.hex4()?;
                    let c = if (0xd800..0xdc00).contains(&high) {
                        if !self.text[self.pos..].starts_with("\\u") {
                            return Err(self.error("unpaired surrogate"));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xdc00..0xe000).contains(&low) {
                            return Err(self.error("unpaired surrogate"));
                        }
                        char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00))
                    } else {
                        char::from_u32(high)
                    };
                    out.push(c.ok_or_else(|| self.error("invalid \\u escape"))?);
                }
                _ => return Err(self.error("invalid escape")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, CodecError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or(CodecErrorKind::Truncated)?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(code)
    }
}
