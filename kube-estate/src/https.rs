//! The HTTP(S) stack under a connection's `kube::Client`, built here instead of by kube's
//! `rustls-tls` feature. That feature always links the operating system's certificate verifier
//! (on macOS the Security and CoreFoundation frameworks), which a cross link to macOS cannot
//! provide, so the providers could not be built for it.
//!
//! Server certificates are checked against the CA the kubeconfig or the provider block names
//! (`certificate-authority[-data]`, `cluster_ca_certificate`), as client-go does. With none named
//! they are checked against Mozilla's root certificates compiled into the provider
//! (webpki-roots), on every platform alike; the operating system's own trust store is not read.

use std::sync::Arc;

use base64::Engine;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ClientBuilder, ConfigExt, DynBody};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use secrecy::ExposeSecret;
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// The client stack, type-erased as kube's own builder erases it.
pub type GenericService =
    tower::util::BoxService<http::Request<Body>, http::Response<Box<DynBody>>, BoxError>;

/// Why no client could be built from a connection's settings.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The CA certificate named does not parse as one.
    #[error("the cluster's CA certificate is not usable: {0}")]
    Ca(rustls::Error),
    /// A client certificate or key could not be read.
    #[error("cannot read the client {what} from {location}: {cause}")]
    Read {
        /// `certificate` or `key`.
        what: &'static str,
        /// The file, or `data` for inline base64.
        location: String,
        /// The reading's or decoding's error.
        cause: String,
    },
    /// Only one of a client certificate and its key is given.
    #[error("a client certificate needs its key, and a key its certificate")]
    HalfIdentity,
    /// The client certificate or key does not parse, or they do not match.
    #[error("the client certificate or key is not usable: {0}")]
    Identity(String),
    /// `tls_server_name` is not a DNS name or IP address.
    #[error("tls_server_name {0:?} is not a valid server name")]
    ServerName(String),
    /// A proxy is configured; the providers do not support one.
    #[error("proxy_url {0} is not supported: the providers connect to the API server directly")]
    Proxy(String),
    /// kube's own layers (authentication, headers) could not be set up.
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

/// A client builder for `config`: its server, namespace, authentication and extra headers as
/// kube sets them up, over a hyper client with this module's TLS.
pub fn client_builder(config: &kube::Config) -> Result<ClientBuilder<GenericService>, TlsSetupError> {
    if let Some(proxy) = &config.proxy_url {
        return Err(TlsSetupError::Proxy(proxy.to_string()));
    }
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    let mut https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls_config(config)?)
        .https_or_http();
    if let Some(name) = &config.tls_server_name {
        let name = ServerName::try_from(name.clone()).map_err(|_| TlsSetupError::ServerName(name.clone()))?;
        https = https.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name));
    }
    let mut connector = hyper_timeout::TimeoutConnector::new(https.enable_http1().wrap_connector(http));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let client: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);

    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(client)
        .map_response(|response: http::Response<_>| {
            response
                .map(|body| Box::new(http_body_util::BodyExt::map_err(body, BoxError::from)) as Box<DynBody>)
        });
    let service: GenericService = tower::util::BoxService::new(service);
    Ok(ClientBuilder::new(service, config.default_namespace.clone()))
}

