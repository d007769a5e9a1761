//! How to reach a cluster without a kubeconfig: the API server's URL, its CA certificate and a
//! bearer token, as a provider block writes them and as the harness's own calls use them.

use std::path::Path;

/// A server, its CA and a bearer token ([`crate::Cluster::credentials`]).
pub struct Credentials {
    pub server: String,
    pub ca_pem: String,
    pub token: String,
}

impl Credentials {
    /// Read from the current context of `kubeconfig`; `None` when it does not hold them in that
    /// form (client certificates, an exec plugin).
    pub fn of_kubeconfig(kubeconfig: &Path) -> Option<Credentials> {
        let text = std::fs::read_to_string(kubeconfig).ok()?;
        let config: serde_json::Value = serde_yaml::from_str(&text).ok()?;
        let named = |list: &str, name: &serde_json::Value| {
            config[list]
                .as_array()
                .into_iter()
                .flatten()
                .find(|entry| entry["name"] == *name)
                .cloned()
                .unwrap_or_default()
        };
        let context = named("contexts", &config["current-context"]);
        let cluster = &named("clusters", &context["context"]["cluster"])["cluster"];
        let user = &named("users", &context["context"]["user"])["user"];
        let ca_pem = match cluster["certificate-authority-data"].as_str() {
            Some(data) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD.decode(data).ok()?;
                String::from_utf8(bytes).ok()?
            }
            None => std::fs::read_to_string(cluster["certificate-authority"].as_str()?).ok()?,
        };
        Some(Credentials {
            server: cluster["server"].as_str()?.to_string(),
            ca_pem,
            token: user["token"].as_str()?.to_string(),
        })
    }
}
