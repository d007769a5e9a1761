//! An estate's records namespace through the Kubernetes API: its namespace, output Secrets
//! and reader grants. Every call is retried on connection errors, 429 and 5xx
//! ([`kube_estate::retry`]) and fails with a typed [`ApiError`] naming the object and verb.
//!
//! No write is doubled by a lost answer: every object here has a fixed name, so a create sent
//! again finds the first one (AlreadyExists) and updates it; an update sent again is refused
//! for its stale resourceVersion, and then the live object already holding what was written
//! means the first one landed.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret, Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, PostParams};
use kube_estate::{ApiError, ESTATE_LABEL, Estate, ObjectRef, with_retry};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::grants::{all_match, binding_matches, is_grant_name, role_matches};
use crate::record;

/// Whether `live` holds everything `want` sets (the server adds to it, never changes it here:
/// Secrets, Roles and RoleBindings are stored as written).
fn holds<K: Serialize>(live: &K, want: &K) -> bool {
    let (Ok(live), Ok(want)) = (serde_json::to_value(live), serde_json::to_value(want)) else {
        return false;
    };
    contains(&live, &want)
}

fn contains(live: &serde_json::Value, want: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (live, want) {
        (Value::Object(live), Value::Object(want)) => want
            .iter()
            .all(|(k, w)| live.get(k).is_some_and(|l| contains(l, w))),
        (Value::Array(live), Value::Array(want)) => {
            live.len() == want.len() && live.iter().zip(want).all(|(l, w)| contains(l, w))
        }
        (live, want) => live == want,
    }
}

/// Objects Kubernetes puts in every namespace by itself; they do not keep it alive.
const AUTOMATIC: &[(&str, &str)] = &[("ConfigMap", "kube-root-ca.crt"), ("ServiceAccount", "default")];

/// How long a terminating records namespace is waited for, and how often it is looked at.
const TERMINATION_WAIT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

/// One estate's records namespace, `tofu-records-<estate>`.
pub struct Store {
    client: kube::Client,
    estate: Estate,
    namespace: String,
}

/// A namespaced kind with a static type, as every kind stored here is.
pub trait Kind: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()> {}
impl<K: kube::Resource<Scope = NamespaceResourceScope, DynamicType = ()>> Kind for K {}

