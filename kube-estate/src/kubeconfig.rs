//! From resolved settings to a kube client configuration, the way client-go's loading
//! rules do it: a kubeconfig (the configured files, or KUBECONFIG / ~/.kube/config when no
//! host is given) picks a context, cluster and user; explicit settings override them.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine;
use kube::config::{
    AuthInfo, Cluster, Context, ExecConfig, ExecInteractiveMode, KubeConfigOptions, Kubeconfig,
    KubeconfigError, NamedAuthInfo, NamedCluster, NamedContext,
};
use secrecy::SecretString;

use crate::connect_error::ConnectError;
use crate::settings::{INSECURE, LOAD_CONFIG_FILE, Settings, expand_home};

/// The name of the single context, cluster and user the client is built from.
const PROVIDER: &str = "provider";

/// The kube client configuration these settings describe.
#[cfg(test)]
pub(crate) async fn client_config(s: &Settings) -> Result<kube::Config, ConnectError> {
    Ok(named_client_config(s).await?.0)
}

/// The kube client configuration these settings describe, and the identity it authenticates
/// as, in the words an error names it with.
pub(crate) async fn named_client_config(s: &Settings) -> Result<(kube::Config, String), ConnectError> {
    let base = load_base(s)?;
    let (mut cluster, mut user, namespace, user_name) = select(&base, s)?;
    let identity = identity(s, user_name.as_deref());
    override_cluster(&mut cluster, s)?;
    override_user(&mut user, s);
    let Some(server) = &cluster.server else {
        return Err(ConnectError::NoHost);
    };
    refuse_cleartext_credentials(server, &user, s.get("host").is_some())?;
    let single = Kubeconfig {
        clusters: vec![NamedCluster {
            name: PROVIDER.into(),
            cluster: Some(cluster),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: PROVIDER.into(),
            auth_info: Some(user),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: PROVIDER.into(),
            context: Some(Context {
                cluster: PROVIDER.into(),
                user: Some(PROVIDER.into()),
                namespace,
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some(PROVIDER.into()),
        ..Kubeconfig::default()
    };
    let mut config = kube::Config::from_custom_kubeconfig(single, &KubeConfigOptions::default())
        .await
        .map_err(|source| ConnectError::Kubeconfig {
            location: "the provider block".into(),
            source,
        })?;
    // One retry policy for every call: `retry::with_retry`, bounded in time.
    config.default_retry = false;
    Ok((config, identity))
}

/// Who the client authenticates as, for an error that says whose credential was refused:
/// the provider block's own credential when it sets one, else the kubeconfig's user.
fn identity(s: &Settings, user: Option<&str>) -> String {
    if let Some(exec) = &s.exec {
        return format!("the token of the provider block's exec plugin `{}`", exec.command);
    }
    if s.get("token").is_some() {
        return "the provider block's `token`".into();
    }
    if let Some(name) = s.get("username") {
        return format!("the provider block's user `{name}`");
    }
    if s.get("client_certificate").is_some() {
        return "the provider block's client certificate".into();
    }
    match user {
        Some(user) => format!("the credential of kubeconfig user `{user}`"),
        None => "an anonymous request (no credential configured)".into(),
    }
}

/// The kubeconfig to pick from: the configured files merged in order, the user's default
/// one when no host is configured either, or none (always none with `load_config_file = false`,
/// but a Pod's service account without a host).
fn load_base(s: &Settings) -> Result<Kubeconfig, ConnectError> {
    let files = s.enabled(LOAD_CONFIG_FILE);
    if files && !s.config_paths.is_empty() {
        let mut merged = Kubeconfig::default();
        for path in &s.config_paths {
            let path = expand_home(path);
            let next = Kubeconfig::read_from(&path).map_err(|source| ConnectError::Kubeconfig {
                location: path.clone(),
                source,
            })?;
            merged = merged.merge(next).map_err(|source| ConnectError::Kubeconfig {
                location: path.clone(),
                source,
            })?;
        }
        return Ok(merged);
    }
    if s.get("host").is_some() {
        return Ok(Kubeconfig::default());
    }
    let missing =
        |otherwise| in_cluster(Path::new(SERVICE_ACCOUNT), &|var| std::env::var(var).ok()).ok_or(otherwise);
    if !files {
        return missing(ConnectError::KubeconfigOff);
    }
    match Kubeconfig::read() {
        Ok(config) => Ok(config),
        Err(KubeconfigError::FindPath) => missing(ConnectError::NoConfiguration),
        Err(KubeconfigError::ReadConfig(io, _)) if io.kind() == std::io::ErrorKind::NotFound => {
            missing(ConnectError::NoConfiguration)
        }
        Err(source) => Err(ConnectError::Kubeconfig {
            location: "KUBECONFIG or ~/.kube/config".into(),
            source,
        }),
    }
}

/// Where a Pod's service-account credentials are mounted.
const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// In a Pod without a kubeconfig, as client-go's loading rules fall back to: the API server
/// the Pod's environment names, its CA and its service account's token file (a projected
/// token the kubelet rewrites, which the client reads again: see `credential`).
fn in_cluster(dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Option<Kubeconfig> {
    let host = env("KUBERNETES_SERVICE_HOST")?;
    let port = env("KUBERNETES_SERVICE_PORT")?;
    let token = dir.join("token");
    if !token.is_file() {
        return None;
    }
    let server = match host.parse::<std::net::Ipv6Addr>() {
        Ok(_) => format!("https://[{host}]:{port}"),
        Err(_) => format!("https://{host}:{port}"),
    };
    let namespace = std::fs::read_to_string(dir.join("namespace"))
        .ok()
        .map(|n| n.trim().to_string());
    let ca = dir.join("ca.crt");
    Some(Kubeconfig {
        clusters: vec![NamedCluster {
            name: "in-cluster".into(),
            cluster: Some(Cluster {
                server: Some(server),
                certificate_authority: ca.is_file().then(|| ca.display().to_string()),
                ..Cluster::default()
            }),
            ..NamedCluster::default()
        }],
        auth_infos: vec![NamedAuthInfo {
            name: "in-cluster".into(),
            auth_info: Some(AuthInfo {
                token_file: Some(token.display().to_string()),
                ..AuthInfo::default()
            }),
            ..NamedAuthInfo::default()
        }],
        contexts: vec![NamedContext {
            name: "in-cluster".into(),
            context: Some(Context {
                cluster: "in-cluster".into(),
                user: Some("in-cluster".into()),
                namespace,
                ..Context::default()
            }),
            ..NamedContext::default()
        }],
        current_context: Some("in-cluster".into()),
        ..Kubeconfig::default()
    })
}

/// The cluster, user and namespace of the chosen context, with the context overrides, and the
/// name of that user.
fn select(
    base: &Kubeconfig,
    s: &Settings,
) -> Result<(Cluster, AuthInfo, Option<String>, Option<String>), ConnectError> {
    let Some(context_name) = s.get("config_context").or(base.current_context.as_deref()) else {
        return Ok((Cluster::default(), AuthInfo::default(), None, None));
    };
    let context = base
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| ConnectError::NotInKubeconfig {
            what: "context",
            name: context_name.to_string(),
        })?;
    let cluster_name = s.get("config_context_cluster").unwrap_or(&context.cluster);
    let cluster = base
        .clusters
        .iter()
        .find(|c| c.name == cluster_name)
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| ConnectError::NotInKubeconfig {
            what: "cluster",
            name: cluster_name.to_string(),
        })?;
    // Like client-go, a context without a (known) user connects anonymously.
    let user_name = s.get("config_context_auth_info").or(context.user.as_deref());
    let user = user_name
        .and_then(|name| base.auth_infos.iter().find(|u| u.name == name))
        .and_then(|u| u.auth_info.clone())
        .unwrap_or_default();
    Ok((cluster, user, context.namespace, user_name.map(str::to_string)))
}

fn override_cluster(cluster: &mut Cluster, s: &Settings) -> Result<(), ConnectError> {
    if let Some(host) = s.get("host") {
        cluster.server = Some(normalize_host(host)?);
    }
    if let Some(insecure) = s.flag(INSECURE) {
        cluster.insecure_skip_tls_verify = Some(insecure);
    }
    if let Some(ca) = s.get("cluster_ca_certificate") {
        cluster.certificate_authority = None;
        cluster.certificate_authority_data = Some(base64_of(ca));
    }
    if let Some(name) = s.get("tls_server_name") {
        cluster.tls_server_name = Some(name.to_string());
    }
    if let Some(proxy) = s.get("proxy_url") {
        cluster.proxy_url = Some(proxy.to_string());
    }
    Ok(())
}

fn override_user(user: &mut AuthInfo, s: &Settings) {
    if let Some(name) = s.get("username") {
        user.username = Some(name.to_string());
    }
    if let Some(password) = s.get("password") {
        user.password = Some(SecretString::from(password.to_string()));
    }
    if let Some(token) = s.get("token") {
        user.token = Some(SecretString::from(token.to_string()));
        user.token_file = None;
    }
    if let Some(cert) = s.get("client_certificate") {
        user.client_certificate = None;
        user.client_certificate_data = Some(base64_of(cert));
    }
    if let Some(key) = s.get("client_key") {
        user.client_key = None;
        user.client_key_data = Some(SecretString::from(base64_of(key)));
    }
    if let Some(exec) = &s.exec {
        user.exec = Some(ExecConfig {
            api_version: Some(exec.api_version.clone()),
            command: Some(exec.command.clone()),
            args: Some(exec.args.clone()),
            env: Some(
                exec.env
                    .iter()
                    .map(|(k, v)| {
                        HashMap::from([("name".to_string(), k.clone()), ("value".to_string(), v.clone())])
                    })
                    .collect(),
            ),
            // The engine owns the terminal: a plugin must never prompt.
            interactive_mode: Some(ExecInteractiveMode::Never),
            ..ExecConfig::default()
        });
    }
}

/// The API server URL: a bare `host[:port]` means HTTPS, as in client-go.
pub(crate) fn normalize_host(host: &str) -> Result<String, ConnectError> {
    let url = if host.contains("://") {
        host.to_string()
    } else {
        format!("https://{host}")
    };
    let bad = |reason: &str| ConnectError::InvalidHost {
        host: host.to_string(),
        reason: reason.to_string(),
    };
    let uri: http::Uri = url
        .parse()
        .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
    match uri.scheme_str() {
        Some("https" | "http") => {}
        _ => return Err(bad("the scheme must be https or http")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("it names no host"));
    }
    Ok(url)
}

/// Refuses a plain `http://` server when the user would send it a credential: a bearer
/// token (given, from a file, or from an exec or auth plugin) or a password travels in
/// clear there. A client certificate is only ever presented over TLS, and a server without
/// credentials (a local `kubectl proxy`) is fine.
fn refuse_cleartext_credentials(server: &str, user: &AuthInfo, from_host: bool) -> Result<(), ConnectError> {
    let plain = server
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"));
    let credential = if user.token.is_some() || user.token_file.is_some() {
        "a bearer token"
    } else if user.password.is_some() {
        "a password"
    } else if user.exec.is_some() {
        "the token of the exec credential plugin"
    } else if user.auth_provider.is_some() {
        "the token of the auth provider"
    } else {
        return Ok(());
    };
    if plain {
        return Err(ConnectError::CleartextCredentials {
            server: server.to_string(),
            credential,
            from_host,
        });
    }
    Ok(())
}

/// Kubeconfig `*-data` fields hold base64 of the PEM text.
fn base64_of(pem: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(pem.as_bytes())
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use secrecy::ExposeSecret;

    use super::*;

    fn settings(pairs: &[(&'static str, &str)]) -> Settings {
        Settings {
            strings: pairs.iter().map(|(k, v)| (*k, v.to_string())).collect(),
            ..Settings::default()
        }
    }

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: main
clusters:
- name: main
  cluster: {server: "https://main.example:6443", insecure-skip-tls-verify: true}
- name: other
  cluster: {server: "https://other.example:6443", insecure-skip-tls-verify: true}
users:
- name: alice
  user: {token: alice-token}
- name: bob
  user: {token: bob-token}
contexts:
- name: main
  context: {cluster: main, user: alice, namespace: team}
- name: second
  context: {cluster: other, user: bob}
"#;

    fn kubeconfig_file() -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(KUBECONFIG.as_bytes()).unwrap();
        f
    }

    fn token(c: &kube::Config) -> String {
        c.auth_info.token.as_ref().unwrap().expose_secret().to_string()
    }

    #[tokio::test]
    async fn explicit_host_and_token() {
        let c = client_config(&settings(&[("host", "10.0.0.1:6443"), ("token", "t0")]))
            .await
            .unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://10.0.0.1:6443/");
        assert_eq!(token(&c), "t0");
        assert!(!c.default_retry);
    }

    /// `load_config_file = false`: the named kubeconfig is not read (its user's token is not
    /// used); without a host there is nothing to connect with, which the error says.
    #[tokio::test]
    async fn load_config_file_false_reads_no_kubeconfig() {
        let f = kubeconfig_file();
        let mut s = settings(&[("host", "https://h:1")]);
        s.config_paths = vec![f.path().to_string_lossy().into_owned()];
        s.bools.insert(LOAD_CONFIG_FILE, false);
        let c = client_config(&s).await.unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://h:1/");
        assert!(c.auth_info.token.is_none());
        assert_eq!(c.default_namespace, "default");

        s.strings.remove("host");
        let err = client_config(&s).await.unwrap_err();
        assert!(matches!(err, ConnectError::KubeconfigOff), "{err:?}");
    }

    #[tokio::test]
    async fn kubeconfig_with_context_overrides_and_explicit_wins() {
        let f = kubeconfig_file();
        let path = f.path().to_string_lossy().into_owned();
        let mut s = settings(&[]);
        s.config_paths = vec![path.clone()];
        let c = client_config(&s).await.unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://main.example:6443/");
        assert_eq!(c.default_namespace, "team");
        assert_eq!(token(&c), "alice-token");

        let mut s = settings(&[("config_context", "second")]);
        s.config_paths = vec![path.clone()];
        let c = client_config(&s).await.unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://other.example:6443/");
        assert_eq!(token(&c), "bob-token");

        let mut s = settings(&[
            ("config_context_auth_info", "bob"),
            ("config_context_cluster", "other"),
        ]);
        s.config_paths = vec![path.clone()];
        let c = client_config(&s).await.unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://other.example:6443/");
        assert_eq!(token(&c), "bob-token");

        let mut s = settings(&[("token", "explicit"), ("host", "https://h:1")]);
        s.config_paths = vec![path.clone()];
        s.bools.insert(INSECURE, false);
        let c = client_config(&s).await.unwrap();
        assert_eq!(c.cluster_url.to_string(), "https://h:1/");
        assert_eq!(token(&c), "explicit");
        assert!(!c.accept_invalid_certs);

        let mut s = settings(&[("config_context", "missing")]);
        s.config_paths = vec![path];
        let err = client_config(&s).await.unwrap_err();
        assert!(
            matches!(err, ConnectError::NotInKubeconfig { what: "context", .. }),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn exec_becomes_a_kubeconfig_exec_entry() {
        let mut s = settings(&[("host", "https://h")]);
        s.exec = Some(crate::settings::Exec {
            api_version: "client.authentication.k8s.io/v1".into(),
            command: "get-token".into(),
            env: [("A".to_string(), "1".to_string())].into(),
            args: vec!["--x".into()],
        });
        let c = client_config(&s).await.unwrap();
        let exec = c.auth_info.exec.unwrap();
        assert_eq!(exec.command.as_deref(), Some("get-token"));
        assert_eq!(exec.args.unwrap(), ["--x"]);
        assert_eq!(exec.env.unwrap()[0]["name"], "A");
        assert_eq!(exec.interactive_mode, Some(ExecInteractiveMode::Never));
    }

    #[tokio::test]
    async fn credentials_are_never_sent_over_plain_http() {
        let err = client_config(&settings(&[("host", "http://10.0.0.1:8080"), ("token", "t0")]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ConnectError::CleartextCredentials { server, from_host: true, .. }
                if server == "http://10.0.0.1:8080"),
            "{err:?}"
        );
        let d = plugin_runtime::Diagnostic::from(err);
        assert_eq!(d.attribute.as_ref().unwrap().to_string(), "host");
        assert!(d.detail.contains("http://10.0.0.1:8080"), "{}", d.detail);
        assert!(d.detail.contains("https"), "{}", d.detail);
        assert!(!d.detail.contains("t0"), "{}", d.detail);

        let err = client_config(&settings(&[
            ("host", "HTTP://h:8080"),
            ("username", "u"),
            ("password", "p"),
        ]))
        .await
        .unwrap_err();
        assert!(matches!(
            err,
            ConnectError::CleartextCredentials {
                credential: "a password",
                ..
            }
        ));

        // From a kubeconfig too: its cluster's server is what the token would go to.
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(
            KUBECONFIG
                .replace("https://main.example", "http://main.example")
                .as_bytes(),
        )
        .unwrap();
        let mut s = settings(&[]);
        s.config_paths = vec![f.path().to_string_lossy().into_owned()];
        let err = client_config(&s).await.unwrap_err();
        assert!(
            matches!(&err, ConnectError::CleartextCredentials { server, from_host: false, .. }
                if server == "http://main.example:6443"),
            "{err:?}"
        );

        // No credentials (a local kubectl proxy): allowed.
        let c = client_config(&settings(&[("host", "http://127.0.0.1:8001")]))
            .await
            .unwrap();
        assert_eq!(c.cluster_url.to_string(), "http://127.0.0.1:8001/");
        // Over https, of course.
        client_config(&settings(&[("host", "https://h:6443"), ("token", "t0")]))
            .await
            .unwrap();
    }

    #[test]
    fn in_a_pod_the_service_account_connects() {
        let dir = tempfile::tempdir().unwrap();
        let env = |var: &str| match var {
            "KUBERNETES_SERVICE_HOST" => Some("10.96.0.1".to_string()),
            "KUBERNETES_SERVICE_PORT" => Some("443".to_string()),
            _ => None,
        };
        assert!(
            in_cluster(dir.path(), &env).is_none(),
            "no token file, no in-cluster config"
        );
        std::fs::write(dir.path().join("token"), "t0").unwrap();
        std::fs::write(dir.path().join("namespace"), "ci\n").unwrap();
        let config = in_cluster(dir.path(), &env).unwrap();
        let cluster = config.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(cluster.server.as_deref(), Some("https://10.96.0.1:443"));
        let user = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(
            user.token_file.as_deref(),
            Some(&*dir.path().join("token").display().to_string())
        );
        let context = config.contexts[0].context.as_ref().unwrap();
        assert_eq!(context.namespace.as_deref(), Some("ci"));
        assert!(in_cluster(dir.path(), &|_| None).is_none(), "not in a Pod");
    }

    #[test]
    fn hosts() {
        assert_eq!(normalize_host("1.2.3.4").unwrap(), "https://1.2.3.4");
        assert_eq!(normalize_host("http://h:8080").unwrap(), "http://h:8080");
        assert!(normalize_host("ftp://h").is_err());
        assert!(normalize_host("https://").is_err());
        assert!(normalize_host("bad host").is_err());
    }
}
