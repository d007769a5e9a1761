//! `kubernetes_deployment` (apps/v1 Deployment): the spec as hashicorp/kubernetes has it,
//! plus `wait_for_rollout` and `timeouts`.
//!
//! `replicas` is sent only when configured, so an autoscaler can own it; the server's
//! defaults (strategy, revision history, progress deadline, pod template defaults) read back
//! as Optional+Computed attributes or blocks left out.

use std::time::Duration;

use plugin_runtime::{AttributePath, Diagnostic, Value};
use serde_json::Value as Json;

use super::pod_spec::POD_TEMPLATE;
use super::spec_convert::Scalar::{Bool, Int, IntOrString, IntString, Str};
use super::spec_convert::Shape::{Object, One};
use super::spec_convert::{Field, TableKind};
use super::spec_selector::LABEL_SELECTOR;
use super::spec_wait::{self, WaitFlag};
use crate::kind::{Behaviour, KindInfo};
use crate::objects::Readiness;
use crate::timeouts;

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_deployment",
    aliases: &["kubernetes_deployment_v1"],
    api_version: "apps/v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
    description: "A Deployment keeps a number of identical pods running and rolls out changes to them.",
};

const WAIT_FOR_ROLLOUT: &str = "wait_for_rollout";
/// hashicorp's timeout for every operation on a Deployment.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

const ROLLING_UPDATE: &[Field] = &[
    Field::defaulted(
        "max_surge",
        "maxSurge",
        One(IntOrString),
        "Pods that may be created above the desired number during an update, e.g. \"1\" or \"25%\".",
    ),
    Field::defaulted(
        "max_unavailable",
        "maxUnavailable",
        One(IntOrString),
        "Pods that may be unavailable during an update, e.g. \"0\" or \"25%\".",
    ),
];

const STRATEGY: &[Field] = &[
    Field::optional(
        "rolling_update",
        "rollingUpdate",
        Object(ROLLING_UPDATE),
        "Rolling update parameters.",
    )
    .server_default(r#"{"maxUnavailable": "25%", "maxSurge": "25%"}"#),
    Field::defaulted(
        "type",
        "type",
        One(Str),
        "`RollingUpdate` (the default) or `Recreate`.",
    ),
];

const SPEC: &[Field] = &[
    Field::optional(
        "min_ready_seconds",
        "minReadySeconds",
        One(Int),
        "Seconds a new pod must be ready, without crashing, to count as available.",
    ),
    Field::optional("paused", "paused", One(Bool), "Whether the deployment is paused."),
    Field::defaulted(
        "progress_deadline_seconds",
        "progressDeadlineSeconds",
        One(Int),
        "Seconds a rollout may take to make progress before it counts as failed; 600 by default.",
    ),
    Field::defaulted(
        "replicas",
        "replicas",
        One(IntString),
        "Number of desired pods. Left to the cluster (e.g. an autoscaler) when not set.",
    ),
    Field::defaulted(
        "revision_history_limit",
        "revisionHistoryLimit",
        One(Int),
        "Old ReplicaSets kept for rollback; 10 by default.",
    ),
    Field::optional(
        "selector",
        "selector",
        Object(LABEL_SELECTOR),
        "Label query over the pods this deployment manages.",
    ),
    Field::optional(
        "strategy",
        "strategy",
        Object(STRATEGY),
        "How pods are replaced with new ones.",
    )
    .server_default(
        r#"{"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}"#,
    ),
    Field::required(
        "template",
        "template",
        Object(POD_TEMPLATE),
        "The pods to create.",
    ),
];

const FIELDS: &[Field] = &[Field::required(
    "spec",
    "spec",
    Object(SPEC),
    "Specification of the desired behaviour of the deployment.",
)];

/// The Deployment kind.
pub struct Deployment;

impl TableKind for Deployment {
    const INFO: &'static KindInfo = &INFO;
    const FIELDS: &'static [Field] = FIELDS;
    const WAIT: Option<WaitFlag> = Some(WaitFlag {
        name: WAIT_FOR_ROLLOUT,
        description: "Wait for the rollout of the deployment to complete. Defaults to true.",
        operations: &["create", "update", "delete"],
    });
}

#[async_trait::async_trait]
impl Behaviour for Deployment {
    // The API server refuses to change a Deployment's selector.
    fn immutable_paths(&self) -> Vec<AttributePath> {
        vec![AttributePath::root("spec").index(0).attribute("selector")]
    }

    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if !spec_wait::enabled(planned, WAIT_FOR_ROLLOUT) {
            return Ok(None);
        }
        // A Deployment this apply created is at generation 1; later spec changes raise it.
        let operation = if object["metadata"]["generation"].as_i64().unwrap_or(1) <= 1 {
            "create"
        } else {
            "update"
        };
        let timeout = timeouts::of(planned, operation, DEFAULT_TIMEOUT);
        spec_wait::poll(
            client,
            &INFO,
            object,
            timeout,
            "finish its rollout",
            rollout_status,
        )
        .await
    }

    fn delete_wait(&self, resource: &Value) -> Option<Duration> {
        Some(timeouts::of(resource, "delete", DEFAULT_TIMEOUT))
    }
}

