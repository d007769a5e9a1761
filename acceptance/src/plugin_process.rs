//! Starting a provider binary the way the engine does, and talking to it over gRPC.
//!
//! [`start_plugin`] sets the go-plugin environment (magic cookie, offered protocol
//! versions, a P-521/SHA-512 client certificate shaped like Terraform's for AutoMTLS),
//! reads the handshake line and keeps the process; [`PluginProcess::connect`] opens a
//! channel to it with mutual TLS, as the engine would.
//!
//! A build for another platform runs under its emulator: `PROVIDER_BIN_DIR` names the folder of
//! its binaries and `PROVIDER_RUNNER` the command to run them with (`qemu-aarch64-static`,
//! `wine`), as `make release-check` sets them.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use hyper_util::rt::TokioIo;
use plugin_runtime::tls::{self, Identity};
use plugin_runtime::{MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, BufReader};
use tokio::process::{Child, Command};
use tonic::transport::{Channel, Endpoint, Uri};

/// How long a plugin may take to print its handshake line.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("cannot start {path}: {source}")]
    Spawn { path: PathBuf, source: io::Error },
    #[error("the plugin exited ({status}) without a handshake; stderr: {stderr}")]
    Exited { status: ExitStatus, stderr: String },
    #[error("no handshake line within {HANDSHAKE_TIMEOUT:?}")]
    Timeout,
    #[error("malformed handshake line {0:?}")]
    BadHandshake(String),
    #[error("TLS setup failed: {0}")]
    Tls(#[from] tls::TlsError),
    #[error("cannot connect to the plugin: {0}")]
    Connect(#[from] tonic::transport::Error),
    #[error("cannot build {what}: {detail}")]
    Build { what: String, detail: String },
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// How to start the plugin; the default is what Terraform does.
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// Set the magic cookie (without it the binary must refuse to run).
    pub cookie: bool,
    /// `PLUGIN_PROTOCOL_VERSIONS`.
    pub protocol_versions: String,
    /// AutoMTLS: pass a client certificate; otherwise set `TF_DISABLE_PLUGIN_TLS`.
    pub tls: bool,
}

impl Default for StartOptions {
    fn default() -> StartOptions {
        StartOptions {
            cookie: true,
            protocol_versions: "5,6".to_string(),
            tls: true,
        }
    }
}

/// The fields of go-plugin's handshake line.
#[derive(Clone, Debug)]
pub struct Handshake {
    pub protocol: u32,
    pub network: String,
    pub address: String,
    /// The server certificate, when TLS is on.
    pub server_cert: Option<CertificateDer<'static>>,
}

impl Handshake {
    pub fn parse(line: &str) -> Result<Handshake, PluginError> {
        let bad = || PluginError::BadHandshake(line.to_string());
        let parts: Vec<&str> = line.trim_end().split('|').collect();
        let [core, protocol, network, address, kind, cert] = parts.as_slice() else {
            return Err(bad());
        };
        if *core != "1" || *kind != "grpc" {
            return Err(bad());
        }
        let server_cert = if cert.is_empty() {
            None
        } else {
            let der = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(cert)
                .map_err(|_| bad())?;
            Some(CertificateDer::from(der))
        };
        Ok(Handshake {
            protocol: protocol.parse().map_err(|_| bad())?,
            network: network.to_string(),
            address: address.to_string(),
            server_cert,
        })
    }
}

/// A running plugin.
pub struct PluginProcess {
    pub child: Child,
    pub handshake: Handshake,
    /// From spawning the process to reading its handshake line.
    pub startup: Duration,
    client_identity: Option<Identity>,
    stderr: Arc<Mutex<String>>,
}

/// A client certificate like the engine's: ECDSA P-521 signed with SHA-512, CA:true.
pub fn engine_identity() -> Result<Identity, PluginError> {
    Ok(Identity::generate(&rcgen::PKCS_ECDSA_P521_SHA512)?)
}

/// Starts `path` as the engine would and waits for its handshake line.
pub async fn start_plugin(path: &Path, options: &StartOptions) -> Result<PluginProcess, PluginError> {
    let client_identity = if options.tls {
        Some(engine_identity()?)
    } else {
        None
    };
    let mut command = match runner() {
        Some(runner) => {
            let mut command = Command::new(&runner[0]);
            command.args(&runner[1..]).arg(path);
            command
        }
        None => Command::new(path),
    };
    command
        .env_remove(MAGIC_COOKIE_KEY)
        .env_remove("PLUGIN_CLIENT_CERT")
        .env_remove("TF_DISABLE_PLUGIN_TLS")
        .env("PLUGIN_PROTOCOL_VERSIONS", &options.protocol_versions)
        .env("PLUGIN_MIN_PORT", "10000")
        .env("PLUGIN_MAX_PORT", "25000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if options.cookie {
        command.env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE);
    }
    match &client_identity {
        Some(identity) => command.env("PLUGIN_CLIENT_CERT", identity.cert_pem()),
        None => command.env("TF_DISABLE_PLUGIN_TLS", "1"),
    };

    let started = Instant::now();
    let mut child = command.spawn().map_err(|source| PluginError::Spawn {
        path: path.to_path_buf(),
        source,
    })?;
    let stderr = Arc::new(Mutex::new(String::new()));
    if let Some(mut pipe) = child.stderr.take() {
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf).await {
                sink.lock()
                    .expect("stderr lock")
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut line = String::new();
    let read = tokio::time::timeout(HANDSHAKE_TIMEOUT, BufReader::new(stdout).read_line(&mut line)).await;
    let startup = started.elapsed();
    match read {
        Err(_) => return Err(PluginError::Timeout),
        Ok(Err(e)) => return Err(e.into()),
        Ok(Ok(0)) => {
            let status = child.wait().await?;
            // Let the stderr reader catch up with what the process wrote before exiting.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let stderr = stderr.lock().expect("stderr lock").clone();
            return Err(PluginError::Exited { status, stderr });
        }
        Ok(Ok(_)) => {}
    }
    Ok(PluginProcess {
        child,
        handshake: Handshake::parse(&line)?,
        startup,
        client_identity,
        stderr,
    })
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

impl PluginProcess {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// What the plugin wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// A channel presenting the certificate the plugin was started with.
    pub async fn connect(&self) -> Result<Channel, PluginError> {
        self.connect_as(self.client_identity.as_ref().map(Identity::duplicate))
            .await
    }

    /// A channel presenting `identity` (or no client certificate at all) over TLS when the
    /// plugin serves TLS, plain otherwise.
    pub async fn connect_as(&self, identity: Option<Identity>) -> Result<Channel, PluginError> {
        let tls = match &self.handshake.server_cert {
            Some(cert) => Some(tokio_rustls::TlsConnector::from(Arc::new(tls::client_config(
                identity,
                cert.clone(),
            )?))),
            None => None,
        };
        let network = self.handshake.network.clone();
        let address = self.handshake.address.clone();
        let connector = tower::service_fn(move |_: Uri| {
            let (network, address, tls) = (network.clone(), address.clone(), tls.clone());
            async move {
                let stream: Box<dyn Io> = if network == "unix" {
                    Box::new(tokio::net::UnixStream::connect(&address).await?)
                } else {
                    Box::new(tokio::net::TcpStream::connect(&address).await?)
                };
                let stream: Box<dyn Io> = match tls {
                    Some(connector) => {
                        let name = ServerName::try_from("localhost").expect("valid server name");
                        Box::new(connector.connect(name, stream).await?)
                    }
                    None => stream,
                };
                Ok::<_, io::Error>(TokioIo::new(stream))
            }
        });
        Ok(Endpoint::from_static("http://localhost")
            .connect_timeout(Duration::from_secs(5))
            .connect_with_connector(connector)
            .await?)
    }

    /// Waits up to `limit` for the process to exit.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }
}

/// A plugin left running is asked to stop with SIGTERM, so it removes its socket
/// directory as it does when the engine ends it.
impl Drop for PluginProcess {
    fn drop(&mut self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill has no memory-safety preconditions; the pid is our own child,
            // not yet reaped (id() returns None once it has been waited for).
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

/// `PROVIDER_RUNNER`, split into words: the command a binary of another platform runs under.
pub fn runner() -> Option<Vec<String>> {
    let words: Vec<String> = std::env::var("PROVIDER_RUNNER")
        .ok()?
        .split_whitespace()
        .map(str::to_string)
        .collect();
    (!words.is_empty()).then_some(words)
}

/// Where a binary of this workspace is: `PROVIDER_BIN_DIR` when set (`<name>.exe` there for a
/// Windows build), else the release build ([`crate::build`]: the provider binaries and the
/// runtime's `echo_provider` example).
pub fn binary(name: &str) -> Result<PathBuf, PluginError> {
    if let Some(dir) = std::env::var_os("PROVIDER_BIN_DIR") {
        let plain = PathBuf::from(dir).join(name);
        let windows = plain.with_extension("exe");
        return Ok(if !plain.exists() && windows.exists() {
            windows
        } else {
            plain
        });
    }
    crate::build::binary(name).map_err(|e| PluginError::Build {
        what: name.into(),
        detail: e.to_string(),
    })
}
