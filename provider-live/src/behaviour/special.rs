//! The kinds whose behaviour is code, not a row of `catalog/behaviour.tsv` ([`crate::behaviour`]):
//! a Pod waits for the phases its `target_state` names and drops the tolerations the API server
//! adds by itself; a CertificateSigningRequest is approved (`auto_approve`) and waits for its
//! certificate; a Service sends `allocateLoadBalancerNodePorts` and `loadBalancerClass` only as a LoadBalancer; an
//! Ingress path gets the `pathType` networking/v1beta1 implied; an autoscaling/v2
//! HorizontalPodAutoscaler takes autoscaling/v1's `target_cpu_utilization_percentage`.

use std::time::Duration;

use plugin_runtime::{Diagnostic, Value};
use serde_json::{Map, Value as Json};

use crate::kind::KindInfo;
use crate::readiness::ready_wait::{self, gone};
use crate::readiness::{self, Readiness};
use crate::timeouts;

/// A kind with behaviour of its own, beside its rows of the behaviour table.
pub enum Special {
    /// A pod waits for one of the phases in `target_state` (Running by default).
    Pod,
    /// An ingress path without a `pathType` gets `ImplementationSpecific`, as networking/v1beta1
    /// did implicitly (hashicorp's `kubernetes_ingress` has that shape).
    Ingress,
    /// A Service sends `allocateLoadBalancerNodePorts` and `loadBalancerClass` only as a
    /// LoadBalancer, as hashicorp's expand does (structure_service_spec.go:238): the API server
    /// refuses them on any other type, and the first is planned `true` by default.
    Service,
    /// A certificate signing request is approved (`auto_approve`, true by default) and waits
    /// for its certificate.
    SigningRequest,
    /// hashicorp's unversioned `kubernetes_horizontal_pod_autoscaler` writes autoscaling/v1,
    /// whose `targetCPUUtilizationPercentage` autoscaling/v2 spells as a cpu Resource metric
    /// (resource_kubernetes_horizontal_pod_autoscaler.go:206, `useV2Beta2`): written as that
    /// metric, read back as the percentage where the resource sets it and no `metric`.
    Autoscaler,
}

/// The catalog's JSON key for `target_cpu_utilization_percentage` (overrides.tsv): autoscaling/v1's
/// field, which an autoscaling/v2 object holds as a metric.
const TARGET_CPU: &str = "targetCPUUtilizationPercentage";

impl Special {
    /// The special behaviour of Kubernetes kind `kind`, if it has one.
    pub fn of(kind: &str, api_version: &str) -> Option<Special> {
        match kind {
            "HorizontalPodAutoscaler" if api_version == "autoscaling/v2" => Some(Special::Autoscaler),
            "Pod" => Some(Special::Pod),
            "Ingress" => Some(Special::Ingress),
            "Service" => Some(Special::Service),
            "CertificateSigningRequest" => Some(Special::SigningRequest),
            _ => None,
        }
    }

    /// The kind's own wait after a write; `None` when it has none (the table's, if any, runs).
    pub async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Option<Result<Option<Json>, Diagnostic>> {
        match self {
            Special::Pod => Some(pod_phase(client, object, planned).await),
            Special::SigningRequest => Some(approve_and_sign(client, object, planned).await),
            Special::Ingress | Special::Service | Special::Autoscaler => None,
        }
    }

    /// See [`crate::kind::Behaviour::unclaim`].
    pub fn unclaim(&self, object: &mut Json) {
        if !matches!(self, Special::Pod) {
            return;
        }
        // The DefaultTolerationSeconds admission plugin's tolerations.
        if let Some(tolerations) = object
            .pointer_mut("/spec/tolerations")
            .and_then(Json::as_array_mut)
        {
            tolerations.retain(|t| !crate::tolerations::is_admission_default(t));
        }
    }

    /// See [`crate::kind::Behaviour::imported`].
    pub fn imported(&self, object: &Json, state: &mut Value) {
        if matches!(self, Special::SigningRequest) {
            let approved = object["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Approved" && c["status"] == "True");
            state.set("auto_approve", Value::Bool(approved));
        }
    }

