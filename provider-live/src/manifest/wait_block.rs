//! `kubernetes_manifest`'s `wait` block (and hashicorp's older `wait_for` attribute): after a
//! write, hold the apply until the object has the field values, status conditions or finished
//! rollout it names.

use plugin_runtime::{AttributePath, Diagnostic, Value};
use regex::Regex;
use serde_json::Value as Json;

use super::shape::{Step, parse_path};
use super::single;

/// The `wait` block and `wait_for` attribute, merged: rollout, field patterns, status conditions.
pub(super) struct WaitBlock {
    rollout: bool,
    fields: Vec<(Vec<Step>, Regex)>,
    conditions: Vec<(String, Option<String>)>,
}

/// hashicorp's shorthand for "any value": the field only has to be there.
const ANY_VALUE: &str = "*";

/// A `fields` pattern as a regular expression.
fn field_pattern(pattern: &str) -> Result<Regex, regex::Error> {
    if pattern == ANY_VALUE {
        Regex::new("(.*)?")
    } else {
        Regex::new(pattern)
    }
}

/// Errors for `fields` patterns that are not regular expressions, in `wait` and `wait_for`.
pub(super) fn validate_waits(config: &Value) -> Vec<Diagnostic> {
    let places = [
        (
            single(config, "wait"),
            AttributePath::root("wait").index(0).attribute("fields"),
        ),
        (
            config.get("wait_for"),
            AttributePath::root("wait_for").attribute("fields"),
        ),
    ];
    let mut out = Vec::new();
    for (block, path) in places {
        for (field, pattern) in block.get("fields").entries().into_iter().flatten() {
            let Some(pattern) = pattern.as_str() else { continue };
            if let Err(e) = field_pattern(pattern) {
                out.push(
                    Diagnostic::error(
                        "Invalid wait pattern",
                        format!("The pattern for {field:?} is not a regular expression: {e}"),
                    )
                    .at(path.clone().key(field)),
                );
            }
        }
    }
    out
}

impl WaitBlock {
    /// What a resource value waits for: its `wait` block and its `wait_for` attribute
    /// together (`None` when it has neither).
    pub(super) fn of_resource(value: &Value) -> Option<WaitBlock> {
        [single(value, "wait"), value.get("wait_for")]
            .into_iter()
            .filter_map(WaitBlock::of)
            .reduce(|mut all, wait| {
                all.rollout |= wait.rollout;
                all.fields.extend(wait.fields);
                all.conditions.extend(wait.conditions);
                all
            })
    }

    pub(super) fn of(block: &Value) -> Option<WaitBlock> {
        if block.is_null() {
            return None;
        }
        let fields = block
            .get("fields")
            .entries()
            .into_iter()
            .flatten()
            .filter_map(|(path, pattern)| Some((parse_path(path), field_pattern(pattern.as_str()?).ok()?)))
            .collect();
        let conditions = block
            .get("condition")
            .elements()
            .iter()
            .filter_map(|c| {
                Some((
                    c.get("type").as_str()?.to_string(),
                    c.get("status").as_str().map(str::to_string),
                ))
            })
            .collect();
        Some(WaitBlock {
            rollout: block.get("rollout").as_bool().unwrap_or(false),
            fields,
            conditions,
        })
    }

    pub(super) fn satisfied(&self, live: &Json) -> bool {
        let fields_ok = self.fields.iter().all(|(path, pattern)| {
            let mut at = Some(live);
            for step in path {
                at = at.and_then(|v| match step {
                    Step::Key(k) => v.get(k.as_str()),
                    Step::Index(i) => v.get(*i),
                });
            }
            // Numbers as hashicorp prints them: integers whole, others with six decimals.
            let text = match at {
                Some(Json::String(s)) => Some(s.clone()),
                Some(Json::Null) | None => None,
                Some(Json::Number(n)) if n.as_i64().is_none() && n.as_u64().is_none() => {
                    n.as_f64().map(|f| format!("{f:.6}"))
                }
                Some(other) => Some(other.to_string()),
            };
            text.is_some_and(|t| pattern.is_match(&t))
        });
        let conditions = live.pointer("/status/conditions").and_then(Json::as_array);
        let conditions_ok = self.conditions.iter().all(|(ty, status)| {
            conditions.into_iter().flatten().any(|c| {
                c.get("type").and_then(Json::as_str) == Some(ty)
                    && status
                        .as_deref()
                        .is_none_or(|s| c.get("status").and_then(Json::as_str) == Some(s))
            })
        });
        fields_ok && conditions_ok && (!self.rollout || rolled_out(live))
    }
}

/// `kubectl rollout status`: a Deployment, StatefulSet or DaemonSet as its typed resource's
/// rollout wait judges it; another kind once the controller saw the latest generation and every
/// replica is updated and ready.
fn rolled_out(live: &Json) -> bool {
    if let Some(check) = live["kind"].as_str().and_then(crate::readiness::rollout) {
        return matches!(check(live), crate::objects::Readiness::Ready);
    }
    let int = |p: &str| live.pointer(p).and_then(Json::as_i64);
    let wanted = int("/spec/replicas").unwrap_or(1);
    int("/status/observedGeneration").unwrap_or(0) >= int("/metadata/generation").unwrap_or(0)
        && int("/status/updatedReplicas").unwrap_or(0) >= wanted
        && int("/status/readyReplicas").unwrap_or(0) >= wanted
}
