//! The provider block both providers share, its validation, and the client it builds.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use plugin_runtime::{Attribute, AttributePath, Block, Diagnostic, Diagnostics, NestedBlock, Type, Value};

use crate::authorized::AuthorizedLayer;
use crate::connect_error::ConnectError;
use crate::credential::{Credential, Obtained, Source};
use crate::estate::Estate;
use crate::kubeconfig::{named_client_config, normalize_host};
use crate::retry_after::RetryAfterLayer;
use crate::settings::{BOOL_SETTINGS, LAZY_LOAD, LOAD_CONFIG_FILE, STRING_SETTINGS, Settings, expand_home};

/// A client for the cluster, and the estate the provider block names.
#[derive(Clone)]
pub struct Connection {
    /// The client, which renews credentials and carries Retry-After hints into errors.
    pub client: kube::Client,
    /// The estate whose label this provider stamps and selects on.
    pub estate: Estate,
}

/// The provider block: `estate` plus the connection settings of hashicorp/kubernetes v3,
/// with the same environment fallbacks, and those of the kubectl providers' blocks that
/// hashicorp's lacks (`load_config_file`, `lazy_load`). Callers append their own attributes and
/// blocks.
pub fn provider_block(description: &str) -> Block {
    let mut block = Block::new(description).attribute(Attribute::required(
        "estate",
        Type::String,
        "The estate this configuration is: every object it manages carries the label \
         `tofu-estate=<estate>`, and its recorded outputs live in namespace \
         `tofu-records-<estate>`. Lowercase letters, digits and '-', at most 50 characters.",
    ));
    for s in STRING_SETTINGS {
        let description = match s.env {
            Some(env) => format!("{} Can be sourced from `{env}`.", s.description),
            None => s.description.to_string(),
        };
        let attribute = Attribute::optional(s.name, Type::String, &description);
        block = block.attribute(if s.sensitive {
            attribute.sensitive()
        } else {
            attribute
        });
    }
    for b in BOOL_SETTINGS {
        let description = format!("{} Can be sourced from `{}`.", b.description, b.env);
        block = block.attribute(Attribute::optional(b.name, Type::Bool, &description));
    }
    block
        .attribute(Attribute::optional(
            "config_paths",
            Type::list(Type::String),
            "A list of paths to kube config files. Can be sourced from `KUBE_CONFIG_PATHS`.",
        ))
        .block(NestedBlock::at_most_one(
            "exec",
            Block::new("A credential plugin that prints an ExecCredential with a token.")
                .attribute(Attribute::required(
                    "api_version",
                    Type::String,
                    "API version of the ExecCredential.",
                ))
                .attribute(Attribute::required("command", Type::String, "Command to run."))
                .attribute(Attribute::optional(
                    "env",
                    Type::map(Type::String),
                    "Extra environment variables.",
                ))
                .attribute(Attribute::optional(
                    "args",
                    Type::list(Type::String),
                    "Arguments.",
                )),
        ))
}

/// Checks what a provider block says: the estate's syntax, settings that exclude each other
/// and the host URL. Unknown values are skipped. Nothing outside the configuration is read:
/// `terraform validate` runs where no kubeconfig, exec plugin or cluster exists (CI jobs,
/// pre-commit hooks), as hashicorp's validate does; files are checked at configure time.
pub fn validate(config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let known = |name: &str| config.get(name).as_str();
    if let Some(estate) = known("estate")
        && let Err(e) = Estate::parse(estate)
    {
        diags.push(ConnectError::Estate(e).into());
    }
    if let Some(host) = known("host")
        && let Err(e) = normalize_host(host)
    {
        diags.push(e.into());
    }
    if let Some(text) = known("api_retry_timeout")
        && let Err(e) = retry_timeout(text)
    {
        diags.push(e.into());
    }
    let set = |name: &str| !config.get(name).is_null();
    if let Some(host) = known("host")
        && host.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://"))
        && let Some(credential) = [
            ("token", "a bearer token"),
            ("password", "a password"),
            ("exec", "the token of the exec credential plugin"),
        ]
        .into_iter()
        // An absent `exec` block is an empty list, not null.
        .find_map(|(name, what)| {
            let v = config.get(name);
            (set(name) && !matches!(v, Value::List(l) if l.is_empty())).then_some(what)
        })
    {
        diags.push(
            ConnectError::CleartextCredentials {
                server: host.to_string(),
                credential,
                from_host: true,
            }
            .into(),
        );
    }
    if set("config_path") && set("config_paths") {
        diags.push(
            Diagnostic::error(
                "Conflicting provider settings",
                "Set config_path or config_paths, not both.",
            )
            .at(AttributePath::root("config_paths")),
        );
    }
    if config.get("insecure").as_bool() == Some(true) && set("cluster_ca_certificate") {
        diags.push(
            Diagnostic::error(
                "Conflicting provider settings",
                "insecure = true skips verifying the server certificate, so a \
                 cluster_ca_certificate cannot be used with it. Remove one of them.",
            )
            .at(AttributePath::root("insecure")),
        );
    }
    for (has, lacks) in [
        ("client_certificate", "client_key"),
        ("client_key", "client_certificate"),
    ] {
        if set(has) && config.get(lacks).is_null() {
            diags.push(
                Diagnostic::error(
                    "Incomplete provider settings",
                    format!("{has} is set but {lacks} is not: client TLS authentication needs both."),
                )
                .at(AttributePath::root(lacks)),
            );
        }
    }
    diags
}

