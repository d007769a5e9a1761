//! AutoMTLS the way go-plugin does it: the engine passes its client certificate in
//! `PLUGIN_CLIENT_CERT`, the plugin makes a throwaway self-signed server certificate and
//! sends it in the handshake line, and each side trusts exactly the other's certificate.
//!
//! Both certificates are CA certificates presented as end entities, which WebPKI path
//! validation refuses, so trust is a byte-for-byte pin ([`PinnedCert`]) plus a check of
//! the TLS handshake signature with aws-lc-rs (the engine signs with P-521/SHA-512, which
//! ring cannot verify).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms, aws_lc_rs};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// Why the plugin could not set up AutoMTLS; it then exits before the handshake line.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The engine's certificate does not parse.
    #[error("PLUGIN_CLIENT_CERT does not hold a PEM certificate: {0}")]
    ClientCert(String),
    /// The throwaway server certificate could not be made.
    #[error("cannot generate the server certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the configuration.
    #[error("cannot set up TLS: {0}")]
    Config(#[from] rustls::Error),
}

/// A freshly generated certificate and its key.
#[derive(Debug)]
pub struct Identity {
    /// The certificate, DER-encoded, as the handshake line sends it.
    pub cert: CertificateDer<'static>,
    /// Its private key, which never leaves the process.
    pub key: PrivateKeyDer<'static>,
}

impl Identity {
    /// A self-signed certificate shaped like go-plugin's: SAN `localhost`, CA:true,
    /// usable for server and client auth, signed with `algorithm`.
    pub fn generate(algorithm: &'static rcgen::SignatureAlgorithm) -> Result<Identity, TlsError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyUsagePurpose,
        };
        let key = rcgen::KeyPair::generate_for(algorithm)?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params.distinguished_name.push(DnType::CommonName, "localhost");
        params
            .distinguished_name
            .push(DnType::OrganizationName, "HashiCorp");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.self_signed(&key)?;
        Ok(Identity {
            cert: cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }

    /// A copy (private keys are not `Clone`, to make copies deliberate).
    pub fn duplicate(&self) -> Identity {
        Identity {
            cert: self.cert.clone(),
            key: self.key.clone_key(),
        }
    }

    /// The certificate as PEM, as the engine passes its own in `PLUGIN_CLIENT_CERT`.
    pub fn cert_pem(&self) -> String {
        use base64::Engine;
        let body = base64::engine::general_purpose::STANDARD.encode(self.cert.as_ref());
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).expect("base64 is ASCII"))
            .collect();
        format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            lines.join("\n")
        )
    }
}

/// The first certificate in a PEM document.
pub fn parse_pem_cert(pem: &str) -> Result<CertificateDer<'static>, TlsError> {
    CertificateDer::from_pem_slice(pem.as_bytes()).map_err(|e| TlsError::ClientCert(e.to_string()))
}

fn crypto_provider() -> Arc<CryptoProvider> {
    Arc::new(aws_lc_rs::default_provider())
}

/// The plugin side: our identity, and only the engine's certificate accepted. ALPN `h2`
/// is required by grpc-go clients.
pub fn server_config(
    identity: Identity,
    client_cert: CertificateDer<'static>,
) -> Result<rustls::ServerConfig, TlsError> {
    let provider = crypto_provider();
    let verifier = Arc::new(PinnedCert::new(
        client_cert,
        provider.signature_verification_algorithms,
    ));
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![identity.cert], identity.key)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// The engine side (tests and tools): present `identity` (or no certificate at all) and
/// trust only `server_cert`.
pub fn client_config(
    identity: Option<Identity>,
    server_cert: CertificateDer<'static>,
) -> Result<rustls::ClientConfig, TlsError> {
    let provider = crypto_provider();
    let verifier = Arc::new(PinnedCert::new(
        server_cert,
        provider.signature_verification_algorithms,
    ));
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match identity {
        Some(identity) => builder.with_client_auth_cert(vec![identity.cert], identity.key)?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// Trusts exactly one certificate, compared byte for byte, and checks that the peer
/// holds its key by verifying the handshake signature.
#[derive(Debug)]
pub struct PinnedCert {
    der: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedCert {
    /// Trusts `der` alone, verifying handshake signatures with `algorithms`.
    pub fn new(der: CertificateDer<'static>, algorithms: WebPkiSupportedAlgorithms) -> PinnedCert {
        PinnedCert { der, algorithms }
    }

    fn check(&self, presented: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        if presented.as_ref() == self.der.as_ref() {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }
}

impl ClientCertVerifier for PinnedCert {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.check(end_entity).map(|()| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

impl ServerCertVerifier for PinnedCert {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.check(end_entity).map(|()| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
