//! What a Kubernetes kind does beyond converting its object, as hashicorp/kubernetes users
//! rely on it: waits after a write (a rollout, a job's completion, a claim's binding, a load
//! balancer's address, a pod's phase), bounded by `timeouts`, and the fields the API server
//! refuses to change, which plan a replacement instead of failing at apply.

use std::time::Duration;

use plugin_runtime::{AttributePath, Diagnostic, Value};
use serde_json::{Map, Value as Json};

use super::readiness::{self, Readiness};
use super::spec_wait;
use crate::kind::{Behaviour, KindInfo};
use crate::timeouts;

/// hashicorp's timeout for the waits that have no other.
const DEFAULT_TIMEOUT: Duration = timeouts::DEFAULT;

/// The behaviour of a catalog type, by its Kubernetes kind.
pub fn of(info: &'static KindInfo) -> Box<dyn Behaviour> {
    let wait = |flag, what, check: fn(&Json) -> Readiness| Wait {
        info,
        flag: Some(flag),
        default: true,
        timeout: DEFAULT_TIMEOUT,
        what,
        check,
    };
    let kind = Kinded {
        immutable: immutable(info.kind),
        wait: match info.kind {
            "Deployment" => Some(wait(
                "wait_for_rollout",
                "finish its rollout",
                readiness::deployment,
            )),
            "StatefulSet" => Some(wait(
                "wait_for_rollout",
                "finish its rollout",
                readiness::stateful_set,
            )),
            "DaemonSet" => Some(wait(
                "wait_for_rollout",
                "finish its rollout",
                readiness::daemon_set,
            )),
            "Job" => Some(wait("wait_for_completion", "complete", readiness::job)),
            "PersistentVolumeClaim" => Some(wait(
                "wait_until_bound",
                "be bound to a volume",
                readiness::claim_bound,
            )),
            "Service" => Some(wait(
                "wait_for_load_balancer",
                "get a load balancer address",
                readiness::load_balancer,
            )),
            // hashicorp waits for an ingress's address only when asked to.
            "Ingress" => Some(Wait {
                default: false,
                ..wait(
                    "wait_for_load_balancer",
                    "get a load balancer address",
                    readiness::load_balancer,
                )
            }),
            // hashicorp waits for these always: no attribute switches it off.
            "ReplicationController" => Some(Wait {
                flag: None,
                ..wait(
                    "",
                    "have its replicas scheduled",
                    readiness::replication_controller,
                )
            }),
            "PersistentVolume" => Some(Wait {
                flag: None,
                timeout: POD_TIMEOUT,
                ..wait("", "become available", readiness::volume_available)
            }),
            _ => None,
        },
        pod: info.kind == "Pod",
        ingress: info.kind == "Ingress",
        service: info.kind == "Service",
        signing_request: info.kind == "CertificateSigningRequest",
        deletes_slowly: matches!(
            info.kind,
            "Deployment" | "StatefulSet" | "DaemonSet" | "Job" | "PersistentVolume" | "PersistentVolumeClaim"
        ),
    };
    Box::new(kind)
}

/// Attribute paths (blocks as their first element) the API server will not update.
fn immutable(kind: &str) -> &'static [&'static str] {
    match kind {
        "Deployment" | "DaemonSet" | "ReplicationController" => &["spec.selector"],
        "StatefulSet" => &[
            "spec.selector",
            "spec.service_name",
            "spec.volume_claim_template",
            "spec.pod_management_policy",
        ],
        "Job" => &["spec.selector", "spec.manual_selector", "spec.template"],
        "Service" => &["spec.cluster_ip"],
        "PersistentVolumeClaim" => &[
            "spec.storage_class_name",
            "spec.access_modes",
            "spec.selector",
            "spec.volume_name",
            "spec.volume_mode",
        ],
        "PersistentVolume" => &["spec.persistent_volume_source"],
        "RoleBinding" | "ClusterRoleBinding" => &["role_ref"],
        "StorageClass" => &[
            "parameters",
            "storage_provisioner",
            "reclaim_policy",
            "volume_binding_mode",
        ],
        "PriorityClass" => &["value"],
        "CertificateSigningRequest" => &["spec"],
        "EndpointSlice" => &["address_type"],
        "IngressClass" => &["spec.controller"],
        "RuntimeClass" => &["handler"],
        "Pod" => &["spec"],
        _ => &[],
    }
}

/// `spec.selector` as an attribute path: blocks are lists of one.
fn attribute_path(dotted: &str) -> AttributePath {
    let mut parts = dotted.split('.');
    let mut path = AttributePath::root(parts.next().unwrap_or(dotted));
    for part in parts {
        path = path.index(0).attribute(part);
    }
    path
}

/// A wait after a write, switched by a Terraform-only flag (or always on, without one).
struct Wait {
    info: &'static KindInfo,
    flag: Option<&'static str>,
    /// Whether it waits when the flag is not set.
    default: bool,
    /// hashicorp's timeout for it, when the `timeouts` block sets none.
    timeout: Duration,
    what: &'static str,
    check: fn(&Json) -> Readiness,
}

