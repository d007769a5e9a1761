//! Where the engine connects, as go-plugin listens: on Unix a unix socket in a private
//! temporary directory (TCP when that fails); on Windows TCP on 127.0.0.1 within
//! `PLUGIN_MIN_PORT..=PLUGIN_MAX_PORT` (the engine sets both). TLS is accepted per connection so
//! one bad client cannot stall the others.

use std::io;
use std::ops::RangeInclusive;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;

/// A TLS handshake that takes longer than this is abandoned.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

pub enum Listener {
    /// The directory is removed when the listener is dropped.
    #[cfg(unix)]
    Unix(tokio::net::UnixListener, tempfile::TempDir),
    Tcp(TcpListener),
}

impl Listener {
    /// A unix socket in a fresh directory under `PLUGIN_UNIX_SOCKET_DIR` or the system
    /// temporary directory, falling back to TCP.
    #[cfg(unix)]
    pub fn bind() -> io::Result<Listener> {
        match Listener::bind_unix() {
            Ok(listener) => Ok(listener),
            Err(e) => {
                tracing::debug!(error = %e, "unix socket unavailable, using TCP");
                Listener::bind_tcp(port_range(|name| std::env::var(name).ok()))
            }
        }
    }

    /// TCP, as go-plugin serves on Windows.
    #[cfg(windows)]
    pub fn bind() -> io::Result<Listener> {
        Listener::bind_tcp(port_range(|name| std::env::var(name).ok()))
    }

    #[cfg(unix)]
    fn bind_unix() -> io::Result<Listener> {
        let parent = std::env::var_os("PLUGIN_UNIX_SOCKET_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = tempfile::Builder::new().prefix("plugin").tempdir_in(parent)?;
        let listener = tokio::net::UnixListener::bind(dir.path().join("plugin.sock"))?;
        Ok(Listener::Unix(listener, dir))
    }

    /// The first free port of `ports` on 127.0.0.1 (0: one the system picks).
    fn bind_tcp(ports: RangeInclusive<u16>) -> io::Result<Listener> {
        let mut last_error = io::Error::new(io::ErrorKind::AddrInUse, "no free port in range");
        for candidate in ports {
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
            #[cfg(unix)]
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
                    #[cfg(unix)]
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

/// The ports the engine allows (`PLUGIN_MIN_PORT`, `PLUGIN_MAX_PORT`, read through `var`):
/// any port when it names none, the minimum alone when the maximum is missing or below it.
fn port_range(var: impl Fn(&str) -> Option<String>) -> RangeInclusive<u16> {
    let port = |name: &str| var(name).and_then(|v| v.trim().parse::<u16>().ok());
    let min = port("PLUGIN_MIN_PORT").unwrap_or(0);
    let max = port("PLUGIN_MAX_PORT").unwrap_or(min).max(min);
    min..=max
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

/// The transport Windows uses, tested on any host: the port range, the handshake line's
/// `tcp` fields and AutoMTLS over TCP.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::handshake_line;
    use crate::tls::{self, Identity};
    use rustls::pki_types::ServerName;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_stream::StreamExt;

    fn vars<'a>(pairs: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_port_range_is_the_engines() {
        assert_eq!(port_range(vars(&[])), 0..=0);
        let both = [("PLUGIN_MIN_PORT", "10000"), ("PLUGIN_MAX_PORT", "25000")];
        assert_eq!(port_range(vars(&both)), 10000..=25000);
        assert_eq!(port_range(vars(&[("PLUGIN_MIN_PORT", "12000")])), 12000..=12000);
        let inverted = [("PLUGIN_MIN_PORT", "12000"), ("PLUGIN_MAX_PORT", "11000")];
        assert_eq!(port_range(vars(&inverted)), 12000..=12000);
        assert_eq!(port_range(vars(&[("PLUGIN_MIN_PORT", "port")])), 0..=0);
    }

    #[tokio::test]
    async fn tcp_takes_a_free_port_of_the_range_on_loopback() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = taken.local_addr().expect("address").port();
        assert!(Listener::bind_tcp(port..=port).is_err(), "the only port is taken");

        let last = port.saturating_add(50);
        let listener = Listener::bind_tcp(port..=last).expect("a free port in the range");
        let (network, address) = listener.address().expect("address");
        assert_eq!(network, "tcp");
        let bound: std::net::SocketAddr = address.parse().expect("host:port");
        assert_eq!(bound.ip(), std::net::Ipv4Addr::LOCALHOST);
        assert!(
            (port + 1..=last).contains(&bound.port()),
            "{bound} outside {port}..={last}"
        );
    }

    #[tokio::test]
    async fn tcp_serves_automtls_to_the_engine_only() {
        let server = Identity::generate(&rcgen::PKCS_ECDSA_P256_SHA256).expect("server identity");
        let engine = Identity::generate(&rcgen::PKCS_ECDSA_P521_SHA512).expect("engine identity");
        let stranger = Identity::generate(&rcgen::PKCS_ECDSA_P521_SHA512).expect("other identity");
        let server_cert = server.cert.clone();
        let config = tls::server_config(server, engine.cert.clone()).expect("server config");

        let listener = Listener::bind_tcp(0..=0).expect("TCP listener");
        let (network, address) = listener.address().expect("address");
        let line = handshake_line(6, network, &address, Some(&server_cert));
        let fields: Vec<&str> = line.trim_end().split('|').collect();
        assert_eq!(fields[..3], ["1", "6", "tcp"]);
        assert!(fields[3].starts_with("127.0.0.1:"), "{line}");
        assert_eq!(fields[4], "grpc");
        assert!(!fields[5].is_empty(), "the line carries the server certificate");

        let mut incoming = listener.incoming(Some(Arc::new(config)));
        let connect = |identity: Identity| {
            let (address, cert) = (address.clone(), server_cert.clone());
            async move {
                let config = tls::client_config(Some(identity), cert).expect("client config");
                let tcp = tokio::net::TcpStream::connect(&address)
                    .await
                    .expect("TCP connect");
                let name = ServerName::try_from("localhost").expect("name");
                let mut stream = tokio_rustls::TlsConnector::from(Arc::new(config))
                    .connect(name, tcp)
                    .await?;
                stream.write_all(b"ping").await?;
                stream.flush().await?;
                // A refused client learns it on its first read (TLS 1.3 checks it late).
                let mut reply = [0u8; 4];
                stream.read_exact(&mut reply).await.map(|_| stream)
            }
        };

        let refused = tokio::spawn(connect(stranger));
        let accepted = tokio::spawn(connect(engine));
        let mut connection = tokio::time::timeout(Duration::from_secs(10), incoming.next())
            .await
            .expect("a connection within 10 s")
            .expect("stream open")
            .expect("accepted");
        let mut ping = [0u8; 4];
        connection.read_exact(&mut ping).await.expect("read");
        assert_eq!(&ping, b"ping");
        connection.write_all(b"pong").await.expect("write");
        connection.flush().await.expect("flush");
        accepted
            .await
            .expect("task")
            .expect("the engine's certificate is accepted");
        assert!(
            refused.await.expect("task").is_err(),
            "another certificate is refused"
        );
    }
}
