//! `kubernetes_job_run`: runs a Job made from a CronJob's `jobTemplate` (as `kubectl create job
//! --from=cronjob/<name>` does: same labels and annotations, `cronjob.kubernetes.io/instantiate:
//! manual`, the CronJob as its controller) or from an inline `job_template` (a Job's
//! `metadata` and `spec` in the API's own shape, as `kubernetes_manifest` takes them). The Job
//! carries this estate's label and `ttlSecondsAfterFinished`, which has the cluster delete it
//! once it has been finished for that long. With `wait` (the default) the action follows it to
//! the end: success, or the failed pods' reasons and exit codes.

use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::batch::v1 as batch;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ApiResource, ListParams};
use kube_estate::ESTATE_LABEL;
use plugin_runtime::{
    Action, Attribute, AttributePath, Block, Diagnostic, Diagnostics, InvokeRequest, Progress, Schema, Type,
    Value,
};
use serde_json::{Map, Value as Json, json};

use super::{
    ActionError, POLL_INTERVAL, any_estate, any_estate_attribute, ensure_ours, namespace_of, outcome, text,
    timeout_of, validate_timeout, wait_attributes, waited, waits,
};
use crate::context::Context;
use crate::objects::{self, Pace, Readiness, Target, WaitError};
use crate::readiness;

const TYPE_NAME: &str = "kubernetes_job_run";

/// The field manager of the Jobs it creates.
pub const MANAGER: &str = "tofu-live-job-run";

/// `ttlSecondsAfterFinished` when neither the config nor the template sets one: an hour.
const DEFAULT_TTL_SECONDS: i64 = 3600;

/// The annotation `kubectl create job --from=cronjob/...` puts on the Job.
const INSTANTIATE: &str = "cronjob.kubernetes.io/instantiate";

/// The label the Job controller puts on a Job's pods.
const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";

pub struct JobRun {
    ctx: Arc<Context>,
}

impl JobRun {
    pub fn new(ctx: Arc<Context>) -> JobRun {
        JobRun { ctx }
    }

    async fn run(&self, config: &Value, progress: &Progress) -> Result<Diagnostics, ActionError> {
        let connection = self.ctx.connection()?;
        let client = &connection.client;
        let estate = connection.estate.as_str();
        let namespace = namespace_of(&self.ctx, config);
        let cronjob = match text(config, "from_cronjob") {
            Some(name) => {
                let target = Target {
                    resource: ApiResource::erase::<batch::CronJob>(&()),
                    namespace: Some(namespace.clone()),
                    name: name.to_string(),
                };
                let object = target.object_ref();
                let live = objects::get(client, &target)
                    .await?
                    .ok_or_else(|| ActionError::NotFound {
                        object: object.clone(),
                        action: TYPE_NAME,
                    })?;
                ensure_ours(&live, &object, estate, any_estate(config), TYPE_NAME)?;
                Some(live)
            }
            None => None,
        };
        let body = job_body(config, &namespace, estate, cronjob.as_ref())?;
        let meta = &body["metadata"];
        let mut target = Target {
            resource: ApiResource::erase::<batch::Job>(&()),
            namespace: Some(namespace.clone()),
            name: (meta["name"].as_str().or(meta["generateName"].as_str()))
                .unwrap_or_default()
                .to_string(),
        };
        let created = objects::create(client, &target, &body, MANAGER).await?;
        target.name = created["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let name = target.name.clone();
        progress.report(format!("{name}: created"));
        if !waits(config) {
            return Ok(Diagnostics::new());
        }
        let check = |live: Option<&Json>| {
            let Some(live) = live else {
                return Readiness::Failed("it was deleted while it ran".to_string());
            };
            let readiness = readiness::job(live);
            let counts = counts(live);
            match &readiness {
                Readiness::Ready => progress.report(format!("{name}: complete, {counts}")),
                Readiness::Failed(_) => progress.report(format!("{name}: failed, {counts}")),
                Readiness::Waiting(_) => progress.report(format!("{name}: {counts}")),
            }
            readiness
        };
        let pace = Pace::new(POLL_INTERVAL, timeout_of(config));
        match objects::poll(client, &target, Some(created.clone()), pace, "complete", check).await {
            Ok(_) => Ok(Diagnostics::new()),
            Err(error @ (WaitError::Failed { .. } | WaitError::Timeout(_))) => {
                let ttl = body["spec"]["ttlSecondsAfterFinished"]
                    .as_i64()
                    .unwrap_or(DEFAULT_TTL_SECONDS);
                let kept = format!(
                    "The Job is kept for {ttl} s after it finishes (ttlSecondsAfterFinished): `kubectl \
                     describe job {name} -n {namespace}` shows it."
                );
                let mut diagnostic = waited(error, &kept);
                let pods = job_pods(client, &namespace, &name).await?;
                let failures = pod_failures(&pods);
                if !failures.is_empty() {
                    diagnostic.detail = format!("{}\nPods:\n  {}", diagnostic.detail, failures.join("\n  "));
                }
                Err(ActionError::Other(diagnostic))
            }
            Err(error) => Err(ActionError::wait(
                error,
                "The Job was created and runs on in the cluster.",
            )),
        }
    }
}

/// `1 active, 0 of 1 succeeded` (and how many failed, if any).
fn counts(job: &Json) -> String {
    let int = |pointer: &str| job.pointer(pointer).and_then(Json::as_i64).unwrap_or(0);
    let completions = job
        .pointer("/spec/completions")
        .and_then(Json::as_i64)
        .unwrap_or(1);
    let mut line = format!(
        "{} active, {} of {completions} succeeded",
        int("/status/active"),
        int("/status/succeeded")
    );
    let failed = int("/status/failed");
    if failed > 0 {
        line.push_str(&format!(", {failed} failed"));
    }
    line
}

/// The pods the Job controller made for Job `name`.
async fn job_pods(client: &kube::Client, namespace: &str, name: &str) -> Result<Vec<Json>, ActionError> {
    let params = ListParams::default().labels(&format!("{JOB_NAME_LABEL}={name}"));
    let pods = objects::list_with(client, &ApiResource::erase::<Pod>(&()), Some(namespace), &params).await?;
    Ok(pods)
}

/// Why each failing pod failed: its containers' termination reasons and exit codes, or what
/// they wait for (an image that cannot be pulled), or the pod's own reason.
fn pod_failures(pods: &[Json]) -> Vec<String> {
    let mut out = Vec::new();
    for pod in pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let status = &pod["status"];
        let statuses = ["initContainerStatuses", "containerStatuses"]
            .iter()
            .flat_map(|key| status[key].as_array().into_iter().flatten());
        let mut found = false;
        for container in statuses {
            let Some(why) = container_failure(container) else {
                continue;
            };
            let container = container["name"].as_str().unwrap_or_default();
            out.push(format!("pod {name}, container {container}: {why}"));
            found = true;
        }
        if !found && let Some(reason) = status["reason"].as_str() {
            let message = status["message"].as_str().unwrap_or_default();
            out.push(format!("pod {name}: {reason} {message}").trim_end().to_string());
        }
    }
    out
}

