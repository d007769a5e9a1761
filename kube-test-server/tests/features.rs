//! The test server's own features beyond the transcripts: a cluster with nodes (Deployments
//! roll out through ReplicaSets and Pods, a failing image never becomes available, Jobs
//! complete, claims bind, load balancers get addresses, approved requests are signed by the
//! CA, Pods without nodes stay Pending), injected faults, request counters (its own and `/metrics`' `apiserver_request_total`),
//! runtime users, `--state` persistence, watches from
//! "now", the kubeconfig it writes, the ServiceAccount token Secrets the token controller
//! fills, how registry deletions (finalizers, orphaning, grace periods) end, and a
//! CustomResourceDefinition's life: established, its kind served, deleted with its objects.

use std::time::{Duration, Instant};

use kube_test_server::client::{Client, ClientResponse};
use kube_test_server::{Controllers, Options, TestServer};
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-0123456789abcdef";

async fn call(c: &mut Client, method: &str, path: &str, token: &str, body: Option<Value>) -> ClientResponse {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    c.request(
        method,
        path,
        &headers,
        Some(token),
        body.map(|b| b.to_string().into_bytes()),
    )
    .await
    .expect("request answered")
}

async fn connect(server: &TestServer) -> Client {
    Client::connect(server.url(), server.ca_pem())
        .await
        .expect("connects")
}

fn deployment(name: &str, replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": image}]}},
        },
    })
}

