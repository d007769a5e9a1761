//! What a `kubectl_manifest` waits for after its write: `wait_for_rollout` (a Deployment,
//! StatefulSet or DaemonSet rolled out, judged as this provider's typed resources judge it;
//! an APIService available) and `wait_for` (status conditions and field values, all holding on
//! one observed state of the object).

use plugin_runtime::{AttributePath, Diagnostic, Value};
use regex::Regex;
use serde_json::Value as Json;

use crate::objects::Readiness;

/// A `wait_for` that can never be met as written.
#[derive(Debug, thiserror::Error)]
pub enum WaitForError {
    #[error("at least one of `field` or `condition` must be provided in `wait_for` block")]
    Empty,
    #[error("{value:?} is not a regular expression: {reason}")]
    Regex {
        index: usize,
        value: String,
        reason: String,
    },
    #[error("value_type must be \"eq\" or \"regex\", not {0:?}")]
    ValueType(String, usize),
}

impl From<WaitForError> for Diagnostic {
    fn from(e: WaitForError) -> Diagnostic {
        let block = AttributePath::root("wait_for").index(0);
        let at = match &e {
            WaitForError::Empty => block,
            WaitForError::Regex { index, .. } => {
                block.attribute("field").index(*index as i64).attribute("value")
            }
            WaitForError::ValueType(_, index) => block
                .attribute("field")
                .index(*index as i64)
                .attribute("value_type"),
        };
        Diagnostic::error("Invalid wait_for", e.to_string()).at(at)
    }
}

enum Wanted {
    Eq(String),
    Regex(Regex),
}

/// The `wait_for` block.
pub struct WaitFor {
    conditions: Vec<(String, String)>,
    fields: Vec<(String, Wanted)>,
}

impl WaitFor {
    /// The first `wait_for` block of a resource value (`None` without one; unknown values are
    /// checked at apply).
    pub fn of(value: &Value) -> Result<Option<WaitFor>, WaitForError> {
        WaitFor::parse(value, false)
    }

    /// [`WaitFor::of`] for a read (alekc's data source and ephemeral resource), where an empty
    /// block means "until the object exists".
    pub fn of_read(value: &Value) -> Result<Option<WaitFor>, WaitForError> {
        WaitFor::parse(value, true)
    }

    fn parse(value: &Value, empty_allowed: bool) -> Result<Option<WaitFor>, WaitForError> {
        let Some(block) = value.get("wait_for").elements().first() else {
            return Ok(None);
        };
        let conditions: Vec<(String, String)> = block
            .get("condition")
            .elements()
            .iter()
            .filter_map(|c| {
                Some((
                    c.get("type").as_str()?.to_string(),
                    c.get("status").as_str()?.to_string(),
                ))
            })
            .collect();
        let mut fields = Vec::new();
        for (index, f) in block.get("field").elements().iter().enumerate() {
            let (Some(key), Some(value)) = (f.get("key").as_str(), f.get("value").as_str()) else {
                continue;
            };
            let wanted = match f.get("value_type").as_str().unwrap_or("eq") {
                "eq" => Wanted::Eq(value.to_string()),
                "regex" => Wanted::Regex(Regex::new(value).map_err(|e| WaitForError::Regex {
                    index,
                    value: value.to_string(),
                    reason: e.to_string(),
                })?),
                other => return Err(WaitForError::ValueType(other.to_string(), index)),
            };
            fields.push((key.to_string(), wanted));
        }
        let written = block.get("condition").elements().len() + block.get("field").elements().len();
        if written == 0 && !empty_allowed {
            return Err(WaitForError::Empty);
        }
        Ok(Some(WaitFor { conditions, fields }))
    }

    /// What of the conditions and fields does not hold on `live` (`None`: all hold).
    fn unmet(&self, live: &Json) -> Option<String> {
        let conditions = live.pointer("/status/conditions").and_then(Json::as_array);
        let condition_unmet = |(ty, status): &(String, String)| {
            let found = conditions
                .into_iter()
                .flatten()
                .find(|c| c["type"].as_str() == Some(ty));
            match found.and_then(|c| c["status"].as_str()) {
                Some(s) if s == status => None,
                Some(s) => Some(format!("condition {ty} is {s}, not {status}")),
                None => Some(format!("no condition {ty} yet")),
            }
        };
        let field_unmet = |(key, wanted): &(String, Wanted)| {
            let Some(text) = lookup(live, key).map(as_text) else {
                return Some(format!("{key} is not set"));
            };
            let (holds, want) = match wanted {
                Wanted::Eq(v) => (text == *v, format!("{v:?}")),
                Wanted::Regex(r) => (r.is_match(&text), format!("a match of {:?}", r.as_str())),
            };
            (!holds).then(|| format!("{key} is {text:?}, not {want}"))
        };
        self.conditions
            .iter()
            .find_map(condition_unmet)
            .or_else(|| self.fields.iter().find_map(field_unmet))
    }
}

