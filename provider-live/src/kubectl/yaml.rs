//! YAML as the kubectl providers read and write it: one manifest from `yaml_body`, the documents of
//! a multi-document text, the selfLink-style path they name an object by, and JSON written back as
//! YAML. Reading follows go-yaml v2 (YAML 1.1: `yes`/`on`/`y` are booleans, `012` is octal, keys
//! printed as Go's `%v` does) and then Go's JSON round trip (integers past int64 become floats);
//! writing follows sigs.k8s.io/yaml (go-yaml v2's emitter: keys in its natural order, block style,
//! strings quoted only where a plain one would read back as something else, lines folded at 80).
//! Facts: reference/kubectl-providers.md §6.2, §7.1, §7.2.

mod emit;

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value as Json};

/// A text that is no manifest. Messages never quote the text: a rendered document may hold
/// sensitive values.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct YamlError(pub String);

/// The first document of `text` as a JSON object: a mapping with a `kind` (`apiVersion` may be
/// missing). Keys come out sorted, as Go's JSON writes a map.
pub fn parse_manifest(text: &str) -> Result<Json, YamlError> {
    let json = match first_document(text)? {
        Node::Null => Json::Object(Map::new()),
        node @ Node::Map(_) => to_json(node)?,
        other => return Err(not_a_mapping(&other)),
    };
    if json.get("kind").and_then(Json::as_str).is_none_or(str::is_empty) {
        return Err(YamlError("Object 'Kind' is missing".into()));
    }
    Ok(json)
}

/// The documents of `text`, each as its own raw text, trimmed. A line starting with `---` right
/// after a newline separates (the rest of that line is dropped); a part that is empty or only
/// comments is skipped; one that does not parse, or is not a mapping, is an error naming its
/// place (1 for the text before the first separator).
pub fn split_documents(text: &str) -> Result<Vec<String>, YamlError> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut part = 0;
    loop {
        let (piece, next) = match rest.find("\n---") {
            Some(i) => {
                let after = &rest[i + 4..];
                (&rest[..i], after.find('\n').map(|j| &after[j + 1..]))
            }
            None => (rest, None),
        };
        part += 1;
        let piece = piece.trim();
        let fail = |e: YamlError| YamlError(format!("document {part}: {e}"));
        match first_document(piece).map_err(fail)? {
            Node::Null => {}
            Node::Map(entries) if entries.is_empty() => {}
            Node::Map(_) => out.push(piece.to_string()),
            other => return Err(fail(not_a_mapping(&other))),
        }
        match next {
            Some(next) => rest = next,
            None => return Ok(out),
        }
    }
}

/// The path the kubectl providers name an object by (`/apis/apps/v1/namespaces/ns/deployments/x`):
/// `/api` for `v1`, else `/apis`, the apiVersion verbatim, the namespace when there is one, the
/// lowercase kind with a naive plural (`es` after an `s`, else `s`), the name. No defaulting.
pub fn self_link(manifest: &Json) -> String {
    let text = |p: &str| manifest.pointer(p).and_then(Json::as_str).unwrap_or_default();
    let api_version = text("/apiVersion");
    let kind = text("/kind").to_lowercase();
    let plural = if kind.ends_with('s') {
        format!("{kind}es")
    } else {
        format!("{kind}s")
    };
    let prefix = if api_version == "v1" { "api" } else { "apis" };
    let namespace = text("/metadata/namespace");
    let namespaced = if namespace.is_empty() { "" } else { "namespaces" };
    // Joined as a clean path: an empty part (no apiVersion, no name) leaves no `//`.
    let parts = [
        prefix,
        api_version,
        namespaced,
        namespace,
        &plural,
        text("/metadata/name"),
    ];
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .fold(String::new(), |path, part| format!("{path}/{part}"))
}

/// `value` as sigs.k8s.io/yaml writes it (what `kubectl` prints).
pub fn to_yaml(value: &Json) -> String {
    emit::document(value, emit::Flavour::GoYaml)
}

/// `value` as Terraform's `yamlencode` writes it: every string double-quoted (or a literal block
/// when it has line breaks), keys in the order given.
pub(super) fn yamlencode(value: &Json) -> String {
    emit::document(value, emit::Flavour::Cty)
}

/// A value as go-yaml v2 decodes it into `interface{}`, before the JSON round trip.
#[derive(Clone, Debug)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    /// A plain `<<` key: merge the mapping(s) it names.
    Merge,
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

/// How many nodes aliases may copy in one document: go-yaml stops "excessive aliasing" too.
const ALIAS_BUDGET: usize = 1_000_000;

fn not_a_mapping(node: &Node) -> YamlError {
    let what = match node {
        Node::Seq(_) => "a list",
        _ => "a single value",
    };
    YamlError(format!("the YAML document is {what}, not a mapping"))
}

