//! Label and field selectors as the apiserver parses and evaluates them.
//!
//! The label grammar and its error messages follow apimachinery's `labels.Parse` so a bad
//! `labelSelector` query yields the same 400 message as a real server; field selectors follow
//! `fields.ParseSelector` plus the per-kind list of selectable fields.

use serde_json::{Map, Value};

/// A parsed label selector: every requirement must hold (comma means AND).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Operator,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Equals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

impl LabelSelector {
    /// True when the selector has no requirements.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Parses the query-string form, e.g. `app=web,tier notin (x),!legacy`.
    pub fn parse(s: &str) -> Result<LabelSelector, String> {
        let tokens = lex(s)?;
        let mut parser = Parser { tokens, pos: 0 };
        let mut requirements = parser.parse()?;
        // apimachinery sorts requirements by key; evaluation does not care, equality does.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Builds a selector from a `metav1.LabelSelector` object (`matchLabels` and
    /// `matchExpressions`), as used by Deployments, NetworkPolicies and ClusterRole aggregation.
    /// `null` or `{}` selects everything.
    pub fn from_label_selector(selector: &Value) -> Result<LabelSelector, String> {
        let mut requirements = Vec::new();
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (key, value) in labels {
                let value = value
                    .as_str()
                    .ok_or_else(|| format!("matchLabels[{key}] must be a string"))?;
                requirements.push(Requirement {
                    key: key.clone(),
                    op: Operator::Equals,
                    values: vec![value.to_string()],
                });
            }
        }
        if let Some(expressions) = selector.get("matchExpressions").and_then(Value::as_array) {
            for expression in expressions {
                let key = expression.get("key").and_then(Value::as_str).unwrap_or_default();
                let operator = expression
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let values: Vec<String> = expression
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                let op = match operator {
                    "In" => Operator::In,
                    "NotIn" => Operator::NotIn,
                    "Exists" => Operator::Exists,
                    "DoesNotExist" => Operator::DoesNotExist,
                    other => return Err(format!("{other:?} is not a valid label selector operator")),
                };
                requirements.push(Requirement {
                    key: key.to_string(),
                    op,
                    values,
                });
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Evaluates the selector against an object's `metadata.labels`.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Evaluates the selector against a whole object (missing labels count as none).
    pub fn matches_object(&self, object: &Value) -> bool {
        let empty = Map::new();
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        self.matches(labels)
    }
}

impl Requirement {
    fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.get(&self.key).and_then(Value::as_str);
        let in_values = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Operator::Equals | Operator::In => value.is_some_and(in_values),
            Operator::NotEquals | Operator::NotIn => !value.is_some_and(in_values),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(have), Some(bound)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    have > bound
                } else {
                    have < bound
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Identifier(String),
    In,
    NotIn,
    Equals,
    DoubleEquals,
    NotEquals,
    Bang,
    GreaterThan,
    LessThan,
    OpenParen,
    CloseParen,
    Comma,
    End,
}

impl Token {
    /// The literal text apimachinery prints in "found '...'" messages.
    fn literal(&self) -> &str {
        match self {
            Token::Identifier(s) => s,
            Token::In => "in",
            Token::NotIn => "notin",
            Token::Equals => "=",
            Token::DoubleEquals => "==",
            Token::NotEquals => "!=",
            Token::Bang => "!",
            Token::GreaterThan => "gt",
            Token::LessThan => "lt",
            Token::OpenParen => "(",
            Token::CloseParen => ")",
            Token::Comma => ",",
            Token::End => "",
        }
    }
}

const SPECIAL: &[char] = &['=', '!', '(', ')', ',', '>', '<'];

fn symbol(s: &str) -> Option<Token> {
    Some(match s {
        "=" => Token::Equals,
        "==" => Token::DoubleEquals,
        "!=" => Token::NotEquals,
        "!" => Token::Bang,
        "(" => Token::OpenParen,
        ")" => Token::CloseParen,
        "," => Token::Comma,
        ">" => Token::GreaterThan,
        "<" => Token::LessThan,
        _ => return None,
    })
}

fn lex(s: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if SPECIAL.contains(&c) {
            // Longest run of special characters that still forms a known operator.
            let mut buffer = String::new();
            let mut last = None;
            while i < chars.len() && SPECIAL.contains(&chars[i]) {
                buffer.push(chars[i]);
                match symbol(&buffer) {
                    Some(t) => {
                        last = Some(t);
                        i += 1;
                    }
                    None if last.is_some() => break,
                    None => i += 1,
                }
            }
            match last {
                Some(t) => tokens.push(t),
                None => return Err(format!("error expected: keyword found '{buffer}'")),
            }
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !SPECIAL.contains(&chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(match word.as_str() {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Identifier(word),
            });
        }
    }
    tokens.push(Token::End);
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

/// Where the parser reads: in value position the keywords `in`/`notin` are plain identifiers.
#[derive(PartialEq)]
enum Context {
    KeyAndOperator,
    Values,
}

impl Parser {
    fn lookahead(&self, ctx: Context) -> Token {
        let t = self.tokens[self.pos].clone();
        match (ctx, &t) {
            (Context::Values, Token::In | Token::NotIn) => Token::Identifier(t.literal().to_string()),
            _ => t,
        }
    }

    fn consume(&mut self, ctx: Context) -> Token {
        let t = self.lookahead(ctx);
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.lookahead(Context::Values) {
                Token::Identifier(_) | Token::Bang => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    match self.consume(Context::Values) {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let next = self.lookahead(Context::Values);
                            if !matches!(next, Token::Identifier(_) | Token::Bang) {
                                return Err(format!(
                                    "found '{}', expected: identifier after ','",
                                    next.literal()
                                ));
                            }
                        }
                        other => {
                            return Err(format!(
                                "found '{}', expected: ',' or 'end of string'",
                                other.literal()
                            ));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                other => {
                    return Err(format!(
                        "found '{}', expected: !, identifier, or 'end of string'",
                        other.literal()
                    ));
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let mut tok = self.consume(Context::Values);
        let negated = tok == Token::Bang;
        if negated {
            tok = self.consume(Context::Values);
        }
        let Token::Identifier(key) = tok else {
            return Err(format!("found '{}', expected: identifier", tok.literal()));
        };
        if let Some(msg) = crate::names::qualified_name_errors(&key).into_iter().next() {
            return Err(format!("key: Invalid value: {key:?}: {msg}"));
        }
        let next = self.lookahead(Context::Values);
        if negated || matches!(next, Token::End | Token::Comma) {
            let op = if negated {
                Operator::DoesNotExist
            } else {
                Operator::Exists
            };
            return Ok(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let op = match self.consume(Context::KeyAndOperator) {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::NotEquals => Operator::NotEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            other => {
                return Err(format!(
                    "found '{}', expected: in, notin, =, ==, !=, gt, lt",
                    other.literal()
                ));
            }
        };
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        for value in &values {
            if let Some(msg) = crate::names::label_value_errors(value).into_iter().next() {
                return Err(format!("values[0][{key}]: Invalid value: {value:?}: {msg}"));
            }
        }
        if matches!(op, Operator::GreaterThan | Operator::LessThan)
            && values.first().and_then(|v| v.parse::<i64>().ok()).is_none()
        {
            return Err(format!(
                "values: Invalid value: {:?}: for 'Gt', 'Lt' operators, the value must be an integer",
                values.first().cloned().unwrap_or_default()
            ));
        }
        Ok(Requirement { key, op, values })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let tok = self.consume(Context::Values);
        if tok != Token::OpenParen {
            return Err(format!("found '{}' expected: '('", tok.literal()));
        }
        match self.lookahead(Context::Values) {
            Token::Identifier(_) | Token::Comma => {
                let values = self.parse_identifier_list()?;
                let close = self.consume(Context::Values);
                if close != Token::CloseParen {
                    return Err(format!("found '{}', expected: ')'", close.literal()));
                }
                Ok(values)
            }
            Token::CloseParen => {
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            other => Err(format!(
                "found '{}', expected: ',', ')' or identifier",
                other.literal()
            )),
        }
    }

    fn parse_identifier_list(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        let insert = |values: &mut Vec<String>, v: String| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        loop {
            match self.consume(Context::Values) {
                Token::Identifier(v) => {
                    insert(&mut values, v);
                    match self.lookahead(Context::Values) {
                        Token::Comma => continue,
                        Token::CloseParen => break,
                        other => return Err(format!("found '{}', expected: ',' or ')'", other.literal())),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        insert(&mut values, String::new());
                    }
                    match self.lookahead(Context::Values) {
                        Token::CloseParen => {
                            insert(&mut values, String::new());
                            break;
                        }
                        Token::Comma => {
                            self.consume(Context::Values);
                            insert(&mut values, String::new());
                        }
                        _ => {}
                    }
                }
                other => {
                    return Err(format!(
                        "found '{}', expected: ',', or identifier",
                        other.literal()
                    ));
                }
            }
        }
        values.sort();
        Ok(values)
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        if matches!(self.lookahead(Context::Values), Token::End | Token::Comma) {
            return Ok(vec![String::new()]);
        }
        match self.consume(Context::Values) {
            Token::Identifier(v) => Ok(vec![v]),
            other => Err(format!("found '{}', expected: identifier", other.literal())),
        }
    }
}

/// A parsed field selector: every term must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    terms: Vec<FieldTerm>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    value: String,
    equal: bool,
}

/// The fields every kind may be selected on.
const META_FIELDS: &[&str] = &["metadata.name", "metadata.namespace"];

impl FieldSelector {
    /// Parses a selector for `kind`, accepting that kind's extra selectable fields (Secret
    /// `type`, Namespace `status.phase`, ...) with the apiserver's error for unknown ones.
    pub fn parse_for_kind(s: &str, kind: &str) -> Result<FieldSelector, String> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let (field, op, value) = split_term(part)
                .ok_or_else(|| format!("invalid selector: '{s}'; can't understand '{part}'"))?;
            check_selectable(kind, field)?;
            terms.push(FieldTerm {
                field: field.to_string(),
                value: unescape(value)?,
                equal: op != "!=",
            });
        }
        Ok(FieldSelector { terms })
    }

    /// True when the selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Evaluates the selector; a missing field reads as the empty string.
    pub fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|t| {
            let pointer = format!("/{}", t.field.replace('.', "/"));
            let actual = match object.pointer(&pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => String::new(),
            };
            (actual == t.value) == t.equal
        })
    }
}

/// The selectable fields beyond metadata, per kind (upstream's field label conversion funcs).
fn extra_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "Secret" => &["type"],
        "Namespace" => &["status.phase"],
        "Service" => &["spec.clusterIP", "spec.type"],
        "Pod" => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        "ReplicationController" => &["status.replicas"],
        "Job" => &["status.successful"],
        "CertificateSigningRequest" => &["spec.signerName"],
        "Event" => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        _ => return None,
    })
}

fn check_selectable(kind: &str, field: &str) -> Result<(), String> {
    match extra_fields(kind) {
        // Kinds with their own conversion func answer with its terse message.
        Some(extra) if META_FIELDS.contains(&field) || extra.contains(&field) => Ok(()),
        Some(_) if kind == "Job" => Err(format!("field label {field:?} not supported for Job")),
        Some(_) => Err(format!("field label not supported: {field}")),
        None if META_FIELDS.contains(&field) => Ok(()),
        None => Err(format!(
            "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        )),
    }
}

/// Splits on commas that are not escaped with a backslash.
fn split_terms(s: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            current.push(c);
            escaped = true;
        } else if c == ',' {
            terms.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    terms.push(current);
    terms
}

fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        for op in ["!=", "==", "="] {
            if term[i..].starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => return Err(format!("invalid field selector: invalid escape sequence: \\{e}")),
                None => return Err("invalid field selector: invalid escape sequence: \\".to_string()),
            },
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {c}"
                ));
            }
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Loading the recorded transcripts in `acceptance/kube-golden/` (the in-repo copy; `make golden`
/// refreshes it), shared by this crate's unit tests.
#[cfg(test)]
pub(crate) mod golden {
    use serde_json::Value;

    /// Parses one transcript file.
    pub(crate) fn golden(file: &str) -> Value {
        let path = format!("{}/../acceptance/kube-golden/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    /// Step `index` of a transcript file.
    pub(crate) fn step(file: &str, index: usize) -> Value {
        golden(file)["steps"][index].clone()
    }

    /// A query parameter of a recorded path, percent-decoded the way Go encodes it.
    pub(crate) fn query_param(path: &str, name: &str) -> Option<String> {
        let query = path.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| percent_decode(v))
        })
    }

    fn percent_decode(s: &str) -> String {
        let bytes = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                    i += 2;
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8(out).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::golden::{golden, query_param};
    use super::*;
    use serde_json::json;

    fn names(selector: &LabelSelector, fields: &FieldSelector, items: &[Value]) -> Vec<String> {
        items
            .iter()
            .filter(|o| selector.matches_object(o) && fields.matches(o))
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// Replays 05-list: the objects of the namespace are the created ConfigMaps plus the
    /// controller-made kube-root-ca.crt; each selector step must return the recorded names.
    #[test]
    fn list_selectors_match_transcript() {
        let file = golden("05-list.json");
        let steps = file["steps"].as_array().unwrap();
        let mut objects: Vec<Value> = steps[1..=5]
            .iter()
            .map(|s| s["response"]["body"].clone())
            .collect();
        objects.push(
            steps[7]["response"]["body"]["items"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()
                .clone(),
        );
        let mut checked = 0;
        for step in steps {
            let path = step["path"].as_str().unwrap();
            if step["method"] != "GET" || !path.contains("Selector") || path.contains("limit") {
                continue;
            }
            let label = query_param(path, "labelSelector").unwrap_or_default();
            let field = query_param(path, "fieldSelector").unwrap_or_default();
            let response = &step["response"];
            let parsed = LabelSelector::parse(&label)
                .and_then(|l| FieldSelector::parse_for_kind(&field, "").map(|f| (l, f)));
            if response["status"] == 400 {
                assert_eq!(
                    parsed.unwrap_err(),
                    response["body"]["message"].as_str().unwrap(),
                    "{path}"
                );
            } else {
                let (l, f) = parsed.unwrap();
                let expected: Vec<String> = response["body"]["items"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                    .collect();
                assert_eq!(names(&l, &f, &objects), expected, "{path}");
            }
            checked += 1;
        }
        assert_eq!(checked, 12);
    }

    #[test]
    fn label_selector_grammar_and_errors() {
        let labels = json!({"a": "1", "b": "x"});
        let labels = labels.as_object().unwrap();
        for (selector, expected) in [
            ("a==1", true),
            ("a = 1 , b in (x, y)", true),
            ("a notin (1)", false),
            ("c notin (1)", true),
            ("!c", true),
            ("!a", false),
            ("a>0", true),
            ("a<1", false),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(selector).unwrap().matches(labels),
                expected,
                "{selector}"
            );
        }
        for (selector, message) in [
            (
                "a in (x",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
            ),
            ("a=1,", "found '', expected: identifier after ','"),
            ("a=1 b", "found 'b', expected: ',' or 'end of string'"),
            ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        ] {
            assert_eq!(LabelSelector::parse(selector).unwrap_err(), message, "{selector}");
        }
        assert!(LabelSelector::parse("a=not valid!").is_err());
    }

    #[test]
    fn label_selector_from_object() {
        let s = LabelSelector::from_label_selector(&json!({
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]
        }))
        .unwrap();
        assert!(s.matches(json!({"app": "web"}).as_object().unwrap()));
        assert!(!s.matches(json!({"app": "web", "tier": "db"}).as_object().unwrap()));
        assert!(
            LabelSelector::from_label_selector(&Value::Null)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn field_selectors_per_kind() {
        let secret = json!({"metadata": {"name": "s", "namespace": "n"}, "type": "Opaque"});
        assert!(
            FieldSelector::parse_for_kind("type=Opaque,metadata.name==s", "Secret")
                .unwrap()
                .matches(&secret)
        );
        assert!(
            !FieldSelector::parse_for_kind("type!=Opaque", "Secret")
                .unwrap()
                .matches(&secret)
        );
        assert_eq!(
            FieldSelector::parse_for_kind("data.x=1", "Secret").unwrap_err(),
            "field label not supported: data.x"
        );
        assert_eq!(
            FieldSelector::parse_for_kind("name", "").unwrap_err(),
            "invalid selector: 'name'; can't understand 'name'"
        );
        assert!(
            FieldSelector::parse_for_kind("metadata.name=a\\,b", "")
                .unwrap()
                .matches(&json!({"metadata": {"name": "a,b"}}))
        );
    }
}
