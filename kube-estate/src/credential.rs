//! Credentials that expire, held by the provider process: an exec plugin's token
//! (`client.authentication.k8s.io`, with its `expirationTimestamp`) and a token file that is
//! rewritten under it (a projected service-account token). Each is obtained once, shared by
//! every concurrent request, renewed a little before it expires, and renewed once more when
//! the API server refuses it (401), as client-go does.
//!
//! kube's own exec refresh runs the plugin again on every request made within a minute of the
//! credential's expiry: with a credential that lives 30 s that is every request (816 runs of
//! the plugin for one 400-object apply), and with `aws eks get-token` a fork storm.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime};

use http::HeaderValue;
use kube::config::ExecConfig;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;

/// How much earlier than its expiry a credential is renewed: a sixth of its lifetime, at most
/// this much (10 s of a one-hour token, 5 s of a 30-second one).
const RENEW_AHEAD: Duration = Duration::from_secs(10);
/// How long a token file's contents are used before the file is read again.
const FILE_REREAD: Duration = Duration::from_secs(5);
/// The shortest time a token is used before it is renewed.
const MIN_HOLD: Duration = Duration::from_secs(1);
/// How long a plugin may take before it is given up on.
const EXEC_TIMEOUT: Duration = Duration::from_secs(120);

/// Why no credential could be had.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    /// The exec plugin could not be started (not on PATH, not executable) or timed out.
    #[error("the credential plugin `{command}` could not be run: {cause}")]
    Start {
        /// The plugin's command line.
        command: String,
        /// What the operating system or the timeout said.
        cause: String,
    },
    /// The exec plugin ran and exited unsuccessfully; its stderr usually says why.
    #[error("the credential plugin `{command}` failed ({status}): {stderr}")]
    Failed {
        /// The plugin's command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// The exec plugin succeeded but printed nothing usable.
    #[error("the credential plugin `{command}` printed no ExecCredential with a token: {cause}")]
    Output {
        /// The plugin's command line.
        command: String,
        /// Why its output was refused.
        cause: String,
    },
    /// The token file named cannot be read.
    #[error("the token file {path} cannot be read: {cause}")]
    File {
        /// The file's path.
        path: String,
        /// The I/O error.
        cause: String,
    },
}

/// Where a renewable credential comes from.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Exec(Box<ExecConfig>),
    File(PathBuf),
}

impl Source {
    /// The plugin's command, or the file's path.
    fn name(&self) -> String {
        match self {
            Source::Exec(exec) => exec.command.clone().unwrap_or_default(),
            Source::File(path) => path.display().to_string(),
        }
    }

    /// The identity as errors name it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Source::Exec(_) => format!("the token of the exec plugin `{}`", self.name()),
            Source::File(_) => format!("the token in {}", self.name()),
        }
    }
}

/// A token and when to renew it (`None`: only after a refusal).
#[derive(Clone)]
pub(crate) struct Held {
    pub header: HeaderValue,
    renew_at: Option<Instant>,
    /// The source gave this token again after the server refused it: further refusals of it
    /// are final without asking the source once more.
    refused: bool,
}

impl Held {
    fn current(&self) -> bool {
        self.renew_at.is_none_or(|at| Instant::now() < at)
    }
}

/// One renewable credential of a connection.
pub(crate) struct Credential {
    source: Source,
    held: Mutex<Held>,
}

/// What a source gave when first asked.
pub(crate) enum Obtained {
    Token(Credential),
    /// A plugin's client certificate and key (PEM), which the client's TLS setup presents.
    Certificate {
        cert: String,
        key: String,
    },
}

/// What one run of a source gave.
enum Given {
    Token(Held),
    Certificate { cert: String, key: String },
}

impl Credential {
    /// The credential of `source`, obtained now.
    pub(crate) async fn obtain(source: Source) -> Result<Obtained, CredentialError> {
        Ok(match fetch(&source).await? {
            Given::Token(held) => Obtained::Token(Credential {
                source,
                held: Mutex::new(held),
            }),
            Given::Certificate { cert, key } => Obtained::Certificate { cert, key },
        })
    }

    pub(crate) fn describe(&self) -> String {
        self.source.describe()
    }

    /// The header to send: the held token, renewed first when it is due (one renewal for
    /// all the requests waiting on it).
    pub(crate) async fn header(&self) -> Result<HeaderValue, CredentialError> {
        let mut held = self.held.lock().await;
        if !held.current() {
            *held = self.fetch_token().await?;
        }
        Ok(held.header.clone())
    }

    /// After the server refused `refused`: a new header to try once, unless the source gives
    /// the same token again. Another request may have renewed it already.
    pub(crate) async fn renewed_after(
        &self,
        refused: &HeaderValue,
    ) -> Result<Option<HeaderValue>, CredentialError> {
        let mut held = self.held.lock().await;
        if held.header != *refused {
            return Ok(Some(held.header.clone()));
        }
        if held.refused {
            return Ok(None);
        }
        *held = self.fetch_token().await?;
        held.refused = held.header == *refused;
        Ok(Some(held.header.clone()).filter(|_| !held.refused))
    }

