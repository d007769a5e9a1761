//! Waiting for an object to become ready after an apply: the `wait_for_*` flags that exist
//! only in Terraform, and the poll of an applied object ([`crate::objects::poll`]) bounded by
//! the `timeouts` block ([`crate::timeouts`]).

use std::time::Duration;

use kube_estate::ApiError;
use plugin_runtime::{Diagnostic, Value};
use serde_json::Value as Json;

use crate::kind::KindInfo;
pub use crate::objects::Readiness;
use crate::objects::{self, Pace, Target};
use crate::resource::api_resource;

/// Time between two reads of the object.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// The `timeouts` block in state: as configured (it never reaches the cluster).
pub fn read_timeouts(prior: &Value) -> Value {
    match prior.get("timeouts") {
        Value::Unknown(_) => Value::Null,
        v => v.clone(),
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
    let pace = Pace::new(POLL_INTERVAL, timeout);
    match objects::poll(client, &target, Some(applied.clone()), pace, what, check).await {
        Ok(Some(ready)) => Ok(Some(ready)),
        Ok(None) => Err(ApiError::NotFound {
            object: target.object_ref(),
        }
        .into()),
        Err(e) => Err(e.into()),
    }
}
