//! go-plugin's handshake: the magic cookie that says the engine started us, the protocol
//! version both sides speak, and the line on stdout that tells the engine where to connect.

use base64::Engine;

/// The environment variable and value Terraform and OpenTofu set for their providers.
pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
/// The value of [`MAGIC_COOKIE_KEY`]: not a secret, only a sign the binary was not run by hand.
pub const MAGIC_COOKIE_VALUE: &str = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// The only plugin protocol major version this runtime speaks.
pub const PROTOCOL_VERSION: u32 = 6;
/// go-plugin's own handshake version, the first field of the line.
const CORE_PROTOCOL_VERSION: u32 = 1;

/// Why the plugin will not serve the process that started it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HandshakeError {
    /// The cookie is missing or wrong: someone ran the binary by hand.
    #[error("This binary is a plugin. It is run by terraform or tofu, not directly.")]
    NotStartedByEngine,
    /// The engine offers only protocol versions this runtime does not speak.
    #[error(
        "this provider speaks plugin protocol {PROTOCOL_VERSION} only, but the engine offered {offered:?}: \
         use Terraform 1.0 or later, or OpenTofu"
    )]
    NoCommonProtocol {
        /// `PLUGIN_PROTOCOL_VERSIONS` as the engine set it.
        offered: String,
    },
}

/// Checks that the engine started us: it alone sets the cookie.
pub fn check_cookie(cookie: Option<&str>) -> Result<(), HandshakeError> {
    match cookie {
        Some(MAGIC_COOKIE_VALUE) => Ok(()),
        _ => Err(HandshakeError::NotStartedByEngine),
    }
}

/// Picks the protocol version from `PLUGIN_PROTOCOL_VERSIONS` (e.g. `5,6`); an engine
/// that sends none gets our only version, as go-plugin does.
pub fn negotiate_protocol(offered: Option<&str>) -> Result<u32, HandshakeError> {
    let Some(offered) = offered.filter(|o| !o.trim().is_empty()) else {
        return Ok(PROTOCOL_VERSION);
    };
    if offered
        .split(',')
        .any(|v| v.trim().parse() == Ok(PROTOCOL_VERSION))
    {
        Ok(PROTOCOL_VERSION)
    } else {
        Err(HandshakeError::NoCommonProtocol {
            offered: offered.to_string(),
        })
    }
}

/// The line printed on stdout: `1|6|unix|/tmp/plugin123/plugin.sock|grpc|<cert>`, the
/// certificate being unpadded standard base64 of its DER (empty without TLS).
pub fn handshake_line(protocol: u32, network: &str, address: &str, server_cert: Option<&[u8]>) -> String {
    let cert = server_cert
        .map(|der| base64::engine::general_purpose::STANDARD_NO_PAD.encode(der))
        .unwrap_or_default();
    format!("{CORE_PROTOCOL_VERSION}|{protocol}|{network}|{address}|grpc|{cert}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_must_match() {
        assert_eq!(check_cookie(Some(MAGIC_COOKIE_VALUE)), Ok(()));
        assert_eq!(
            check_cookie(Some("other")),
            Err(HandshakeError::NotStartedByEngine)
        );
        assert_eq!(check_cookie(None), Err(HandshakeError::NotStartedByEngine));
    }

    #[test]
    fn protocol_negotiation() {
        assert_eq!(negotiate_protocol(Some("5,6")), Ok(6));
        assert_eq!(negotiate_protocol(Some("6")), Ok(6));
        assert_eq!(negotiate_protocol(None), Ok(6));
        let err = negotiate_protocol(Some("5")).unwrap_err();
        assert!(err.to_string().contains("protocol 6 only"), "{err}");
    }

    #[test]
    fn line_has_unpadded_certificate() {
        let line = handshake_line(6, "unix", "/tmp/p/plugin.sock", Some(&[1, 2, 3, 4]));
        assert_eq!(line, "1|6|unix|/tmp/p/plugin.sock|grpc|AQIDBA\n");
        assert_eq!(
            handshake_line(6, "tcp", "127.0.0.1:1234", None),
            "1|6|tcp|127.0.0.1:1234|grpc|\n"
        );
    }
}
