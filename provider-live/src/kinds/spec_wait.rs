//! Waiting for an object to become ready after an apply: the `wait_for_*` flags that exist
//! only in Terraform, and the polling loop that honours the `timeouts` block
//! ([`crate::timeouts`]).

use std::time::Duration;

use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube_estate::{ApiError, ObjectRef};
use plugin_runtime::{Attribute, Block, Diagnostic, Type, Value};
use serde_json::Value as Json;

use crate::kind::KindInfo;
use crate::timeouts::{self, Timeout};

/// Time between two reads of the object.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// A `wait_for_*` flag: optional, true unless configured otherwise.
pub fn flag(name: &str, description: &str) -> Attribute {
    Attribute::optional_computed(name, Type::Bool, description)
}

/// The flag's value in state: the prior's when known, else its default `true`.
pub fn read_flag(prior: &Value, name: &str) -> Value {
    Value::Bool(prior.get(name).as_bool().unwrap_or(true))
}

/// Whether a planned value asks to wait.
pub fn enabled(planned: &Value, name: &str) -> bool {
    planned.get(name).as_bool().unwrap_or(true)
}

/// The `timeouts` block in state: as configured (it never reaches the cluster).
pub fn read_timeouts(prior: &Value) -> Value {
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

/// What one look at the object found.
pub enum Readiness {
    Ready,
    /// Not yet, and why (shown if the wait times out).
    Waiting(String),
    /// Never will be, and why.
    Failed(String),
}

/// Why a wait ended without the object being ready.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error(transparent)]
    TimedOut(#[from] Timeout),
    #[error("{object} failed: {reason}")]
    Failed { object: ObjectRef, reason: String },
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl From<WaitError> for Diagnostic {
    fn from(err: WaitError) -> Diagnostic {
        match err {
            WaitError::TimedOut(timeout) => timeout.into(),
            WaitError::Failed { ref object, .. } => {
                Diagnostic::error(format!("{object} did not become ready"), err.to_string())
            }
            WaitError::Api(api) => api.into(),
        }
    }
}

/// Reads the object `applied` (as the apply returned it) until `check` finds it ready,
/// fails, or `timeout` passes; `what` says what is awaited ("finish its rollout").
/// Returns the object as it was when found ready.
pub async fn poll(
    client: &kube::Client,
    info: &KindInfo,
    applied: &Json,
    timeout: Duration,
    what: &str,
    check: impl Fn(&Json) -> Readiness,
) -> Result<Json, WaitError> {
    let name = applied["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = applied["metadata"]["namespace"].as_str().unwrap_or_default();
    let object = ObjectRef::namespaced(info.kind, namespace, name);
    let (group, version) = info
        .api_version
        .rsplit_once('/')
        .unwrap_or(("", info.api_version));
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, info.kind), info.plural);
    let api: kube::Api<DynamicObject> = kube::Api::namespaced_with(client.clone(), namespace, &resource);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut current = applied.clone();
    loop {
        let reason = match check(&current) {
            Readiness::Ready => return Ok(current),
            Readiness::Failed(reason) => return Err(WaitError::Failed { object, reason }),
            Readiness::Waiting(reason) => reason,
        };
        if tokio::time::Instant::now() + POLL_INTERVAL > deadline {
            return Err(Timeout {
                object,
                what: format!("{what} ({reason})"),
                after: timeout,
            }
            .into());
        }
        tokio::time::sleep(POLL_INTERVAL).await;
        let fresh = kube_estate::with_retry(|| api.get(name))
            .await
            .map_err(|e| ApiError::from_kube(e, &object, "get"))?;
        current = serde_json::to_value(fresh).unwrap_or(Json::Null);
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
