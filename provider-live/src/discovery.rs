//! apiVersion + kind -> the API resource (plural, scope), as `kubernetes_manifest` needs it.
//! Asked once per kind and remembered for the rest of the run.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::Client;
use kube::api::{ApiResource, GroupVersionKind};
use kube::discovery::{Scope, pinned_kind};
use kube_estate::{ApiError, ObjectRef, with_retry};

/// A resolved kind.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
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
    ) -> Result<Resolved, ApiError> {
        let key = (api_version.to_string(), kind.to_string());
        if let Some(found) = self.known.lock().expect("discovery lock").get(&key) {
            return Ok(found.clone());
        }
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let what = ObjectRef {
            kind: kind.to_string(),
            namespace: None,
            name: format!("(apiVersion {api_version})"),
        };
        let (resource, caps) = with_retry(|| pinned_kind(client, &gvk))
            .await
            .map_err(|e| ApiError::from_kube(e, &what, "discover"))?;
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