/// A container's termination with a non-zero exit code (now, or before its last restart), or
/// the reason it waits for other than starting normally.
fn container_failure(container: &Json) -> Option<String> {
    let terminated = ["state", "lastState"]
        .iter()
        .map(|key| &container[key]["terminated"])
        .find(|t| t["exitCode"].as_i64().is_some_and(|c| c != 0));
    if let Some(t) = terminated {
        let reason = t["reason"].as_str().unwrap_or("Error");
        let mut why = format!("{reason}, exit code {}", t["exitCode"]);
        if let Some(message) = t["message"].as_str().filter(|m| !m.is_empty()) {
            why.push_str(&format!(": {message}"));
        }
        return Some(why);
    }
    let waiting = &container["state"]["waiting"];
    let reason = waiting["reason"]
        .as_str()
        .filter(|r| *r != "ContainerCreating" && *r != "PodInitializing")?;
    let message = waiting["message"].as_str().unwrap_or_default();
    Some(format!("waiting, {reason} {message}").trim_end().to_string())
}

/// The Job to create: from the CronJob's `jobTemplate` or the config's `job_template`, with
/// the estate label, its name (or a generated one) and `ttlSecondsAfterFinished`.
fn job_body(
    config: &Value,
    namespace: &str,
    estate: &str,
    cronjob: Option<&Json>,
) -> Result<Json, Diagnostic> {
    let (template, base) = match cronjob {
        Some(cronjob) => (
            cronjob["spec"]["jobTemplate"].clone(),
            cronjob["metadata"]["name"].as_str().unwrap_or("job").to_string(),
        ),
        None => {
            let template = config.get("job_template").to_json();
            let meta = &template["metadata"];
            let base = (meta["generateName"].as_str().map(|g| g.trim_end_matches('-')))
                .or(meta["name"].as_str())
                .unwrap_or("job")
                .to_string();
            (template, base)
        }
    };
    let mut spec = template["spec"].clone();
    if !spec.is_object() || !spec["template"].is_object() {
        return Err(Diagnostic::error(
            "No pod template",
            "The Job's template has no spec.template (the pods to run).",
        )
        .at(AttributePath::root("job_template")));
    }
    let ttl = config
        .get("ttl_seconds_after_finished")
        .as_i64()
        .or(spec["ttlSecondsAfterFinished"].as_i64())
        .unwrap_or(DEFAULT_TTL_SECONDS);
    spec["ttlSecondsAfterFinished"] = json!(ttl);
    let source = &template["metadata"];
    let mut labels = source["labels"].as_object().cloned().unwrap_or_default();
    labels.insert(ESTATE_LABEL.into(), json!(estate));
    let mut annotations = source["annotations"].as_object().cloned().unwrap_or_default();
    let mut metadata = Map::new();
    match text(config, "name") {
        Some(name) => metadata.insert("name".into(), json!(name)),
        None => metadata.insert("generateName".into(), json!(format!("{base}-"))),
    };
    metadata.insert("namespace".into(), json!(namespace));
    if let Some(cronjob) = cronjob {
        annotations.insert(INSTANTIATE.into(), json!("manual"));
        metadata.insert(
            "ownerReferences".into(),
            json!([{
                "apiVersion": "batch/v1", "kind": "CronJob",
                "name": cronjob["metadata"]["name"], "uid": cronjob["metadata"]["uid"],
                "controller": true, "blockOwnerDeletion": true,
            }]),
        );
    }
    metadata.insert("labels".into(), Json::Object(labels));
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Json::Object(annotations));
    }
    Ok(json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}))
}

