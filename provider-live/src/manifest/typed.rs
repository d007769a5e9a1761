//! A manifest's values in the types the API's OpenAPI schema gives their paths, as
//! hashicorp/kubernetes converts them before it applies: HCL writes `"80"` and `80` alike, and
//! server-side apply refuses a string where the schema says integer ("failed to create typed
//! patch object").
//!
//! - a string where the schema says integer or number becomes the number it reads as (`"80"`);
//!   one that reads as none (`"eighty"`), or a fraction for an integer, is refused;
//! - a string where it says boolean: Go's `strconv.ParseBool` spellings (`"true"`, `"1"`, `"F"`…);
//! - a number or a boolean where it says string becomes its text (`1` → `"1"`);
//! - an int-or-string field (`targetPort`, `maxSurge`) takes an integer-looking value as an
//!   integer and anything else as a string (`"8080"` → `8080`, `"25%"` stays);
//! - a field the schema leaves open (`x-kubernetes-preserve-unknown-fields`, free-form
//!   objects) and a field it does not declare are sent as written (the server judges those).
//!
//! The state keeps `manifest` as written (Terraform requires a configured attribute planned as
//! configured); `object`, read back from the server, holds the typed values, which the plan
//! compares with the converted manifest, so the next plan is empty. In `object` an
//! int-or-string value is its text ([`stated`]): hashicorp's state types such a path `string`
//! (`targetPort = 9080` is held as `"9080"`), so a moved state and an output reading it keep
//! their type.

use plugin_runtime::{AttributePath, Diagnostic};
use serde_json::{Map, Number, Value as Json};

use super::Step;
use crate::openapi::Node;

/// A value that does not read as the type its path has.
#[derive(Debug, PartialEq)]
pub struct Mismatch {
    pub path: Vec<Step>,
    pub value: Json,
    /// What the schema wants, as a phrase: "an integer".
    pub expected: &'static str,
}

impl Mismatch {
    /// The error at `manifest.<path>`, for a kind named `what` (`networking.k8s.io/v1 Ingress`).
    pub fn diagnostic(&self, what: &str) -> Diagnostic {
        let path = self
            .path
            .iter()
            .fold(AttributePath::root("manifest"), |p, step| match step {
                Step::Key(k) => p.attribute(k),
                Step::Index(i) => p.index(*i as i64),
            });
        Diagnostic::error(
            "Manifest value does not fit the resource's schema",
            format!(
                "{path}: the API's schema of {what} wants {} here, and {} is not one.",
                self.expected, self.value
            ),
        )
        .at(path)
    }
}

/// `value` (a manifest, or a part of one at `node`) with its values in their schema's types,
/// or every value that cannot be converted.
pub fn conform(value: &Json, node: Node) -> Result<Json, Vec<Mismatch>> {
    let mut mismatches = Vec::new();
    let out = conform_at(value, Some(node), &mut Vec::new(), &mut mismatches);
    if mismatches.is_empty() {
        Ok(out)
    } else {
        Err(mismatches)
    }
}

fn conform_at(value: &Json, node: Option<Node>, path: &mut Vec<Step>, out: &mut Vec<Mismatch>) -> Json {
    let Some(node) = node else {
        return value.clone();
    };
    if value.is_null() {
        return Json::Null;
    }
    if node.int_or_string() {
        return int_or_string(value);
    }
    let converted = match (node.ty(), value) {
        (_, Json::Object(map)) if matches!(node.ty(), None | Some("object")) => {
            let mut converted = Map::new();
            for (key, v) in map {
                path.push(Step::Key(key.clone()));
                let at = node.property(key).or_else(|| node.values());
                converted.insert(key.clone(), conform_at(v, at, path, out));
                path.pop();
            }
            Some(Json::Object(converted))
        }
        (_, Json::Array(items)) if matches!(node.ty(), None | Some("array")) => {
            let item = node.items();
            let converted = items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    path.push(Step::Index(i));
                    let c = conform_at(v, item, path, out);
                    path.pop();
                    c
                })
                .collect();
            Some(Json::Array(converted))
        }
        (None, _) => Some(value.clone()),
        (Some("string"), Json::String(_)) => Some(value.clone()),
        (Some("string"), Json::Number(n)) => Some(Json::String(number_text(n))),
        (Some("string"), Json::Bool(b)) => Some(Json::String(b.to_string())),
        (Some("integer"), v) => integer(v),
        (Some("number"), v) => number(v),
        (Some("boolean"), Json::Bool(_)) => Some(value.clone()),
        (Some("boolean"), Json::String(s)) => parse_bool(s).map(Json::Bool),
        (Some("string" | "boolean" | "object" | "array"), _) => None,
        // A type this conversion does not know: the server judges.
        (Some(_), _) => Some(value.clone()),
    };
    converted.unwrap_or_else(|| {
        out.push(Mismatch {
            path: path.clone(),
            value: value.clone(),
            expected: expected(node.ty()),
        });
        value.clone()
    })
}

