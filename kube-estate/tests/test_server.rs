//! The client `connect` builds talks to the project's Kubernetes test server (HTTPS with its
//! own CA, bearer tokens), and API failures come back as the right `ApiError`s.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use kube_estate::{ApiError, ObjectRef, connect, with_retry};
use kube_test_server::{Options, TestServer};
use plugin_runtime::Value;

fn block(pairs: &[(&str, Value)]) -> Value {
    Value::object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())))
}

async fn namespaces(client: kube::Client) -> Result<Vec<String>, kube_estate::Failure> {
    let api: Api<Namespace> = Api::all(client);
    let params = ListParams::default();
    let list = with_retry(|| api.list(&params)).await?;
    Ok(list.items.into_iter().filter_map(|n| n.metadata.name).collect())
}

#[tokio::test]
async fn explicit_host_token_and_ca() {
    let server = TestServer::start(Options::default());
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(server.url())),
        ("token", Value::string(server.admin_token())),
        ("cluster_ca_certificate", Value::string(server.ca_pem())),
    ]))
    .await
    .unwrap();
    let names = namespaces(conn.client).await.unwrap();
    assert!(names.iter().any(|n| n == "default"), "{names:?}");
}

#[tokio::test]
async fn kubeconfig_file_and_context() {
    let server = TestServer::start(Options {
        users: vec![("nobody".into(), vec![])],
        ..Options::default()
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path, "admin").unwrap();
    let path = Value::string(path.to_string_lossy());

    let admin = connect(&block(&[
        ("estate", Value::string("app")),
        ("config_path", path.clone()),
    ]))
    .await
    .unwrap();
    namespaces(admin.client).await.unwrap();

    // The `nobody` context may not list namespaces: a typed Forbidden naming the user.
    let restricted = connect(&block(&[
        ("estate", Value::string("app")),
        ("config_paths", Value::List(vec![path])),
        ("config_context", Value::string("nobody")),
    ]))
    .await
    .unwrap();
    let err = namespaces(restricted.client).await.unwrap_err();
    let err = ApiError::from_kube(err, &ObjectRef::cluster("Namespace", ""), "list");
    match &err {
        ApiError::Forbidden { verb, message, .. } => {
            assert_eq!(verb, "list");
            assert!(message.contains("User \"nobody\""), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn api_errors_from_a_real_server() {
    let server = TestServer::start(Options::default());
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(server.url())),
        ("token", Value::string(server.admin_token())),
        ("insecure", Value::Bool(true)),
    ]))
    .await
    .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(conn.client, "default");
    let object = ObjectRef::namespaced("ConfigMap", "default", "x");
    let err = api.get("x").await.unwrap_err();
    assert!(ApiError::from_kube(err, &object, "get").is_not_found());

    let cm = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("x".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    api.create(&PostParams::default(), &cm).await.unwrap();
    let err = api.create(&PostParams::default(), &cm).await.unwrap_err();
    assert!(matches!(
        ApiError::from_kube(err, &object, "create"),
        ApiError::AlreadyExists { .. }
    ));

    let bad = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("Not_Valid".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let err = api.create(&PostParams::default(), &bad).await.unwrap_err();
    match ApiError::from_kube(err, &object, "create") {
        ApiError::Invalid { causes, .. } => {
            assert!(causes.iter().any(|(f, _)| f == "metadata.name"), "{causes:?}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_wrong_ca_is_refused() {
    let server = TestServer::start(Options::default());
    let other = TestServer::start(Options::default());
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(server.url())),
        ("token", Value::string(server.admin_token())),
        ("cluster_ca_certificate", Value::string(other.ca_pem())),
    ]))
    .await
    .unwrap();
    let err = namespaces(conn.client).await.unwrap_err();
    // A certificate refused is no fault to wait out: tried once.
    assert_eq!(err.tries, 1, "{err:?}");
    let err = ApiError::from_kube(err, &ObjectRef::cluster("Namespace", ""), "list");
    assert!(matches!(err, ApiError::Unavailable { .. }), "{err:?}");
    let d = plugin_runtime::Diagnostic::from(err);
    assert!(
        d.detail.starts_with("TLS with the API server failed: ") && d.detail.contains("certificate"),
        "{}",
        d.detail
    );
}

/// Sends a test-server control request as the admin.
async fn control(
    client: &kube::Client,
    method: http::Method,
    path: &str,
    body: serde_json::Value,
) -> serde_json::Value {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap();
    client.request(req).await.unwrap()
}

#[tokio::test]
async fn throttling_and_server_errors_are_retried() {
    let server = TestServer::start(Options::default());
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(server.url())),
        ("token", Value::string(server.admin_token())),
        ("cluster_ca_certificate", Value::string(server.ca_pem())),
    ]))
    .await
    .unwrap();
    let faults = serde_json::json!({"resource": "namespaces", "kind": "429", "count": 1});
    control(&conn.client, http::Method::POST, "/_test/faults", faults).await;
    let faults = serde_json::json!({"resource": "namespaces", "kind": "500", "count": 2});
    control(&conn.client, http::Method::POST, "/_test/faults", faults).await;
    // A connection closed without an answer is retried as well.
    let faults = serde_json::json!({"resource": "namespaces", "kind": "drop", "count": 1});
    control(&conn.client, http::Method::POST, "/_test/faults", faults).await;
    control(
        &conn.client,
        http::Method::DELETE,
        "/_test/requests",
        serde_json::json!({}),
    )
    .await;

    let start = std::time::Instant::now();
    namespaces(conn.client.clone()).await.unwrap();
    // The 429 asked for 1 s; the two 500s and the drop wait at least 200 + 400 + 800 ms (half
    // of each backoff, the rest jittered).
    assert!(
        start.elapsed() >= std::time::Duration::from_millis(2400),
        "{:?}",
        start.elapsed()
    );
    let counters = control(
        &conn.client,
        http::Method::GET,
        "/_test/requests",
        serde_json::Value::Null,
    )
    .await;
    let lists: u64 = counters["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verb"] == "list" && c["resource"] == "namespaces")
        .map(|c| c["count"].as_u64().unwrap())
        .sum();
    // The dropped request is counted too: the server closes its connection after counting it.
    assert_eq!(lists, 5, "{counters}");
}

