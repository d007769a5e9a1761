//! The plugin process from start to exit: checks the handshake environment, serves the
//! provider with go-plugin's services beside it, and stops when the engine calls
//! `Shutdown` or goes away.
//!
//! Crashes look like Go's (a `panic: ` line on stderr, which the engine reports as "the
//! plugin crashed"), logs go to stderr at the level `TF_LOG_PROVIDER` or `TF_LOG` names,
//! Ctrl-C (SIGINT) is ignored because the engine forwards it as `StopProvider` itself, and
//! SIGTERM (on Windows: Ctrl-Break) stops cleanly.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio_stream::{Stream, StreamExt};
use tonic_health::ServingStatus;

use crate::go_plugin::{Broker, Controller, ShutdownSignal, Stdio};
use crate::handshake::{self, HandshakeError};
use crate::listener::Listener;
use crate::parent;
use crate::proto::plugin as go_pb;
use crate::provider::Provider;
use crate::server;
use crate::tls::{self, Identity, TlsError};

/// After shutdown, in-flight calls get this long to finish (the engine kills at 2 s).
const DRAIN_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
enum ServeError {
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("cannot listen for the engine: {0}")]
    Listen(std::io::Error),
    #[error("cannot write the handshake line: {0}")]
    Stdout(std::io::Error),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the gRPC server failed: {0}")]
    Grpc(#[from] tonic::transport::Error),
}

/// Runs `provider` as a plugin and exits the process: 0 after a clean shutdown, 1 when
/// the engine did not start it properly. For `main()` without a tokio runtime.
pub fn serve(provider: impl Provider) -> ! {
    serve_shared(Arc::new(provider))
}

/// [`serve`] past the one generic step, so that the server is compiled in this crate once.
fn serve_shared(provider: Arc<dyn Provider>) -> ! {
    pad_heap_growth();
    let code = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => {
            let code = runtime.block_on(serve_async_shared(provider));
            // Drops the listener task, which removes the socket directory.
            runtime.shutdown_timeout(Duration::from_millis(200));
            code
        }
        Err(e) => report(&ServeError::Runtime(e)),
    };
    std::process::exit(code)
}

/// glibc grows a worker thread's heap a page at a time by default: the process that answers
/// GetProviderSchema made about 3,300 `mprotect` calls building provider-live's schemas, and 110
/// with 16 MiB of padding, for less CPU and the same resident memory (the padding is address
/// space, touched only when used).
fn pad_heap_growth() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 16 << 20);
    }
}

/// Runs `provider` as a plugin inside an existing tokio runtime and returns the exit
/// code the process should end with.
pub async fn serve_async(provider: impl Provider) -> i32 {
    serve_async_shared(Arc::new(provider)).await
}

async fn serve_async_shared(provider: Arc<dyn Provider>) -> i32 {
    install_panic_hook();
    init_logging();
    tracing::info!(version = %provider.version(), "provider plugin starting");
    match run(provider).await {
        Ok(()) => 0,
        Err(e) => report(&e),
    }
}

fn report(e: &ServeError) -> i32 {
    eprintln!("{e}");
    1
}

