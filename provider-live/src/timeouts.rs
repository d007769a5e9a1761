//! The `timeouts` block: Go duration strings ("30s", "5m", "1h30m", parsed by
//! [`plugin_runtime::duration`]), and the error a wait gives when one runs out.

use std::time::Duration;

use kube_estate::ObjectRef;
use plugin_runtime::duration::parse;
use plugin_runtime::{Attribute, Block, Diagnostic, NestedBlock, Nesting, Type, Value};

/// How long an operation waits when the `timeouts` block does not say: hashicorp's usual 10
/// minutes.
pub const DEFAULT: Duration = Duration::from_secs(600);

/// A `timeouts` block (single nesting, as hashicorp/kubernetes has it) with these operations.
pub fn block(operations: &[&str]) -> NestedBlock {
    let block = operations
        .iter()
        .fold(Block::new("Timeouts for long operations."), |b, op| {
            b.attribute(Attribute::optional(
                op,
                Type::String,
                &format!("Timeout for {op}, e.g. \"5m\"."),
            ))
        });
    NestedBlock::new("timeouts", Nesting::Single, block)
}

/// The timeout for `operation` set in a resource value's `timeouts` block (single or list
/// nesting), or `default`. Bad values were already reported by [`validate`].
pub fn of(resource: &Value, operation: &str, default: Duration) -> Duration {
    let block = match resource.get("timeouts") {
        Value::List(items) => items.first().cloned().unwrap_or_default(),
        other => other.clone(),
    };
    block
        .get(operation)
        .as_str()
        .and_then(|s| parse(s).ok())
        .unwrap_or(default)
}

/// Errors for `timeouts` values that are not durations, at their attribute path.
pub fn validate(resource: &Value) -> Vec<Diagnostic> {
    let (block, path) = match resource.get("timeouts") {
        Value::List(items) => (
            items.first().cloned().unwrap_or_default(),
            plugin_runtime::AttributePath::root("timeouts").index(0),
        ),
        other => (other.clone(), plugin_runtime::AttributePath::root("timeouts")),
    };
    block
        .entries()
        .into_iter()
        .flatten()
        .filter_map(|(op, v)| {
            let text = v.as_str()?;
            let err = parse(text).err()?;
            Some(
                Diagnostic::error("Invalid timeout", format!("timeouts.{op}: {err}"))
                    .at(path.clone().attribute(op)),
            )
        })
        .collect()
}

/// A wait that ran out of time.
#[derive(Debug, thiserror::Error)]
#[error("Timed out waiting for {object} to {what}")]
pub struct Timeout {
    pub object: ObjectRef,
    pub what: String,
    pub after: Duration,
}

impl From<Timeout> for Diagnostic {
    fn from(t: Timeout) -> Diagnostic {
        Diagnostic::error(
            t.to_string(),
            format!(
                "{} did not {} within {:?}. It may finish later; raise the timeout in the resource's \
                 `timeouts` block if this is expected, and run apply again.",
                t.object, t.what, t.after
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_timeouts_are_attribute_errors() {
        // Through the resource: a validation error at the attribute, naming what is wrong;
        // the value itself falls back to the default instead of crashing the plugin.
        for (block, path) in [
            (
                Value::object([("create", Value::string("99999999999999999999h"))]),
                "timeouts.create",
            ),
            (
                Value::List(vec![Value::object([(
                    "create",
                    Value::string("99999999999999999999h"),
                )])]),
                "timeouts[0].create",
            ),
        ] {
            let r = Value::object([("timeouts", block)]);
            let d = validate(&r);
            assert_eq!(d.len(), 1, "{d:?}");
            assert_eq!(d[0].attribute.as_ref().unwrap().to_string(), path);
            assert!(
                d[0].detail
                    .starts_with("timeouts.create: \"99999999999999999999h\" is too long"),
                "{}",
                d[0].detail
            );
            assert_eq!(of(&r, "create", Duration::from_secs(7)), Duration::from_secs(7));
        }
    }

    #[test]
    fn timeouts_come_from_the_block_or_the_default() {
        let r = Value::object([("timeouts", Value::object([("delete", Value::string("2m"))]))]);
        assert_eq!(of(&r, "delete", Duration::from_secs(1)), Duration::from_secs(120));
        assert_eq!(of(&r, "create", Duration::from_secs(1)), Duration::from_secs(1));
        let bad = Value::object([("timeouts", Value::object([("delete", Value::string("soon"))]))]);
        let d = validate(&bad);
        assert_eq!(d[0].attribute.as_ref().unwrap().to_string(), "timeouts.delete");
    }
}