/// The first document of `text` (`Null` when there is none); the rest is not read.
fn first_document(text: &str) -> Result<Node, YamlError> {
    let mut reader = Reader {
        events: Parser::new_from_str(text),
        anchors: HashMap::new(),
        budget: ALIAS_BUDGET,
    };
    loop {
        match reader.next()? {
            Event::StreamStart | Event::DocumentStart(_) => {}
            Event::StreamEnd | Event::DocumentEnd => return Ok(Node::Null),
            event => return reader.node(event),
        }
    }
}

struct Reader<'a> {
    events: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Each anchor's value and its size in nodes.
    anchors: HashMap<usize, (Node, usize)>,
    budget: usize,
}

impl<'a> Reader<'a> {
    fn next(&mut self) -> Result<Event<'a>, YamlError> {
        match self.events.next() {
            Some(Ok((event, _))) => Ok(event),
            Some(Err(e)) => Err(YamlError(format!(
                "invalid YAML: {} (line {}, column {})",
                e.info(),
                e.marker().line(),
                e.marker().col() + 1
            ))),
            None => Ok(Event::StreamEnd),
        }
    }

    fn node(&mut self, event: Event<'a>) -> Result<Node, YamlError> {
        let (node, anchor) = match event {
            Event::Alias(id) => {
                let (node, size) = self.anchors.get(&id).ok_or_else(|| {
                    YamlError(
                        "an alias names an anchor not defined before it, or one that contains it".into(),
                    )
                })?;
                self.budget = self
                    .budget
                    .checked_sub(*size)
                    .ok_or_else(|| YamlError("excessive aliasing".into()))?;
                return Ok(node.clone());
            }
            Event::Scalar(text, style, anchor, tag) => (scalar(&text, style, tag.as_deref())?, anchor),
            Event::SequenceStart(anchor, _) => {
                let mut items = Vec::new();
                loop {
                    match self.next()? {
                        Event::SequenceEnd => break,
                        event => items.push(self.node(event)?),
                    }
                }
                (Node::Seq(items), anchor)
            }
            Event::MappingStart(anchor, _) => {
                let mut entries = Vec::new();
                loop {
                    match self.next()? {
                        Event::MappingEnd => break,
                        event => {
                            let key = self.node(event)?;
                            let value = self.next()?;
                            entries.push((key, self.node(value)?));
                        }
                    }
                }
                (Node::Map(entries), anchor)
            }
            _ => return Err(YamlError("invalid YAML: unexpected end of a document".into())),
        };
        if anchor > 0 {
            self.anchors.insert(anchor, (node.clone(), size(&node)));
        }
        Ok(node)
    }
}

fn size(node: &Node) -> usize {
    match node {
        Node::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map(entries) => 1 + entries.iter().map(|(k, v)| size(k) + size(v)).sum::<usize>(),
        _ => 1,
    }
}

/// One scalar: plain ones are resolved as YAML 1.1, quoted and block ones are strings, and a
/// core-schema tag asks for its type.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Node, YamlError> {
    let plain = style == ScalarStyle::Plain;
    let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) else {
        // A local tag (`!foo`) is not resolvable: go-yaml keeps the text.
        return Ok(match (plain, tag) {
            (true, None) if text == "<<" => Node::Merge,
            (true, None) => resolve(text),
            _ => Node::Str(text.to_string()),
        });
    };
    let resolved = resolve(text);
    let wrong = || YamlError(format!("a value tagged !!{} is not one", tag.suffix));
    Ok(match (tag.suffix.as_str(), resolved) {
        ("str" | "timestamp", _) => Node::Str(text.to_string()),
        ("binary", _) => {
            use base64::Engine as _;
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map_err(|_| wrong())?;
            Node::Str(String::from_utf8_lossy(&bytes).into_owned())
        }
        ("int", n @ (Node::Int(_) | Node::Uint(_))) => n,
        ("float", Node::Int(i)) => Node::Float(i as f64),
        ("float", Node::Uint(u)) => Node::Float(u as f64),
        ("float", n @ Node::Float(_)) | ("bool", n @ Node::Bool(_)) | ("null", n @ Node::Null) => n,
        ("int" | "float" | "bool" | "null", _) => return Err(wrong()),
        (_, n) if plain => n,
        _ => Node::Str(text.to_string()),
    })
}

