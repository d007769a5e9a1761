//! A minimal HTTPS client for talking to the server from tests and the benchmark: one
//! keep-alive HTTP/1.1 connection that trusts the server's CA.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad server URL {0:?}")]
    Url(String),
    #[error("connecting: {0}")]
    Connect(#[from] std::io::Error),
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    #[error("HTTP: {0}")]
    Http(#[from] hyper::Error),
    #[error("building the request: {0}")]
    Request(#[from] http::Error),
}

/// An answer, body fully read.
#[derive(Debug, Clone)]
pub struct ClientResponse {
    pub status: u16,
    pub content_type: String,
    /// Raw `Warning` header values.
    pub warnings: Vec<String>,
    pub body: Vec<u8>,
}

impl ClientResponse {
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

pub struct Client {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    host: String,
}

impl Client {
    /// Connects to `url` (`https://127.0.0.1:PORT`), trusting `ca_pem`.
    pub async fn connect(url: &str, ca_pem: &str) -> Result<Client, ClientError> {
        let host = url
            .strip_prefix("https://")
            .ok_or_else(|| ClientError::Url(url.into()))?
            .trim_end_matches('/');
        let mut roots = rustls::RootCertStore::empty();
        roots.add(crate::tls::pem_to_der(ca_pem))?;
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(host).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from("localhost").map_err(|_| ClientError::Url(url.into()))?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
        // The connection task ends when the server or this client goes away.
        tokio::spawn(conn);
        Ok(Client {
            sender,
            host: host.to_string(),
        })
    }

    /// Sends one request; `token` becomes `Authorization: Bearer`.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        token: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Result<ClientResponse, ClientError> {
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = req.body(Full::new(Bytes::from(body.unwrap_or_default())))?;
        self.sender.ready().await?;
        let resp = self.sender.send_request(req).await?;
        let status = resp.status().as_u16();
        let header = |name: &str| -> Vec<String> {
            resp.headers()
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok().map(String::from))
                .collect()
        };
        let content_type = header("content-type").into_iter().next().unwrap_or_default();
        let warnings = header("warning");
        let body = resp.into_body().collect().await?.to_bytes().to_vec();
        Ok(ClientResponse {
            status,
            content_type,
            warnings,
            body,
        })
    }
}
