//! With nothing configured but the estate, `connect` falls back to KUBECONFIG (its own test
//! binary: it sets a process environment variable).

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube_estate::{ConnectError, connect};
use kube_test_server::{Options, TestServer};
use plugin_runtime::Value;

#[tokio::test]
async fn nothing_configured_uses_kubeconfig_env() {
    let server = TestServer::start(Options::default());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    let estate_only = Value::object([("estate", Value::string("network"))]);

    // SAFETY: the only test in this binary; no other thread reads the environment.
    unsafe { std::env::set_var("KUBECONFIG", &path) };
    let err = connect(&estate_only).await.err().unwrap();
    assert!(matches!(err, ConnectError::NoConfiguration), "{err:?}");

    server.write_kubeconfig(&path, "admin").unwrap();
    let conn = connect(&estate_only).await.unwrap();
    let api: Api<Namespace> = Api::all(conn.client);
    assert!(api.get_opt("default").await.unwrap().is_some());

    std::fs::write(&path, "clusters: [not, a, kubeconfig").unwrap();
    let err = connect(&estate_only).await.err().unwrap();
    assert!(
        err.to_string()
            .starts_with("cannot load the kubeconfig from KUBECONFIG"),
        "{err}"
    );
}
