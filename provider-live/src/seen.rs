//! What one step saw of an object, as the bytes of the resource's private state.
//!
//! The engine stores private state base64-encoded in every instance of the state file, and it
//! rewrites the whole file after each resource an apply completes: every byte here is paid
//! for N times in an apply of N resources. So the encoding is binary and short:
//!
//! ```text
//! absent                      b"absent"
//! seen (format 1)             0x01, has-fields (0 or 1), 16-byte digest, [fields as compact JSON]
//! seen (0.1.0, still read)    {"fields": {…} | null, "digest": "sha256:<64 hex digits>"}
//! ```
//!
//! The digest is SHA-256 cut to its first 16 bytes: it tells "this object changed since the
//! plan", for which 128 bits are ample.

use serde::Deserialize;

use crate::ownership::FieldSet;

/// The private state of an object that was not there.
pub const ABSENT: &[u8] = b"absent";

const FORMAT: u8 = 1;
/// Bytes of the digest kept in format 1.
pub const DIGEST_LEN: usize = 16;

/// A step's view of a present object: the fields our manager owned (`None`: it owned none yet,
/// an import not yet applied, and the digest covers the whole content) and the digest of
/// their values. `digest` is a prefix of a SHA-256 (all 32 bytes when read from 0.1.0).
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    pub fields: Option<FieldSet>,
    pub digest: Vec<u8>,
}

impl Seen {
    /// `sha256`: the full digest of what was seen; the prefix kept is [`DIGEST_LEN`] bytes.
    pub fn new(fields: Option<FieldSet>, sha256: &[u8]) -> Seen {
        Seen {
            fields,
            digest: sha256[..DIGEST_LEN.min(sha256.len())].to_vec(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![FORMAT, u8::from(self.fields.is_some())];
        out.extend_from_slice(&self.digest);
        if let Some(fields) = &self.fields {
            serde_json::to_writer(&mut out, fields).expect("JSON always serializes");
        }
        out
    }

    /// `None` for [`ABSENT`], empty or unreadable bytes.
    pub fn decode(bytes: &[u8]) -> Option<Seen> {
        match bytes {
            [FORMAT, has_fields @ (0 | 1), rest @ ..] if rest.len() >= DIGEST_LEN => {
                let (digest, fields) = rest.split_at(DIGEST_LEN);
                let fields = match has_fields {
                    1 => Some(serde_json::from_slice(fields).ok()?),
                    _ if fields.is_empty() => None,
                    _ => return None,
                };
                Some(Seen {
                    fields,
                    digest: digest.to_vec(),
                })
            }
            [b'{', ..] => Self::decode_json(bytes),
            _ => None,
        }
    }

    /// The JSON form 0.1.0 wrote, so a state from it plans without a false "changed" error.
    fn decode_json(bytes: &[u8]) -> Option<Seen> {
        #[derive(Deserialize)]
        struct Json {
            fields: Option<FieldSet>,
            digest: String,
        }
        let Json { fields, digest } = serde_json::from_slice(bytes).ok()?;
        let hex = digest.strip_prefix("sha256:")?;
        if hex.len() != 64 || !hex.is_ascii() {
            return None;
        }
        let digest = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
            .collect::<Option<Vec<u8>>>()?;
        Some(Seen { fields, digest })
    }

    /// Whether `sha256`, the full digest of what is there now, is what was seen.
    pub fn matches(&self, sha256: &[u8]) -> bool {
        self.digest.len() >= DIGEST_LEN && sha256.starts_with(&self.digest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields() -> FieldSet {
        match json!({"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:tofu-estate": {}}}}) {
            serde_json::Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_view_survives_its_encoding_with_or_without_fields() {
        let sha: Vec<u8> = (0..32).collect();
        for seen in [Seen::new(Some(fields()), &sha), Seen::new(None, &sha)] {
            let bytes = seen.encode();
            assert_eq!(Seen::decode(&bytes), Some(seen.clone()));
            assert!(seen.matches(&sha));
        }
        let mut other = sha.clone();
        other[3] ^= 1;
        assert!(!Seen::new(None, &sha).matches(&other));
        // A ConfigMap's view: 88 bytes, where 0.1.0's JSON took 164.
        assert_eq!(Seen::new(Some(fields()), &sha).encode().len(), 2 + 16 + 70);
    }

    #[test]
    fn the_json_form_of_0_1_0_is_still_read() {
        let hex: String = (0..32u8).map(|b| format!("{b:02x}")).collect();
        let old = serde_json::to_vec(&json!({"fields": fields(), "digest": format!("sha256:{hex}")}));
        let seen = Seen::decode(&old.unwrap()).unwrap();
        assert_eq!(seen.fields, Some(fields()));
        assert!(seen.matches(&(0..32).collect::<Vec<u8>>()));
        let whole = serde_json::to_vec(&json!({"fields": null, "digest": format!("sha256:{hex}")}));
        assert_eq!(Seen::decode(&whole.unwrap()).unwrap().fields, None);
    }

    #[test]
    fn absent_short_or_garbled_bytes_are_no_view() {
        let sha = [7u8; 32];
        let mut trailing = Seen::new(None, &sha).encode();
        trailing.push(b'x');
        let mut bad_fields = Seen::new(Some(fields()), &sha).encode();
        bad_fields.truncate(bad_fields.len() - 1);
        for bytes in [
            ABSENT,
            b"",
            &[FORMAT, 0, 1, 2][..],
            &[FORMAT, 2][..],
            &trailing,
            &bad_fields,
            br#"{"fields": null, "digest": "sha256:zz"}"#,
            br#"{"fields": null, "digest": "md5:00"}"#,
        ] {
            assert_eq!(Seen::decode(bytes), None, "{bytes:?}");
        }
    }
}
