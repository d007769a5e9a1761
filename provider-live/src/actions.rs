//! Actions (`action` blocks, Terraform 1.14+): operations run when a resource's
//! `action_trigger` fires or with `terraform apply -invoke=action.<type>.<name>`.
//!
//! - [`RolloutRestart`]: `kubectl rollout restart` of a Deployment, StatefulSet or DaemonSet;
//! - [`Scale`]: sets replicas through the `scale` subresource;
//! - [`Wait`]: waits until any object meets a condition, a field value or a JSONPath (read-only);
//! - [`JobRun`]: runs a Job from a CronJob's template or an inline one.
//!
//! The mutating ones write under field managers of their own, never the typed resources'
//! (`tofu-live`): what they set is another manager's field, which the resource that owns the
//! object leaves out of its state, so it shows no diff. They act only on objects of this
//! estate (by the `tofu-estate` label, as the resources' guard decides) unless the
//! configuration says `any_estate = true`, and their writes carry the uid and resourceVersion
//! of the object they checked. Waits report progress lines, end at `timeout`, and end at once
//! on Ctrl-C (the engine's StopProvider, [`kube_estate::Stop`]).

mod job_run;
mod rollout_restart;
mod scale;
mod wait_action;
mod workload;

use std::sync::Arc;
use std::time::Duration;

