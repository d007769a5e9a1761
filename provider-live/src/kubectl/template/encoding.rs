//! Encodings and hashes, as Terraform 0.12 has them: base64, JSON (keys sorted, `<>&` escaped as
//! Go writes them), YAML, CSV, URL query escaping, MD5/SHA digests and UUIDs.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

use super::value::{Value, format_number};

fn text(args: &[Value]) -> Result<String, String> {
    Ok(args[0].to_text()?)
}

pub(super) fn base64encode(args: &[Value]) -> Result<Value, String> {
    Ok(STANDARD.encode(text(args)?).into())
}

pub(super) fn base64decode(args: &[Value]) -> Result<Value, String> {
    let bytes = STANDARD
        .decode(text(args)?)
        .map_err(|_| "the given value is not valid base64")?;
    String::from_utf8(bytes)
        .map(Value::String)
        .map_err(|_| "the result of decoding the given string is not valid UTF-8".into())
}

/// `value` as cty writes JSON: compact, keys sorted, numbers in full.
pub(super) fn json_text(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format_number(*n),
        Value::String(s) => json_string(s),
        Value::List(items) => format!("[{}]", items.iter().map(json_text).collect::<Vec<_>>().join(",")),
        Value::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}:{}", json_string(k), json_text(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// A JSON string as Go's `encoding/json` escapes it (HTML characters and line separators too).
fn json_string(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

pub(super) fn jsonencode(args: &[Value]) -> Result<Value, String> {
    Ok(json_text(&args[0]).into())
}

pub(super) fn jsondecode(args: &[Value]) -> Result<Value, String> {
    let json: serde_json::Value = serde_json::from_str(&text(args)?).map_err(|e| {
        format!(
            "the given string is not valid JSON (line {}, column {})",
            e.line(),
            e.column()
        )
    })?;
    Ok(Value::from_json(&json))
}

pub(super) fn yamlencode(args: &[Value]) -> Result<Value, String> {
    Ok(crate::kubectl::yaml::yamlencode(&args[0].to_json()).into())
}

/// YAML 1.2's core schema, as Terraform's `yamldecode` reads it.
pub(super) fn yamldecode(args: &[Value]) -> Result<Value, String> {
    let json: serde_json::Value = serde_yaml::from_str(&text(args)?).map_err(|e| match e.location() {
        Some(at) => format!(
            "the given string is not valid YAML (line {}, column {})",
            at.line(),
            at.column()
        ),
        None => "the given string is not valid YAML, or holds a key that is not a string".into(),
    })?;
    Ok(Value::from_json(&json))
}

/// CSV with a header row: a list of maps from the header's names to each row's fields.
pub(super) fn csvdecode(args: &[Value]) -> Result<Value, String> {
    let rows = csv_rows(&text(args)?)?;
    let Some((header, rows)) = rows.split_first() else {
        return Err("the CSV has no header row".into());
    };
    let mut out = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if row.len() != header.len() {
            return Err(format!(
                "row {} has {} fields where the header has {}",
                i + 2,
                row.len(),
                header.len()
            ));
        }
        out.push(Value::Map(
            header
                .iter()
                .cloned()
                .zip(row.iter().cloned().map(Value::String))
                .collect(),
        ));
    }
    Ok(Value::List(out))
}

/// RFC 4180 records: quoted fields may hold commas, `""` and line breaks; blank lines are skipped.
fn csv_rows(text: &str) -> Result<Vec<Vec<String>>, String> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut was_quoted) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() && !was_quoted => (quoted, was_quoted) = (true, true),
            (false, '"') => return Err("a quote appears inside an unquoted field".into()),
            (false, ',') => {
                row.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                if !(row.is_empty() && field.is_empty() && !was_quoted) {
                    row.push(std::mem::take(&mut field));
                    rows.push(std::mem::take(&mut row));
                }
                was_quoted = false;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    if !(row.is_empty() && field.is_empty() && !was_quoted) {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

/// Go's `url.QueryEscape`: spaces become `+`, all but letters, digits and `-_.~` are escaped.
pub(super) fn urlencode(args: &[Value]) -> Result<Value, String> {
    let mut out = String::new();
    for b in text(args)?.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    Ok(out.into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn md5(args: &[Value]) -> Result<Value, String> {
    Ok(hex(&md5::Md5::digest(text(args)?)).into())
}

pub(super) fn sha1(args: &[Value]) -> Result<Value, String> {
    Ok(hex(&sha1::Sha1::digest(text(args)?)).into())
}

pub(super) fn sha256(args: &[Value]) -> Result<Value, String> {
    Ok(hex(&sha2::Sha256::digest(text(args)?)).into())
}

pub(super) fn sha512(args: &[Value]) -> Result<Value, String> {
    Ok(hex(&sha2::Sha512::digest(text(args)?)).into())
}

pub(super) fn base64sha256(args: &[Value]) -> Result<Value, String> {
    Ok(STANDARD.encode(sha2::Sha256::digest(text(args)?)).into())
}

pub(super) fn base64sha512(args: &[Value]) -> Result<Value, String> {
    Ok(STANDARD.encode(sha2::Sha512::digest(text(args)?)).into())
}

/// The hex and base64 digests of bytes, for the file functions.
pub(super) fn digests(bytes: &[u8], which: &str) -> String {
    match which {
        "md5" => hex(&md5::Md5::digest(bytes)),
        "sha1" => hex(&sha1::Sha1::digest(bytes)),
        "sha256" => hex(&sha2::Sha256::digest(bytes)),
        "sha512" => hex(&sha2::Sha512::digest(bytes)),
        "base64sha256" => STANDARD.encode(sha2::Sha256::digest(bytes)),
        _ => STANDARD.encode(sha2::Sha512::digest(bytes)),
    }
}

pub(super) fn uuid(_: &[Value]) -> Result<Value, String> {
    Ok(uuid::Uuid::new_v4().to_string().into())
}

/// A name-based (SHA-1) UUID in a namespace: `dns`, `url`, `oid`, `x500` or a UUID.
pub(super) fn uuidv5(args: &[Value]) -> Result<Value, String> {
    let namespace = match args[0].to_text()?.as_str() {
        "dns" => uuid::Uuid::from_u128(0x6ba7b810_9dad_11d1_80b4_00c04fd430c8),
        "url" => uuid::Uuid::from_u128(0x6ba7b811_9dad_11d1_80b4_00c04fd430c8),
        "oid" => uuid::Uuid::from_u128(0x6ba7b812_9dad_11d1_80b4_00c04fd430c8),
        "x500" => uuid::Uuid::from_u128(0x6ba7b814_9dad_11d1_80b4_00c04fd430c8),
        other => {
            uuid::Uuid::parse_str(other).map_err(|_| "the namespace must be dns, url, oid, x500 or a UUID")?
        }
    };
    let mut hasher = sha1::Sha1::new();
    hasher.update(namespace.as_bytes());
    hasher.update(args[1].to_text()?.as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&hasher.finalize()[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Ok(uuid::Uuid::from_bytes(bytes).to_string().into())
}
