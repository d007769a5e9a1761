//! The connection settings of a provider block, with hashicorp/kubernetes' environment
//! fallbacks applied (and the kubectl providers' `load_config_file` and `lazy_load`): one table
//! per value type names each setting, its environment variable and its documentation, so the
//! schema and the resolution cannot drift apart.

use std::collections::BTreeMap;

use plugin_runtime::Value;

/// A string setting of the provider block.
pub(crate) struct StringSetting {
    pub name: &'static str,
    pub env: Option<&'static str>,
    pub sensitive: bool,
    pub description: &'static str,
}

const fn setting(
    name: &'static str,
    env: Option<&'static str>,
    sensitive: bool,
    description: &'static str,
) -> StringSetting {
    StringSetting {
        name,
        env,
        sensitive,
        description,
    }
}

pub(crate) const STRING_SETTINGS: &[StringSetting] = &[
    setting(
        "host",
        Some("KUBE_HOST"),
        false,
        "The hostname (in form of URI) of the Kubernetes API server.",
    ),
    setting(
        "username",
        Some("KUBE_USER"),
        false,
        "Username for basic authentication.",
    ),
    setting(
        "password",
        Some("KUBE_PASSWORD"),
        true,
        "Password for basic authentication.",
    ),
    setting(
        "tls_server_name",
        Some("KUBE_TLS_SERVER_NAME"),
        false,
        "Server name passed to the server for SNI and used to verify its certificate.",
    ),
    setting(
        "client_certificate",
        Some("KUBE_CLIENT_CERT_DATA"),
        false,
        "PEM-encoded client certificate for TLS authentication.",
    ),
    setting(
        "client_key",
        Some("KUBE_CLIENT_KEY_DATA"),
        true,
        "PEM-encoded client certificate key for TLS authentication.",
    ),
    setting(
        "cluster_ca_certificate",
        Some("KUBE_CLUSTER_CA_CERT_DATA"),
        false,
        "PEM-encoded root certificates bundle for TLS authentication.",
    ),
    setting(
        "config_path",
        Some("KUBE_CONFIG_PATH"),
        false,
        "Path to the kube config file.",
    ),
    setting(
        "config_context",
        Some("KUBE_CTX"),
        false,
        "Context to choose from the kube config file.",
    ),
    setting(
        "config_context_auth_info",
        Some("KUBE_CTX_AUTH_INFO"),
        false,
        "Authentication info (user) to use from the kube config file, overriding the context's.",
    ),
    setting(
        "config_context_cluster",
        Some("KUBE_CTX_CLUSTER"),
        false,
        "Cluster to use from the kube config file, overriding the context's.",
    ),
    setting(
        "token",
        Some("KUBE_TOKEN"),
        true,
        "Token to authenticate a service account or user.",
    ),
    setting(
        "proxy_url",
        Some("KUBE_PROXY_URL"),
        false,
        "URL of the proxy to use for requests to the API server.",
    ),
    setting(
        "api_retry_timeout",
        Some("KUBE_API_RETRY_TIMEOUT"),
        false,
        "How long one request may wait between its tries while the API server is unreachable, \
         overloaded or restarting, as a duration (`20s`, `2m`); default `20s`, enough for a brief \
         outage (a control plane that restarts is often down 15 s to a minute). Never past the \
         operation's `timeouts`.",
    ),
];

/// A boolean setting of the provider block; unset, it is `default`.
pub(crate) struct BoolSetting {
    pub name: &'static str,
    pub env: &'static str,
    pub default: bool,
    pub description: &'static str,
}

pub(crate) const INSECURE: &str = "insecure";
pub(crate) const LOAD_CONFIG_FILE: &str = "load_config_file";
pub(crate) const LAZY_LOAD: &str = "lazy_load";

pub(crate) const BOOL_SETTINGS: &[BoolSetting] = &[
    BoolSetting {
        name: INSECURE,
        env: "KUBE_INSECURE",
        default: false,
        description: "Whether the server should be accessed without verifying the TLS certificate.",
    },
    BoolSetting {
        name: LOAD_CONFIG_FILE,
        env: "KUBE_LOAD_CONFIG_FILE",
        default: true,
        description: "Whether kubeconfig files are read at all (default `true`). With `false`, \
                      neither `config_path`, `config_paths` nor KUBECONFIG / ~/.kube/config is read: \
                      the block's own settings (`host`, `token`, ...) or a Pod's service account \
                      connect. From the kubectl providers.",
    },
    BoolSetting {
        name: LAZY_LOAD,
        env: "KUBE_LAZY_LOAD",
        default: false,
        description: "Whether a kubeconfig that cannot be loaded at configure (a file, context or \
                      credential that does not exist yet) waits for where the cluster is needed \
                      (default `false`). Plans then run without the cluster, as when a connection \
                      setting is known only at apply, and the error shows at apply if it persists. \
                      From the kubectl providers.",
    },
];

