//! What the feature tests share: the admin token, a client for a started server, requests,
//! waits and a small Deployment.

use kube_test_server::TestServer;
use kube_test_server::{Client, ClientResponse};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

pub(super) const ADMIN: &str = "admin-token-0123456789abcdef";

pub(super) async fn call(
    c: &mut Client,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> ClientResponse {
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

pub(super) async fn connect(server: &TestServer) -> Client {
    Client::connect(server.url(), server.ca_pem())
        .await
        .expect("connects")
}

pub(super) fn deployment(name: &str, replicas: i64, image: &str) -> Value {
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
pub(super) async fn wait_for(c: &mut Client, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let object = call(c, "GET", path, ADMIN, None).await.json().unwrap_or_default();
        if done(&object) || Instant::now() > deadline {
            return object;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(super) async fn create(c: &mut Client, path: &str, body: Value) {
    let created = call(c, "POST", path, ADMIN, Some(body)).await;
    assert_eq!(created.status, 201, "{}", String::from_utf8_lossy(&created.body));
}