async fn run(provider: Arc<dyn Provider>) -> Result<(), ServeError> {
    handshake::check_cookie(std::env::var(handshake::MAGIC_COOKIE_KEY).ok().as_deref())?;
    let protocol = handshake::negotiate_protocol(std::env::var("PLUGIN_PROTOCOL_VERSIONS").ok().as_deref())?;
    let tls = tls_config()?;
    let listener = Listener::bind().map_err(ServeError::Listen)?;
    let (network, address) = listener.address().map_err(ServeError::Listen)?;

    let shutdown = ShutdownSignal::new();
    let service = Arc::new(server::ProviderService::new(provider));
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_service_status("plugin", ServingStatus::Serving)
        .await;
    let router = tonic::transport::Server::builder()
        .add_service(health_service)
        .add_service(server::grpc_service(Arc::clone(&service)))
        .add_service(go_pb::grpc_controller_server::GrpcControllerServer::new(
            Controller(shutdown.clone()),
        ))
        .add_service(go_pb::grpc_stdio_server::GrpcStdioServer::new(Stdio(
            shutdown.clone(),
        )))
        .add_service(go_pb::grpc_broker_server::GrpcBrokerServer::new(Broker(
            shutdown.clone(),
        )));

    let line = handshake::handshake_line(
        protocol,
        network,
        &address,
        tls.as_ref().map(|t| t.cert_der.as_slice()),
    );
    let incoming = listener.incoming(tls.map(|t| t.config));
    // Before the line goes out: from then on the engine may signal us or go away.
    parent::watch(shutdown.clone());
    handle_signals(shutdown.clone());
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(line.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(ServeError::Stdout)?;
    drop(stdout);
    tracing::debug!(network, "plugin listening");

    let stopped = shutdown.wait();
    let server = tokio::spawn(router.serve_with_incoming_shutdown(incoming, stopped));
    shutdown.wait().await;
    // Give in-flight calls (the Shutdown call's own response first) a moment to finish.
    match tokio::time::timeout(DRAIN_TIMEOUT, server).await {
        Ok(Ok(result)) => result?,
        Ok(Err(join_error)) => tracing::warn!(error = %join_error, "the gRPC server task failed"),
        Err(_) => tracing::debug!("in-flight calls did not finish before exit"),
    }
    // The process exits next: freeing every schema and table the service built would only
    // cost time (in the process that answered GetProviderSchema, every type's schema).
    std::mem::forget(service);
    Ok(())
}

/// The TLS side of the handshake: how we accept connections and the certificate the
/// handshake line announces.
struct ServerTls {
    config: Arc<rustls::ServerConfig>,
    cert_der: Vec<u8>,
}

/// AutoMTLS when the engine sent its certificate (and did not disable TLS).
fn tls_config() -> Result<Option<ServerTls>, ServeError> {
    if std::env::var_os("TF_DISABLE_PLUGIN_TLS").is_some_and(|v| !v.is_empty()) {
        return Ok(None);
    }
    let Ok(client_pem) = std::env::var("PLUGIN_CLIENT_CERT") else {
        return Ok(None);
    };
    let client_cert = tls::parse_pem_cert(&client_pem)?;
    let identity = Identity::generate(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let cert_der = identity.cert.to_vec();
    let config = tls::server_config(identity, client_cert)?;
    Ok(Some(ServerTls {
        config: Arc::new(config),
        cert_der,
    }))
}

/// SIGTERM stops the plugin cleanly (removing its socket). SIGINT is ignored: the engine
/// sends it to the whole process group on Ctrl-C and then asks for a graceful stop over
/// gRPC, a chance that dying on the signal would lose.
#[cfg(unix)]
fn handle_signals(shutdown: ShutdownSignal) {
    use tokio::signal::unix::{SignalKind, signal};
    use tokio_stream::wrappers::SignalStream;
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(interrupts), Ok(terminations)) => ignore_interrupts_until_stop(
            SignalStream::new(interrupts),
            SignalStream::new(terminations),
            shutdown,
        ),
        (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "cannot handle signals"),
    }
}

/// Windows' console events in the roles of the Unix signals: Ctrl-C reaches the engine and its
/// plugins alike and is ignored for the same reason as SIGINT; Ctrl-Break stops cleanly, as
/// SIGTERM does.
#[cfg(windows)]
fn handle_signals(shutdown: ShutdownSignal) {
    use tokio::signal::windows::{ctrl_break, ctrl_c};
    use tokio_stream::wrappers::{CtrlBreakStream, CtrlCStream};
    match (ctrl_c(), ctrl_break()) {
        (Ok(interrupts), Ok(breaks)) => ignore_interrupts_until_stop(
            CtrlCStream::new(interrupts),
            CtrlBreakStream::new(breaks),
            shutdown,
        ),
        (Err(e), _) | (_, Err(e)) => tracing::warn!(error = %e, "cannot handle console events"),
    }
}

/// Receiving `interrupts` is what keeps them from ending the process; the first of `stops`
/// triggers `shutdown`.
fn ignore_interrupts_until_stop(
    mut interrupts: impl Stream<Item = ()> + Send + Unpin + 'static,
    mut stops: impl Stream<Item = ()> + Send + Unpin + 'static,
    shutdown: ShutdownSignal,
) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(()) = interrupts.next() => {
                    tracing::debug!("ignoring an interrupt; the engine stops the provider itself");
                }
                Some(()) = stops.next() => {
                    shutdown.trigger();
                    return;
                }
                else => return,
            }
        }
    });
}

/// A panic ends the process like a Go panic: the engine recognises the `panic: ` prefix.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let location = info
            .location()
            .map(|l| l.to_string())
            .unwrap_or_else(|| "unknown location".to_string());
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "panic: {message}\n\n{location}");
        let _ = stderr.flush();
        std::process::exit(2);
    }));
}

/// Logs to stderr at the level the engine's user asked for; nothing when unset.
fn init_logging() {
    let setting = std::env::var("TF_LOG_PROVIDER")
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| std::env::var("TF_LOG").ok());
    let level = match setting.as_deref().map(str::to_ascii_uppercase).as_deref() {
        Some("TRACE" | "JSON") => "trace",
        Some("DEBUG") => "debug",
        Some("INFO") => "info",
        Some("WARN") => "warn",
        Some("ERROR") => "error",
        _ => return,
    };
    // The transport crates stay at warnings: their debug output is noise to a provider's user.
    let filter = tracing_subscriber::EnvFilter::new(format!(
        "{level},h2=warn,hyper=warn,hyper_util=warn,tonic=warn,tower=warn,rustls=warn"
    ));
    // A second call (tests, or a binary that set up its own) leaves the first in place.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
}