/// The `exec` block: a credential plugin run to obtain a token.
#[derive(Clone, PartialEq)]
pub(crate) struct Exec {
    pub api_version: String,
    pub command: String,
    pub env: BTreeMap<String, String>,
    pub args: Vec<String>,
}

/// Every connection setting, from the block or its environment fallback.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct Settings {
    pub strings: BTreeMap<&'static str, String>,
    /// The [`BOOL_SETTINGS`] set in the block or the environment.
    pub bools: BTreeMap<&'static str, bool>,
    pub config_paths: Vec<String>,
    pub exec: Option<Exec>,
}

/// What a redacted value prints as: whether it is set shows, never what it is.
const REDACTED: &str = "<redacted>";

/// Settings whose values are credentials: the sensitive ones, and the client certificate,
/// which identifies the user as much as the key does.
fn is_secret(name: &str) -> bool {
    name == "client_certificate" || STRING_SETTINGS.iter().any(|s| s.name == name && s.sensitive)
}

// Debug output ends up in logs and panic messages: tokens, passwords, keys and the exec
// environment (where credential plugins take their secrets) never go there.
impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let strings: BTreeMap<&str, &str> = self
            .strings
            .iter()
            .map(|(k, v)| (*k, if is_secret(k) { REDACTED } else { v.as_str() }))
            .collect();
        f.debug_struct("Settings")
            .field("strings", &strings)
            .field("bools", &self.bools)
            .field("config_paths", &self.config_paths)
            .field("exec", &self.exec)
            .finish()
    }
}

impl std::fmt::Debug for Exec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let env: BTreeMap<&str, &str> = self.env.keys().map(|k| (k.as_str(), REDACTED)).collect();
        f.debug_struct("Exec")
            .field("api_version", &self.api_version)
            .field("command", &self.command)
            .field("env", &env)
            .field("args", &self.args)
            .finish()
    }
}

/// An environment variable whose value the setting cannot take.
#[derive(Debug, thiserror::Error)]
#[error("environment variable {var} is {value:?}, which is not a boolean (true or false)")]
pub struct EnvError {
    /// The variable's name.
    pub var: &'static str,
    /// Its value, which is not a boolean.
    pub value: String,
}