/// What the apply waits for, judged on one read of the object.
pub fn check(rollout: bool, wait_for: Option<&WaitFor>) -> impl Fn(&Json) -> Readiness + '_ {
    move |live| {
        if rollout {
            match rolled_out(live) {
                Readiness::Ready => {}
                other => return other,
            }
        }
        match wait_for.and_then(|w| w.unmet(live)) {
            Some(unmet) => Readiness::Waiting(unmet),
            None => Readiness::Ready,
        }
    }
}

/// `wait_for_rollout`: workloads as their typed resources' waits judge them (a Deployment past
/// its progress deadline fails with the controller's reason); an `apiregistration.k8s.io/v1`
/// APIService once `Available` is `True`; other kinds at once.
fn rolled_out(live: &Json) -> Readiness {
    if let Some(check) = live["kind"].as_str().and_then(crate::readiness::rollout) {
        return check(live);
    }
    if live["apiVersion"] == "apiregistration.k8s.io/v1" && live["kind"] == "APIService" {
        let available = live["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Available" && c["status"] == "True");
        if !available {
            return Readiness::Waiting("the APIService is not Available yet".into());
        }
    }
    Readiness::Ready
}

/// The value at `path`: `a.b`, `a.0`, `a.[0]`, `a[0]` and `a["x.y/z"]` (a key holding dots).
pub(super) fn lookup<'a>(object: &'a Json, path: &str) -> Option<&'a Json> {
    let mut at = object;
    for step in steps(path)? {
        at = match (at, step) {
            (Json::Array(items), Step::Index(i)) => items.get(i)?,
            (Json::Array(items), Step::Key(k)) => items.get(k.parse::<usize>().ok()?)?,
            (Json::Object(map), Step::Key(k)) => map.get(&k)?,
            _ => return None,
        };
    }
    Some(at)
}

enum Step {
    Key(String),
    Index(usize),
}

fn steps(path: &str) -> Option<Vec<Step>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']')?;
            let token = &inner[..end];
            out.push(match token.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(key) => Step::Key(key.to_string()),
                None => Step::Index(token.parse().ok()?),
            });
            rest = &inner[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            out.push(Step::Key(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
    Some(out)
}

/// A value as the comparison sees it: strings as they are, numbers without exponent, null as
/// `""`, maps and lists as JSON.
pub(super) fn as_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wait_for(conditions: &[(&str, &str)], fields: &[(&str, &str, &str)]) -> Value {
        let condition = conditions
            .iter()
            .map(|(t, s)| Value::object([("type", Value::string(*t)), ("status", Value::string(*s))]))
            .collect();
        let field = fields
            .iter()
            .map(|(k, v, t)| {
                Value::object([
                    ("key", Value::string(*k)),
                    ("value", Value::string(*v)),
                    ("value_type", Value::string(*t)),
                ])
            })
            .collect();
        Value::object([(
            "wait_for",
            Value::List(vec![Value::object([
                ("condition", Value::List(condition)),
                ("field", Value::List(field)),
            ])]),
        )])
    }

    #[test]
    fn conditions_and_fields_hold_on_one_state() {
        let w = WaitFor::of(&wait_for(
            &[("Ready", "True")],
            &[
                ("status.phase", "Run", "regex"),
                ("spec.ports[0].port", "80", "eq"),
            ],
        ))
        .unwrap()
        .unwrap();
        let live = json!({"spec": {"ports": [{"port": 80}]}, "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}]}});
        assert_eq!(w.unmet(&live), None);
        let not_ready = json!({"spec": {"ports": [{"port": 80}]}, "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}]}});
        assert_eq!(
            w.unmet(&not_ready).as_deref(),
            Some("condition Ready is False, not True")
        );
    }

    #[test]
    fn paths_take_every_index_form_and_quoted_keys() {
        let live = json!({"a": [{"b": "x"}], "m": {"x.y/z": 1.0}});
        for path in ["a.0.b", "a.[0].b", "a[0].b"] {
            assert_eq!(lookup(&live, path), Some(&json!("x")), "{path}");
        }
        assert_eq!(lookup(&live, "m[\"x.y/z\"]").map(as_text).as_deref(), Some("1"));
        assert_eq!(lookup(&live, "m[0]"), None, "an index on a map");
    }

    #[test]
    fn a_wait_for_without_entries_or_with_a_bad_pattern_is_refused() {
        assert!(matches!(
            WaitFor::of(&wait_for(&[], &[])),
            Err(WaitForError::Empty)
        ));
        let bad = WaitFor::of(&wait_for(&[], &[("a", "(", "regex")])).err().unwrap();
        let d = Diagnostic::from(bad);
        assert_eq!(d.attribute.unwrap().to_string(), "wait_for[0].field[0].value");
    }
}
