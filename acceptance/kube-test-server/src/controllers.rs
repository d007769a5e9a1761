//! The controllers the recorded cluster ran, reduced to what clients can observe: namespace
//! contents (`default` ServiceAccount, `kube-root-ca.crt`), namespace deletion, the garbage
//! collector's finalizers, ServiceAccount token Secrets, ClusterRole aggregation and the
//! Deployment controller (its model lives in [`crate::rollout`]).

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::meta;
use crate::resources::{self, ResourceType};
use crate::state::{Rollout, Shared};
use crate::store::Store;

/// How long the Deployment controller takes to notice a write.
const ROLLOUT_DELAY: Duration = Duration::from_millis(300);
/// How long the garbage collector takes to drop its finalizer from a deleted object.
const GC_DELAY: Duration = Duration::from_millis(200);

const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// What the serviceaccount controller and the root-CA publisher put into a new namespace (in
/// that order, as in most recorded runs).
pub fn populate_namespace(store: &mut Store, ca_pem: &str, namespace: &str, time: &str) {
    let sa = json!({
        "kind": "ServiceAccount", "apiVersion": "v1",
        "metadata": {"name": "default", "namespace": namespace, "uid": meta::new_uid(), "creationTimestamp": time},
    });
    store.put(&resources::SERVICEACCOUNTS.key(), sa);
    let cm = json!({
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {
            "name": "kube-root-ca.crt", "namespace": namespace, "uid": meta::new_uid(),
            "creationTimestamp": time,
            "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION},
            "managedFields": [{
                "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": time,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:ca.crt": {}}, "f:metadata": {"f:annotations": {".": {}, "f:kubernetes.io/description": {}}}},
            }],
        },
        "data": {"ca.crt": ca_pem},
    });
    store.put(&resources::CONFIGMAPS.key(), cm);
}

fn spawn(fut: impl std::future::Future<Output = ()> + Send + 'static) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(fut);
    }
}

/// Empties a Terminating namespace, then removes it.
pub fn schedule_namespace_cleanup(st: &Shared, namespace: &str) {
    let st = st.clone();
    let namespace = namespace.to_string();
    spawn(async move {
        tokio::time::sleep(st.namespace_grace / 4).await;
        {
            let mut store = st.store();
            let custom = crate::crd::namespaced_keys(&store);
            let keys = resources::ALL
                .iter()
                .filter(|r| r.namespaced)
                .map(ResourceType::key)
                .chain(custom);
            for key in keys.collect::<Vec<_>>() {
                let names: Vec<String> = store
                    .list(&key, Some(&namespace))
                    .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
                    .collect();
                for name in names {
                    store.remove(&key, &namespace, &name);
                }
            }
        }
        st.written.notify_one();
        tokio::time::sleep(st.namespace_grace * 3 / 4).await;
        st.store().remove(&resources::NAMESPACES.key(), "", &namespace);
        st.written.notify_one();
    });
}

/// Lets the garbage collector do its part of a deletion: it drops `finalizer` (there are
/// never dependents to wait for or orphan), and the object goes once no finalizer is left.
pub fn schedule_finalizer_removal(
    st: &Shared,
    rt: ResourceType,
    namespace: &str,
    name: &str,
    finalizer: &str,
) {
    let st = st.clone();
    let (namespace, name, finalizer) = (namespace.to_string(), name.to_string(), finalizer.to_string());
    spawn(async move {
        tokio::time::sleep(GC_DELAY).await;
        let mut store = st.store();
        let Some(mut obj) = store.get(&rt.key(), &namespace, &name).cloned() else {
            return;
        };
        if let Some(list) = obj["metadata"]
            .get_mut("finalizers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|f| f != finalizer.as_str());
        }
        if obj["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty) {
            store.remove(&rt.key(), &namespace, &name);
        } else {
            store.put(&rt.key(), obj);
        }
        drop(store);
        st.written.notify_one();
    });
}