impl Store {
    pub fn new(client: kube::Client, estate: Estate) -> Store {
        let namespace = estate.records_namespace();
        Store {
            client,
            estate,
            namespace,
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn api<K: Kind>(&self) -> Api<K> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    fn object_ref<K: Kind>(&self, name: &str) -> ObjectRef {
        ObjectRef::namespaced(&K::kind(&()), &self.namespace, name)
    }

    fn namespace_ref(&self) -> ObjectRef {
        ObjectRef::cluster("Namespace", &self.namespace)
    }

    /// The namespace, if it exists.
    pub async fn get_namespace(&self) -> Result<Option<Namespace>, ApiError> {
        let api: Api<Namespace> = Api::all(self.client.clone());
        with_retry(|| api.get_opt(&self.namespace))
            .await
            .map_err(|e| ApiError::from_kube(e, &self.namespace_ref(), "get"))
    }

    /// Creates the namespace, labelled with the estate, unless it exists. A namespace
    /// still terminating (an estate destroyed just before) is waited for: nothing can be
    /// created in it.
    pub async fn ensure_namespace(&self) -> Result<(), ApiError> {
        let mut waited = Duration::ZERO;
        loop {
            match self.get_namespace().await? {
                None => break,
                Some(ns) if ns.metadata.deletion_timestamp.is_none() => return Ok(()),
                Some(_) if waited >= TERMINATION_WAIT => {
                    return Err(ApiError::Conflict {
                        object: self.namespace_ref(),
                        message: format!("the namespace is still terminating after {}s", waited.as_secs()),
                        fields: Vec::new(),
                        uncertain: false,
                    });
                }
                Some(_) => {
                    tokio::time::sleep(POLL).await;
                    waited += POLL;
                }
            }
        }
        let api: Api<Namespace> = Api::all(self.client.clone());
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(self.namespace.clone()),
                labels: Some(BTreeMap::from([(
                    ESTATE_LABEL.to_string(),
                    self.estate.as_str().to_string(),
                )])),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let params = PostParams::default();
        match with_retry(|| api.create(&params, &ns)).await {
            Ok(_) => Ok(()),
            Err(e) => match ApiError::from_kube(e, &self.namespace_ref(), "create") {
                // Someone else created it meanwhile: fine.
                ApiError::AlreadyExists { .. } => Ok(()),
                other => Err(other),
            },
        }
    }

    /// Every output Secret of the estate (one list call).
    pub async fn list_outputs(&self) -> Result<Vec<Secret>, ApiError> {
        self.list(&record::selector(&self.estate)).await
    }

    /// The objects of kind `K` matching a label selector (one list call).
    async fn list<K: Kind + Clone + DeserializeOwned + Debug>(
        &self,
        selector: &str,
    ) -> Result<Vec<K>, ApiError> {
        let api = self.api::<K>();
        let params = ListParams::default().labels(selector);
        let list = with_retry(|| api.list(&params))
            .await
            .map_err(|e| ApiError::from_kube(e, &self.object_ref::<K>(""), "list"))?;
        Ok(list.items)
    }

    /// The readers' Roles and RoleBindings this provider wrote (two list calls).
    pub async fn live_grants(&self) -> Result<(Vec<Role>, Vec<RoleBinding>), ApiError> {
        let ours = |name: &Option<String>| is_grant_name(name.as_deref().unwrap_or_default());
        let mut roles: Vec<Role> = self.list(&self.estate.selector()).await?;
        roles.retain(|r| ours(&r.metadata.name));
        let mut bindings: Vec<RoleBinding> = self.list(&self.estate.selector()).await?;
        bindings.retain(|b| ours(&b.metadata.name));
        Ok((roles, bindings))
    }

    /// One object by name (one get call), `None` when it does not exist.
    pub async fn get<K: Kind + Clone + DeserializeOwned + Debug>(
        &self,
        name: &str,
    ) -> Result<Option<K>, ApiError> {
        let api = self.api::<K>();
        with_retry(|| api.get_opt(name))
            .await
            .map_err(|e| ApiError::from_kube(e, &self.object_ref::<K>(name), "get"))
    }

    /// Creates `want`, or replaces `live` with it (keeping live's resourceVersion, so a
    /// concurrent change is a conflict rather than lost). An object of that name that the
    /// estate's list did not show (its labels were removed by hand) is taken over: the
    /// namespace belongs to the estate.
    pub async fn put<K>(&self, want: &K, live: Option<&K>) -> Result<(), ApiError>
    where
        K: Kind + Clone + DeserializeOwned + Serialize + Debug,
    {
        let api = self.api::<K>();
        let name = want.meta().name.clone().unwrap_or_default();
        let object = self.object_ref::<K>(&name);
        let params = PostParams::default();
        let live = match live {
            Some(live) => live.clone(),
            None => match with_retry(|| api.create(&params, want)).await {
                Ok(_) => return Ok(()),
                Err(e) => match ApiError::from_kube(e, &object, "create") {
                    ApiError::AlreadyExists { .. } => match self.get::<K>(&name).await? {
                        Some(found) => found,
                        None => {
                            return Err(ApiError::Conflict {
                                object,
                                message: "the object was deleted while being created".into(),
                                fields: Vec::new(),
                                uncertain: false,
                            });
                        }
                    },
                    other => return Err(other),
                },
            },
        };
        let mut next = want.clone();
        next.meta_mut().resource_version = live.meta().resource_version.clone();
        match with_retry(|| api.replace(&name, &params, &next)).await {
            Ok(_) => Ok(()),
            Err(e) => match ApiError::from_kube(e, &object, "update") {
                // A try whose answer was lost may have written it.
                e @ ApiError::Conflict { uncertain: true, .. } => match self.get::<K>(&name).await? {
                    Some(now) if holds(&now, want) => Ok(()),
                    _ => Err(e),
                },
                other => Err(other),
            },
        }
    }

    /// Creates `want` where `live` is `None`, or replaces `live` with it, and returns what was
    /// written. Unlike [`Store::put`] it fails where the object is no longer as read (already
    /// exists, or Conflict): the write must not land on another writer's. A try whose answer
    /// was lost, sent again and refused so, landed if the object now holds `want`.
    pub async fn put_exact<K>(&self, want: &K, live: Option<&K>) -> Result<K, ApiError>
    where
        K: Kind + Clone + DeserializeOwned + Serialize + Debug,
    {
        let api = self.api::<K>();
        let name = want.meta().name.clone().unwrap_or_default();
        let params = PostParams::default();
        let (sent, verb) = match live {
            None => (with_retry(|| api.create(&params, want)).await, "create"),
            Some(live) => {
                let mut next = want.clone();
                next.meta_mut().resource_version = live.meta().resource_version.clone();
                (with_retry(|| api.replace(&name, &params, &next)).await, "update")
            }
        };
        match sent.map_err(|e| ApiError::from_kube(e, &self.object_ref::<K>(&name), verb)) {
            Ok(written) => Ok(written),
            Err(e @ (ApiError::AlreadyExists { .. } | ApiError::Conflict { .. })) => {
                match self.get::<K>(&name).await? {
                    Some(now) if holds(&now, want) => Ok(now),
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Deletes an object; one already gone is fine.
    pub async fn delete<K: Kind + Clone + DeserializeOwned + Debug>(
        &self,
        name: &str,
    ) -> Result<(), ApiError> {
        let api = self.api::<K>();
        let params = DeleteParams::default();
        match with_retry(|| api.delete(name, &params)).await {
            Ok(_) => Ok(()),
            Err(e) => match ApiError::from_kube(e, &self.object_ref::<K>(name), "delete") {
                ApiError::NotFound { .. } => Ok(()),
                other => Err(other),
            },
        }
    }

    /// Brings the readers' Roles and RoleBindings in line with `want`: each written unless
    /// it is already so, and those no longer wanted deleted (a binding before its Role).
    pub async fn put_grants(&self, want: Vec<(Role, RoleBinding)>) -> Result<(), ApiError> {
        let (roles, bindings) = self.live_grants().await?;
        if all_match(&want, &roles, &bindings) {
            return Ok(());
        }
        let name_of = |m: &ObjectMeta| m.name.clone().unwrap_or_default();
        for (role, binding) in &want {
            let live_role = roles
                .iter()
                .find(|r| name_of(&r.metadata) == name_of(&role.metadata));
            if !live_role.is_some_and(|l| role_matches(l, role)) {
                self.put(role, live_role).await?;
            }
            let live_binding = bindings
                .iter()
                .find(|b| name_of(&b.metadata) == name_of(&binding.metadata));
            // roleRef cannot change in place; a binding's name is its Role's, so it never does.
            if !live_binding.is_some_and(|l| binding_matches(l, binding)) {
                self.put(binding, live_binding).await?;
            }
        }
        let wanted = |m: &ObjectMeta| want.iter().any(|(r, _)| name_of(&r.metadata) == name_of(m));
        for binding in bindings.iter().filter(|b| !wanted(&b.metadata)) {
            self.delete::<RoleBinding>(&name_of(&binding.metadata)).await?;
        }
        for role in roles.iter().filter(|r| !wanted(&r.metadata)) {
            self.delete::<Role>(&name_of(&role.metadata)).await?;
        }
        Ok(())
    }

    /// Deletes the namespace if this estate created it and nothing but records lived in
    /// it (the output Secrets and grants must be gone already).
    pub async fn delete_namespace_if_unused(&self) -> Result<(), ApiError> {
        let Some(ns) = self.get_namespace().await? else {
            return Ok(());
        };
        let ours =
            ns.metadata.labels.as_ref().and_then(|l| l.get(ESTATE_LABEL)) == Some(&self.estate.to_string());
        if !ours {
            return Ok(());
        }
        let kinds = [
            ApiResource::erase::<Secret>(&()),
            ApiResource::erase::<ConfigMap>(&()),
            ApiResource::erase::<ServiceAccount>(&()),
            ApiResource::erase::<Role>(&()),
            ApiResource::erase::<RoleBinding>(&()),
            ApiResource::erase::<Service>(&()),
            ApiResource::erase::<Pod>(&()),
        ];
        for kind in &kinds {
            if self.holds_any(kind).await? {
                return Ok(());
            }
        }
        let api: Api<Namespace> = Api::all(self.client.clone());
        let params = DeleteParams::default();
        match with_retry(|| api.delete(&self.namespace, &params)).await {
            Ok(_) => Ok(()),
            Err(e) => match ApiError::from_kube(e, &self.namespace_ref(), "delete") {
                ApiError::NotFound { .. } => Ok(()),
                other => Err(other),
            },
        }
    }

    /// True when the namespace holds an object of this kind that Kubernetes did not put
    /// there itself. A kind the server does not serve holds nothing. The objects are read
    /// untyped (one list code path for every kind, rather than a Pod's full decoder for a
    /// yes/no answer), and two of them are enough: Kubernetes puts at most one of a kind.
    async fn holds_any(&self, resource: &ApiResource) -> Result<bool, ApiError> {
        let api: Api<DynamicObject> = Api::namespaced_with(self.client.clone(), &self.namespace, resource);
        let params = ListParams::default().limit(2);
        let list = match with_retry(|| api.list(&params)).await {
            Ok(list) => list,
            Err(e) => {
                let object = ObjectRef::namespaced(&resource.kind, &self.namespace, "");
                return match ApiError::from_kube(e, &object, "list") {
                    ApiError::NotFound { .. } => Ok(false),
                    other => Err(other),
                };
            }
        };
        Ok(list.items.iter().any(|o| {
            let name = o.metadata.name.as_deref().unwrap_or_default();
            !AUTOMATIC.contains(&(resource.kind.as_str(), name))
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_live_object_holds_what_was_written_and_what_the_server_added() {
        let want = json!({"metadata": {"name": "a", "labels": {"tofu-estate": "e"}}, "data": {"k": "dg=="}});
        let live = json!({"metadata": {"name": "a", "uid": "u", "resourceVersion": "7",
                          "labels": {"tofu-estate": "e"}}, "data": {"k": "dg=="}, "type": "Opaque"});
        assert!(contains(&live, &want));
        let changed =
            json!({"metadata": {"name": "a", "labels": {"tofu-estate": "e"}}, "data": {"k": "eA=="}});
        assert!(!contains(&changed, &want));
        let rules = |verbs: Vec<&str>| json!({"rules": [{"verbs": verbs, "resources": ["secrets"]}]});
        assert!(contains(&rules(vec!["get"]), &rules(vec!["get"])));
        assert!(!contains(&rules(vec!["get", "list"]), &rules(vec!["get"])));
    }
}
