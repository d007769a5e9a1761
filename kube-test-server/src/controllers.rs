//! The controllers the recorded cluster ran, reduced to what clients can observe: namespace
//! contents (`default` ServiceAccount, `kube-root-ca.crt`), namespace deletion, the garbage
//! collector's finalizers, ServiceAccount token Secrets and ClusterRole aggregation; and, run by
//! [`crate::simulation`] like the workload controllers, load-balancer addresses for Services
//! and Ingresses, the signer of approved CertificateSigningRequests and the horizontal pod
//! autoscaler (which, without metrics, keeps its target between its bounds).

use std::time::Duration;

use base64::Engine;
use serde_json::{Value, json};

use crate::meta;
use crate::pass::Pass;
use crate::resources::{self, ResourceType};
use crate::state::Shared;
use crate::store::Store;
use crate::tls::CaMaterial;

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
    let token = st
        .auth
        .issue_service_account_token(&claims, &namespace, &account, &uid);
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

/// Load balancers as `make test-real`'s cluster has them: every Service of type LoadBalancer
/// without a `loadBalancerClass`, and every Ingress, gets an address from 172.18.255.0/24
/// (`loadBalancerIP` when asked for), kept while it exists; a Service no longer of that type
/// loses it.
pub fn load_balancers(pass: &mut Pass) {
    let services = pass.list(&resources::SERVICES, None);
    let ingresses = pass.list(&resources::INGRESSES, None);
    let address = |o: &Value| {
        o["status"]["loadBalancer"]["ingress"][0]["ip"]
            .as_str()
            .map(str::to_string)
    };
    let mut taken: Vec<String> = services.iter().chain(&ingresses).filter_map(address).collect();
    let wants = |s: &Value| s["spec"]["type"] == "LoadBalancer" && s["spec"]["loadBalancerClass"].is_null();
    let mut next_free = |wanted: Option<&str>| {
        let ip = wanted.map(str::to_string).or_else(|| {
            (1..255)
                .map(|host| format!("172.18.255.{host}"))
                .find(|ip| !taken.contains(ip))
        })?;
        taken.push(ip.clone());
        Some(ip)
    };
    for service in &services {
        let ingress = match (wants(service), address(service)) {
            (true, None) => match next_free(
                service["spec"]["loadBalancerIP"]
                    .as_str()
                    .filter(|ip| !ip.is_empty()),
            ) {
                Some(ip) => json!([{"ip": ip, "ipMode": "VIP"}]),
                None => continue,
            },
            (false, Some(_)) => Value::Null,
            _ => continue,
        };
        let mut new = service.clone();
        new["status"]["loadBalancer"] = if ingress.is_null() {
            json!({})
        } else {
            json!({"ingress": ingress})
        };
        pass.update(
            resources::SERVICES,
            service,
            new,
            "kube-controller-manager",
            Some("status"),
        );
    }
    for ingress in ingresses.iter().filter(|i| address(i).is_none()) {
        let Some(ip) = next_free(None) else { continue };
        let mut new = ingress.clone();
        new["status"]["loadBalancer"] = json!({"ingress": [{"ip": ip}]});
        pass.update(
            resources::INGRESSES,
            ingress,
            new,
            "ingress-controller",
            Some("status"),
        );
    }
}

/// The key usages each signer of the csrsigning controller allows, and the one it requires.
const SIGNERS: &[(&str, &[&str], &str)] = &[
    (
        "kubernetes.io/kube-apiserver-client",
        &["digital signature", "key encipherment", "client auth"],
        "client auth",
    ),
    (
        "kubernetes.io/kube-apiserver-client-kubelet",
        &["digital signature", "key encipherment", "client auth"],
        "client auth",
    ),
    (
        "kubernetes.io/kubelet-serving",
        &["digital signature", "key encipherment", "server auth"],
        "server auth",
    ),
];

/// The certificatesigning controller: an approved request of one of the cluster's signers gets
/// a certificate from the cluster CA (for `expirationSeconds`, a year by default, backdated
/// five minutes), or the `Failed` condition when its usages are not the signer's.
pub fn sign_requests(pass: &mut Pass, ca: &CaMaterial) {
    for csr in pass.list(&resources::CSRS, None) {
        let condition = |kind: &str| {
            csr["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == kind && c["status"] == "True")
        };
        let signed = csr["status"]["certificate"]
            .as_str()
            .is_some_and(|c| !c.is_empty());
        if !condition("Approved") || condition("Denied") || condition("Failed") || signed {
            continue;
        }
        let Some((_, allowed, required)) = SIGNERS
            .iter()
            .find(|(name, ..)| csr["spec"]["signerName"] == *name)
        else {
            continue;
        };
        let usages: Vec<&str> = csr["spec"]["usages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut new = csr.clone();
        match issue(&csr, &usages, allowed, required, ca, pass.now) {
            Ok(pem) => {
                new["status"]["certificate"] = json!(base64::engine::general_purpose::STANDARD.encode(pem))
            }
            Err(message) => {
                let mut conditions = csr["status"]["conditions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                conditions.push(json!({"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                                       "message": message, "lastUpdateTime": pass.time, "lastTransitionTime": pass.time}));
                new["status"]["conditions"] = json!(conditions);
            }
        }
        pass.update(
            resources::CSRS,
            &csr,
            new,
            "kube-controller-manager",
            Some("status"),
        );
    }
}

