//! Waiting for an object to become ready after an apply: the `wait_for_*` flags that exist
//! only in Terraform, and the poll of an applied object ([`crate::objects::poll`]) bounded by
//! the `timeouts` block ([`crate::timeouts`]).

use std::time::Duration;

use kube_estate::ApiError;
use plugin_runtime::{Attribute, Block, Diagnostic, Type, Value};
use serde_json::Value as Json;

use crate::kind::KindInfo;
pub use crate::objects::Readiness;
use crate::objects::{self, Pace, Target};
use crate::resource::api_resource;
use crate::timeouts;

/// Time between two reads of the object.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// A `wait_for_*` flag: optional, true unless configured otherwise.
fn flag(name: &str, description: &str) -> Attribute {
    Attribute::optional_computed(name, Type::Bool, description)
}

/// The flag's value in state: the prior's when known, else its default `true`.
fn read_flag(prior: &Value, name: &str) -> Value {
    Value::Bool(prior.get(name).as_bool().unwrap_or(true))
}

/// Whether a planned value asks to wait.
pub fn enabled(planned: &Value, name: &str) -> bool {
    planned.get(name).as_bool().unwrap_or(true)
}

/// The `timeouts` block in state: as configured (it never reaches the cluster).
fn read_timeouts(prior: &Value) -> Value {
    match prior.get("timeouts") {
        Value::Unknown(_) => Value::Null,
        v => v.clone(),
    }
}

/// A `wait_for_*` flag with the `timeouts` block that bounds its wait: both exist only in
/// Terraform and read back as configured.
pub struct WaitFlag {
    pub name: &'static str,
    pub description: &'static str,
    /// The operations `timeouts` has a field for.
    pub operations: &'static [&'static str],
}

impl WaitFlag {
    /// The kind's block with the flag and the `timeouts` block added.
    pub fn extend_block(&self, block: Block) -> Block {
        block
            .attribute(flag(self.name, self.description))
            .block(timeouts::block(self.operations))
    }

    /// Sets the flag and `timeouts` in a value read back, from `prior`.
    pub fn read(&self, value: &mut Value, prior: &Value) {
        value.set(self.name, read_flag(prior, self.name));
        value.set("timeouts", read_timeouts(prior));
    }
}

/// Reads the object `applied` (as the apply returned it) until `check` finds it ready,
/// fails, or `timeout` passes; `what` says what is awaited ("finish its rollout").
/// Returns the object as it was when found ready; an object deleted meanwhile is not found.
pub async fn poll(
    client: &kube::Client,
    info: &KindInfo,
    applied: &Json,
    timeout: Duration,
    what: &str,
    check: impl Fn(&Json) -> Readiness,
) -> Result<Option<Json>, Diagnostic> {
    let target = Target::of(api_resource(info), applied);
    // An object deleted meanwhile ends the poll, as the error reading it.
    let check = |live: Option<&Json>| live.map_or(Readiness::Ready, &check);
    let pace = Pace {
        interval: POLL_INTERVAL,
        timeout,
    };
    match objects::poll(client, &target, Some(applied.clone()), pace, what, check).await {
        Ok(Some(ready)) => Ok(Some(ready)),
        Ok(None) => Err(ApiError::NotFound {
            object: target.object_ref(),
        }
        .into()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_default_to_true() {
        assert_eq!(read_flag(&Value::Null, "wait_for_rollout"), Value::Bool(true));
        assert_eq!(
            read_flag(
                &Value::object([("wait_for_rollout", Value::unknown())]),
                "wait_for_rollout"
            ),
            Value::Bool(true)
        );
        let off = Value::object([("wait_for_rollout", Value::Bool(false))]);
        assert_eq!(read_flag(&off, "wait_for_rollout"), Value::Bool(false));
        assert!(!enabled(&off, "wait_for_rollout") && enabled(&Value::Null, "wait_for_rollout"));
    }
}
