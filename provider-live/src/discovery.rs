//! apiVersion + kind -> the API resource (plural, scope), as `kubernetes_manifest` needs it.
//! Asked once per kind and remembered for the rest of the run; a kind the server does not
//! serve is never remembered, so a CustomResourceDefinition applied in the same run is seen
//! as soon as the server establishes it ([`Discovery::await_served`] waits for that, and only
//! while such a definition exists).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, ApiResource, GroupVersionKind, ListParams};
use kube::discovery::{Scope, pinned_kind};
use kube_estate::{ApiError, ObjectRef, with_retry};
use plugin_runtime::Diagnostic;

/// A resolved kind.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
}

/// Why a kind could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// The server serves no such group/version/kind (yet: a CRD applied in the same run).
    #[error("Kind {kind} of {api_version} is not served by the cluster")]
    Unknown { api_version: String, kind: String },
    /// No CustomResourceDefinition defines the kind, or none serves its version: waiting would
    /// change nothing.
    #[error("Kind {kind} of {api_version} is not served by the cluster")]
    Undefined {
        api_version: String,
        kind: String,
        /// The versions a definition of the kind serves (empty: there is no definition).
        served: Vec<String>,
    },
    /// The kind was still not served when the wait for its CustomResourceDefinition ended.
    #[error("Kind {kind} of {api_version} was not served within {waited:?}")]
    NeverServed {
        api_version: String,
        kind: String,
        waited: Duration,
    },
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl From<DiscoveryError> for Diagnostic {
    fn from(e: DiscoveryError) -> Diagnostic {
        match e {
            DiscoveryError::Unknown {
                ref api_version,
                ref kind,
            } => Diagnostic::error(
                e.to_string(),
                format!(
                    "The API server's discovery lists no kind {kind:?} in {api_version:?}. Check the \
                     manifest's apiVersion and kind, or install the CustomResourceDefinition first."
                ),
            ),
            DiscoveryError::Undefined {
                ref api_version,
                ref kind,
                ref served,
            } => {
                let group = api_version.split_once('/').map_or("", |(g, _)| g);
                let why = if served.is_empty() {
                    format!(
                        "No CustomResourceDefinition in the cluster defines kind {kind:?} in group \
                         {group:?}, so nothing will ever serve it: its CustomResourceDefinition must \
                         be installed first (in this configuration, with depends_on from this \
                         resource to it). Otherwise check the manifest's apiVersion and kind."
                    )
                } else {
                    format!(
                        "The CustomResourceDefinition of kind {kind:?} in group {group:?} serves \
                         versions {}, not {api_version:?}: change the manifest's apiVersion, or \
                         serve that version in the CustomResourceDefinition.",
                        served.join(", ")
                    )
                };
                Diagnostic::error(e.to_string(), why)
            }
            DiscoveryError::NeverServed {
                ref api_version,
                ref kind,
                waited,
            } => Diagnostic::error(
                e.to_string(),
                format!(
                    "{api_version}/{kind} is not served by the cluster: the apply waited {waited:?} for a \
                     CustomResourceDefinition to serve it, and the API server's discovery still \
                     lists no kind {kind:?} in {api_version:?}. Create the CustomResourceDefinition \
                     (in this configuration, with depends_on from this resource to it), check the \
                     manifest's apiVersion and kind, or raise `timeouts.create` if it takes longer \
                     to be established."
                ),
            ),
            DiscoveryError::Api(e) => e.into(),
        }
    }
}

#[derive(Default)]
pub struct Discovery {
    known: Mutex<HashMap<(String, String), Resolved>>,
}

impl Discovery {
    pub async fn resolve(
        &self,
        client: &Client,
        api_version: &str,
        kind: &str,
    ) -> Result<Resolved, DiscoveryError> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(found) = self.known.lock().expect("discovery lock").get(&key) {
            return Ok(found.clone());
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let unknown = || DiscoveryError::Unknown {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        };
        let (resource, caps) = match with_retry(|| pinned_kind(client, &gvk)).await {
            Ok(found) => found,
            Err(e) => match &e.error {
                kube::Error::Discovery(_) => return Err(unknown()),
                kube::Error::Api(status) if status.code == 404 => return Err(unknown()),
                _ => {
                    let what = ObjectRef {
                        kind: kind.to_string(),
                        namespace: None,
                        name: format!("({api_version})"),
                    };
                    return Err(ApiError::from_kube(e, &what, "discover").into());
                }
            },
        };
        let resolved = Resolved {
            resource,
            namespaced: caps.scope == Scope::Namespaced,
        };
        self.known
            .lock()
            .expect("discovery lock")
            .insert(key, resolved.clone());
        Ok(resolved)
    }

