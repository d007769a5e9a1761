//! apiVersion + kind -> the API resource (plural, scope), as `kubernetes_manifest` needs it.
//! Asked once per kind and remembered for the rest of the run.

use std::collections::HashMap;
use std::sync::Mutex;

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
            Err(kube::Error::Discovery(_)) => return Err(unknown()),
            Err(kube::Error::Api(status)) if status.code == 404 => return Err(unknown()),
            Err(e) => {
                let what = ObjectRef {
                    kind: kind.to_string(),
                    namespace: None,
                    name: format!("({api_version})"),
                };
                return Err(ApiError::from_kube(e, &what, "discover").into());
            }
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
}
