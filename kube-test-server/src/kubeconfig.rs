//! Kubeconfig files pointing at the server: one cluster, one user and context per identity.

use base64::Engine;
use serde_json::json;

/// A kubeconfig (YAML) with a context per `(user, token)`; contexts are named after users.
pub fn render(server: &str, ca_pem: &str, users: &[(String, String)], current: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let cluster = "kube-test-server";
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": users.iter().map(|(u, t)| json!({"name": u, "user": {"token": t}})).collect::<Vec<_>>(),
        "contexts": users.iter().map(|(u, _)| json!({"name": u, "context": {"cluster": cluster, "user": u}})).collect::<Vec<_>>(),
        "current-context": current,
        "preferences": {},
    });
    serde_yaml::to_string(&doc).expect("kubeconfig documents serialise")
}
