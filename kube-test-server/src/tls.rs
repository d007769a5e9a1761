//! The server's certificate authority and serving certificate (generated with rcgen).

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("generating certificates: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("configuring TLS: {0}")]
    Config(#[from] rustls::Error),
}

/// A CA (PEM cert and key), kept so that a restarted server keeps its kubeconfig valid.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaMaterial {
    pub cert_pem: String,
    pub key_pem: String,
}

impl CaMaterial {
    pub fn generate() -> Result<Self, TlsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-test-server-ca");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key)?;
        Ok(Self {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

impl CaMaterial {
    /// The CA as the issuer of certificates it signs.
    pub fn issuer(&self) -> Result<Issuer<'static, KeyPair>, TlsError> {
        let ca_key = KeyPair::from_pem(&self.key_pem)?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kube-test-server-ca");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        Ok(Issuer::new(ca_params, ca_key))
    }
}

/// A rustls server config with a fresh serving certificate for localhost signed by `ca`.
pub fn server_config(ca: &CaMaterial) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let issuer = ca.issuer()?;

    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec!["localhost".to_string(), "kubernetes".to_string()])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    let cert = params.signed_by(&key, &issuer)?;

    let ca_der = pem_to_der(&ca.cert_pem);
    let chain = vec![cert.der().clone(), ca_der];
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// DER of a single-certificate PEM (base64 between the armour lines).
pub fn pem_to_der(pem: &str) -> CertificateDer<'static> {
    use base64::Engine;
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap_or_default();
    CertificateDer::from(der)
}