    /// See [`crate::kind::Behaviour::complete`].
    pub fn complete(&self, object: &mut Map<String, Json>) {
        match self {
            Special::Service => {
                if let Some(spec) = object.get_mut("spec").and_then(Json::as_object_mut)
                    && spec.get("type").and_then(Json::as_str) != Some("LoadBalancer")
                {
                    spec.remove("allocateLoadBalancerNodePorts");
                    spec.remove("loadBalancerClass");
                }
            }
            Special::Ingress => {
                let rules = object
                    .get_mut("spec")
                    .and_then(|s| s.get_mut("rules"))
                    .and_then(Json::as_array_mut);
                for rule in rules.into_iter().flatten() {
                    let paths = rule.pointer_mut("/http/paths").and_then(Json::as_array_mut);
                    for path in paths.into_iter().flatten().filter_map(Json::as_object_mut) {
                        path.entry("pathType")
                            .or_insert_with(|| Json::from("ImplementationSpecific"));
                    }
                }
            }
            Special::Autoscaler => {
                let Some(spec) = object.get_mut("spec").and_then(Json::as_object_mut) else {
                    return;
                };
                let Some(percent) = spec.remove(TARGET_CPU) else {
                    return;
                };
                // autoscaling/v1 has no metrics: with `metric` blocks the percentage is unused.
                if spec
                    .get("metrics")
                    .and_then(Json::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    spec.insert("metrics".into(), serde_json::json!([cpu_metric(percent)]));
                }
            }
            Special::Pod | Special::SigningRequest => {}
        }
    }

    /// See [`crate::kind::Behaviour::read_view`].
    pub fn read_view(&self, object: &Json, prior: &Value) -> Option<(Json, Value)> {
        match self {
            Special::Pod => return crate::tolerations::users(object, prior),
            Special::Autoscaler => {}
            _ => return None,
        }
        let spec = prior.get("spec").elements().first().cloned().unwrap_or_default();
        if spec.get("target_cpu_utilization_percentage").is_null()
            || !spec.get("metric").elements().is_empty()
        {
            return None;
        }
        let [only] = object.pointer("/spec/metrics")?.as_array()?.as_slice() else {
            return None;
        };
        let percent = only.pointer("/resource/target/averageUtilization")?;
        if *only != cpu_metric(percent.clone()) {
            return None;
        }
        let mut view = object.clone();
        let live = view.get_mut("spec")?.as_object_mut()?;
        live.remove("metrics");
        live.insert(TARGET_CPU.into(), percent.clone());
        Some((view, prior.clone()))
    }
}

/// The autoscaling/v2 metric autoscaling/v1's `targetCPUUtilizationPercentage` stands for.
fn cpu_metric(percent: Json) -> Json {
    serde_json::json!({
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}},
    })
}

/// hashicorp's Pod timeout for create.
const POD_TIMEOUT: Duration = Duration::from_secs(300);

async fn pod_phase(client: &kube::Client, pod: &Json, planned: &Value) -> Result<Option<Json>, Diagnostic> {
    let wanted: Vec<String> = match planned.get("target_state").elements() {
        [] => vec!["Running".to_string()],
        states => states
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
    };
    let timeout = timeouts::of(planned, "create", POD_TIMEOUT);
    let info = pod_info();
    let what = format!("reach phase {}", wanted.join(" or "));
    ready_wait::poll(client, info, pod, timeout, &what, move |live| {
        readiness::pod_phase(live, &wanted)
    })
    .await?
    .map(Some)
    .ok_or_else(|| gone(info, pod))
}

fn pod_info() -> &'static KindInfo {
    &crate::catalog::entry("kubernetes_pod_v1")
        .expect("the catalog has pods")
        .info
}

async fn approve_and_sign(
    client: &kube::Client,
    request: &Json,
    planned: &Value,
) -> Result<Option<Json>, Diagnostic> {
    if planned.get("auto_approve").as_bool() == Some(false) {
        return Ok(None);
    }
    let info = &crate::catalog::entry("kubernetes_certificate_signing_request_v1")
        .expect("the catalog has certificate signing requests")
        .info;
    let target = crate::objects::Target::of(crate::kind::api_resource(info), request);
    let approved = crate::objects::approve(client, &target, request, "Approved by Terraform (auto_approve)")
        .await
        .map_err(Diagnostic::from)?;
    let timeout = timeouts::of(planned, "create", POD_TIMEOUT);
    ready_wait::poll(client, info, &approved, timeout, "be signed", signing)
        .await?
        .map(Some)
        .ok_or_else(|| gone(info, &approved))
}

/// Whether a CertificateSigningRequest has its certificate, or was denied or failed.
pub fn signing(csr: &Json) -> Readiness {
    let denied = csr["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| (c["type"] == "Denied" || c["type"] == "Failed") && c["status"] == "True");
    match (denied, csr["status"]["certificate"].as_str()) {
        (Some(c), _) => Readiness::Failed(format!(
            "the request was {}: {}",
            c["type"].as_str().unwrap_or("refused").to_lowercase(),
            c["message"].as_str().unwrap_or("no message")
        )),
        (None, Some(cert)) if !cert.is_empty() => Readiness::Ready,
        _ => Readiness::Waiting("no certificate issued yet".to_string()),
    }
}