/// Whether a Deployment's rollout is complete, as `kubectl rollout status` decides.
fn rollout_status(deployment: &Json) -> Readiness {
    let count = |v: &Json| v.as_i64().unwrap_or(0);
    let status = &deployment["status"];
    let generation = count(&deployment["metadata"]["generation"]);
    let observed = count(&status["observedGeneration"]);
    if observed < generation {
        return Readiness::Waiting(format!(
            "the deployment controller has not yet seen generation {generation}, only {observed}"
        ));
    }
    let deadline_exceeded = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded");
    if deadline_exceeded {
        return Readiness::Failed("the rollout exceeded its progress deadline".to_string());
    }
    let desired = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let updated = count(&status["updatedReplicas"]);
    let total = count(&status["replicas"]);
    let available = count(&status["availableReplicas"]);
    if updated < desired {
        Readiness::Waiting(format!("{updated} of {desired} replicas updated"))
    } else if total > updated {
        Readiness::Waiting(format!("{} old replicas pending termination", total - updated))
    } else if available < updated {
        Readiness::Waiting(format!("{available} of {updated} updated replicas available"))
    } else {
        Readiness::Ready
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kind::Kind;
    use crate::kinds::spec_convert::test_support::*;

    fn container(name: &str, image: &str) -> Value {
        obj([("name", s(name)), ("image", s(image))])
    }

    /// The Deployment of kube-golden 09-deployment step 1, as a configuration.
    fn golden_config(replicas: Value) -> Value {
        config_with_image(replicas, "nginx:1.27.0")
    }

    fn config_with_image(replicas: Value, image: &str) -> Value {
        let mut web = container("web", image);
        web.set(
            "port",
            list([obj([("name", s("http")), ("container_port", Value::int(8080))])]),
        );
        web.set(
            "env",
            list([obj([("name", s("MODE")), ("value", s("production"))])]),
        );
        web.set(
            "resources",
            list([obj([
                ("requests", map([("cpu", "0.1"), ("memory", "128Mi")])),
                ("limits", map([("cpu", "0.5"), ("memory", "1024Mi")])),
            ])]),
        );
        let mut sidecar = container("sidecar", "busybox:latest");
        sidecar.set("command", strings(["sh", "-c", "sleep 3600"]));
        let spec = obj([
            ("replicas", replicas),
            ("selector", list([obj([("match_labels", map([("app", "web")]))])])),
            (
                "template",
                list([obj([
                    ("metadata", list([obj([("labels", map([("app", "web")]))])])),
                    ("spec", list([obj([("container", list([web, sidecar]))])])),
                ])]),
            ),
        ]);
        let mut config = complete(FIELDS, &obj([("spec", list([spec]))]));
        config.set(WAIT_FOR_ROLLOUT, Value::Null);
        config.set("timeouts", Value::Null);
        config
    }

    #[test]
    fn to_object_sends_only_what_is_configured() {
        let (request, _) = golden("09-deployment.json", 1);
        let config = golden_config(s("2"));
        let sent = Deployment.to_object(&planned_create(FIELDS, &config)).unwrap();
        assert_eq!(Json::Object(sent), json!({"spec": request["spec"]}));

        let without_replicas = Deployment.to_object(&golden_config(Value::Null)).unwrap();
        assert!(
            without_replicas["spec"].get("replicas").is_none(),
            "an autoscaler owns replicas"
        );
    }

    #[test]
    fn apply_then_refresh_has_no_diff() {
        let (_, response) = golden("09-deployment.json", 1);
        let config = golden_config(s("2"));
        let mut planned = planned_create(FIELDS, &config);
        planned.set(WAIT_FOR_ROLLOUT, Value::unknown());
        let state = Deployment.from_object(&response, &planned);
        assert_eq!(diff(FIELDS, &config, &state), Vec::<String>::new());
        assert_eq!(state.get(WAIT_FOR_ROLLOUT), &Value::Bool(true));

        let spec = &state.get("spec").elements()[0];
        assert_eq!(
            spec.get("strategy"),
            &list([]),
            "server-default strategy left out"
        );
        assert_eq!(spec.get("revision_history_limit"), &Value::int(10));
        assert_eq!(spec.get("progress_deadline_seconds"), &Value::int(600));
        let pod = &spec.get("template").elements()[0].get("spec").elements()[0];
        assert_eq!(pod.get("dns_policy"), &s("ClusterFirst"));
        assert_eq!(pod.get("security_context"), &list([]));
        let [web, sidecar] = pod.get("container").elements() else {
            panic!("two containers")
        };
        let resources = &web.get("resources").elements()[0];
        assert_eq!(
            resources.get("limits"),
            &map([("cpu", "0.5"), ("memory", "1024Mi")]),
            "configured spelling"
        );
        assert_eq!(web.get("image_pull_policy"), &s("IfNotPresent"));
        assert_eq!(web.get("port").elements()[0].get("protocol"), &s("TCP"));
        assert_eq!(sidecar.get("image_pull_policy"), &s("Always"));
        assert_eq!(sidecar.get("resources"), &list([]));

        assert_eq!(
            Deployment.from_object(&response, &state),
            state,
            "refresh is stable"
        );
        // A template change (golden step 5) reads back just as cleanly.
        let (_, changed) = golden("09-deployment.json", 5);
        let refreshed = Deployment.from_object(&changed, &state);
        assert_eq!(
            diff(FIELDS, &config, &refreshed),
            [
                ".spec[0].template[0].spec[0].container[0].image: configured String(\"nginx:1.27.0\"), state String(\"nginx:1.27.1\")"
            ]
        );
    }

    #[test]
    fn replicas_owned_by_an_autoscaler_read_back_without_a_diff() {
        let (_, scaled) = golden("09-deployment.json", 9);
        let config = config_with_image(Value::Null, "nginx:1.27.1");
        let state = Deployment.from_object(&scaled, &planned_create(FIELDS, &config));
        assert_eq!(state.get("spec").elements()[0].get("replicas"), &s("4"));
        assert_eq!(diff(FIELDS, &config, &state), Vec::<String>::new());
    }

    #[test]
    fn import_leaves_server_defaults_out() {
        let (_, response) = golden("09-deployment.json", 1);
        let state = Deployment.from_object(&response, &Value::Null);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("strategy"), &list([]));
        assert_eq!(spec.get("replicas"), &s("2"));
        let pod = &spec.get("template").elements()[0].get("spec").elements()[0];
        assert_eq!(pod.get("security_context"), &list([]));
        let resources = &pod.get("container").elements()[0].get("resources").elements()[0];
        assert_eq!(
            resources.get("limits"),
            &map([("cpu", "500m"), ("memory", "1Gi")])
        );
        assert_eq!(pod.get("container").elements()[1].get("resources"), &list([]));
        assert_eq!(state.get("timeouts"), &Value::Null);
        // The imported state is what a configuration must say to plan nothing.
        assert_eq!(Deployment.from_object(&response, &state), state);
    }

    #[test]
    fn a_strategy_other_than_the_default_is_kept() {
        let (_, mut response) = golden("09-deployment.json", 1);
        response["spec"]["strategy"] = json!({"type": "Recreate"});
        let state = Deployment.from_object(&response, &Value::Null);
        let strategy = &state.get("spec").elements()[0].get("strategy").elements()[0];
        assert_eq!(strategy.get("type"), &s("Recreate"));
    }

    #[test]
    fn bad_values_name_their_attribute() {
        let err = Deployment.to_object(&golden_config(s("two"))).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert_eq!(
            err.0[0].attribute.as_ref().unwrap().to_string(),
            "spec[0].replicas"
        );
    }

    #[test]
    fn schema_matches_hashicorp_shapes() {
        let block = Deployment.block();
        let spec = block.find_block("spec").unwrap();
        assert_eq!((spec.min_items, spec.max_items), (1, 1));
        let replicas = spec.block.find_attribute("replicas").unwrap();
        assert!(replicas.optional && replicas.computed && replicas.ty == plugin_runtime::Type::String);
        let pod = &spec
            .block
            .find_block("template")
            .unwrap()
            .block
            .find_block("spec")
            .unwrap()
            .block;
        let container = &pod.find_block("container").unwrap().block;
        for name in [
            "env",
            "env_from",
            "port",
            "resources",
            "liveness_probe",
            "volume_mount",
            "security_context",
        ] {
            assert!(container.find_block(name).is_some(), "{name}");
        }
        assert!(pod.find_block("init_container").is_some() && pod.find_block("toleration").is_some());
        assert!(block.find_attribute(WAIT_FOR_ROLLOUT).is_some() && block.find_block("timeouts").is_some());
    }

    #[test]
    fn deletes_wait_for_the_configured_timeout() {
        let resource = obj([("timeouts", obj([("delete", s("2m"))]))]);
        assert_eq!(Deployment.delete_wait(&resource), Some(Duration::from_secs(120)));
        assert_eq!(Deployment.delete_wait(&Value::Null), Some(DEFAULT_TIMEOUT));
    }

    #[test]
    fn rollout_status_follows_kubectl() {
        let deployment = |generation: i64, status: Json| json!({"metadata": {"generation": generation}, "spec": {"replicas": 2}, "status": status});
        let waiting = |r: Readiness| match r {
            Readiness::Waiting(reason) => reason,
            _ => panic!("expected waiting"),
        };
        assert!(waiting(rollout_status(&deployment(1, json!({})))).contains("generation 1"));
        let (_, after_status) = golden("09-deployment.json", 3);
        assert!(matches!(rollout_status(&after_status), Readiness::Ready));
        let (_, template_changed) = golden("09-deployment.json", 5);
        assert!(waiting(rollout_status(&template_changed)).contains("generation 2"));
        let partial =
            json!({"observedGeneration": 1, "replicas": 3, "updatedReplicas": 2, "availableReplicas": 1});
        assert_eq!(
            waiting(rollout_status(&deployment(1, partial))),
            "1 old replicas pending termination"
        );
        let slow =
            json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "availableReplicas": 1});
        assert_eq!(
            waiting(rollout_status(&deployment(1, slow))),
            "1 of 2 updated replicas available"
        );
        let stuck = json!({"observedGeneration": 1, "conditions": [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]});
        assert!(matches!(
            rollout_status(&deployment(1, stuck)),
            Readiness::Failed(_)
        ));
    }
}