    async fn fetch_token(&self) -> Result<Held, CredentialError> {
        match fetch(&self.source).await? {
            Given::Token(held) => Ok(held),
            // Only a plugin gives a certificate instead, and it gave a token at first.
            Given::Certificate { .. } => Err(CredentialError::Output {
                command: self.source.name(),
                cause: "no token this time".into(),
            }),
        }
    }
}

async fn fetch(source: &Source) -> Result<Given, CredentialError> {
    match source {
        Source::Exec(exec) => run(exec).await,
        Source::File(path) => read(path).await.map(Given::Token),
    }
}

async fn read(path: &PathBuf) -> Result<Held, CredentialError> {
    let text = tokio::fs::read_to_string(path)
        .await
        .map_err(|e| CredentialError::File {
            path: path.display().to_string(),
            cause: e.to_string(),
        })?;
    Ok(Held {
        header: bearer(text.trim()).map_err(|cause| CredentialError::File {
            path: path.display().to_string(),
            cause,
        })?,
        renew_at: Some(Instant::now() + FILE_REREAD),
        refused: false,
    })
}

#[derive(Deserialize)]
struct ExecCredential {
    status: Option<ExecStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// Runs the plugin as client-go does: its args and env, never interactive, the request in
/// `KUBERNETES_EXEC_INFO` (with the cluster when `provideClusterInfo` asks for it).
async fn run(exec: &ExecConfig) -> Result<Given, CredentialError> {
    let command = exec.command.clone().unwrap_or_default();
    let mut cmd = tokio::process::Command::new(&command);
    cmd.args(exec.args.iter().flatten());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            cmd.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    let mut spec = json!({"interactive": false});
    if exec.provide_cluster_info
        && let Some(cluster) = &exec.cluster
    {
        spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
    }
    let info = json!({"apiVersion": exec.api_version, "kind": "ExecCredential", "spec": spec});
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let started = Instant::now();
    let output = tokio::time::timeout(EXEC_TIMEOUT, cmd.output())
        .await
        .map_err(|_| CredentialError::Start {
            command: command.clone(),
            cause: format!("no answer within {} s", EXEC_TIMEOUT.as_secs()),
        })?
        .map_err(|e| CredentialError::Start {
            command: command.clone(),
            cause: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(CredentialError::Failed {
            command,
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    let bad = |cause: String| CredentialError::Output {
        command: command.clone(),
        cause,
    };
    // client-go decodes the output with a YAML-tolerant codec; YAML reads JSON too.
    let credential: ExecCredential =
        serde_yaml::from_slice(&output.stdout).map_err(|e| bad(e.to_string()))?;
    let Some(status) = credential.status else {
        return Err(bad("no status".into()));
    };
    let Some(token) = status.token else {
        return match (status.client_certificate_data, status.client_key_data) {
            (Some(cert), Some(key)) => Ok(Given::Certificate { cert, key }),
            _ => Err(bad("neither a token nor a client certificate and key".into())),
        };
    };
    let expires = status
        .expiration_timestamp
        .map(|t| expiry(&t).ok_or_else(|| bad(format!("expirationTimestamp {t:?} is no RFC 3339 time"))))
        .transpose()?;
    Ok(Given::Token(Held {
        header: bearer(&token).map_err(bad)?,
        // At least a second, so a plugin that hands out spent tokens is not run per request.
        renew_at: expires
            .map(|left| started + left.saturating_sub((left / 6).min(RENEW_AHEAD)).max(MIN_HOLD)),
        refused: false,
    }))
}

/// How long from now until the RFC 3339 time `text`.
fn expiry(text: &str) -> Option<Duration> {
    let at = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    let at = SystemTime::from(at);
    Some(at.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

fn bearer(token: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| "the token is no header value".to_string())?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_is_renewed_a_little_before_it_expires() {
        let soon = |seconds: i64| {
            (time::OffsetDateTime::now_utc() + time::Duration::seconds(seconds))
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap()
        };
        let left = expiry(&soon(30)).unwrap();
        assert!(
            left > Duration::from_secs(28) && left <= Duration::from_secs(30),
            "{left:?}"
        );
        assert_eq!(expiry(&soon(-5)), Some(Duration::ZERO));
        assert_eq!(expiry("yesterday"), None);
    }

    /// A plugin printing `status` (JSON) as its ExecCredential's status.
    fn plugin(status: &str) -> Source {
        let credential = format!(r#"{{"apiVersion":"client.authentication.k8s.io/v1","status":{status}}}"#);
        Source::Exec(Box::new(ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: Some("sh".into()),
            args: Some(vec!["-c".into(), format!("printf '%s' '{credential}'")]),
            ..ExecConfig::default()
        }))
    }

    #[tokio::test]
    async fn a_plugins_client_certificate_is_handed_to_the_tls_setup() {
        let given = Credential::obtain(plugin(
            r#"{"clientCertificateData":"CERT","clientKeyData":"KEY"}"#,
        ))
        .await;
        assert!(
            matches!(given, Ok(Obtained::Certificate { cert, key }) if cert == "CERT" && key == "KEY"),
            "not the certificate"
        );
        let neither = Credential::obtain(plugin(r#"{"clientKeyData":"KEY"}"#)).await;
        assert!(
            matches!(neither, Err(CredentialError::Output { .. })),
            "a key alone is no credential"
        );
    }
}