struct Kinded {
    immutable: &'static [&'static str],
    wait: Option<Wait>,
    /// A pod waits for one of the phases in `target_state` (Running by default).
    pod: bool,
    /// An ingress path without a `pathType` gets `ImplementationSpecific`, as networking/v1beta1
    /// did implicitly (hashicorp's `kubernetes_ingress` has that shape).
    ingress: bool,
    /// A Service sends `allocateLoadBalancerNodePorts` and `loadBalancerClass` only as a
    /// LoadBalancer, as hashicorp's expand does (structure_service_spec.go:238): the API server
    /// refuses them on any other type, and the first is planned `true` by default.
    service: bool,
    /// A certificate signing request is approved (`auto_approve`, true by default) and waits
    /// for its certificate.
    signing_request: bool,
    /// Deleting waits for the object to be gone (its pods are deleted first; a volume's or
    /// claim's protection finalizer waits for its users).
    deletes_slowly: bool,
}

#[async_trait::async_trait]
impl Behaviour for Kinded {
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if self.pod {
            return pod_phase(client, object, planned).await;
        }
        if self.signing_request {
            return approve_and_sign(client, object, planned).await;
        }
        let Some(wait) = &self.wait else {
            return Ok(None);
        };
        if let Some(flag) = wait.flag
            && !planned.get(flag).as_bool().unwrap_or(wait.default)
        {
            return Ok(None);
        }
        // Only a LoadBalancer service gets an address.
        if wait.info.kind == "Service" && object["spec"]["type"] != "LoadBalancer" {
            return Ok(None);
        }
        let operation = if object["metadata"]["generation"].as_i64().unwrap_or(1) <= 1 {
            "create"
        } else {
            "update"
        };
        let timeout = timeouts::of(planned, operation, wait.timeout);
        let found = spec_wait::poll(client, wait.info, object, timeout, wait.what, wait.check).await?;
        // A Job deleted once finished (`ttl_seconds_after_finished`) is done, as for hashicorp.
        match found {
            None if wait.info.kind != "Job" => Err(gone(wait.info, object)),
            found => Ok(found),
        }
    }

    fn delete_wait(&self, resource: &Value) -> Option<Duration> {
        self.deletes_slowly
            .then(|| timeouts::of(resource, "delete", DEFAULT_TIMEOUT))
    }

    fn immutable_paths(&self) -> Vec<AttributePath> {
        self.immutable.iter().map(|p| attribute_path(p)).collect()
    }

    fn unclaim(&self, object: &mut Json) {
        if !self.pod {
            return;
        }
        // The DefaultTolerationSeconds admission plugin's tolerations.
        if let Some(tolerations) = object
            .pointer_mut("/spec/tolerations")
            .and_then(Json::as_array_mut)
        {
            tolerations.retain(|t| {
                let default = t["effect"] == "NoExecute"
                    && t["operator"] == "Exists"
                    && t["tolerationSeconds"] == 300
                    && matches!(
                        t["key"].as_str(),
                        Some("node.kubernetes.io/not-ready" | "node.kubernetes.io/unreachable")
                    );
                !default
            });
        }
    }

    fn imported(&self, object: &Json, state: &mut Value) {
        if self.signing_request {
            let approved = object["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Approved" && c["status"] == "True");
            state.set("auto_approve", Value::Bool(approved));
        }
    }

    fn complete(&self, object: &mut Map<String, Json>) {
        if self.service
            && let Some(spec) = object.get_mut("spec").and_then(Json::as_object_mut)
            && spec.get("type").and_then(Json::as_str) != Some("LoadBalancer")
        {
            spec.remove("allocateLoadBalancerNodePorts");
            spec.remove("loadBalancerClass");
        }
        if !self.ingress {
            return;
        }
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
    spec_wait::poll(client, info, pod, timeout, &what, move |live| {
        readiness::pod_phase(live, &wanted)
    })
    .await?
    .map(Some)
    .ok_or_else(|| gone(info, pod))
}

/// The error of a wait whose object was deleted meanwhile.
fn gone(info: &KindInfo, object: &Json) -> Diagnostic {
    let target = crate::objects::Target::of(crate::resource::api_resource(info), object);
    kube_estate::ApiError::NotFound {
        object: target.object_ref(),
    }
    .into()
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
    let target = crate::objects::Target::of(crate::resource::api_resource(info), request);
    let approved = crate::objects::approve(client, &target, request, "Approved by Terraform (auto_approve)")
        .await
        .map_err(Diagnostic::from)?;
    let timeout = timeouts::of(planned, "create", POD_TIMEOUT);
    spec_wait::poll(client, info, &approved, timeout, "be signed", signing)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_paths_index_blocks() {
        assert_eq!(attribute_path("spec.selector").to_string(), "spec[0].selector");
        assert_eq!(attribute_path("role_ref").to_string(), "role_ref");
    }
}
