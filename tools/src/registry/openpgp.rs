//! The key id of an ASCII-armored OpenPGP public key, which the registry protocol's
//! `signing_keys` lists beside the key: read from the key itself, so the registry needs nothing
//! but the published `.asc` file (RFC 4880: a v4 key's id is the low 64 bits of its
//! fingerprint, the SHA-1 of `0x99 || length || public key packet body`).

use aws_lc_rs::digest;
use base64::Engine as _;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    #[error("not an ASCII-armored OpenPGP public key block")]
    NotArmored,
    #[error("the armored key is not valid base64")]
    Base64,
    #[error("the key does not start with a public key packet")]
    NoPublicKey,
    #[error("OpenPGP key version {0} is not supported (only v4)")]
    Version(u8),
}

/// The 16-hex-digit key id (upper case, as gpg prints it) of the first key in `armored`.
pub fn key_id(armored: &str) -> Result<String, KeyError> {
    let bytes = dearmor(armored)?;
    let body = first_packet(&bytes, PUBLIC_KEY_TAG).ok_or(KeyError::NoPublicKey)?;
    match body.first() {
        Some(4) => {}
        Some(&version) => return Err(KeyError::Version(version)),
        None => return Err(KeyError::NoPublicKey),
    }
    let length = u16::try_from(body.len()).map_err(|_| KeyError::NoPublicKey)?;
    let mut hashed = vec![0x99];
    hashed.extend_from_slice(&length.to_be_bytes());
    hashed.extend_from_slice(body);
    let fingerprint = digest::digest(&digest::SHA1_FOR_LEGACY_USE_ONLY, &hashed);
    let id = &fingerprint.as_ref()[12..];
    Ok(id.iter().map(|b| format!("{b:02X}")).collect())
}

const PUBLIC_KEY_TAG: u8 = 6;

/// The bytes inside `-----BEGIN PGP PUBLIC KEY BLOCK-----`: after the armor headers (up to
/// the first blank line), up to the checksum line `=XXXX`.
fn dearmor(armored: &str) -> Result<Vec<u8>, KeyError> {
    let mut lines = armored.lines().map(str::trim);
    lines
        .by_ref()
        .find(|l| *l == "-----BEGIN PGP PUBLIC KEY BLOCK-----")
        .ok_or(KeyError::NotArmored)?;
    let mut lines = lines.skip_while(|l| !l.is_empty()).skip(1);
    let text: String = lines
        .by_ref()
        .take_while(|l| !l.starts_with('=') && !l.starts_with("-----"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| KeyError::Base64)
}

/// The body of the first packet of `bytes` if its tag is `tag` (old or new packet format,
/// definite lengths only, as keys are written).
fn first_packet(bytes: &[u8], tag: u8) -> Option<&[u8]> {
    let (&header, rest) = bytes.split_first()?;
    if header & 0x80 == 0 {
        return None;
    }
    let (packet_tag, length, rest) = if header & 0x40 != 0 {
        let (length, rest) = match *rest.first()? {
            small @ 0..192 => (usize::from(small), &rest[1..]),
            first @ 192..224 => {
                let second = usize::from(*rest.get(1)?);
                (((usize::from(first) - 192) << 8) + second + 192, &rest[2..])
            }
            255 => (be_length(rest.get(1..5)?), &rest[5..]),
            _ => return None,
        };
        (header & 0x3f, length, rest)
    } else {
        let size = match header & 0x03 {
            0 => 1,
            1 => 2,
            2 => 4,
            _ => return None,
        };
        (
            (header >> 2) & 0x0f,
            be_length(rest.get(..size)?),
            rest.get(size..)?,
        )
    };
    (packet_tag == tag).then(|| rest.get(..length)).flatten()
}

fn be_length(bytes: &[u8]) -> usize {
    bytes.iter().fold(0, |n, &b| (n << 8) | usize::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A throwaway ed25519 key made with `gpg --quick-gen-key` (its secret half is gone);
    /// gpg listed it as key id A395AFBB6036053D.
    const KEY: &str = "-----BEGIN PGP PUBLIC KEY BLOCK-----

mDMEaxCwWRYJKwYBBAHaRw8BAQdApqJNQy1r3HzPWNzxGCshCgFysYXYieup5rTR
ouxTq6e0DXQgPHRAaW52YWxpZD6IkAQTFggAOBYhBDVkKQlp8tphC8zcxqOVr7tg
NgU9BQJrELBZAhsDBQsJCAcCBhUKCQgLAgQWAgMBAh4BAheAAAoJEKOVr7tgNgU9
W+EBAK/Gb1lJDQbCbh8dntOie9WKjeNT2OMurzWP3ylKxtWGAP49fWtIU/V6Lric
e8uXuVyV5/uk7xY8a1KeqFaRAFBMAw==
=9rbJ
-----END PGP PUBLIC KEY BLOCK-----
";

    #[test]
    fn the_key_id_is_the_one_gpg_lists() {
        assert_eq!(key_id(KEY).as_deref(), Ok("A395AFBB6036053D"));
    }

    #[test]
    fn other_text_is_refused() {
        assert_eq!(key_id("hello"), Err(KeyError::NotArmored));
        let private = KEY.replace("PUBLIC KEY", "PRIVATE KEY");
        assert_eq!(key_id(&private), Err(KeyError::NotArmored));
    }
}
