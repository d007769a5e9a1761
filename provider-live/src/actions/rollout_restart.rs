//! `kubernetes_rollout_restart`: restarts a Deployment's, StatefulSet's or DaemonSet's pods the
//! way `kubectl rollout restart` does, by stamping the pod template's
//! `kubectl.kubernetes.io/restartedAt` annotation, here under the field manager
//! [`MANAGER`]. The resource that owns the workload leaves that annotation out of its state
//! (another manager's field), so its next plan is empty. With `wait` (the default) it follows
//! the rollout until it is done, a line per look: `web: 2 of 3 updated, 1 available`.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{Action, Block, Diagnostics, InvokeRequest, Progress, Schema, Value};
use serde_json::{Value as Json, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::workload::{self, Workload, WorkloadKind};
use super::{
    ActionError, POLL_INTERVAL, any_estate, any_estate_attribute, ensure_ours, outcome, precondition,
    read_check_write, timeout_of, validate_timeout, wait_attributes, waits,
};
use crate::context::Context;
use crate::objects::{self, Pace, Readiness};

const TYPE_NAME: &str = "kubernetes_rollout_restart";

/// The field manager of the restart annotation.
pub const MANAGER: &str = "tofu-live-rollout-restart";

/// The annotation `kubectl rollout restart` stamps (tools that show restarts read it).
const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

const KINDS: [WorkloadKind; 3] = [
    WorkloadKind::Deployment,
    WorkloadKind::StatefulSet,
    WorkloadKind::DaemonSet,
];

pub struct RolloutRestart {
    ctx: Arc<Context>,
}

impl RolloutRestart {
    pub fn new(ctx: Arc<Context>) -> RolloutRestart {
        RolloutRestart { ctx }
    }

    async fn restart(&self, config: &Value, progress: &Progress) -> Result<Diagnostics, ActionError> {
        let connection = self.ctx.connection()?;
        let client = &connection.client;
        let estate = connection.estate.as_str();
        let workload = Workload::of(&self.ctx, config, &KINDS)?;
        let target = workload.target();
        let object = workload.object();
        let admit = |live: &Json| ensure_ours(live, &object, estate, any_estate(config), TYPE_NAME);
        let at = OffsetDateTime::now_utc()
            .format(&Rfc3339)
            .expect("the current time formats as RFC 3339");
        let write = |live: Json| {
            let patch = json!({
                "metadata": precondition(&live),
                "spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: at}}}},
            });
            let (client, target) = (client.clone(), target.clone());
            async move { objects::patch_as(&client, &target, &patch, MANAGER, None).await }
        };
        let (_, restarted) = read_check_write(client, &target, TYPE_NAME, admit, write).await?;
        progress.report(workload.line("restarting"));
        if !waits(config) {
            progress.report(workload.line("restarted, not waiting for the rollout"));
            return Ok(Diagnostics::new());
        }
        let kind = workload.kind;
        let check = |live: Option<&Json>| {
            let Some(live) = live else {
                return Readiness::Ready;
            };
            let readiness = kind.rollout(live);
            let counts = kind.counts(live);
            match readiness {
                Readiness::Ready => progress.report(workload.line(&format!("rolled out, {counts}"))),
                _ => progress.report(workload.line(&counts)),
            }
            readiness
        };
        let pace = Pace::new(POLL_INTERVAL, timeout_of(config));
        match objects::poll(
            client,
            &target,
            Some(restarted),
            pace,
            "finish its rollout",
            check,
        )
        .await
        {
            // Deleted meanwhile: nothing left to roll out.
            Ok(None) => Err(ActionError::NotFound {
                object,
                action: TYPE_NAME,
            }),
            Ok(Some(_)) => Ok(Diagnostics::new()),
            Err(error) => Err(ActionError::wait(
                error,
                "The restart was made; the rollout goes on in the cluster.",
            )),
        }
    }
}

#[async_trait]
impl Action for RolloutRestart {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        let block = Block::new(
            "Restarts the pods of a Deployment, StatefulSet or DaemonSet as `kubectl rollout restart` \
             does: it stamps the pod template's `kubectl.kubernetes.io/restartedAt` annotation under \
             its own field manager (`tofu-live-rollout-restart`), so the resource that manages the \
             workload shows no diff afterwards. It restarts only workloads of this estate unless \
             `any_estate = true`. With `wait` (the default) it reports the rollout's progress until \
             it is done.",
        );
        let block = workload::attributes(block, &KINDS);
        let block = wait_attributes(block, "the rollout is done");
        Schema::new(0, any_estate_attribute(block, "a workload"))
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        [workload::validate_kind(config, &KINDS), validate_timeout(config)]
            .into_iter()
            .flatten()
            .collect()
    }

    async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics {
        outcome(self.restart(&request.config, progress).await)
    }
}
