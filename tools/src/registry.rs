//! A provider registry for the tests and for teams who host their own: serves the folder
//! `make release` writes over HTTPS, through the provider registry protocol v1 and the provider
//! network mirror protocol ([`protocol`]). It makes its own CA unless given a certificate; the
//! engine trusts that CA through `SSL_CERT_FILE`, and reaches the registry under its default
//! host (`registry.terraform.io` for Terraform, `registry.opentofu.org` for OpenTofu) through a
//! CLI configuration `host` block ([`Registry::cli_config`]), so configurations keep
//! `source = "choudoufu/live"`. It serves every address the folder holds artifacts of
//! (`choudoufu/live`, `choudoufu/kubectl`, `choudoufu/records`).

pub mod openpgp;
pub mod protocol;
pub mod tls;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::oneshot;

use protocol::{Answer, Catalog, MIRROR_PATH, PROVIDERS_PATH};
use provider_mirror::{HOSTS, NAMESPACE};
use tls::{OwnCa, TlsError};

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("{}: {source}", .path.display())]
    Pem {
        path: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
}

/// How the registry serves TLS.
#[derive(Debug, Clone)]
pub enum Tls {
    /// A new CA for this run and a certificate for `localhost` and 127.0.0.1 signed by it.
    OwnCa,
    /// A certificate chain and its key (PEM files), e.g. from the team's own CA.
    Files { cert: PathBuf, key: PathBuf },
}

#[derive(Debug, Clone)]
pub struct Options {
    /// The folder of `make release` artifacts to serve.
    pub dir: PathBuf,
    /// The namespace the providers are served under.
    pub namespace: String,
    /// Where to listen; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The base URL clients reach the registry at, when not `https://<listen address>`.
    pub public_url: Option<String>,
    pub tls: Tls,
}

impl Options {
    /// `dir` on a free port of 127.0.0.1, under the project's namespace, with its own CA.
    pub fn local(dir: &Path) -> Options {
        Options {
            dir: dir.to_path_buf(),
            namespace: NAMESPACE.to_string(),
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            public_url: None,
            tls: Tls::OwnCa,
        }
    }
}

/// Which protocol a CLI configuration installs the providers through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The provider registry protocol, this registry standing in for the engine's default host
    /// (`registry.terraform.io`, `registry.opentofu.org`).
    Registry,
    /// The network mirror protocol, for the project's providers only.
    NetworkMirror,
}

/// A running registry; dropping it stops it.
pub struct Registry {
    base_url: String,
    ca_pem: Option<String>,
    requests: Arc<Mutex<Vec<String>>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the request handler shares.
struct Shared {
    dir: PathBuf,
    namespace: String,
    base_url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Registry {
    pub fn start(options: Options) -> Result<Registry, RegistryError> {
        let bind_err = |source| RegistryError::Bind {
            addr: options.listen,
            source,
        };
        let listener = std::net::TcpListener::bind(options.listen).map_err(bind_err)?;
        listener.set_nonblocking(true).map_err(bind_err)?;
        let addr = listener.local_addr().map_err(bind_err)?;
        let (config, ca_pem) = match &options.tls {
            Tls::OwnCa => {
                let ca = OwnCa::generate()?;
                (server_config(ca.chain, ca.key)?, Some(ca.ca_pem))
            }
            Tls::Files { cert, key } => (from_files(cert, key)?, None),
        };
        let base_url = options
            .public_url
            .clone()
            .unwrap_or_else(|| format!("https://{addr}"))
            .trim_end_matches('/')
            .to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            dir: options.dir.clone(),
            namespace: options.namespace.clone(),
            base_url: base_url.clone(),
            requests: requests.clone(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(RegistryError::Runtime)?;
        let (shutdown, stopped) = oneshot::channel();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                // Cannot fail for a listener std just bound, inside a runtime.
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                serve(listener, config, shared, stopped).await;
            })
        });
        Ok(Registry {
            base_url,
            ca_pem,
            requests,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// `https://127.0.0.1:<port>` (or the public URL it was given).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The CA that signed the registry's certificate, when it made its own (PEM).
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// Every request so far, as `GET <path> <status>`.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// A CLI configuration (`TF_CLI_CONFIG_FILE`) that installs the project's providers from
    /// this registry through `protocol`.
    pub fn cli_config(&self, protocol: Protocol) -> String {
        let base = &self.base_url;
        match protocol {
            // Service discovery for the default host answered locally; everything installs from
            // here. No mirror: the explicit `direct` also turns off the implied local mirrors.
            // Both engines' default hosts (each reads a short source under its own), so one
            // configuration serves Terraform and OpenTofu alike.
            Protocol::Registry => {
                let hosts: String = HOSTS
                    .iter()
                    .map(|host| {
                        format!(
                            "host \"{host}\" {{\n  services = {{\n    \"providers.v1\" = \"{base}{PROVIDERS_PATH}\"\n  }}\n}}\n\n"
                        )
                    })
                    .collect();
                format!("{hosts}provider_installation {{\n  direct {{}}\n}}\n")
            }
            Protocol::NetworkMirror => {
                let include = provider_mirror::included();
                format!(
                    "provider_installation {{\n  network_mirror {{\n    url     = \"{base}{MIRROR_PATH}\"\n    \
                     include = [{include}]\n  }}\n  direct {{\n    exclude = [{include}]\n  }}\n}}\n"
                )
            }
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn from_files(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, RegistryError> {
    let pem_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RegistryError::Pem { path, source }
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(pem_err(cert))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_err(cert))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(pem_err(key))?;
    server_config(chain, key)
}

/// Serves `chain` with `key`, HTTP/2 or HTTP/1.1 as the client offers.
fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, RegistryError> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

async fn serve(
    listener: tokio::net::TcpListener,
    config: Arc<rustls::ServerConfig>,
    shared: Arc<Shared>,
    mut stopped: oneshot::Receiver<()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((tcp, _)) = accepted else { continue };
                let acceptor = acceptor.clone();
                let shared = shared.clone();
                tokio::spawn(async move {
                    // A failed handshake (a client that does not trust us) ends this connection only.
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |req| handle(shared.clone(), req));
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                });
            }
        }
    }
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let catalog = Catalog {
        dir: &shared.dir,
        namespace: &shared.namespace,
        base_url: &shared.base_url,
    };
    let answer = if req.method() == hyper::Method::GET {
        catalog.answer(&path)
    } else {
        Answer::NotFound
    };
    let (status, content_type, body) = match answer {
        Answer::Json(value) => (StatusCode::OK, "application/json", Bytes::from(value.to_string())),
        Answer::File(file) => match tokio::fs::read(&file).await {
            Ok(bytes) => (StatusCode::OK, "application/octet-stream", Bytes::from(bytes)),
            Err(_) => not_found(),
        },
        Answer::NotFound => not_found(),
    };
    if let Ok(mut requests) = shared.requests.lock() {
        requests.push(format!("{} {path} {}", req.method(), status.as_u16()));
    }
    let response = Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(body));
    // Static header values: building cannot fail.
    Ok(response.unwrap_or_default())
}

/// The registry's own shape of an error body.
fn not_found() -> (StatusCode, &'static str, Bytes) {
    (
        StatusCode::NOT_FOUND,
        "application/json",
        Bytes::from_static(b"{\"errors\":[\"Not Found\"]}"),
    )
}