/// Builds the client from a wholly known provider block, with environment fallbacks. With
/// `lazy_load`, an error loading the kubeconfig comes back as [`ConnectError::Lazy`].
pub async fn connect(config: &Value) -> Result<Connection, ConnectError> {
    if let Some(name) = first_unknown(config) {
        return Err(ConnectError::Unknown { attribute: name });
    }
    let estate = match config.get("estate").as_str() {
        Some(e) => Estate::parse(e)?,
        None => return Err(ConnectError::MissingEstate),
    };
    let settings = Settings::resolve(config, &|var| std::env::var(var).ok())?;
    if let Some(text) = settings.get("api_retry_timeout") {
        crate::retry::set_retry_timeout(retry_timeout(text)?);
    }
    match client(config, &settings).await {
        Ok(client) => Ok(Connection { client, estate }),
        Err(e) if settings.enabled(LAZY_LOAD) && e.lazy_loadable() => Err(ConnectError::Lazy(Box::new(e))),
        Err(e) => Err(e),
    }
}

/// The client the settings describe, from the kubeconfig they name unless `load_config_file`
/// is off.
async fn client(config: &Value, settings: &Settings) -> Result<kube::Client, ConnectError> {
    if settings.enabled(LOAD_CONFIG_FILE) {
        missing_kubeconfig(config)?;
    }
    install_crypto_provider();
    let (mut client_config, identity) = named_client_config(settings).await?;
    let credential = renewable(&mut client_config).await?;
    let authorized = AuthorizedLayer {
        identity: credential.as_ref().map_or(identity, |c| c.describe()),
        credential,
    };
    Ok(crate::https::client_builder(&client_config)?
        .with_layer(&RetryAfterLayer)
        .with_layer(&authorized)
        .build())
}

/// `api_retry_timeout` as a duration (`20s`, `2m`).
fn retry_timeout(text: &str) -> Result<std::time::Duration, ConnectError> {
    plugin_runtime::duration::parse(text).map_err(|e| ConnectError::RetryTimeout {
        value: text.to_string(),
        reason: e.to_string(),
    })
}

/// The credential the client renews itself ([`Credential`]): a token file or an exec plugin's
/// token where nothing the client's configuration ranks before them (client-go's order: an
/// auth provider, a user name, a token) authenticates; taken out of `config` then.
async fn renewable(config: &mut kube::Config) -> Result<Option<Arc<Credential>>, ConnectError> {
    let user = &mut config.auth_info;
    if user.auth_provider.is_some() || user.username.is_some() || user.token.is_some() {
        return Ok(None);
    }
    let source = match (&user.token_file, &user.exec) {
        (Some(file), _) => Source::File(expand_home(file).into()),
        (None, Some(exec)) => Source::Exec(Box::new(exec.clone())),
        (None, None) => return Ok(None),
    };
    let credential = match Credential::obtain(source).await? {
        Obtained::Token(credential) => credential,
        Obtained::Certificate { cert, key } => {
            // A plugin that gives a client certificate: the client's TLS setup presents it.
            let base64 = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
            user.client_certificate = None;
            user.client_key = None;
            user.client_certificate_data = Some(base64(&cert));
            user.client_key_data = Some(base64(&key).into());
            user.exec = None;
            return Ok(None);
        }
    };
    user.token_file = None;
    user.exec = None;
    Ok(Some(Arc::new(credential)))
}

/// A kubeconfig file the block names (`config_path`, `config_paths`) that does not exist, so
/// the error names the attribute rather than a parse failure deep in the loader.
fn missing_kubeconfig(config: &Value) -> Result<(), ConnectError> {
    let named = config
        .get("config_path")
        .as_str()
        .map(|p| (p, AttributePath::root("config_path")));
    let listed = config
        .get("config_paths")
        .elements()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((p.as_str()?, AttributePath::root("config_paths").index(i as i64))));
    match named
        .into_iter()
        .chain(listed)
        .find(|(p, _)| !Path::new(&expand_home(p)).is_file())
    {
        Some((path, attribute)) => Err(ConnectError::KubeconfigNotFound {
            path: path.to_string(),
            attribute,
        }),
        None => Ok(()),
    }
}

