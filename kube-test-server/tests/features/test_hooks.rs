//! What the server offers the tests themselves: injected faults, request counters and
//! `/metrics`, runtime users, `--state` across a restart, and the kubeconfig it writes.

use super::support::{ADMIN, call, connect};
use kube_test_server::{Options, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

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
