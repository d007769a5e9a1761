//! Waiting for an object to become ready after an apply: the `wait_for_*` flags that exist
//! only in Terraform, and the poll of an applied object ([`crate::objects::poll`]) bounded by
//! the `timeouts` block ([`crate::timeouts`]). A wait that fails or times out says why: what
//! the object still lacks ([`crate::readiness`]) and what its pods say ([`super::diagnosis`]).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use plugin_runtime::{Diagnostic, Value};
use serde_json::Value as Json;

use super::diagnosis;
use crate::kind::{KindInfo, api_resource};
use crate::objects::{self, Pace, Readiness, Target, WaitError};

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
/// Returns the object as it was when found ready, or None when it was deleted meanwhile.
/// Failed or timed out, the error names what the object lacked when last read, and what its
/// pods say.
pub async fn poll(
    client: &kube::Client,
    info: &KindInfo,
    applied: &Json,
    timeout: Duration,
    what: &str,
    check: impl Fn(&Json) -> Readiness,
) -> Result<Option<Json>, Diagnostic> {
    let target = Target::of(api_resource(info), applied);
    let last = Mutex::new(applied.clone());
    let seen = |live: Option<&Json>| match live {
        Some(object) => {
            *last.lock().unwrap_or_else(PoisonError::into_inner) = object.clone();
            check(object)
        }
        None => Readiness::Ready,
    };
    let pace = Pace::new(POLL_INTERVAL, timeout);
    let outcome = objects::poll(client, &target, Some(applied.clone()), pace, what, seen).await;
    let last = last.into_inner().unwrap_or_else(PoisonError::into_inner);
    let pods = || async {
        diagnosis::explain(client, info.kind, &last)
            .await
            .map(|pods| format!("pods: {pods}"))
    };
    match outcome {
        Ok(found) => Ok(found),
        Err(WaitError::Timeout(mut timed_out)) => {
            let lacking = match check(&last) {
                Readiness::Waiting(reason) if !reason.is_empty() => Some(reason),
                _ => None,
            };
            let detail: Vec<String> = lacking.into_iter().chain(pods().await).collect();
            if !detail.is_empty() {
                timed_out.what = format!("{what} ({})", detail.join("; "));
            }
            Err(timed_out.into())
        }
        Err(WaitError::Failed { object, reason }) => {
            let reason = match pods().await {
                Some(pods) => format!("{reason}; {pods}"),
                None => reason,
            };
            Err(WaitError::Failed { object, reason }.into())
        }
        Err(e) => Err(e.into()),
    }
}

/// The error of a wait whose object was deleted meanwhile.
pub fn gone(info: &KindInfo, object: &Json) -> Diagnostic {
    let target = crate::objects::Target::of(api_resource(info), object);
    kube_estate::ApiError::NotFound {
        object: target.object_ref(),
    }
    .into()
}