use kube_estate::{ApiError, ObjectRef};
use plugin_runtime::duration::parse;
use plugin_runtime::{Action, Attribute, AttributePath, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::Value as Json;

use crate::context::Context;
use crate::guard::{self, Decision};
use crate::objects::{self, Target, WaitError};
use crate::timeouts::Timeout;

pub use job_run::JobRun;
pub use rollout_restart::RolloutRestart;
pub use scale::Scale;
pub use wait_action::Wait;

/// Every action type, sharing the provider's context.
pub fn all(ctx: &Arc<Context>) -> Vec<Arc<dyn Action>> {
    vec![
        Arc::new(RolloutRestart::new(ctx.clone())),
        Arc::new(Scale::new(ctx.clone())),
        Arc::new(Wait::new(ctx.clone())),
        Arc::new(JobRun::new(ctx.clone())),
    ]
}

/// How long a wait lasts when `timeout` is not set.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Time between two reads of an awaited object: a progress line each.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Why an action did not do what it was asked to.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error("{object} not found")]
    NotFound { object: ObjectRef, action: &'static str },
    #[error(transparent)]
    Refused(Box<OwnershipRefusal>),
    #[error(transparent)]
    Api(Box<ApiError>),
    /// A wait ended without the object being as awaited; `done` says what the action had done
    /// by then ("The restart was made.").
    #[error("{error}")]
    Wait {
        error: Box<WaitError>,
        done: &'static str,
    },
    /// Anything else, as its diagnostic.
    #[error("{}", .0.summary)]
    Other(Diagnostic),
}

/// An object a mutating action may not touch because of who owns it: another estate (`owner`),
/// or none.
#[derive(Debug, thiserror::Error)]
#[error("{object} belongs to {}", match owner { Some(o) => format!("estate \"{o}\""), None => "no estate".to_string() })]
pub struct OwnershipRefusal {
    object: ObjectRef,
    owner: Option<String>,
    estate: String,
    action: &'static str,
}

impl From<ApiError> for ActionError {
    fn from(e: ApiError) -> ActionError {
        ActionError::Api(Box::new(e))
    }
}

impl From<Diagnostic> for ActionError {
    fn from(d: Diagnostic) -> ActionError {
        ActionError::Other(d)
    }
}

impl From<crate::discovery::DiscoveryError> for ActionError {
    fn from(e: crate::discovery::DiscoveryError) -> ActionError {
        ActionError::Other(e.into())
    }
}

impl ActionError {
    /// A wait that ended without the object being as awaited, after the action did `done`.
    fn wait(error: WaitError, done: &'static str) -> ActionError {
        ActionError::Wait {
            error: Box::new(error),
            done,
        }
    }
}

impl From<ActionError> for Diagnostic {
    fn from(e: ActionError) -> Diagnostic {
        let summary = e.to_string();
        match e {
            ActionError::NotFound { object, action } => Diagnostic::error(
                summary,
                format!("{action} found no {object} in the cluster: check its kind, name and namespace."),
            ),
            ActionError::Refused(refusal) => {
                let OwnershipRefusal {
                    object,
                    owner,
                    estate,
                    action,
                } = *refusal;
                let label = match owner {
                    Some(owner) => format!("carries the label tofu-estate={owner}"),
                    None => "carries no tofu-estate label (no estate made it)".to_string(),
                };
                Diagnostic::error(
                    summary,
                    format!(
                        "{object} {label}, and this provider acts for estate \"{estate}\": {action} \
                         changes only objects of its own estate, so it was left untouched. Set \
                         any_estate = true in the action's config to act on it anyway."
                    ),
                )
            }
            ActionError::Api(e) => (*e).into(),
            ActionError::Wait { error, done } => waited(*error, done),
            ActionError::Other(d) => d,
        }
    }
}

/// A wait's end as the action reports it.
fn waited(error: WaitError, done: &str) -> Diagnostic {
    match error {
        WaitError::Api(e) => e.into(),
        WaitError::Timeout(Timeout { object, what, after }) => Diagnostic::error(
            format!("Timed out waiting for {object}"),
            format!(
                "{object} did not {what} within {after:?}. {done} Raise the action's `timeout` if this \
                 is expected."
            ),
        ),
        WaitError::Failed { object, reason } => {
            Diagnostic::error(format!("{object} failed"), format!("{reason}. {done}"))
        }
        WaitError::Stopped { object, what } => Diagnostic::error(
            format!("Stopped waiting for {object}"),
            format!("The run was interrupted (Ctrl-C) while waiting for {object} to {what}. {done}"),
        ),
    }
}

/// The outcome of an invocation as the engine takes it.
fn outcome(result: Result<Diagnostics, ActionError>) -> Diagnostics {
    result.unwrap_or_else(|e| Diagnostic::from(e).into())
}

/// Refuses an object of another estate, or of none, unless `any_estate`.
fn ensure_ours(
    live: &Json,
    object: &ObjectRef,
    estate: &str,
    any_estate: bool,
    action: &'static str,
) -> Result<(), ActionError> {
    if any_estate {
        return Ok(());
    }
    let owner = match guard::decide(Some(live), estate) {
        Decision::Create | Decision::Adopt => return Ok(()),
        Decision::Refuse(owner) => Some(owner),
        Decision::Unlabelled => None,
    };
    Err(ActionError::Refused(Box::new(OwnershipRefusal {
        object: object.clone(),
        owner,
        estate: estate.to_string(),
        action,
    })))
}

/// Reads the object at `target`, has `admit` check it, then writes with `write`, which gets
/// the object as read and must make its write conditional on that object's uid and
/// resourceVersion. When the object changed in between (409), once more from a fresh read.
/// Returns the object as read and the write's answer.
async fn read_check_write<W, F>(
    client: &kube::Client,
    target: &Target,
    action: &'static str,
    admit: impl Fn(&Json) -> Result<(), ActionError>,
    write: W,
) -> Result<(Json, Json), ActionError>
where
    W: Fn(Json) -> F,
    F: std::future::Future<Output = Result<Json, ApiError>>,
{
    let mut attempts = 2;
    loop {
        attempts -= 1;
        let live = objects::get(client, target)
            .await?
            .ok_or_else(|| ActionError::NotFound {
                object: target.object_ref(),
                action,
            })?;
        admit(&live)?;
        match write(live.clone()).await {
            Ok(written) => return Ok((live, written)),
            Err(ApiError::Conflict { fields, .. }) if fields.is_empty() && attempts > 0 => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// A precondition on the object as read, for a JSON merge patch: the server refuses the patch
/// when the object is no longer that one.
fn precondition(live: &Json) -> Json {
    serde_json::json!({
        "uid": live.pointer("/metadata/uid"),
        "resourceVersion": live.pointer("/metadata/resourceVersion"),
    })
}

// --- configuration -------------------------------------------------------------------------

/// A known string attribute of a configuration.
fn text<'a>(config: &'a Value, name: &str) -> Option<&'a str> {
    config.get(name).as_str()
}

/// The configured `namespace`, or the provider's default one.
fn namespace_of(ctx: &Context, config: &Value) -> String {
    text(config, "namespace")
        .or(ctx.default_namespace())
        .unwrap_or_default()
        .to_string()
}

/// `wait`, true unless set to false.
fn waits(config: &Value) -> bool {
    config.get("wait").as_bool().unwrap_or(true)
}

/// `timeout`, or [`DEFAULT_TIMEOUT`]; a bad value was reported by validation.
fn timeout_of(config: &Value) -> Duration {
    text(config, "timeout")
        .and_then(|t| parse(t).ok())
        .unwrap_or(DEFAULT_TIMEOUT)
}

fn any_estate(config: &Value) -> bool {
    config.get("any_estate").as_bool().unwrap_or(false)
}

/// The `timeout` attribute's error, when it is set and not a duration.
fn validate_timeout(config: &Value) -> Option<Diagnostic> {
    let t = text(config, "timeout")?;
    let e = parse(t).err()?;
    Some(Diagnostic::error("Invalid timeout", format!("timeout: {e}")).at(AttributePath::root("timeout")))
}

/// The `wait` and `timeout` attributes of an action that waits for what it did.
fn wait_attributes(block: Block, what: &str) -> Block {
    block
        .attribute(Attribute::optional(
            "wait",
            Type::Bool,
            &format!("Whether to wait until {what}, reporting progress (default `true`)."),
        ))
        .attribute(Attribute::optional(
            "timeout",
            Type::String,
            "How long to wait, as a duration such as `\"5m\"` or `\"90s\"` (default `\"10m\"`).",
        ))
}

/// The `any_estate` attribute of an action that changes an object.
fn any_estate_attribute(block: Block, what: &str) -> Block {
    block.attribute(Attribute::optional(
        "any_estate",
        Type::Bool,
        &format!(
            "Act on {what} even when it does not carry this estate's label `tofu-estate` (another \
             estate's, or none). Default `false`: such an object is refused, naming it."
        ),
    ))
}

/// An error at `attribute` of the config.
fn invalid(attribute: &str, summary: &str, detail: String) -> Diagnostic {
    Diagnostic::error(summary, detail).at(AttributePath::root(attribute))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object() -> ObjectRef {
        ObjectRef::namespaced("Deployment", "shop", "web")
    }

    #[test]
    fn only_objects_of_this_estate_unless_any_estate() {
        let labelled = |estate: &str| json!({"metadata": {"labels": {"tofu-estate": estate}}});
        let o = object();
        assert!(ensure_ours(&labelled("app"), &o, "app", false, "kubernetes_scale").is_ok());
        let foreign = ensure_ours(&labelled("network"), &o, "app", false, "kubernetes_scale").unwrap_err();
        let d = Diagnostic::from(foreign);
        assert_eq!(d.summary, "Deployment \"shop/web\" belongs to estate \"network\"");
        assert!(d.detail.contains("any_estate = true"), "{}", d.detail);
        let bare = json!({"metadata": {}});
        let d = Diagnostic::from(ensure_ours(&bare, &o, "app", false, "kubernetes_scale").unwrap_err());
        assert_eq!(d.summary, "Deployment \"shop/web\" belongs to no estate");
        assert!(ensure_ours(&labelled("network"), &o, "app", true, "kubernetes_scale").is_ok());
        assert!(ensure_ours(&bare, &o, "app", true, "kubernetes_scale").is_ok());
    }

    #[test]
    fn waits_say_what_was_done_and_how_to_wait_longer() {
        let timeout = WaitError::Timeout(Timeout {
            object: object(),
            what: "finish its rollout (1 of 2 replicas updated)".into(),
            after: Duration::from_secs(30),
        });
        let d = waited(timeout, "The restart was made.");
        assert_eq!(d.summary, "Timed out waiting for Deployment \"shop/web\"");
        assert!(
            d.detail
                .contains("within 30s. The restart was made. Raise the action's `timeout`")
        );
        let stopped = WaitError::Stopped {
            object: object(),
            what: "finish its rollout".into(),
        };
        let d = waited(stopped, "Nothing was changed.");
        assert_eq!(d.summary, "Stopped waiting for Deployment \"shop/web\"");
        assert!(d.detail.contains("interrupted (Ctrl-C)"), "{}", d.detail);
    }

    #[test]
    fn timeouts_default_and_bad_ones_are_reported_at_the_attribute() {
        let config = Value::object([("timeout", Value::string("90s"))]);
        assert_eq!(timeout_of(&config), Duration::from_secs(90));
        assert_eq!(timeout_of(&Value::Null), DEFAULT_TIMEOUT);
        let bad = Value::object([("timeout", Value::string("soon"))]);
        let d = validate_timeout(&bad).expect("an error");
        assert_eq!(d.attribute.unwrap().to_string(), "timeout");
    }
}