/// The TLS side: the CA to trust (Mozilla's roots when none is named), the client certificate,
/// and no check at all when `insecure` asks for none.
fn tls_config(config: &kube::Config) -> Result<ClientConfig, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    match &config.root_cert {
        Some(certs) => {
            for der in certs {
                roots
                    .add(CertificateDer::from(der.clone()))
                    .map_err(TlsSetupError::Ca)?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let builder = ClientConfig::builder().with_root_certificates(roots);
    let mut tls = match identity(&config.auth_info)? {
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| TlsSetupError::Identity(e.to_string()))?,
        None => builder.with_no_client_auth(),
    };
    if config.accept_invalid_certs {
        let algorithms = tls.crypto_provider().signature_verification_algorithms;
        tls.dangerous()
            .set_certificate_verifier(Arc::new(AcceptAnyCertificate(algorithms)));
    }
    Ok(tls)
}

type Identity = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// The kubeconfig user's client certificate chain and key, from inline data or files.
fn identity(user: &kube::config::AuthInfo) -> Result<Option<Identity>, TlsSetupError> {
    let cert = load(
        "certificate",
        user.client_certificate_data.as_deref(),
        user.client_certificate.as_deref(),
    )?;
    let key_data = user
        .client_key_data
        .as_ref()
        .map(|k| k.expose_secret().to_string());
    let key = load("key", key_data.as_deref(), user.client_key.as_deref())?;
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(cert), Some(key)) => (cert, key),
        _ => return Err(TlsSetupError::HalfIdentity),
    };
    let chain = CertificateDer::pem_slice_iter(&cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsSetupError::Identity(e.to_string()))?;
    if chain.is_empty() {
        return Err(TlsSetupError::Identity("no CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key).map_err(|e| TlsSetupError::Identity(e.to_string()))?;
    Ok(Some((chain, key)))
}

/// Base64 `data` (which wins, as in client-go) or the contents of `file`.
fn load(
    what: &'static str,
    data: Option<&str>,
    file: Option<&str>,
) -> Result<Option<Vec<u8>>, TlsSetupError> {
    let failed = |location: String, cause: String| TlsSetupError::Read {
        what,
        location,
        cause,
    };
    match (data, file) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map(Some)
            .map_err(|e| failed("data".into(), e.to_string())),
        (None, Some(file)) => std::fs::read(file)
            .map(Some)
            .map_err(|e| failed(file.to_string(), e.to_string())),
        (None, None) => Ok(None),
    }
}

/// `insecure = true`: any server certificate is taken, but the handshake's signatures are still
/// checked, so the connection is at least to the holder of the certificate it shows.
#[derive(Debug)]
struct AcceptAnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_data_wins_over_a_file_and_half_an_identity_is_refused() {
        let data = base64::engine::general_purpose::STANDARD.encode("pem");
        assert_eq!(
            load("key", Some(&data), Some("/nonexistent")).unwrap(),
            Some(b"pem".to_vec())
        );
        assert!(matches!(
            load("key", None, Some("/nonexistent")),
            Err(TlsSetupError::Read { what: "key", .. })
        ));
        let user = kube::config::AuthInfo {
            client_certificate_data: Some(data),
            ..Default::default()
        };
        assert!(matches!(identity(&user), Err(TlsSetupError::HalfIdentity)));
    }

    #[test]
    fn a_client_certificate_and_key_make_the_identity_presented() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = rcgen::CertificateParams::new(vec!["client".into()])
            .expect("params")
            .self_signed(&key)
            .expect("a certificate");
        let encode = |pem: String| base64::engine::general_purpose::STANDARD.encode(pem);
        let user = kube::config::AuthInfo {
            client_certificate_data: Some(encode(cert.pem())),
            client_key_data: Some(encode(key.serialize_pem()).into()),
            ..Default::default()
        };
        let (chain, _) = identity(&user).expect("readable").expect("an identity");
        assert_eq!(chain, [cert.der().clone()]);
        let mut config = kube::Config::new("https://example.com".parse().unwrap());
        config.auth_info = user;
        assert!(
            tls_config(&config)
                .expect("a TLS setup")
                .client_auth_cert_resolver
                .has_certs()
        );
    }

    #[test]
    fn without_a_named_ca_the_bundled_roots_are_trusted() {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let config = kube::Config::new("https://example.com".parse().unwrap());
        assert!(config.root_cert.is_none());
        assert!(tls_config(&config).is_ok());
        let mut proxied = config;
        proxied.proxy_url = Some("http://proxy:3128".parse().unwrap());
        assert!(matches!(client_builder(&proxied), Err(TlsSetupError::Proxy(_))));
    }
}