/// The first top-level attribute that is not wholly known.
fn first_unknown(config: &Value) -> Option<String> {
    config
        .entries()?
        .iter()
        .find(|(_, v)| !v.is_wholly_known())
        .map(|(k, _)| k.clone())
}

/// rustls needs one process-wide crypto provider; aws-lc-rs is the one the plugin
/// runtime uses too, so whichever installs it first wins and the other is a no-op.
fn install_crypto_provider() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(d: &Diagnostic) -> String {
        d.attribute.as_ref().map(ToString::to_string).unwrap_or_default()
    }

    #[test]
    fn block_has_hashicorp_settings_and_types() {
        let block = provider_block("test");
        let Type::Object(fields) = block.value_type() else {
            panic!("not an object")
        };
        for name in [
            "estate",
            "host",
            "username",
            "password",
            "insecure",
            "tls_server_name",
            "client_certificate",
            "client_key",
            "cluster_ca_certificate",
            "config_path",
            "config_paths",
            "config_context",
            "config_context_auth_info",
            "config_context_cluster",
            "token",
            "proxy_url",
            "exec",
            // Beyond hashicorp's: how long a request may wait between its tries.
            "api_retry_timeout",
            // Beyond hashicorp's, from the kubectl providers' blocks.
            "load_config_file",
            "lazy_load",
        ] {
            assert!(fields.contains_key(name), "{name}");
        }
        assert_eq!(fields.len(), 20);
        for flag in ["insecure", "load_config_file", "lazy_load"] {
            assert_eq!(fields[flag], Type::Bool, "{flag}");
        }
        for kubectl in ["load_config_file", "lazy_load"] {
            let attribute = block.find_attribute(kubectl).unwrap();
            assert!(attribute.optional, "{kubectl}");
            assert!(
                attribute.description.contains("From the kubectl providers."),
                "{kubectl}"
            );
        }
        assert_eq!(fields["config_paths"], Type::list(Type::String));
        assert_eq!(
            fields["exec"],
            Type::list(Type::object([
                ("api_version", Type::String),
                ("command", Type::String),
                ("env", Type::map(Type::String)),
                ("args", Type::list(Type::String)),
            ]))
        );
        assert!(block.find_attribute("estate").unwrap().required);
        for secret in ["token", "client_key", "password"] {
            assert!(block.find_attribute(secret).unwrap().sensitive, "{secret}");
        }
        assert!(!block.find_attribute("host").unwrap().sensitive);
        assert_eq!(block.find_block("exec").unwrap().max_items, 1);
    }

    #[test]
    fn validate_reports_bad_estate_at_estate() {
        let diags = validate(&Value::object([("estate", Value::string("Bad_Estate!"))]));
        assert_eq!(diags.0.len(), 1);
        let d = &diags.0[0];
        assert_eq!(path_of(d), "estate");
        assert!(
            d.detail
                .starts_with("estate \"Bad_Estate!\" is not a valid Kubernetes label value: ")
        );
        let long = "a".repeat(64);
        assert!(validate(&Value::object([("estate", Value::string(long))])).has_errors());
        assert!(validate(&Value::object([("estate", Value::string(""))])).has_errors());
        let slow = validate(&Value::object([
            ("estate", Value::string("app")),
            ("api_retry_timeout", Value::string("ninety")),
        ]));
        assert_eq!(path_of(&slow.0[0]), "api_retry_timeout");
        assert!(
            validate(&Value::object([
                ("estate", Value::string("app")),
                ("api_retry_timeout", Value::string("90s")),
            ]))
            .0
            .is_empty()
        );
    }

    #[test]
    fn validate_skips_unknowns_and_accepts_good_blocks() {
        let diags = validate(&Value::object([
            ("estate", Value::unknown()),
            ("host", Value::unknown()),
            ("config_path", Value::unknown()),
        ]));
        assert!(diags.is_empty(), "{diags:?}");
        let diags = validate(&Value::object([
            ("estate", Value::string("network")),
            ("host", Value::string("https://127.0.0.1:6443")),
            ("token", Value::string("t")),
        ]));
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn validate_reports_conflicts_but_reads_no_file() {
        let diags = validate(&Value::object([
            ("estate", Value::string("app")),
            ("host", Value::string("ftp://x")),
            ("config_path", Value::string("/nonexistent/kubeconfig")),
            ("config_paths", Value::List(vec![Value::string("/nonexistent/b")])),
            ("insecure", Value::Bool(true)),
            ("cluster_ca_certificate", Value::string("PEM")),
            ("client_certificate", Value::string("PEM")),
        ]));
        let paths: Vec<String> = diags.0.iter().map(path_of).collect();
        assert_eq!(paths, ["host", "config_paths", "insecure", "client_key"]);
    }

    #[tokio::test]
    async fn configure_names_the_kubeconfig_file_that_is_missing() {
        let dir = tempfile::tempdir().unwrap();
        let present = dir.path().join("present");
        std::fs::write(&present, "apiVersion: v1\nkind: Config\n").unwrap();
        let Err(err) = connect(&Value::object([
            ("estate", Value::string("app")),
            (
                "config_paths",
                Value::List(vec![
                    Value::string(present.to_str().unwrap()),
                    Value::string("/nonexistent/b"),
                ]),
            ),
        ]))
        .await
        else {
            panic!("a missing file is an error");
        };
        let d = Diagnostic::from(err);
        assert_eq!(path_of(&d), "config_paths[1]");
        assert_eq!(d.summary, "Kubeconfig file not found");
        assert!(d.detail.contains("/nonexistent/b"), "{}", d.detail);
    }

    /// `load_config_file = false` reads no file, so a named one that is missing is no error;
    /// `lazy_load = true` turns a kubeconfig that cannot be loaded into [`ConnectError::Lazy`],
    /// but not an error in the block itself.
    #[tokio::test]
    async fn load_config_file_and_lazy_load_change_what_fails() {
        let missing = || ("config_path", Value::string("/nonexistent/kubeconfig"));
        let off = connect(&Value::object([
            ("estate", Value::string("app")),
            missing(),
            ("load_config_file", Value::Bool(false)),
            ("host", Value::string("https://127.0.0.1:1")),
        ]))
        .await;
        assert!(off.is_ok(), "{:?}", off.err());

        let lazy = |extra: (&'static str, Value)| {
            Value::object([
                ("estate", Value::string("app")),
                ("lazy_load", Value::Bool(true)),
                extra,
            ])
        };
        let Err(ConnectError::Lazy(inner)) = connect(&lazy(missing())).await else {
            panic!("a missing kubeconfig is deferred");
        };
        assert!(
            matches!(*inner, ConnectError::KubeconfigNotFound { .. }),
            "{inner:?}"
        );
        assert_eq!(
            path_of(&Diagnostic::from(ConnectError::Lazy(inner))),
            "config_path"
        );
        let bad_duration = lazy(("api_retry_timeout", Value::string("ninety")));
        let Err(err) = connect(&bad_duration).await else {
            panic!("a bad duration is an error");
        };
        assert!(matches!(err, ConnectError::RetryTimeout { .. }), "{err:?}");
    }

    #[test]
    fn validate_refuses_credentials_for_a_plain_http_host() {
        let diags = validate(&Value::object([
            ("estate", Value::string("app")),
            ("host", Value::string("http://10.1.2.3:8080")),
            ("token", Value::string("t")),
        ]));
        assert_eq!(diags.0.len(), 1, "{diags:?}");
        let d = &diags.0[0];
        assert_eq!(path_of(d), "host");
        assert_eq!(d.summary, "Credentials would be sent unencrypted");
        assert!(
            d.detail.starts_with(
                "The provider will not send a bearer token to http://10.1.2.3:8080 over plain http: "
            ),
            "{}",
            d.detail
        );
        assert!(d.detail.contains("https://"), "{}", d.detail);
        // Without credentials (kubectl proxy; no exec block is an empty list), or over https:
        // fine.
        for (host, token) in [
            ("http://127.0.0.1:8001", Value::Null),
            ("https://h", Value::string("t")),
        ] {
            let diags = validate(&Value::object([
                ("estate", Value::string("app")),
                ("host", Value::string(host)),
                ("token", token),
                ("exec", Value::List(vec![])),
            ]));
            assert!(diags.is_empty(), "{host}: {diags:?}");
        }
    }

    #[tokio::test]
    async fn connect_needs_known_values_and_a_good_estate() {
        let err = connect(&Value::object([
            ("estate", Value::string("x")),
            ("host", Value::unknown()),
        ]))
        .await
        .err()
        .unwrap();
        assert_eq!(path_of(&Diagnostic::from(err)), "host");
        let err = connect(&Value::object([("estate", Value::string("Bad_Estate!"))]))
            .await
            .err()
            .unwrap();
        let d = Diagnostic::from(err);
        assert_eq!(path_of(&d), "estate");
        assert!(d.detail.contains("not a valid Kubernetes label value"));
    }

    #[tokio::test]
    async fn connect_builds_a_client_without_contacting_the_server() {
        let c = connect(&Value::object([
            ("estate", Value::string("network")),
            ("host", Value::string("https://127.0.0.1:1")),
            ("token", Value::string("t")),
        ]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.estate.as_str(), "network");
    }
}
