//! The `timeouts` block: Go duration strings ("30s", "5m", "1h30m"), and the error a wait
//! gives when one runs out.

use std::time::Duration;

use kube_estate::ObjectRef;
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

/// The longest duration Go (and so hashicorp/kubernetes) can hold: 2^63-1 nanoseconds,
/// about 292 years. Beyond it a deadline would overflow the clock.
const MAX_SECONDS: f64 = i64::MAX as f64 / 1e9;

#[derive(Debug, thiserror::Error)]
pub enum DurationError {
    #[error("{0:?} is not a duration: use a number with a unit, e.g. \"30s\", \"5m\" or \"1h30m\"")]
    Malformed(String),
    #[error("{0:?} is too long: a timeout can be at most 2562047h (about 292 years)")]
    TooLong(String),
}

/// Parses a Go duration of whole or fractional h, m, s, ms, us, ns units.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let bad = || DurationError::Malformed(text.to_string());
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    // Checked, not Duration::from_secs_f64, which panics beyond u64 seconds.
    if total > MAX_SECONDS {
        return Err(DurationError::TooLong(text.to_string()));
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
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
    fn go_durations_parse() {
        assert_eq!(parse("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("1.5m").unwrap(), Duration::from_secs(90));
        assert!(parse("5").is_err());
        assert!(parse("5 minutes").is_err());
        assert!(parse("").is_err());
        assert_eq!(parse("1500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("2562047h").unwrap(), Duration::from_secs(2562047 * 3600));
    }

    #[test]
    fn absurd_durations_are_errors_not_panics() {
        for text in ["99999999999999999999h", "2562048h", "1e400s", "1e30h"] {
            let err = parse(text).unwrap_err();
            assert!(
                matches!(err, DurationError::TooLong(_) | DurationError::Malformed(_)),
                "{text}: {err:?}"
            );
        }
        assert!(matches!(
            parse("99999999999999999999h"),
            Err(DurationError::TooLong(_))
        ));
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
