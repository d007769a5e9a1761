//! Why no client could be built from the provider block ([`ConnectError`]), and the
//! diagnostic each reason becomes, pointing at the setting to fix.

use plugin_runtime::{AttributePath, Diagnostic};

use crate::estate::EstateError;
use crate::settings::EnvError;

/// Why no client could be built from the provider block.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// `estate` is unset: without it no object could be stamped or found.
    #[error("the provider block sets no estate")]
    MissingEstate,
    /// `estate` is not a valid label value.
    #[error(transparent)]
    Estate(#[from] EstateError),
    /// A setting depends on a value known only at apply (a resource not yet created).
    #[error("provider setting {attribute} is not known yet")]
    Unknown {
        /// The provider block attribute.
        attribute: String,
    },
    /// An environment fallback holds a value the setting cannot take.
    #[error(transparent)]
    Env(#[from] EnvError),
    /// `host` does not parse as a URL.
    #[error("host {host:?} is not a valid API server URL: {reason}")]
    InvalidHost {
        /// The value given.
        host: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The kubeconfig exists but cannot be read or parsed.
    #[error("cannot load the kubeconfig from {location}: {source}")]
    Kubeconfig {
        /// The file or files, as the user named them.
        location: String,
        /// What kube's loader said.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The kubeconfig path named does not exist.
    #[error("there is no kubeconfig file at {path:?}")]
    KubeconfigNotFound {
        /// The path, home expanded.
        path: String,
        /// The setting that named it, where the diagnostic points.
        attribute: AttributePath,
    },
    /// A context, cluster or user the block names is missing from the kubeconfig.
    #[error("{what} {name:?} is not in the kubeconfig")]
    NotInKubeconfig {
        /// Which kind of entry: `context` or `cluster`.
        what: &'static str,
        /// The name looked for.
        name: String,
    },
    /// A credential would travel unencrypted: refused rather than leaked.
    #[error("will not send {credential} to {server} over plain http")]
    CleartextCredentials {
        /// The `http://` server URL.
        server: String,
        /// What would have been sent (a token, a password).
        credential: &'static str,
        /// The server is the provider block's `host` (else the kubeconfig's cluster).
        from_host: bool,
    },
    /// Nothing names the API server to talk to.
    #[error("no API server host: neither the provider block nor the kubeconfig names one")]
    NoHost,
    /// Neither the block nor a default kubeconfig gives any connection.
    #[error("no Kubernetes connection is configured, and KUBECONFIG / ~/.kube/config cannot be read")]
    NoConfiguration,
    /// The kubectl providers' `load_config_file = false` leaves only `host`, which is unset.
    #[error("load_config_file is false and the provider block names no host")]
    KubeconfigOff,
    /// No client can be built from the resolved settings (its TLS material, say).
    #[error("cannot build the Kubernetes client: {0}")]
    Client(#[from] crate::https::TlsSetupError),
    /// An exec plugin or token file gave no credential.
    #[error("no credential: {0}")]
    Credential(#[from] crate::credential::CredentialError),
    /// `api_retry_timeout` does not parse as a duration.
    #[error("api_retry_timeout {value:?} is not a duration such as \"20s\" or \"2m\": {reason}")]
    RetryTimeout {
        /// The value given.
        value: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A load error that `lazy_load = true` defers to where the cluster is needed
    /// ([`ConnectError::lazy_loadable`]); `Configured` keeps it instead of failing.
    #[error(transparent)]
    Lazy(Box<ConnectError>),
}

impl ConnectError {
    /// Whether `lazy_load` defers this error: the kubeconfig, its contents and the credential it
    /// names, which may not exist before the cluster does. Not what the block itself says wrong
    /// (estate, host, durations, environment values), nor the refusal to send credentials in
    /// clear text.
    pub fn lazy_loadable(&self) -> bool {
        matches!(
            self,
            ConnectError::Kubeconfig { .. }
                | ConnectError::KubeconfigNotFound { .. }
                | ConnectError::NotInKubeconfig { .. }
                | ConnectError::NoHost
                | ConnectError::NoConfiguration
                | ConnectError::KubeconfigOff
                | ConnectError::Client(_)
                | ConnectError::Credential(_)
        )
    }
}

impl From<ConnectError> for Diagnostic {
    fn from(err: ConnectError) -> Diagnostic {
        let err = match err {
            ConnectError::Lazy(inner) => *inner,
            other => other,
        };
        let summary = "Cannot connect to Kubernetes";
        let at = |name: &str| AttributePath::root(name);
        match &err {
            ConnectError::MissingEstate | ConnectError::Estate(_) => {
                Diagnostic::error("Invalid estate", err.to_string()).at(at("estate"))
            }
            ConnectError::Unknown { attribute } => Diagnostic::error(
                summary,
                format!(
                    "The provider setting {attribute} depends on a value not known until apply. \
                     Connection settings must be known at plan time: apply its dependencies first \
                     (terraform apply -target=...), or set it from a known value."
                ),
            )
            .at(at(attribute.split('.').next().unwrap_or(attribute))),
            ConnectError::InvalidHost { .. } => Diagnostic::error(summary, err.to_string()).at(at("host")),
            ConnectError::RetryTimeout { .. } => {
                Diagnostic::error("Invalid api_retry_timeout", err.to_string()).at(at("api_retry_timeout"))
            }
            ConnectError::KubeconfigNotFound { path, attribute } => Diagnostic::error(
                "Kubeconfig file not found",
                format!("There is no file at {path:?}: name an existing kubeconfig file."),
            )
            .at(attribute.clone()),
            ConnectError::NotInKubeconfig { what, .. } => {
                let attribute = match *what {
                    "cluster" => "config_context_cluster",
                    "user" => "config_context_auth_info",
                    _ => "config_context",
                };
                Diagnostic::error(summary, err.to_string()).at(at(attribute))
            }
            ConnectError::CleartextCredentials { from_host, .. } => {
                let d = Diagnostic::error(
                    "Credentials would be sent unencrypted",
                    format!(
                        "The provider {err}: anyone on the network path could read and reuse it. \
                         Use the API server's https:// URL ({}), or connect without credentials \
                         (e.g. through a local `kubectl proxy`).",
                        if *from_host {
                            "in `host`"
                        } else {
                            "the cluster's `server` in the kubeconfig"
                        }
                    ),
                );
                if *from_host { d.at(at("host")) } else { d }
            }
            ConnectError::KubeconfigOff => Diagnostic::error(
                summary,
                format!(
                    "{err}. Set host (with token, client certificate or exec), or let the provider \
                     read a kubeconfig file (load_config_file = true)."
                ),
            )
            .at(at("load_config_file")),
            ConnectError::NoHost | ConnectError::NoConfiguration => Diagnostic::error(
                summary,
                format!(
                    "{err}. Set host (with token, client certificate or exec), or config_path \
                     naming a kubeconfig file."
                ),
            ),
            _ => Diagnostic::error(summary, err.to_string()),
        }
    }
}
