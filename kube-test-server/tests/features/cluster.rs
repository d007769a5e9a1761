//! The simulated cluster's controllers: Deployments rolling out through ReplicaSets and Pods
//! with and without nodes, certificate signing, and the token controller's Secrets.

use super::support::{ADMIN, call, connect, create, deployment, wait_for};
use kube_test_server::{Controllers, Options, TestServer};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_nodes_pods_run_and_fail_as_on_the_real_lane() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let nodes = call(&mut c, "GET", "/api/v1/nodes", ADMIN, None)
        .await
        .json()
        .unwrap();
    assert_eq!(nodes["items"].as_array().map(Vec::len), Some(2), "{nodes}");

    let base = "/apis/apps/v1/namespaces/default/deployments";
    create(&mut c, base, deployment("ready", 3, "nginx:1")).await;
    let done = wait_for(&mut c, &format!("{base}/ready"), |d| {
        d["status"]["availableReplicas"] == 3
    })
    .await;
    assert_eq!(
        done["status"]["conditions"][1]["reason"], "NewReplicaSetAvailable",
        "{}",
        done["status"]
    );
    let sets = call(
        &mut c,
        "GET",
        "/apis/apps/v1/namespaces/default/replicasets",
        ADMIN,
        None,
    )
    .await
    .json()
    .unwrap();
    assert_eq!(sets["items"][0]["status"]["readyReplicas"], 3, "{sets}");
    let pods = call(
        &mut c,
        "GET",
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dready",
        ADMIN,
        None,
    )
    .await
    .json()
    .unwrap();
    let pods = pods["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(pods.len(), 3);
    assert!(
        pods.iter()
            .all(|p| p["status"]["phase"] == "Running" && p["spec"]["nodeName"].is_string())
    );

    // An image that cannot be pulled: the pod backs off, the Deployment is never available.
    create(&mut c, base, deployment("broken", 1, "example.com/nonexistent:1")).await;
    let pulls = "/api/v1/namespaces/default/pods?labelSelector=app%3Dbroken";
    let pods = wait_for(&mut c, pulls, |l| {
        l["items"][0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ImagePullBackOff"
    })
    .await;
    assert_eq!(pods["items"][0]["status"]["phase"], "Pending", "{pods}");
    let broken = call(&mut c, "GET", &format!("{base}/broken"), ADMIN, None)
        .await
        .json()
        .unwrap();
    assert!(
        broken["status"].get("availableReplicas").is_none(),
        "{}",
        broken["status"]
    );

    // Deleted: its ReplicaSet and Pods go with it.
    call(&mut c, "DELETE", &format!("{base}/ready"), ADMIN, None).await;
    let left = wait_for(
        &mut c,
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dready",
        |l| l["items"].as_array().is_some_and(Vec::is_empty),
    )
    .await;
    assert_eq!(left["items"].as_array().map(Vec::len), Some(0), "{left}");

    // A Job runs to completion; a claim binds to a provisioned volume.
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
                     "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}});
    create(&mut c, "/apis/batch/v1/namespaces/default/jobs", job).await;
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    create(&mut c, "/api/v1/namespaces/default/persistentvolumeclaims", claim).await;
    let job = wait_for(&mut c, "/apis/batch/v1/namespaces/default/jobs/once", |j| {
        j["status"]["succeeded"] == 1
    })
    .await;
    assert_eq!(
        job["status"]["conditions"][1]["type"], "Complete",
        "{}",
        job["status"]
    );
    let claim = wait_for(
        &mut c,
        "/api/v1/namespaces/default/persistentvolumeclaims/data",
        |c| c["status"]["phase"] == "Bound",
    )
    .await;
    assert_eq!(claim["spec"]["storageClassName"], "standard", "{claim}");
    assert_eq!(claim["status"]["capacity"]["storage"], "1Gi", "{claim}");
    // Deleted, the claim goes (no pod uses it), and its volume with it.
    call(
        &mut c,
        "DELETE",
        "/api/v1/namespaces/default/persistentvolumeclaims/data",
        ADMIN,
        None,
    )
    .await;
    let volume = format!(
        "/api/v1/persistentvolumes/{}",
        claim["spec"]["volumeName"].as_str().unwrap()
    );
    let gone = wait_for(&mut c, &volume, |v| v["kind"] == "Status").await;
    assert_eq!(gone["code"], 404, "{gone}");

    // A LoadBalancer Service gets an address.
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
                         "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
    create(&mut c, "/api/v1/namespaces/default/services", service).await;
    let lb = wait_for(&mut c, "/api/v1/namespaces/default/services/lb", |s| {
        s["status"]["loadBalancer"]["ingress"].is_array()
    })
    .await;
    assert!(
        lb["status"]["loadBalancer"]["ingress"][0]["ip"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("172.18.255."))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approved_requests_are_signed_by_the_cluster_ca() {
    use base64::Engine as _;
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(rcgen::DnType::CommonName, "jane");
    let request = params.serialize_request(&key).unwrap().pem().unwrap();
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                     "metadata": {"name": "jane"},
                     "spec": {"request": b64(&request), "signerName": "kubernetes.io/kube-apiserver-client",
                              "usages": ["client auth"]}});
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    create(&mut c, path, csr).await;
    let mut approved = call(&mut c, "GET", &format!("{path}/jane"), ADMIN, None)
        .await
        .json()
        .unwrap();
    approved["status"]["conditions"] =
        json!([{"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}]);
    let answer = call(
        &mut c,
        "PUT",
        &format!("{path}/jane/approval"),
        ADMIN,
        Some(approved),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    let signed = wait_for(&mut c, &format!("{path}/jane"), |r| {
        r["status"]["certificate"].is_string()
    })
    .await;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(signed["status"]["certificate"].as_str().unwrap())
        .unwrap();
    let pem = String::from_utf8(pem).unwrap();
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    // A client certificate of the server's CA: it verifies against that CA alone.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der_of(server.ca_pem()).into()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
        .build()
        .unwrap();
    verifier
        .verify_client_cert(&der_of(&pem).into(), &[], rustls::pki_types::UnixTime::now())
        .expect("a client certificate of the cluster CA");
}

/// The DER bytes of a PEM block.
fn der_of(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD.decode(body).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_nodes_pods_stay_pending() {
    let server = TestServer::start(Options {
        controllers: Controllers::NoNodes,
        ..Options::default()
    });
    let mut c = connect(&server).await;
    let base = "/apis/apps/v1/namespaces/default/deployments";
    create(&mut c, base, deployment("stuck", 2, "nginx:1")).await;
    let status =
        wait_for(&mut c, &format!("{base}/stuck"), |d| d["status"]["replicas"] == 2).await["status"].clone();
    assert!(status.get("readyReplicas").is_none(), "{status}");
    assert_eq!(status["conditions"][0]["status"], "False");
    let pods = wait_for(&mut c, "/api/v1/namespaces/default/pods", |l| {
        l["items"][0]["status"]["conditions"][0]["reason"] == "Unschedulable"
    })
    .await;
    assert_eq!(
        pods["items"][0]["status"]["conditions"][0]["message"], "no nodes available to schedule pods",
        "{pods}"
    );
}

/// The serviceaccount-token controller fills a token Secret, and its token authenticates as
/// the ServiceAccount (which RBAC then refuses to list Secrets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_token_secrets_are_filled_and_accepted() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let base = "/api/v1/namespaces/default/secrets";
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "default-token", "annotations": {"kubernetes.io/service-account.name": "default"}},
    });
    let created = call(&mut c, "POST", base, ADMIN, Some(secret)).await;
    assert_eq!(created.status, 201);
    assert!(
        created.json().unwrap().get("data").is_none(),
        "the controller fills it afterwards"
    );
    let filled = call(&mut c, "GET", &format!("{base}/default-token"), ADMIN, None)
        .await
        .json()
        .unwrap();
    let sa = call(
        &mut c,
        "GET",
        "/api/v1/namespaces/default/serviceaccounts/default",
        ADMIN,
        None,
    )
    .await
    .json()
    .unwrap();
    assert_eq!(
        filled["metadata"]["annotations"]["kubernetes.io/service-account.uid"],
        sa["metadata"]["uid"]
    );
    let managers: Vec<&str> = filled["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"kube-controller-manager"), "{managers:?}");
    use base64::Engine;
    let decode = |k: &str| {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(filled["data"][k].as_str().unwrap())
            .unwrap();
        String::from_utf8(bytes).unwrap()
    };
    assert_eq!(decode("namespace"), "default");
    let token = decode("token");
    let as_sa = call(&mut c, "GET", base, &token, None).await;
    assert_eq!(as_sa.status, 403);
    assert!(
        as_sa.json().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("system:serviceaccount:default:default"),
    );
}
