//! Where the engine connects: a unix socket in a private temporary directory (TCP on
//! 127.0.0.1 within `PLUGIN_MIN_PORT..=PLUGIN_MAX_PORT` when that fails), with TLS
//! accepted per connection so one bad client cannot stall the others.

use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;

/// A TLS handshake that takes longer than this is abandoned.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub enum Listener {
    /// The directory is removed when the listener is dropped.
    Unix(UnixListener, tempfile::TempDir),
    Tcp(TcpListener),
}

impl Listener {
    /// A unix socket in a fresh directory under `PLUGIN_UNIX_SOCKET_DIR` or the system
    /// temporary directory, falling back to TCP.
    pub fn bind() -> io::Result<Listener> {
        match Listener::bind_unix() {
            Ok(listener) => Ok(listener),
            Err(e) => {
                tracing::debug!(error = %e, "unix socket unavailable, using TCP");
                Listener::bind_tcp()
            }
        }
    }

    fn bind_unix() -> io::Result<Listener> {
        let parent = std::env::var_os("PLUGIN_UNIX_SOCKET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new().prefix("plugin").tempdir_in(parent)?;
        let listener = UnixListener::bind(dir.path().join("plugin.sock"))?;
        Ok(Listener::Unix(listener, dir))
    }

    fn bind_tcp() -> io::Result<Listener> {
        let port = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u16>().ok());
        let min = port("PLUGIN_MIN_PORT").unwrap_or(0);
        let max = port("PLUGIN_MAX_PORT").unwrap_or(min).max(min);
        let mut last_error = io::Error::new(io::ErrorKind::AddrInUse, "no free port in range");
        for candidate in min..=max {
            match std::net::TcpListener::bind(("127.0.0.1", candidate)) {
                Ok(listener) => {
                    listener.set_nonblocking(true)?;
                    return Ok(Listener::Tcp(TcpListener::from_std(listener)?));
                }
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// The handshake line's network and address fields.
    pub fn address(&self) -> io::Result<(&'static str, String)> {
        Ok(match self {
            Listener::Unix(_, dir) => ("unix", dir.path().join("plugin.sock").display().to_string()),
            Listener::Tcp(listener) => ("tcp", listener.local_addr()?.to_string()),
        })
    }

    /// Accepts connections forever, completing TLS (when configured) before handing each
    /// one on; failed handshakes are dropped. The listener lives as long as the stream.
    pub fn incoming(self, tls: Option<Arc<rustls::ServerConfig>>) -> ReceiverStream<io::Result<Connection>> {
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let acceptor = tls.map(TlsAcceptor::from);
            loop {
                let accepted = match &self {
                    Listener::Unix(listener, _) => listener.accept().await.map(|(s, _)| Connection::new(s)),
                    Listener::Tcp(listener) => listener.accept().await.map(|(s, _)| Connection::new(s)),
                };
                let connection = match accepted {
                    Ok(connection) => connection,
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let tx = tx.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let ready = match acceptor {
                        None => connection,
                        Some(acceptor) => {
                            match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(connection))
                                .await
                            {
                                Ok(Ok(stream)) => Connection::new(stream),
                                Ok(Err(e)) => {
                                    tracing::warn!(error = %e, "refused a connection: TLS handshake failed");
                                    return;
                                }
                                Err(_) => {
                                    tracing::warn!("refused a connection: TLS handshake timed out");
                                    return;
                                }
                            }
                        }
                    };
                    // The receiver is gone only when the server has stopped.
                    let _ = tx.send(Ok(ready)).await;
                });
            }
        });
        ReceiverStream::new(rx)
    }
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// One accepted connection, plain or TLS, over a unix socket or TCP.
pub struct Connection(Box<dyn Io>);

impl Connection {
    fn new(io: impl AsyncRead + AsyncWrite + Send + Unpin + 'static) -> Connection {
        Connection(Box::new(io))
    }
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = ();

    fn connect_info(&self) {}
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Connection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}