impl Settings {
    /// Resolves a wholly known provider block, looking up fallbacks with `env`.
    pub fn resolve(config: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, EnvError> {
        let nonempty_env = |var: &str| env(var).filter(|v| !v.is_empty());
        let mut strings = BTreeMap::new();
        for s in STRING_SETTINGS {
            let value = config
                .get(s.name)
                .as_str()
                .map(str::to_string)
                .or_else(|| s.env.and_then(nonempty_env));
            if let Some(v) = value {
                strings.insert(s.name, v);
            }
        }
        let mut bools = BTreeMap::new();
        for b in BOOL_SETTINGS {
            let value = match config.get(b.name).as_bool() {
                Some(v) => Some(v),
                None => match nonempty_env(b.env) {
                    None => None,
                    Some(v) => Some(parse_bool(&v).ok_or(EnvError { var: b.env, value: v })?),
                },
            };
            if let Some(v) = value {
                bools.insert(b.name, v);
            }
        }
        let mut config_paths: Vec<String> = config
            .get("config_paths")
            .elements()
            .iter()
            .filter_map(|p| p.as_str().map(str::to_string))
            .collect();
        if config_paths.is_empty()
            && config.get("config_paths").is_null()
            && let Some(v) = nonempty_env("KUBE_CONFIG_PATHS")
        {
            config_paths = std::env::split_paths(&v)
                .map(|p| p.to_string_lossy().into_owned())
                .filter(|p| !p.is_empty())
                .collect();
        }
        if let Some(p) = strings.remove("config_path") {
            config_paths.insert(0, p);
        }
        let exec = config.get("exec").elements().first().map(|e| Exec {
            api_version: e.get("api_version").as_str().unwrap_or_default().to_string(),
            command: e.get("command").as_str().unwrap_or_default().to_string(),
            env: e
                .get("env")
                .entries()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            args: e
                .get("args")
                .elements()
                .iter()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect(),
        });
        Ok(Settings {
            strings,
            bools,
            config_paths,
            exec,
        })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.strings.get(name).map(String::as_str)
    }

    /// A boolean setting as set, `None` when neither the block nor the environment sets it.
    pub fn flag(&self, name: &str) -> Option<bool> {
        self.bools.get(name).copied()
    }

    /// A boolean setting, its default when unset.
    pub fn enabled(&self, name: &str) -> bool {
        let default = BOOL_SETTINGS.iter().any(|b| b.name == name && b.default);
        self.flag(name).unwrap_or(default)
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "t" => Some(true),
        "false" | "0" | "f" => Some(false),
        _ => None,
    }
}

/// Expands a leading `~/` to the home directory, as hashicorp/kubernetes does for paths.
pub(crate) fn expand_home(path: &str) -> String {
    match (path.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn block_values_win_over_environment() {
        let config = Value::object([
            ("host", Value::string("https://block:6443")),
            ("token", Value::Null),
            ("insecure", Value::Bool(false)),
        ]);
        let env = env_of(&[
            ("KUBE_HOST", "https://env:6443"),
            ("KUBE_TOKEN", "from-env"),
            ("KUBE_INSECURE", "true"),
            ("KUBE_CTX", ""),
        ]);
        let s = Settings::resolve(&config, &env).unwrap();
        assert_eq!(s.get("host"), Some("https://block:6443"));
        assert_eq!(s.get("token"), Some("from-env"));
        assert_eq!(s.flag(INSECURE), Some(false));
        assert_eq!(s.get("config_context"), None, "empty env values count as unset");
    }

    #[test]
    fn config_paths_come_from_path_paths_or_env() {
        let config = Value::object([
            ("config_path", Value::string("/a")),
            ("config_paths", Value::List(vec![Value::string("/b")])),
        ]);
        let s = Settings::resolve(&config, &env_of(&[])).unwrap();
        assert_eq!(s.config_paths, ["/a", "/b"]);
        let s = Settings::resolve(
            &Value::object([("estate", Value::string("x"))]),
            &env_of(&[("KUBE_CONFIG_PATHS", "/c:/d")]),
        )
        .unwrap();
        assert_eq!(s.config_paths, ["/c", "/d"]);
    }

    #[test]
    fn debug_output_never_shows_credentials() {
        let config = Value::object([
            ("host", Value::string("https://visible.example:6443")),
            ("token", Value::string("secret-token-1")),
            ("password", Value::string("secret-password-2")),
            ("client_key", Value::string("secret-key-3")),
            ("client_certificate", Value::string("secret-cert-4")),
            (
                "exec",
                Value::List(vec![Value::object([
                    ("api_version", Value::string("client.authentication.k8s.io/v1")),
                    ("command", Value::string("get-token")),
                    ("env", Value::string_map([("AWS_SECRET", "secret-env-5")])),
                ])]),
            ),
        ]);
        let s = Settings::resolve(&config, &env_of(&[])).unwrap();
        for text in [format!("{s:?}"), format!("{s:#?}")] {
            for secret in [
                "secret-token-1",
                "secret-password-2",
                "secret-key-3",
                "secret-cert-4",
                "secret-env-5",
            ] {
                assert!(!text.contains(secret), "{secret} in {text}");
            }
            for visible in ["https://visible.example:6443", "get-token", "AWS_SECRET", "token"] {
                assert!(text.contains(visible), "{visible} missing from {text}");
            }
        }
    }

    /// The kubectl providers' flags: defaults when unset, the block before the environment, an
    /// environment value that is no boolean an error naming the variable.
    #[test]
    fn load_config_file_and_lazy_load_default_and_fall_back_to_the_environment() {
        let unset = Settings::resolve(&Value::object([("x", Value::Null)]), &env_of(&[])).unwrap();
        assert!(unset.enabled(LOAD_CONFIG_FILE));
        assert!(!unset.enabled(LAZY_LOAD));
        assert!(!unset.enabled(INSECURE));
        let env = env_of(&[("KUBE_LOAD_CONFIG_FILE", "false"), ("KUBE_LAZY_LOAD", "1")]);
        let from_env = Settings::resolve(&Value::object([("x", Value::Null)]), &env).unwrap();
        assert!(!from_env.enabled(LOAD_CONFIG_FILE));
        assert!(from_env.enabled(LAZY_LOAD));
        let block = Value::object([
            (LOAD_CONFIG_FILE, Value::Bool(true)),
            (LAZY_LOAD, Value::Bool(false)),
        ]);
        let from_block = Settings::resolve(&block, &env).unwrap();
        assert!(from_block.enabled(LOAD_CONFIG_FILE));
        assert!(!from_block.enabled(LAZY_LOAD));
        let bad: [&'static [(&str, &str)]; 2] = [
            &[("KUBE_LOAD_CONFIG_FILE", "maybe")],
            &[("KUBE_LAZY_LOAD", "maybe")],
        ];
        for pairs in bad {
            let err = Settings::resolve(&Value::object([("x", Value::Null)]), &env_of(pairs)).unwrap_err();
            assert_eq!(err.var, pairs[0].0);
        }
    }

    #[test]
    fn exec_block_and_bad_env_bool() {
        let exec = Value::object([
            ("api_version", Value::string("client.authentication.k8s.io/v1")),
            ("command", Value::string("get-token")),
            ("env", Value::string_map([("A", "1")])),
            ("args", Value::List(vec![Value::string("--x")])),
        ]);
        let s = Settings::resolve(&Value::object([("exec", Value::List(vec![exec]))]), &env_of(&[])).unwrap();
        let e = s.exec.unwrap();
        assert_eq!(e.command, "get-token");
        assert_eq!(e.env["A"], "1");
        assert_eq!(e.args, ["--x"]);
        let err = Settings::resolve(
            &Value::object([("x", Value::Null)]),
            &env_of(&[("KUBE_INSECURE", "yes")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("KUBE_INSECURE"));
    }
}