/// Reads `path` until `done` holds (10 s at most); returns the object as last read.
async fn wait_for(c: &mut Client, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let object = call(c, "GET", path, ADMIN, None).await.json().unwrap_or_default();
        if done(&object) || Instant::now() > deadline {
            return object;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn create(c: &mut Client, path: &str, body: Value) {
    let created = call(c, "POST", path, ADMIN, Some(body)).await;
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_counters_and_users() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let fault = json!({"resource": "configmaps", "kind": "429", "count": 2, "verb": "list"});
    assert_eq!(
        call(&mut c, "POST", "/_test/faults", ADMIN, Some(fault))
            .await
            .status,
        201
    );
    let list = "/api/v1/namespaces/default/configmaps";
    assert_eq!(call(&mut c, "GET", list, ADMIN, None).await.status, 429);
    assert_eq!(call(&mut c, "GET", list, ADMIN, None).await.status, 429);
    assert_eq!(call(&mut c, "GET", list, ADMIN, None).await.status, 200);

    let slow = json!({"resource": "configmaps", "kind": "latency", "latencyMs": 300});
    call(&mut c, "POST", "/_test/faults", ADMIN, Some(slow)).await;
    let started = Instant::now();
    assert_eq!(call(&mut c, "GET", list, ADMIN, None).await.status, 200);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "latency fault delays the answer"
    );

    let broken = json!({"resource": "*", "kind": "500"});
    call(&mut c, "POST", "/_test/faults", ADMIN, Some(broken)).await;
    assert_eq!(
        call(&mut c, "GET", "/api/v1/namespaces", ADMIN, None)
            .await
            .status,
        500
    );

    let dropped = json!({"resource": "configmaps", "kind": "drop"});
    call(&mut c, "POST", "/_test/faults", ADMIN, Some(dropped)).await;
    let headers = [("accept", "application/json")];
    assert!(
        c.request("GET", list, &headers, Some(ADMIN), None).await.is_err(),
        "drop closes the connection"
    );
    let mut c = connect(&server).await;

    let conflict = json!({"resource": "configmaps", "kind": "conflict"});
    call(&mut c, "POST", "/_test/faults", ADMIN, Some(conflict)).await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    assert_eq!(
        call(&mut c, "POST", list, ADMIN, Some(cm.clone())).await.status,
        409
    );
    assert_eq!(call(&mut c, "POST", list, ADMIN, Some(cm)).await.status, 201);

    let counts = call(&mut c, "GET", "/_test/requests", ADMIN, None)
        .await
        .json()
        .expect("counters JSON");
    let lists: u64 = counts["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["user"] == "admin" && i["verb"] == "list" && i["resource"] == "configmaps")
        .map(|i| i["count"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(lists, 5, "{counts}");
    assert_eq!(
        call(&mut c, "DELETE", "/_test/requests", ADMIN, None)
            .await
            .status,
        200
    );
    assert_eq!(server.request_counts()["items"], json!([]));

    // Test endpoints are the admin's only; an added user authenticates but RBAC denies it.
    let token = call(
        &mut c,
        "POST",
        "/_test/users",
        ADMIN,
        Some(json!({"name": "carol", "groups": ["devs"]})),
    )
    .await
    .json()
    .expect("token JSON")["token"]
        .as_str()
        .expect("token")
        .to_string();
    assert_eq!(
        call(&mut c, "GET", "/_test/requests", &token, None).await.status,
        403
    );
    let denied = call(&mut c, "GET", list, &token, None).await;
    assert_eq!(denied.status, 403);
    assert!(String::from_utf8_lossy(&denied.body).contains("User \\\"carol\\\" cannot list"));
    assert_eq!(call(&mut c, "GET", list, "wrong-token", None).await.status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_file_survives_a_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("state.json");
    let options = Options {
        state_file: Some(state.clone()),
        ..Default::default()
    };
    let server = TestServer::start(options.clone());
    let ca = server.ca_pem().to_string();
    let mut c = connect(&server).await;
    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"k": "v"}});
    let created = call(
        &mut c,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        ADMIN,
        Some(cm),
    )
    .await;
    assert_eq!(created.status, 201);
    let rv: u64 = created.json().expect("JSON")["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("number");
    server.shutdown();

    let server = TestServer::start(options);
    assert_eq!(server.ca_pem(), ca, "the CA is kept so kubeconfigs stay valid");
    let mut c = connect(&server).await;
    let got = call(
        &mut c,
        "GET",
        "/api/v1/namespaces/default/configmaps/kept",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json().expect("JSON")["data"]["k"], "v");
    let cm2 = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "next"}});
    let next = call(
        &mut c,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        ADMIN,
        Some(cm2),
    )
    .await;
    let rv2: u64 = next.json().expect("JSON")["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("number");
    assert!(rv2 > rv, "resourceVersions keep increasing across restarts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_without_resource_version_starts_with_the_current_objects() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let resp = call(
        &mut c,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        ADMIN,
        None,
    )
    .await;
    let events: Vec<Value> = String::from_utf8_lossy(&resp.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "kube-root-ca.crt");

    // client-go's watch-list ends the initial events with a bookmark.
    let path = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let resp = call(&mut c, "GET", path, ADMIN, None).await;
    let events: Vec<Value> = String::from_utf8_lossy(&resp.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["type"], "BOOKMARK");
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    let refused = call(&mut c, "DELETE", "/api/v1/namespaces/default", ADMIN, None).await;
    assert_eq!(refused.status, 403, "the default namespace may not be deleted");
}

#[test]
fn kubeconfig_has_a_context_per_user() {
    let server = TestServer::start(Options {
        users: vec![("app-planner".into(), vec!["tofu-planners".into()])],
        ..Default::default()
    });
    let doc: Value = serde_yaml::from_str(&server.kubeconfig("admin")).expect("kubeconfig YAML");
    assert_eq!(doc["current-context"], "admin");
    let contexts: Vec<&str> = doc["contexts"]
        .as_array()
        .expect("contexts")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(contexts, ["admin", "app-planner"]);
    assert_eq!(
        doc["users"][1]["user"]["token"],
        "app-planner-token-0123456789abcdef"
    );
    assert_eq!(
        server.token_for("app-planner").as_deref(),
        Some("app-planner-token-0123456789abcdef")
    );
    assert!(
        doc["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selector_lists_follow_label_changes_and_deletes() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let base = "/api/v1/namespaces/default/configmaps";
    let names = |r: ClientResponse| -> Vec<String> {
        r.json().expect("list JSON")["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (name, tier) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"tier": tier, "app": "w"}}});
        assert_eq!(call(&mut c, "POST", base, ADMIN, Some(cm)).await.status, 201);
    }
    let by = |sel: &str| format!("{base}?labelSelector={sel}");
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dx%2Capp%3Dw"), ADMIN, None).await),
        ["a", "b"]
    );

    let relabel = json!({"metadata": {"labels": {"tier": "y"}}});
    let headers = [("content-type", "application/merge-patch+json")];
    let body = Some(relabel.to_string().into_bytes());
    assert_eq!(
        c.request("PATCH", &format!("{base}/a"), &headers, Some(ADMIN), body)
            .await
            .expect("patch")
            .status,
        200
    );
    assert_eq!(
        call(&mut c, "DELETE", &format!("{base}/c"), ADMIN, None)
            .await
            .status,
        200
    );

    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dx"), ADMIN, None).await),
        ["b"]
    );
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dy"), ADMIN, None).await),
        ["a"]
    );
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dy&limit=1"), ADMIN, None).await),
        ["a"]
    );
    assert_eq!(
        names(
            call(
                &mut c,
                "GET",
                "/api/v1/configmaps?labelSelector=app%3Dw",
                ADMIN,
                None
            )
            .await
        ),
        ["a", "b"]
    );
}