#[tokio::test]
async fn exec_block_runs_a_credential_plugin() {
    use std::os::unix::fs::PermissionsExt;
    let server = TestServer::start(Options::default());
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("get-token");
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": server.admin_token()},
    });
    // The plugin only answers when the block's env and args reach it.
    let script = format!("#!/bin/sh\n[ \"$WHO\" = admin ] && [ \"$1\" = --now ] && echo '{credential}'\n");
    std::fs::write(&plugin, script).unwrap();
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exec = Value::object([
        ("api_version", Value::string("client.authentication.k8s.io/v1")),
        ("command", Value::string(plugin.to_string_lossy())),
        ("env", Value::string_map([("WHO", "admin")])),
        ("args", Value::List(vec![Value::string("--now")])),
    ]);
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(server.url())),
        ("cluster_ca_certificate", Value::string(server.ca_pem())),
        ("exec", Value::List(vec![exec])),
    ]))
    .await
    .unwrap();
    namespaces(conn.client).await.unwrap();
}

/// A 429 that gives its Retry-After in the header only, with a plain-text body (as proxies
/// answer): the client waits as long, then tries again.
#[tokio::test]
async fn retry_after_in_the_header_alone_is_honoured() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let calls = Arc::new(AtomicU32::new(0));
    let served = calls.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let served = served.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |_request| {
                    let first = served.fetch_add(1, Ordering::SeqCst) == 0;
                    async move {
                        let answer = if first {
                            http::Response::builder()
                                .status(429)
                                .header("retry-after", "2")
                                .body("slow down\n".to_string())
                        } else {
                            http::Response::builder()
                                .header("content-type", "application/json")
                                .body(
                                    r#"{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[]}"#
                                        .to_string(),
                                )
                        };
                        Ok::<_, std::convert::Infallible>(answer.unwrap())
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
            });
        }
    });
    let conn = connect(&block(&[
        ("estate", Value::string("network")),
        ("host", Value::string(format!("http://{addr}"))),
    ]))
    .await
    .unwrap();
    let start = std::time::Instant::now();
    namespaces(conn.client).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Without the header's word, the first backoff is at most 200 ms.
    assert!(
        start.elapsed() >= std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}
