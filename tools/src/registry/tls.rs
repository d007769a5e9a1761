//! The registry's own certificate authority, made for one run ([`super::Tls::OwnCa`]): a CA and a
//! serving certificate for `localhost` and 127.0.0.1 signed by it. The engine trusts the CA
//! through `SSL_CERT_FILE` ([`super::Registry::ca_pem`]); a team hosting its own registry gives
//! it its certificate instead ([`super::Tls::Files`]).

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

#[derive(Debug, thiserror::Error)]
#[error("generating the registry's certificates: {0}")]
pub struct TlsError(#[from] rcgen::Error);

/// A fresh CA and what the registry serves with it.
pub struct OwnCa {
    /// The CA's certificate (PEM), for the clients to trust.
    pub ca_pem: String,
    /// The serving certificate, then the CA's.
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

impl OwnCa {
    pub fn generate() -> Result<OwnCa, TlsError> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "provider registry CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);

        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        params.distinguished_name.push(DnType::CommonName, "localhost");
        let cert = params.signed_by(&key, &issuer)?;
        Ok(OwnCa {
            ca_pem: ca_cert.pem(),
            chain: vec![cert.der().clone(), ca_cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }
}