/// `value` (a live object through the manifest's shape, or a typed manifest) as `object` holds
/// it: every int-or-string value at `node`'s paths as its text, everything else unchanged.
pub fn stated(value: &Json, node: Node) -> Json {
    if node.int_or_string() {
        return match value {
            Json::Number(n) => Json::String(number_text(n)),
            other => other.clone(),
        };
    }
    match value {
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(key, v)| {
                    let at = node.property(key).or_else(|| node.values());
                    (key.clone(), at.map_or_else(|| v.clone(), |at| stated(v, at)))
                })
                .collect(),
        ),
        Json::Array(items) => match node.items() {
            Some(item) => Json::Array(items.iter().map(|v| stated(v, item)).collect()),
            None => value.clone(),
        },
        other => other.clone(),
    }
}

fn expected(ty: Option<&str>) -> &'static str {
    match ty {
        Some("string") => "a string",
        Some("integer") => "an integer",
        Some("number") => "a number",
        Some("boolean") => "a boolean (true or false)",
        Some("array") => "a list",
        _ => "an object",
    }
}

/// hashicorp's rule: a string that reads as an integer (Go's `strconv.Atoi`) is an integer;
/// any other value is its text.
fn int_or_string(value: &Json) -> Json {
    match value {
        Json::String(s) => s.parse::<i64>().map(Json::from).unwrap_or_else(|_| value.clone()),
        Json::Number(n) => match whole(n) {
            Some(i) => Json::from(i),
            None => Json::String(number_text(n)),
        },
        Json::Bool(b) => Json::String(b.to_string()),
        other => other.clone(),
    }
}

/// A number whose value is whole, as an integer (`3.0` from HCL arithmetic too).
fn whole(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| {
        let f = n.as_f64()?;
        (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
    })
}

/// A string as a number the way Go's `strconv.ParseFloat` reads it; finite only (JSON has no
/// infinity).
fn parse_number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

fn integer(value: &Json) -> Option<Json> {
    let n = match value {
        Json::Number(n) => n.clone(),
        Json::String(s) => Number::from_f64(parse_number(s)?)?,
        _ => return None,
    };
    whole(&n).map(Json::from)
}

fn number(value: &Json) -> Option<Json> {
    match value {
        Json::Number(_) => Some(value.clone()),
        Json::String(s) => {
            let f = parse_number(s)?;
            let n = Number::from_f64(f)?;
            Some(whole(&n).map(Json::from).unwrap_or(Json::Number(n)))
        }
        _ => None,
    }
}