    /// Resolves the kind, waiting up to `timeout` for the server to serve it (a
    /// CustomResourceDefinition created earlier in the same apply is established a moment
    /// later). Asks again with a growing pause, at most [`MAX_PAUSE`] apart.
    pub async fn await_served(
        &self,
        client: &Client,
        api_version: &str,
        kind: &str,
        timeout: Duration,
    ) -> Result<Resolved, DiscoveryError> {
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        loop {
            match self.resolve(client, api_version, kind).await {
                Err(DiscoveryError::Unknown { .. }) => {}
                found => return found,
            }
            if let Definition::Undefined(served) = definition(client, api_version, kind).await {
                return Err(DiscoveryError::Undefined {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                    served,
                });
            }
            let waited = started.elapsed();
            if waited >= timeout {
                return Err(DiscoveryError::NeverServed {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                    waited: timeout,
                });
            }
            tokio::time::sleep(pause.min(timeout - waited)).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

/// What the cluster's CustomResourceDefinitions say of a kind discovery does not list yet.
#[derive(Debug, PartialEq)]
enum Definition {
    /// One defines and serves it (not established yet, or discovery has not caught up), or
    /// the definitions cannot be listed (no RBAC right to): worth waiting for.
    Pending,
    /// None defines it (empty), or the one that does serves only these other versions.
    Undefined(Vec<String>),
}

async fn definition(client: &Client, api_version: &str, kind: &str) -> Definition {
    let Some((group, version)) = api_version.split_once('/') else {
        // The core group ("v1") has no definitions.
        return Definition::Undefined(Vec::new());
    };
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = ListParams::default();
    match with_retry(|| api.list(&params)).await {
        Ok(list) => judge(&list.items, group, version, kind),
        Err(e) => {
            tracing::debug!(
                "cannot list CustomResourceDefinitions, waiting for {api_version}/{kind}: {}",
                e.error
            );
            Definition::Pending
        }
    }
}

/// The verdict on `group`/`version`'s `kind` from the cluster's definitions.
fn judge(definitions: &[CustomResourceDefinition], group: &str, version: &str, kind: &str) -> Definition {
    let Some(crd) = definitions
        .iter()
        .find(|c| c.spec.group == group && c.spec.names.kind == kind)
    else {
        return Definition::Undefined(Vec::new());
    };
    let served: Vec<String> = crd
        .spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.clone())
        .collect();
    if served.iter().any(|v| v == version) {
        Definition::Pending
    } else {
        Definition::Undefined(served.iter().map(|v| format!("{group}/{v}")).collect())
    }
}

/// The first pause of [`Discovery::await_served`]: a real API server establishes a new
/// CustomResourceDefinition within about a second.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// The longest pause between two looks.
const MAX_PAUSE: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(group: &str, kind: &str, versions: &[(&str, bool)]) -> CustomResourceDefinition {
        let versions: Vec<serde_json::Value> = versions
            .iter()
            .map(|(name, served)| serde_json::json!({"name": name, "served": served, "storage": true}))
            .collect();
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("{}s.{group}", kind.to_lowercase())},
            "spec": {"group": group, "scope": "Namespaced", "versions": versions,
                     "names": {"kind": kind, "plural": format!("{}s", kind.to_lowercase())}},
        }))
        .unwrap()
    }

    #[test]
    fn only_a_definition_that_serves_the_version_is_waited_for() {
        let defined = [crd("example.com", "Gizmo", &[("v1", true), ("v2", false)])];
        assert_eq!(judge(&defined, "example.com", "v1", "Gizmo"), Definition::Pending);
        assert_eq!(
            judge(&defined, "example.com", "v2", "Gizmo"),
            Definition::Undefined(vec!["example.com/v1".into()])
        );
        assert_eq!(
            judge(&defined, "example.com", "v1", "Widget"),
            Definition::Undefined(vec![])
        );
        assert_eq!(
            judge(&defined, "other.com", "v1", "Gizmo"),
            Definition::Undefined(vec![])
        );
        let text = Diagnostic::from(DiscoveryError::Undefined {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            served: vec![],
        })
        .detail;
        assert!(text.contains("must be installed first"), "{text}");
    }

    #[test]
    fn a_kind_never_served_is_named_with_the_wait() {
        let e = DiscoveryError::NeverServed {
            api_version: "example.com/v1".into(),
            kind: "Gizmo".into(),
            waited: Duration::from_secs(30),
        };
        let d = Diagnostic::from(e);
        assert_eq!(
            d.summary,
            "Kind Gizmo of example.com/v1 was not served within 30s"
        );
        assert!(
            d.detail
                .starts_with("example.com/v1/Gizmo is not served by the cluster: the apply waited 30s"),
            "{}",
            d.detail
        );
    }
}
