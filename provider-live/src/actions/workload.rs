//! The workloads the restart and scale actions act on (`kind`, `name`, `namespace`): where each
//! lives in the API, when its rollout is done (the same checks as the typed resources'
//! `wait_for_rollout`, [`crate::readiness`]) and how its progress reads:
//! `web: 2 of 3 updated, 1 available`.

use kube::api::ApiResource;
use kube_estate::ObjectRef;
use plugin_runtime::{Attribute, Block, Diagnostic, Type, Value};
use serde_json::Value as Json;

use super::{invalid, namespace_of, text};
use crate::context::Context;
use crate::objects::{Readiness, Target};
use crate::readiness;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

impl WorkloadKind {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
        }
    }

    fn parse(kind: &str) -> Option<WorkloadKind> {
        [
            WorkloadKind::Deployment,
            WorkloadKind::StatefulSet,
            WorkloadKind::DaemonSet,
        ]
        .into_iter()
        .find(|k| k.name() == kind)
    }

    fn resource(self) -> ApiResource {
        use k8s_openapi::api::apps::v1;
        match self {
            WorkloadKind::Deployment => ApiResource::erase::<v1::Deployment>(&()),
            WorkloadKind::StatefulSet => ApiResource::erase::<v1::StatefulSet>(&()),
            WorkloadKind::DaemonSet => ApiResource::erase::<v1::DaemonSet>(&()),
        }
    }

    /// Whether the controller has rolled out the latest spec, and if not, why.
    pub fn rollout(self, live: &Json) -> Readiness {
        match self {
            WorkloadKind::Deployment => readiness::deployment(live),
            WorkloadKind::StatefulSet => readiness::stateful_set(live),
            WorkloadKind::DaemonSet => readiness::daemon_set(live),
        }
    }

    /// The replica counts of a progress line: `2 of 3 updated, 1 available`, or what the
    /// controller has not seen yet.
    pub fn counts(self, live: &Json) -> String {
        let int = |pointer: &str| live.pointer(pointer).and_then(Json::as_i64).unwrap_or(0);
        let generation = int("/metadata/generation");
        if int("/status/observedGeneration") < generation {
            return format!("waiting for the controller to see generation {generation}");
        }
        let desired = || live.pointer("/spec/replicas").and_then(Json::as_i64).unwrap_or(1);
        match self {
            WorkloadKind::Deployment => format!(
                "{} of {} updated, {} available",
                int("/status/updatedReplicas"),
                desired(),
                int("/status/availableReplicas")
            ),
            WorkloadKind::StatefulSet => format!(
                "{} of {} updated, {} ready",
                int("/status/updatedReplicas"),
                desired(),
                int("/status/readyReplicas")
            ),
            WorkloadKind::DaemonSet => format!(
                "{} of {} updated, {} available",
                int("/status/updatedNumberScheduled"),
                int("/status/desiredNumberScheduled"),
                int("/status/numberAvailable")
            ),
        }
    }
}

/// One workload, as an action's config names it.
#[derive(Clone, Debug)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub name: String,
    pub namespace: String,
}

impl Workload {
    /// The workload a wholly known config names; `kinds` are those the action takes.
    pub fn of(ctx: &Context, config: &Value, kinds: &[WorkloadKind]) -> Result<Workload, Diagnostic> {
        let kind = text(config, "kind").unwrap_or_default();
        let kind = WorkloadKind::parse(kind)
            .filter(|k| kinds.contains(k))
            .ok_or_else(|| unknown_kind(kind, kinds))?;
        Ok(Workload {
            kind,
            name: text(config, "name").unwrap_or_default().to_string(),
            namespace: namespace_of(ctx, config),
        })
    }

    pub fn target(&self) -> Target {
        Target {
            resource: self.kind.resource(),
            namespace: Some(self.namespace.clone()),
            name: self.name.clone(),
        }
    }

    pub fn object(&self) -> ObjectRef {
        ObjectRef::namespaced(self.kind.name(), &self.namespace, &self.name)
    }

    /// A progress line: `web: ` and `what`.
    pub fn line(&self, what: &str) -> String {
        format!("{}: {what}", self.name)
    }
}

/// The error for a `kind` the action does not take, when it is known.
pub fn validate_kind(config: &Value, kinds: &[WorkloadKind]) -> Option<Diagnostic> {
    let kind = text(config, "kind")?;
    WorkloadKind::parse(kind)
        .filter(|k| kinds.contains(k))
        .is_none()
        .then(|| unknown_kind(kind, kinds))
}

fn unknown_kind(kind: &str, kinds: &[WorkloadKind]) -> Diagnostic {
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    invalid(
        "kind",
        "Unsupported kind",
        format!("kind is {kind:?}; this action takes {}.", names.join(", ")),
    )
}

/// The `kind`, `name` and `namespace` attributes naming a workload of `kinds`.
pub fn attributes(block: Block, kinds: &[WorkloadKind]) -> Block {
    let names: Vec<String> = kinds.iter().map(|k| format!("`{}`", k.name())).collect();
    block
        .attribute(Attribute::required(
            "kind",
            Type::String,
            &format!("The workload's kind: {}.", names.join(", ")),
        ))
        .attribute(Attribute::required("name", Type::String, "The workload's name."))
        .attribute(Attribute::optional(
            "namespace",
            Type::String,
            "The workload's namespace (default `default`).",
        ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn progress_counts_per_kind() {
        let deployment = json!({
            "metadata": {"generation": 2}, "spec": {"replicas": 3},
            "status": {"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 1}
        });
        assert_eq!(
            WorkloadKind::Deployment.counts(&deployment),
            "2 of 3 updated, 1 available"
        );
        let unseen = json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2}});
        assert_eq!(
            WorkloadKind::StatefulSet.counts(&unseen),
            "waiting for the controller to see generation 3"
        );
        let daemons = json!({"metadata": {"generation": 1}, "status": {"observedGeneration": 1,
            "desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2}});
        assert_eq!(
            WorkloadKind::DaemonSet.counts(&daemons),
            "2 of 2 updated, 2 available"
        );
    }

    #[test]
    fn a_kind_the_action_does_not_take_is_an_error_at_kind() {
        let kinds = [WorkloadKind::Deployment, WorkloadKind::StatefulSet];
        let config = Value::object([("kind", Value::string("DaemonSet")), ("name", Value::string("x"))]);
        let d = validate_kind(&config, &kinds).expect("an error");
        assert_eq!(d.attribute.unwrap().to_string(), "kind");
        assert!(d.detail.contains("Deployment, StatefulSet"), "{}", d.detail);
        let config = Value::object([
            ("kind", Value::string("Deployment")),
            ("name", Value::string("web")),
        ]);
        let workload = Workload::of(&Context::default(), &config, &kinds).expect("a workload");
        assert_eq!(workload.object().to_string(), "Deployment \"default/web\"");
        assert_eq!(workload.line("restarting"), "web: restarting");
    }
}