/// Go's `strconv.ParseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// A number as text: whole numbers without a fraction (`3`, not `3.0`).
fn number_text(n: &Number) -> String {
    match whole(n) {
        Some(i) => i.to_string(),
        None => n.as_f64().map(|f| f.to_string()).unwrap_or_else(|| n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::KindSchema;
    use serde_json::json;

    /// An Ingress-like schema in the v3 document's form (`allOf` references, int-or-string,
    /// free-form and preserved fields).
    fn schema() -> KindSchema {
        KindSchema::of(
            json!({
                "Kind": {"type": "object", "properties": {
                    "metadata": {"allOf": [{"$ref": "#/components/schemas/Meta"}], "default": {}},
                    "data": {"type": "object", "additionalProperties": {"type": "string"}},
                    "spec": {"allOf": [{"$ref": "#/components/schemas/Spec"}]},
                }},
                "Meta": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                }},
                "Spec": {"type": "object", "properties": {
                    "rules": {"type": "array", "items": {"$ref": "#/components/schemas/Rule"}},
                    "replicas": {"type": "integer"},
                    "ratio": {"type": "number"},
                    "paused": {"type": "boolean"},
                    "target": {"$ref": "#/components/schemas/IntOrString"},
                    "surge": {"x-kubernetes-int-or-string": true,
                              "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }},
                "Rule": {"type": "object", "properties": {
                    "port": {"type": "object", "properties": {"number": {"type": "integer"}}},
                }},
                "IntOrString": {"format": "int-or-string",
                                "oneOf": [{"type": "integer"}, {"type": "string"}]},
            }),
            "Kind",
        )
    }

    fn run(value: Json) -> Result<Json, Vec<Mismatch>> {
        let schema = schema();
        conform(&value, schema.root())
    }

    #[test]
    fn strings_become_the_numbers_and_booleans_the_schema_wants() {
        let out = run(json!({"spec": {
            "rules": [{"port": {"number": "80"}}, {"port": {"number": 443}}],
            "replicas": "3", "ratio": "0.5", "paused": "true",
        }}))
        .unwrap();
        assert_eq!(
            out,
            json!({"spec": {
                "rules": [{"port": {"number": 80}}, {"port": {"number": 443}}],
                "replicas": 3, "ratio": 0.5, "paused": true,
            }})
        );
        // Go's ParseBool spellings, and whole numbers from arithmetic.
        let out = run(json!({"spec": {"paused": "F", "replicas": 3.0, "ratio": "2"}})).unwrap();
        assert_eq!(out, json!({"spec": {"paused": false, "replicas": 3, "ratio": 2}}));
    }

    #[test]
    fn numbers_and_booleans_become_strings_where_the_schema_says_string() {
        let out = run(json!({"metadata": {"name": "x", "labels": {"tier": 1}},
            "data": {"a": 1, "b": 1.5, "c": true, "d": "as is"}}))
        .unwrap();
        assert_eq!(
            out,
            json!({"metadata": {"name": "x", "labels": {"tier": "1"}},
            "data": {"a": "1", "b": "1.5", "c": "true", "d": "as is"}})
        );
    }

    #[test]
    fn int_or_string_takes_integer_looking_values_as_integers() {
        let out = run(json!({"spec": {"target": "8080", "surge": "25%"}})).unwrap();
        assert_eq!(out, json!({"spec": {"target": 8080, "surge": "25%"}}));
        let out = run(json!({"spec": {"target": 8080, "surge": 1}})).unwrap();
        assert_eq!(out, json!({"spec": {"target": 8080, "surge": 1}}));
        let out = run(json!({"spec": {"target": "http"}})).unwrap();
        assert_eq!(out, json!({"spec": {"target": "http"}}));
    }

    #[test]
    fn state_holds_int_or_string_values_as_their_text() {
        let schema = schema();
        let sent = run(json!({"spec": {"target": 9080, "surge": "25%", "replicas": 2,
            "rules": [{"port": {"number": 80}}]}}))
        .unwrap();
        assert_eq!(
            stated(&sent, schema.root()),
            json!({"spec": {"target": "9080", "surge": "25%", "replicas": 2,
                "rules": [{"port": {"number": 80}}]}})
        );
    }

    #[test]
    fn open_and_undeclared_fields_are_sent_as_written() {
        let value = json!({"spec": {"free": {"n": "1", "deep": {"x": [1, "2"]}}, "zzz": "7"},
            "status": {"q": "1"}});
        assert_eq!(run(value.clone()).unwrap(), value);
    }

    #[test]
    fn values_that_read_as_nothing_are_refused_with_their_paths() {
        let errors = run(json!({"spec": {
            "rules": [{"port": {"number": "80"}}, {"port": {"number": "eighty"}}],
            "replicas": 1.5, "paused": "yes", "ratio": "NaN",
        }, "data": {"list": ["a"]}}))
        .unwrap_err();
        let mut found: Vec<String> = errors
            .iter()
            .map(|m| m.diagnostic("networking.k8s.io/v1 Ingress").detail)
            .collect();
        found.sort();
        assert_eq!(
            found,
            [
                "manifest.data.list: the API's schema of networking.k8s.io/v1 Ingress wants a string \
                 here, and [\"a\"] is not one.",
                "manifest.spec.paused: the API's schema of networking.k8s.io/v1 Ingress wants a boolean \
                 (true or false) here, and \"yes\" is not one.",
                "manifest.spec.ratio: the API's schema of networking.k8s.io/v1 Ingress wants a number \
                 here, and \"NaN\" is not one.",
                "manifest.spec.replicas: the API's schema of networking.k8s.io/v1 Ingress wants an \
                 integer here, and 1.5 is not one.",
                "manifest.spec.rules[1].port.number: the API's schema of networking.k8s.io/v1 Ingress \
                 wants an integer here, and \"eighty\" is not one.",
            ]
        );
        assert_eq!(
            errors[0].diagnostic("x").attribute.unwrap().to_string(),
            "manifest.spec.rules[1].port.number"
        );
    }
}
