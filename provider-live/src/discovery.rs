//! apiVersion + kind -> the API resource (plural, scope), as `kubernetes_manifest` needs it.
//! Asked once per kind and remembered for the rest of the run; a kind the server does not
//! serve is never remembered, so a CustomResourceDefinition applied in the same run is seen
//! as soon as the server establishes it ([`Discovery::await_served`] waits for that).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{ApiResource, GroupVersionKind};
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

/// The first pause of [`Discovery::await_served`]: a real API server establishes a new
/// CustomResourceDefinition within about a second.
const FIRST_PAUSE: Duration = Duration::from_millis(200);
/// The longest pause between two looks.
const MAX_PAUSE: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

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