fn validate(config: &Value) -> Diagnostics {
    let mut out: Diagnostics = validate_timeout(config).into_iter().collect();
    let from = config.get("from_cronjob");
    let template = config.get("job_template");
    if !from.is_unknown() && !template.is_unknown() {
        match (from.is_null(), template.is_null()) {
            (true, true) => out.push(Diagnostic::error(
                "No Job to run",
                "Give from_cronjob (a CronJob's name) or job_template (a Job's metadata and spec).",
            )),
            (false, false) => out.push(
                Diagnostic::error("Two Jobs to run", "Give from_cronjob or job_template, not both.")
                    .at(AttributePath::root("job_template")),
            ),
            _ => {}
        }
    }
    if template.is_wholly_known() && !template.is_null() {
        let json = template.to_json();
        if !json["spec"]["template"].is_object() {
            out.push(
                Diagnostic::error(
                    "No pod template",
                    "job_template must be a Job's metadata and spec in the API's shape, with \
                     spec.template (the pods to run): { spec = { template = { spec = { … } } } }.",
                )
                .at(AttributePath::root("job_template")),
            );
        }
    }
    if let Some(ttl) = config
        .get("ttl_seconds_after_finished")
        .as_i64()
        .filter(|t| *t < 0)
    {
        out.push(
            Diagnostic::error(
                "Invalid TTL",
                format!("ttl_seconds_after_finished is {ttl}; it must be 0 or more"),
            )
            .at(AttributePath::root("ttl_seconds_after_finished")),
        );
    }
    out
}