/// `/metrics` counts requests as a real apiserver does (labels as in kube-apiserver v1.36's
/// `apiserver_request_total`, read from the dev control plane): the verb by RBAC verb, APPLY
/// for server-side apply, the scope, and the answer's code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_like_the_apiserver() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}});
    assert_eq!(call(&mut c, "POST", cms, ADMIN, Some(cm)).await.status, 201);
    assert_eq!(
        call(&mut c, "GET", &format!("{cms}/m"), ADMIN, None).await.status,
        200
    );
    assert_eq!(
        call(&mut c, "GET", &format!("{cms}/gone"), ADMIN, None)
            .await
            .status,
        404
    );
    assert_eq!(call(&mut c, "GET", cms, ADMIN, None).await.status, 200);
    let apply = c
        .request(
            "PATCH",
            &format!("{cms}/m?fieldManager=t"),
            &[("content-type", "application/apply-patch+yaml")],
            Some(ADMIN),
            Some(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  k: v\n".to_vec()),
        )
        .await
        .expect("apply answered");
    assert_eq!(apply.status, 200);
    let metrics = call(&mut c, "GET", "/metrics", ADMIN, None).await;
    assert_eq!(metrics.status, 200);
    let text = String::from_utf8_lossy(&metrics.body);
    let series = |verb: &str, scope: &str, code: u16| {
        format!(
            "apiserver_request_total{{code=\"{code}\",component=\"apiserver\",dry_run=\"\",group=\"\",\
             resource=\"configmaps\",scope=\"{scope}\",subresource=\"\",system_client=\"\",verb=\"{verb}\",version=\"v1\"}} 1"
        )
    };
    for line in [
        series("POST", "resource", 201),
        series("GET", "resource", 200),
        series("GET", "resource", 404),
        series("LIST", "namespace", 200),
        series("APPLY", "resource", 200),
    ] {
        assert!(text.lines().any(|l| l == line), "no line {line} in\n{text}");
    }
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

/// Kinds whose registry orphans dependents by default (Jobs, ReplicationControllers) keep
/// the `orphan` finalizer briefly; a Pod nobody runs is deleted at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletions_follow_each_registry() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}});
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    assert_eq!(call(&mut c, "POST", jobs, ADMIN, Some(job)).await.status, 201);
    let deleted = call(&mut c, "DELETE", &format!("{jobs}/j"), ADMIN, None).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.warnings.len(), 1, "{:?}", deleted.warnings);
    let body = deleted.json().unwrap();
    assert_eq!(body["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(body["metadata"]["generation"], 2);
    let deadline = Instant::now() + Duration::from_secs(5);
    while call(&mut c, "GET", &format!("{jobs}/j"), ADMIN, None)
        .await
        .status
        != 404
    {
        assert!(Instant::now() < deadline, "the garbage collector did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(call(&mut c, "POST", pods, ADMIN, Some(pod)).await.status, 201);
    let gone = call(&mut c, "DELETE", &format!("{pods}/p"), ADMIN, None)
        .await
        .json()
        .unwrap();
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        call(&mut c, "GET", &format!("{pods}/p"), ADMIN, None)
            .await
            .status,
        404
    );
}

/// The CRD the real apiserver was compared with (see `crd.rs`): namespaced Widget with a
/// defaulted `size`, free-form `extra`.
fn widget_definition() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.h4probe.example.com"},
        "spec": {"group": "h4probe.example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "default": 3}, "color": {"type": "string"},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_is_established_serves_its_kind_and_takes_its_objects_when_deleted() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let crd_path = format!("{crds}/widgets.h4probe.example.com");
    let created = call(&mut c, "POST", crds, ADMIN, Some(widget_definition())).await;
    assert_eq!(created.status, 201);
    let created = created.json().unwrap();
    assert_eq!(
        created["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]})
    );
    assert_eq!(created["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(created["spec"]["conversion"], json!({"strategy": "None"}));

    // Established shortly after, with the names accepted.
    let deadline = Instant::now() + Duration::from_secs(5);
    let crd = loop {
        let crd = call(&mut c, "GET", &crd_path, ADMIN, None).await.json().unwrap();
        let established = crd["status"]["conditions"].as_array().is_some_and(|l| {
            l.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        });
        if established || Instant::now() > deadline {
            break crd;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(crd["status"]["conditions"][0]["reason"], "NoConflicts", "{crd}");
    assert_eq!(
        crd["status"]["conditions"][1]["reason"], "InitialNamesAccepted",
        "{crd}"
    );
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");

    // Discovery as the real apiserver answered it.
    let doc = call(&mut c, "GET", "/apis/h4probe.example.com/v1", ADMIN, None)
        .await
        .json()
        .unwrap();
    assert_eq!(
        doc["resources"][0],
        json!({"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
            "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
            "shortNames": ["wg"], "storageVersionHash": "QDWKm9OI6RQ="})
    );
    let groups = call(&mut c, "GET", "/apis", ADMIN, None).await.json().unwrap();
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "h4probe.example.com")
    );

    // Objects: pruned (with warnings), defaulted, type-checked.
    let widgets = "/apis/h4probe.example.com/v1/namespaces/default/widgets";
    let w1 = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
        "spec": {"color": "red", "unknown": 1, "extra": {"any": {"x": 1}}}, "top": "x"});
    let made = call(&mut c, "POST", widgets, ADMIN, Some(w1)).await;
    assert_eq!(made.status, 201);
    assert_eq!(
        made.warnings,
        [
            "299 - \"unknown field \\\"spec.unknown\\\"\"",
            "299 - \"unknown field \\\"top\\\"\""
        ]
    );
    let w1 = made.json().unwrap();
    assert_eq!(
        w1["spec"],
        json!({"color": "red", "extra": {"any": {"x": 1}}, "size": 3})
    );
    assert_eq!(w1.get("top"), None);
    let bad = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
        "spec": {"color": 5}});
    let refused = call(&mut c, "POST", widgets, ADMIN, Some(bad)).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.json().unwrap()["message"],
        "Widget.h4probe.example.com \"w2\" is invalid: spec.color: Invalid value: \"integer\": \
         spec.color in body must be of type string: \"integer\""
    );

    // Deleting the definition: Terminating behind its finalizer while an object holds on, no
    // creates meanwhile, then gone with its objects and its kind.
    let held = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "spec": {"color": "blue"}});
    assert_eq!(call(&mut c, "POST", widgets, ADMIN, Some(held)).await.status, 201);
    let deleted = call(&mut c, "DELETE", &crd_path, ADMIN, None).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(
        deleted.json().unwrap()["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let late =
        json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "late"}});
    let refused = call(&mut c, "POST", widgets, ADMIN, Some(late)).await;
    assert_eq!(refused.status, 403);
    let held = call(&mut c, "GET", &format!("{widgets}/held"), ADMIN, None)
        .await
        .json()
        .unwrap();
    assert!(held["metadata"].get("deletionTimestamp").is_some(), "{held}");
    assert_eq!(
        call(&mut c, "GET", &format!("{widgets}/w1"), ADMIN, None)
            .await
            .status,
        404
    );
    let release = json!({"metadata": {"finalizers": null}});
    let headers = [("content-type", "application/merge-patch+json")];
    let patched = c
        .request(
            "PATCH",
            &format!("{widgets}/held"),
            &headers,
            Some(ADMIN),
            Some(release.to_string().into_bytes()),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, 200);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(call(&mut c, "GET", &crd_path, ADMIN, None).await.status, 404);
    assert_eq!(
        call(&mut c, "GET", "/apis/h4probe.example.com/v1", ADMIN, None)
            .await
            .status,
        404
    );
}