/// Lets the Deployment controller ([`crate::rollout`]) catch up with a Deployment shortly after
/// each write, per the server's rollout mode.
pub fn schedule_rollout(st: &Shared, deployment: &Value) {
    if st.rollout() == Rollout::Off {
        return;
    }
    let st = st.clone();
    let (namespace, name) = crate::store::ns_name(deployment);
    spawn(async move {
        tokio::time::sleep(ROLLOUT_DELAY).await;
        let key = resources::DEPLOYMENTS.key();
        let mut store = st.store();
        let mut sets = st.replica_sets.lock().unwrap_or_else(|e| e.into_inner());
        // Deployments deleted since (with their namespace, say) take their sets with them.
        let uids: std::collections::HashSet<String> = store
            .list(&key, None)
            .filter_map(|d| d["metadata"]["uid"].as_str().map(str::to_string))
            .collect();
        sets.retain(|uid| uids.contains(uid));
        let Some(current) = store.get(&key, &namespace, &name).cloned() else {
            return;
        };
        if let Some(updated) = sets.sync(&current, st.rollout()) {
            store.put(&key, updated);
            drop((sets, store));
            st.written.notify_one();
        }
    });
}

/// The clusterrole-aggregation controller: every ClusterRole with an `aggregationRule` gets the
/// rules of the roles its selectors match, server-side applied by the controller's manager.
/// Runs right after each ClusterRole write, so the writer's answer still shows the old rules.
pub fn aggregate_cluster_roles(st: &Shared) {
    let time = meta::now();
    let mut store = st.store();
    let key = resources::CLUSTERROLES.key();
    let roles: Vec<Value> = store.list(&key, None).cloned().collect();
    let policy = crate::rbac::Policy {
        cluster_roles: roles.iter().collect(),
        ..Default::default()
    };
    let mut updates = Vec::new();
    for role in roles
        .iter()
        .filter(|r| r.get("aggregationRule").is_some_and(|a| !a.is_null()))
    {
        let name = role["metadata"]["name"].as_str().unwrap_or("");
        let rules = crate::rbac::cluster_role_rules(&policy, name);
        let current = role["rules"].as_array().cloned().unwrap_or_default();
        if rules == current {
            continue;
        }
        let config = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": rules,
        });
        let info = crate::semantics::WriteInfo {
            manager: "clusterrole-aggregation-controller",
            subresource: None,
            time: &time,
        };
        if let Ok((mut updated, true)) = crate::semantics::apply(Some(role), &config, &info, true) {
            meta::canonicalize(&mut updated);
            updates.push(updated);
        }
    }
    let changed = !updates.is_empty();
    for updated in updates {
        store.put(&key, updated);
    }
    drop(store);
    if changed {
        st.written.notify_one();
    }
}

/// The serviceaccount-token controller: a Secret of type `kubernetes.io/service-account-token`
/// naming an existing ServiceAccount gets the account's uid annotation and a token, the CA
/// bundle and the namespace in its data, written as `kube-controller-manager`.
pub fn fill_service_account_token(st: &Shared, secret: &Value) {
    if secret["type"] != "kubernetes.io/service-account-token" || secret["data"].get("token").is_some() {
        return;
    }
    let (namespace, name) = crate::store::ns_name(secret);
    let account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let mut store = st.store();
    let Some(sa) = store
        .get(&resources::SERVICEACCOUNTS.key(), &namespace, &account)
        .cloned()
    else {
        return;
    };
    let Some(old) = store.get(&resources::SECRETS.key(), &namespace, &name).cloned() else {
        return;
    };
    let uid = sa["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let claims = json!({
        "iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": name, "kubernetes.io/serviceaccount/service-account.name": account,
        "kubernetes.io/serviceaccount/service-account.uid": uid,
        "sub": format!("system:serviceaccount:{namespace}:{account}"),
    });
    let token = crate::subresources::issue_token(st, &claims, &namespace, &account, &uid);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut new = old.clone();
    new["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = json!(uid);
    meta::sort_keys(&mut new["metadata"]["annotations"]);
    new["data"] = json!({"ca.crt": b64(&st.ca.cert_pem), "namespace": b64(&namespace), "token": b64(&token)});
    let time = meta::now();
    let info = crate::semantics::WriteInfo {
        manager: "kube-controller-manager",
        subresource: None,
        time: &time,
    };
    crate::semantics::record_update(Some(&old), &mut new, &info);
    store.put(&resources::SECRETS.key(), new);
    drop(store);
    st.written.notify_one();
}
