//! `kubernetes_scale`: sets a Deployment's or StatefulSet's replicas through its `scale`
//! subresource (as `kubectl scale` does), as field manager [`MANAGER`], then waits for the
//! replicas to be ready. The resource that manages the workload owns `spec.replicas` only when
//! its configuration sets them: then its next apply sets them back, and the action warns.
//! Otherwise the replicas are not its field: it leaves them out of its state and shows no
//! diff, and a plan saved before the scale still applies (the stale-plan guard covers only its
//! own fields). The API server records the scaler as the replicas' owner only when some
//! manager owned them before.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    Action, Attribute, AttributePath, Block, Diagnostic, Diagnostics, InvokeRequest, Progress, Schema, Type,
    Value,
};
use serde_json::{Value as Json, json};

use super::workload::{self, Workload, WorkloadKind};
use super::{
    ActionError, POLL_INTERVAL, any_estate, any_estate_attribute, ensure_ours, outcome, read_check_write,
    timeout_of, validate_timeout, wait_attributes, waits,
};
use crate::context::Context;
use crate::objects::{self, FIELD_MANAGER, Pace, Readiness};
use crate::ownership::Ownership;

const TYPE_NAME: &str = "kubernetes_scale";

/// The field manager of the scale (the owner of `spec.replicas` afterwards, when they had one).
pub const MANAGER: &str = "tofu-live-scale";

const KINDS: [WorkloadKind; 2] = [WorkloadKind::Deployment, WorkloadKind::StatefulSet];

pub struct Scale {
    ctx: Arc<Context>,
}

impl Scale {
    pub fn new(ctx: Arc<Context>) -> Scale {
        Scale { ctx }
    }

    async fn scale(&self, config: &Value, progress: &Progress) -> Result<Diagnostics, ActionError> {
        let connection = self.ctx.connection()?;
        let client = &connection.client;
        let estate = connection.estate.as_str();
        let workload = Workload::of(&self.ctx, config, &KINDS)?;
        let replicas = config.get("replicas").as_i64().unwrap_or(0);
        let target = workload.target();
        let object = workload.object();
        let admit = |live: &Json| ensure_ours(live, &object, estate, any_estate(config), TYPE_NAME);
        let write = |live: Json| {
            // The Scale's resourceVersion is its object's: the server refuses a changed one.
            let patch = json!({
                "metadata": {"resourceVersion": live.pointer("/metadata/resourceVersion")},
                "spec": {"replicas": replicas},
            });
            let (client, target) = (client.clone(), target.clone());
            async move { objects::patch_as(&client, &target, &patch, MANAGER, Some("scale")).await }
        };
        let (before, _) = read_check_write(client, &target, TYPE_NAME, admit, write).await?;
        let mut out = Diagnostics::new();
        if let Some(warning) = configured_replicas(&before, &object, replicas) {
            out.push(warning);
        }
        let from = before
            .pointer("/spec/replicas")
            .and_then(Json::as_i64)
            .unwrap_or(1);
        progress.report(workload.line(&format!("scaling from {from} to {replicas} replicas")));
        if !waits(config) {
            return Ok(out);
        }
        let kind = workload.kind;
        let check = |live: Option<&Json>| {
            let Some(live) = live else {
                return Readiness::Ready;
            };
            let readiness = kind.rollout(live);
            let counts = kind.counts(live);
            match readiness {
                Readiness::Ready => {
                    progress.report(workload.line(&format!("scaled to {replicas}, {counts}")))
                }
                _ => progress.report(workload.line(&counts)),
            }
            readiness
        };
        let pace = Pace::new(POLL_INTERVAL, timeout_of(config));
        let what = format!("have {replicas} ready replicas");
        match objects::poll(client, &target, None, pace, &what, check).await {
            Ok(None) => Err(ActionError::NotFound {
                object,
                action: TYPE_NAME,
            }),
            Ok(Some(_)) => Ok(out),
            Err(error) => Err(ActionError::wait(
                error,
                "The replicas were set; the controller goes on in the cluster.",
            )),
        }
    }
}

/// The warning when the resource managing the workload (field manager `tofu-live`) sets its
/// replicas: its next apply sets them back.
fn configured_replicas(before: &Json, object: &kube_estate::ObjectRef, replicas: i64) -> Option<Diagnostic> {
    let ours = Ownership::of(before, FIELD_MANAGER).into_ours()?;
    ours.get("f:spec")?.get("f:replicas")?;
    let configured = before.pointer("/spec/replicas").and_then(Json::as_i64)?;
    (configured != replicas).then(|| {
        Diagnostic::warning(
            "The configuration sets these replicas too",
            format!(
                "{object} was scaled to {replicas}, but the resource that manages it sets replicas = \
                 {configured}: its next plan shows the change back to {configured}. Leave replicas out \
                 of that resource (or add it to lifecycle.ignore_changes) to let kubernetes_scale \
                 decide them."
            ),
        )
    })
}

#[async_trait]
impl Action for Scale {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        let block = Block::new(
            "Sets the replicas of a Deployment or StatefulSet through its `scale` subresource, as \
             `kubectl scale` does, under its own field manager (`tofu-live-scale`), then waits for \
             them to be ready. A resource that manages the workload without setting `replicas` \
             shows no diff afterwards; one that sets them would set them back at its next apply, \
             which the action warns about. It scales only workloads of this estate unless \
             `any_estate = true`.",
        );
        let block = workload::attributes(block, &KINDS).attribute(Attribute::required(
            "replicas",
            Type::Number,
            "The number of replicas to set (0 or more).",
        ));
        let block = wait_attributes(block, "the replicas are ready");
        Schema::new(0, any_estate_attribute(block, "a workload"))
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let negative = config.get("replicas").as_i64().filter(|r| *r < 0).map(|r| {
            Diagnostic::error(
                "Invalid replicas",
                format!("replicas is {r}; it must be 0 or more"),
            )
            .at(AttributePath::root("replicas"))
        });
        [
            workload::validate_kind(config, &KINDS),
            validate_timeout(config),
            negative,
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics {
        outcome(self.scale(&request.config, progress).await)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn deployment(manager: &str) -> Json {
        json!({
            "metadata": {"managedFields": [{"manager": manager, "operation": "Apply",
                "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
            "spec": {"replicas": 1}
        })
    }

    #[test]
    fn a_scale_warns_when_the_configuration_sets_the_replicas() {
        let object = kube_estate::ObjectRef::namespaced("Deployment", "shop", "web");
        let warning = configured_replicas(&deployment(FIELD_MANAGER), &object, 3).expect("a warning");
        assert!(warning.detail.contains("sets replicas = 1"), "{}", warning.detail);
        assert!(configured_replicas(&deployment(MANAGER), &object, 3).is_none());
        assert!(configured_replicas(&deployment(FIELD_MANAGER), &object, 1).is_none());
    }

    #[test]
    fn negative_replicas_are_refused_at_the_attribute() {
        let config = Value::object([
            ("kind", Value::string("Deployment")),
            ("replicas", Value::int(-1)),
        ]);
        let d = Scale::new(Arc::default()).validate(&config);
        assert_eq!(d.0[0].attribute.as_ref().unwrap().to_string(), "replicas");
    }
}