#[async_trait]
impl Action for JobRun {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        let block = Block::new(
            "Runs a Job, made from a CronJob's template (as `kubectl create job --from=cronjob/<name>` \
             does) or from an inline `job_template`, and waits for it to finish: it reports success, \
             or the failed pods' reasons and exit codes. The Job carries this estate's label and is \
             left for the cluster to delete `ttl_seconds_after_finished` after it finished. A CronJob \
             of another estate (or of none) is refused unless `any_estate = true`.",
        )
        .attribute(Attribute::optional(
            "namespace",
            Type::String,
            "The namespace of the CronJob and of the Job (default `default`).",
        ))
        .attribute(Attribute::optional(
            "from_cronjob",
            Type::String,
            "The name of the CronJob whose `jobTemplate` the Job is made from.",
        ))
        .attribute(Attribute::optional(
            "job_template",
            Type::Dynamic,
            "The Job to run when there is no CronJob: its `metadata` (labels, annotations, \
             `generateName`) and `spec` in the API's own shape, as `kubernetes_manifest` takes them \
             (`{ spec = { backoffLimit = 0, template = { spec = { restartPolicy = \"Never\", \
             containers = [...] } } } }`).",
        ))
        .attribute(Attribute::optional(
            "name",
            Type::String,
            "The Job's name. When unset, the API server generates one from the CronJob's name (or the \
             template's `generateName` or `name`) and a random suffix, so each run has a Job of its own.",
        ))
        .attribute(Attribute::optional(
            "ttl_seconds_after_finished",
            Type::Number,
            "How long the finished Job (and its pods) stays before the cluster deletes it, in seconds; \
             default the template's value, else 3600.",
        ));
        let block = wait_attributes(block, "the Job has finished");
        Schema::new(0, any_estate_attribute(block, "a CronJob"))
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        validate(config)
    }

    async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics {
        outcome(self.run(&request.config, progress).await)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cronjob() -> Json {
        json!({
            "metadata": {"name": "nightly", "namespace": "shop", "uid": "u-1"},
            "spec": {"jobTemplate": {
                "metadata": {"labels": {"app": "report"}},
                "spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "report", "image": "report:1"}]}}}
            }}
        })
    }

    #[test]
    fn a_job_from_a_cronjob_is_what_kubectl_create_job_makes_plus_the_estate() {
        let config = Value::object([
            ("namespace", Value::string("shop")),
            ("from_cronjob", Value::string("nightly")),
        ]);
        let job = job_body(&config, "shop", "app", Some(&cronjob())).expect("a job");
        let meta = &job["metadata"];
        assert_eq!(meta["generateName"], "nightly-");
        assert_eq!(meta["namespace"], "shop");
        assert_eq!(meta["labels"], json!({"app": "report", "tofu-estate": "app"}));
        assert_eq!(meta["annotations"][INSTANTIATE], "manual");
        assert_eq!(meta["ownerReferences"][0]["uid"], "u-1");
        assert_eq!(meta["ownerReferences"][0]["controller"], true);
        assert_eq!(job["spec"]["backoffLimit"], 1);
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], DEFAULT_TTL_SECONDS);
    }

    #[test]
    fn an_inline_template_keeps_its_ttl_unless_the_config_sets_one() {
        let template = Value::from_json(&json!({
            "metadata": {"name": "migrate"},
            "spec": {"ttlSecondsAfterFinished": 60, "template": {"spec": {"containers": []}}}
        }));
        let config = Value::object([("job_template", template.clone())]);
        assert!(validate(&config).is_empty());
        let job = job_body(&config, "default", "app", None).expect("a job");
        assert_eq!(job["metadata"]["generateName"], "migrate-");
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 60);
        assert!(job["metadata"].get("ownerReferences").is_none());
        let config = Value::object([
            ("job_template", template),
            ("name", Value::string("migrate-7")),
            ("ttl_seconds_after_finished", Value::int(5)),
        ]);
        let job = job_body(&config, "default", "app", None).expect("a job");
        assert_eq!(job["metadata"]["name"], "migrate-7");
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 5);
    }

    #[test]
    fn exactly_one_source_with_a_pod_template() {
        assert_eq!(validate(&Value::Null).0[0].summary, "No Job to run");
        let both = Value::object([
            ("from_cronjob", Value::string("nightly")),
            (
                "job_template",
                Value::from_json(&json!({"spec": {"template": {}}})),
            ),
        ]);
        assert_eq!(validate(&both).0[0].summary, "Two Jobs to run");
        let podless = Value::object([("job_template", Value::from_json(&json!({"spec": {}})))]);
        let d = validate(&podless);
        assert_eq!(d.0[0].attribute.as_ref().unwrap().to_string(), "job_template");
        let unknown = Value::object([("from_cronjob", Value::unknown())]);
        assert!(validate(&unknown).is_empty());
    }

    #[test]
    fn failed_pods_are_reported_with_their_reasons_and_exit_codes() {
        let pods = [
            json!({"metadata": {"name": "run-a"}, "status": {"phase": "Failed", "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}),
            json!({"metadata": {"name": "run-b"}, "status": {"phase": "Running", "containerStatuses": [
                {"name": "main", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s"}},
                 "lastState": {"terminated": {"exitCode": 2, "reason": "Error"}}}]}}),
            json!({"metadata": {"name": "run-c"}, "status": {"phase": "Pending", "containerStatuses": [
                {"name": "main", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}}]}}),
            json!({"metadata": {"name": "run-d"}, "status": {"phase": "Failed", "reason": "DeadlineExceeded"}}),
            json!({"metadata": {"name": "run-e"}, "status": {"phase": "Succeeded", "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}),
        ];
        assert_eq!(
            pod_failures(&pods),
            [
                "pod run-a, container main: Error, exit code 1",
                "pod run-b, container main: Error, exit code 2",
                "pod run-c, container main: waiting, ImagePullBackOff not found",
                "pod run-d: DeadlineExceeded",
            ]
        );
        let job = json!({"spec": {"completions": 2}, "status": {"active": 1, "succeeded": 1, "failed": 3}});
        assert_eq!(counts(&job), "1 active, 1 of 2 succeeded, 3 failed");
    }
}