/// The certificate (PEM) for a request, or why the signer refuses it.
fn issue(
    csr: &Value,
    usages: &[&str],
    allowed: &[&str],
    required: &str,
    ca: &CaMaterial,
    now: f64,
) -> Result<String, String> {
    let refused: Vec<&str> = usages.iter().copied().filter(|u| !allowed.contains(u)).collect();
    if !refused.is_empty() || !usages.contains(&required) {
        return Err(format!(
            "invalid usage for client certificate: usages {usages:?}; {required:?} is required, only {allowed:?} allowed"
        ));
    }
    let request = csr["spec"]["request"].as_str().unwrap_or("");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(request)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or("the request is not base64-encoded PEM")?;
    let mut params = rcgen::CertificateSigningRequestParams::from_pem(&pem)
        .map_err(|e| format!("the request cannot be parsed: {e}"))?;
    let lifetime = csr["spec"]["expirationSeconds"]
        .as_i64()
        .unwrap_or(365 * 24 * 3600);
    let start = now as i64 - 300;
    let at =
        |t: i64| time::OffsetDateTime::from_unix_timestamp(t).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    params.params.not_before = at(start);
    params.params.not_after = at(now as i64 + lifetime);
    params.params.is_ca = rcgen::IsCa::ExplicitNoCa;
    params.params.serial_number = Some(rcgen::SerialNumber::from(
        uuid::Uuid::new_v4().as_bytes().to_vec(),
    ));
    params.params.key_usages = usages
        .iter()
        .filter_map(|u| match *u {
            "digital signature" => Some(rcgen::KeyUsagePurpose::DigitalSignature),
            "key encipherment" => Some(rcgen::KeyUsagePurpose::KeyEncipherment),
            _ => None,
        })
        .collect();
    params.params.extended_key_usages = usages
        .iter()
        .filter_map(|u| match *u {
            "client auth" => Some(rcgen::ExtendedKeyUsagePurpose::ClientAuth),
            "server auth" => Some(rcgen::ExtendedKeyUsagePurpose::ServerAuth),
            _ => None,
        })
        .collect();
    let issuer = ca.issuer().map_err(|e| e.to_string())?;
    let certificate = params.signed_by(&issuer).map_err(|e| format!("signing: {e}"))?;
    Ok(certificate.pem())
}

/// The horizontal-pod-autoscaler controller without metrics (as on `make test-real`'s cluster,
/// which serves none): a target outside `minReplicas`..`maxReplicas` is scaled to the nearest
/// bound through its `scale` subresource; the status says how many replicas there are and
/// are wanted.
pub fn autoscale(pass: &mut Pass) {
    for hpa in pass.list(&resources::HPAS, None) {
        let namespace = hpa["metadata"]["namespace"].as_str().unwrap_or("");
        let target_ref = &hpa["spec"]["scaleTargetRef"];
        let rt = match target_ref["kind"].as_str() {
            Some("Deployment") => resources::DEPLOYMENTS,
            Some("StatefulSet") => resources::STATEFULSETS,
            Some("ReplicaSet") => resources::REPLICASETS,
            Some("ReplicationController") => resources::REPLICATIONCONTROLLERS,
            _ => continue,
        };
        let Some(target) = pass.get(&rt, namespace, target_ref["name"].as_str().unwrap_or("")) else {
            continue;
        };
        let current = target["spec"]["replicas"].as_i64().unwrap_or(1);
        let min = hpa["spec"]["minReplicas"].as_i64().unwrap_or(1);
        let max = hpa["spec"]["maxReplicas"].as_i64().unwrap_or(current);
        // Scaled to zero by hand: autoscaling is off until someone scales it up again.
        let desired = if current == 0 {
            0
        } else {
            current.clamp(min, max.max(min))
        };
        let mut status = hpa["status"].clone();
        if desired != current {
            let mut scaled = target.clone();
            scaled["spec"]["replicas"] = json!(desired);
            pass.update(rt, &target, scaled, "kube-controller-manager", Some("scale"));
            status["lastScaleTime"] = json!(pass.time);
        }
        status["currentReplicas"] = json!(current);
        status["desiredReplicas"] = json!(desired);
        let mut new = hpa.clone();
        new["status"] = status;
        pass.update(
            resources::HPAS,
            &hpa,
            new,
            "kube-controller-manager",
            Some("status"),
        );
    }
}