/// go-yaml v2's resolution of an untagged plain scalar.
fn resolve(s: &str) -> Node {
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Node::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Node::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Node::Null,
        ".nan" | ".NaN" | ".NAN" => Node::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Node::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Node::Float(f64::NEG_INFINITY),
        _ => match s.as_bytes()[0] {
            b'.' => decimal_float(s).map_or_else(|| Node::Str(s.into()), Node::Float),
            b'+' | b'-' | b'0'..=b'9' => {
                let digits = s.replace('_', "");
                if let Some(i) = go_int(&digits).and_then(|i| i64::try_from(i).ok()) {
                    Node::Int(i)
                } else if let Some(u) = go_int(&digits).filter(|_| !digits.starts_with(['+', '-'])) {
                    u64::try_from(u).map_or_else(|_| Node::Str(s.into()), Node::Uint)
                } else {
                    decimal_float(&digits).map_or_else(|| Node::Str(s.into()), Node::Float)
                }
            }
            _ => Node::Str(s.into()),
        },
    }
}

/// Go's `strconv.ParseInt(s, 0, ...)` before the range check: a sign, then `0x`, `0o`, `0b` or a
/// leading `0` (octal) or decimal digits.
fn go_int(s: &str) -> Option<i128> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = rest.to_ascii_lowercase();
    let (radix, digits) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ if lower.len() > 1 && lower.starts_with('0') => (8, &lower[1..]),
        _ => (10, lower.as_str()),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mut value: i128 = 0;
    for c in digits.chars() {
        value = value
            .checked_mul(i128::from(radix))?
            .checked_add(i128::from(c.to_digit(radix)?))?;
        if value > i128::from(u64::MAX) {
            return None;
        }
    }
    Some(if negative { -value } else { value })
}

/// go-yaml's float syntax (`[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`), finite only.
fn decimal_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return None;
        }
    } else {
        if digits(&mut i) == 0 {
            return None;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return None;
        }
    }
    (i == b.len())
        .then(|| s.parse::<f64>().ok())
        .flatten()
        .filter(|f| f.is_finite())
}

/// The JSON Go's round trip makes of a decoded value: keys printed with `%v`, numbers through
/// `encoding/json` and back (whole floats become integers, integers past int64 floats).
fn to_json(node: Node) -> Result<Json, YamlError> {
    Ok(match node {
        Node::Null => Json::Null,
        Node::Bool(b) => Json::Bool(b),
        Node::Int(i) => Json::from(i),
        Node::Uint(u) => i64::try_from(u).map_or_else(|_| float(u as f64), Json::from),
        Node::Float(f) if !f.is_finite() => {
            return Err(YamlError(
                "a number is .inf or .nan, which JSON cannot hold".into(),
            ));
        }
        Node::Float(f) => float(f),
        Node::Str(s) => Json::String(s),
        Node::Merge => Json::String("<<".into()),
        Node::Seq(items) => Json::Array(items.into_iter().map(to_json).collect::<Result<_, _>>()?),
        Node::Map(entries) => {
            let mut out = std::collections::BTreeMap::new();
            for (key, value) in entries {
                if matches!(key, Node::Merge) {
                    merge(&mut out, value)?;
                } else {
                    out.insert(key_text(&key)?, to_json(value)?);
                }
            }
            Json::Object(out.into_iter().collect())
        }
    })
}

/// A float as Go's JSON round trip leaves it: a whole one below 1e21 within int64 is an integer.
fn float(f: f64) -> Json {
    if f.fract() == 0.0 && f.abs() < 1e21 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
        Json::from(f as i64)
    } else {
        Number::from_f64(f).map_or(Json::Null, Json::Number)
    }
}

/// `<<: *a` or `<<: [*a, *b]`: go-yaml v2 sets the merged keys as they come (overriding keys
/// before it), the first of a list winning.
fn merge(out: &mut std::collections::BTreeMap<String, Json>, value: Node) -> Result<(), YamlError> {
    let maps = match value {
        Node::Seq(items) => items.into_iter().rev().collect(),
        other => vec![other],
    };
    for map in maps {
        if !matches!(map, Node::Map(_)) {
            return Err(YamlError(
                "map merge requires a mapping or a list of mappings".into(),
            ));
        }
        if let Json::Object(entries) = to_json(map)? {
            out.extend(entries);
        }
    }
    Ok(())
}

/// A key as Go's `fmt.Sprintf("%v")` prints the decoded value.
fn key_text(key: &Node) -> Result<String, YamlError> {
    Ok(match key {
        Node::Null => "<nil>".into(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Uint(u) => u.to_string(),
        Node::Float(f) => go_float_g(*f),
        Node::Str(s) => s.clone(),
        Node::Merge => "<<".into(),
        Node::Seq(_) | Node::Map(_) => return Err(YamlError("a mapping key is a list or a mapping".into())),
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` (also what `%v` prints): the shortest digits, in
/// exponent form below 1e-4 and from 1e6 on (`1.2345675e+06`).
pub(super) fn go_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or_default();
    if (-4..6).contains(&exponent) {
        return f.to_string();
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests;
