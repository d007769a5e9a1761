//! The resource's private state as one type: the bytes the engine stores beside each instance
//! (`private` in the plugin protocol) and hands back to the next call on it.
//!
//! A protocol call decodes them once ([`PrivateState::decode`]) and passes the value down; what
//! it hands back it encodes once ([`PrivateState::encode`]). Their forms:
//!
//! ```text
//! empty                     b""
//! absent                    b"absent"
//! seen (format 1)           0x01, has-fields (0 or 1), 16-byte digest, [fields as compact JSON]
//! seen (0.1.0, read only)   {"fields": {…} | null, "digest": "sha256:<64 hex digits>"}
//! pending create            b"pending-create:", then the create as JSON
//! hashicorp's SDK v2        {"e2bfb730-…": {"create": <nanoseconds>, …}, "schema_version": "1"}
//! ```
//!
//! The engine stores private state base64-encoded in every instance of the state file, and it
//! rewrites the whole file after each resource an apply completes: every byte here is paid for
//! N times in an apply of N resources. So a view is binary and short. 0.1.0 wrote views as
//! JSON: they are still read, so a state it wrote plans without a false "changed" error, and a
//! view is always written in format 1. hashicorp's SDK data is kept as the SDK wrote it.

use std::collections::BTreeMap;
use std::time::Duration;

use plugin_runtime::Diagnostic;
use plugin_runtime::upgrade;
use serde::{Deserialize, Serialize};

use crate::create::Pending;
use crate::ownership::FieldSet;
use crate::seen::{DIGEST_LEN, Seen};
use crate::timeouts;

const ABSENT: &[u8] = b"absent";
const SEEN_FORMAT: u8 = 1;
/// Starts no other form: not the format byte of a view, nor JSON, nor [`ABSENT`].
const PENDING_PREFIX: &[u8] = b"pending-create:";

/// What an earlier step left in private state for the next.
#[derive(Clone, Debug, PartialEq)]
pub enum PrivateState {
    /// Nothing recorded: a state no step of ours has looked at yet (an import), the plan of a
    /// replacement or of no change, a destroy, a failed apply, a refresh that found the object
    /// gone.
    Empty,
    /// The step found no object under the resource's name.
    Absent,
    /// The step's view of the object there.
    Seen(Seen),
    /// A `generate_name` create whose outcome is unknown (the resource is saved as tainted):
    /// the next refresh looks the object up by its token.
    PendingCreate(Pending),
    /// hashicorp's SDK data, in a state it wrote that this provider has not refreshed yet.
    SdkV2(SdkV2),
}

/// What hashicorp's SDK v2 keeps in private state: no view of the object, but the timeouts its
/// resource defaulted to, which stay the defaults until a refresh of ours replaces the data.
#[derive(Clone, Debug, PartialEq)]
pub struct SdkV2 {
    /// By operation (`create`, `update`, `delete`).
    pub timeouts: BTreeMap<String, Duration>,
    /// The data as the SDK wrote it: not ours to rewrite.
    written: Vec<u8>,
}

/// Why private state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PrivateStateError {
    #[error("its form is none this provider writes")]
    Unknown,
    #[error("a view cut short")]
    Truncated,
    #[error("a view whose has-fields byte is {0}, not 0 or 1")]
    Flag(u8),
    #[error("a view without fields followed by {0} more bytes")]
    Trailing(usize),
    #[error("a view whose fields are not JSON: {0}")]
    Fields(serde_json::Error),
    #[error("JSON that is neither hashicorp's SDK data nor a view of 0.1.0: {0}")]
    Json(serde_json::Error),
    #[error("a view of 0.1.0 whose digest is not \"sha256:<64 hex digits>\"")]
    Digest,
    #[error("a pending create that is not JSON: {0}")]
    Pending(serde_json::Error),
}

impl From<PrivateStateError> for Diagnostic {
    fn from(e: PrivateStateError) -> Diagnostic {
        Diagnostic::error(
            "Unreadable private state",
            format!(
                "The private data the state holds for this resource could not be read ({e}): a \
                 newer version of this provider may have written it, or it was damaged. It says \
                 what the last step saw of the object, which this one must check, so nothing \
                 was written. Run plan again with refresh: the refresh records what it sees anew."
            ),
        )
    }
}

impl PrivateState {
    /// The timeout for `operation` where the `timeouts` block does not say: the one hashicorp's
    /// SDK recorded when the state is still the one it wrote (its resources' own defaults), else
    /// [`timeouts::DEFAULT`].
    pub fn default_timeout(&self, operation: &str) -> Duration {
        match self {
            PrivateState::SdkV2(sdk) => sdk.timeouts.get(operation).copied(),
            _ => None,
        }
        .unwrap_or(timeouts::DEFAULT)
    }

    /// The private state in `bytes`, whichever version of this provider (or hashicorp's SDK)
    /// wrote them.
    pub fn decode(bytes: &[u8]) -> Result<PrivateState, PrivateStateError> {
        Ok(match bytes {
            [] => PrivateState::Empty,
            ABSENT => PrivateState::Absent,
            [SEEN_FORMAT, view @ ..] => PrivateState::Seen(decode_view(view)?),
            [b'{', ..] => decode_json(bytes)?,
            _ => {
                let pending = bytes
                    .strip_prefix(PENDING_PREFIX)
                    .ok_or(PrivateStateError::Unknown)?;
                PrivateState::PendingCreate(
                    serde_json::from_slice(pending).map_err(PrivateStateError::Pending)?,
                )
            }
        })
    }

    /// The bytes this version writes for it (a view in format 1; the SDK's data as it was).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            PrivateState::Empty => Vec::new(),
            PrivateState::Absent => ABSENT.to_vec(),
            PrivateState::Seen(Seen { fields, digest }) => {
                let mut out = vec![SEEN_FORMAT, u8::from(fields.is_some())];
                out.extend_from_slice(digest);
                match fields {
                    Some(fields) => then_json(out, fields),
                    None => out,
                }
            }
            PrivateState::PendingCreate(pending) => then_json(PENDING_PREFIX.to_vec(), pending),
            PrivateState::SdkV2(sdk) => sdk.written.clone(),
        }
    }
}

/// `out`, then `value` as compact JSON.
fn then_json(mut out: Vec<u8>, value: &impl Serialize) -> Vec<u8> {
    serde_json::to_writer(&mut out, value).expect("JSON always serializes");
    out
}

/// A format-1 view after its format byte.
fn decode_view(view: &[u8]) -> Result<Seen, PrivateStateError> {
    let (&has_fields, rest) = view.split_first().ok_or(PrivateStateError::Truncated)?;
    let (&digest, fields) = rest
        .split_first_chunk::<DIGEST_LEN>()
        .ok_or(PrivateStateError::Truncated)?;
    let fields = match has_fields {
        1 => Some(serde_json::from_slice(fields).map_err(PrivateStateError::Fields)?),
        0 if fields.is_empty() => None,
        0 => return Err(PrivateStateError::Trailing(fields.len())),
        flag => return Err(PrivateStateError::Flag(flag)),
    };
    Ok(Seen { fields, digest })
}

/// The JSON forms: hashicorp's SDK data, or a view as 0.1.0 wrote it.
fn decode_json(bytes: &[u8]) -> Result<PrivateState, PrivateStateError> {
    let timeouts = upgrade::sdk_v2_timeouts(bytes);
    if timeouts.is_some() || upgrade::is_sdk_v2_private(bytes) {
        return Ok(PrivateState::SdkV2(SdkV2 {
            timeouts: timeouts.unwrap_or_default(),
            written: bytes.to_vec(),
        }));
    }
    #[derive(Deserialize)]
    struct View {
        fields: Option<FieldSet>,
        digest: String,
    }
    let View { fields, digest } = serde_json::from_slice(bytes).map_err(PrivateStateError::Json)?;
    let sha256 = digest
        .strip_prefix("sha256:")
        .and_then(sha256_of_hex)
        .ok_or(PrivateStateError::Digest)?;
    // Cut to the prefix format 1 keeps: as sure a sign of change, and written again as one.
    Ok(PrivateState::Seen(Seen::new(fields, &sha256)))
}

/// 64 hex digits as the 32 bytes they spell.
fn sha256_of_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut sha256 = [0; 32];
    for (i, byte) in sha256.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(sha256)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_hashicorp_states_private_timeouts_are_the_default() {
        let private = br#"{"e2bfb730-ecaa-11e6-8f88-34363bc7c4c0":{"create":120000000000,"delete":600000000000},"schema_version":"1"}"#;
        let private = PrivateState::decode(private).unwrap();
        assert_eq!(private.default_timeout("create"), Duration::from_secs(120));
        assert_eq!(private.default_timeout("update"), timeouts::DEFAULT);
        assert_eq!(PrivateState::Absent.default_timeout("create"), timeouts::DEFAULT);
    }

    fn fields() -> FieldSet {
        match json!({"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:tofu-estate": {}}}}) {
            serde_json::Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    const FIELDS_JSON: &[u8] = br#"{"f:data":{"f:key":{}},"f:metadata":{"f:labels":{"f:tofu-estate":{}}}}"#;

    fn sha() -> [u8; 32] {
        std::array::from_fn(|i| i as u8)
    }

    fn pending(namespace: Option<&str>) -> Pending {
        Pending {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespace: namespace.map(str::to_string),
            token: "abcdefghij0123456789".into(),
        }
    }

    const SDK: &[u8] = br#"{"e2bfb730-ecaa-11e6-8f88-34363bc7c4c0":{"create":120000000000,"delete":600000000000},"schema_version":"1"}"#;

    fn decoded(bytes: &[u8]) -> PrivateState {
        PrivateState::decode(bytes).unwrap_or_else(|e| panic!("{bytes:?}: {e}"))
    }

    /// Every form with the bytes the provider wrote for it before private state was one type
    /// (0.2): saved states and plans hold these.
    fn every_form() -> Vec<(PrivateState, Vec<u8>)> {
        let digest: Vec<u8> = (0..16).collect();
        let view = |has_fields: u8, json: &[u8]| [&[1, has_fields][..], &digest, json].concat();
        vec![
            (PrivateState::Empty, b"".to_vec()),
            (PrivateState::Absent, b"absent".to_vec()),
            (PrivateState::Seen(Seen::new(Some(fields()), &sha())), view(1, FIELDS_JSON)),
            (PrivateState::Seen(Seen::new(None, &sha())), view(0, b"")),
            (
                PrivateState::PendingCreate(pending(Some("shop"))),
                br#"pending-create:{"api_version":"v1","kind":"ConfigMap","plural":"configmaps","namespace":"shop","token":"abcdefghij0123456789"}"#.to_vec(),
            ),
            (
                PrivateState::PendingCreate(pending(None)),
                br#"pending-create:{"api_version":"v1","kind":"ConfigMap","plural":"configmaps","namespace":null,"token":"abcdefghij0123456789"}"#.to_vec(),
            ),
            (decoded(SDK), SDK.to_vec()),
        ]
    }

    #[test]
    fn each_form_encodes_to_the_bytes_written_before_and_decodes_back() {
        for (state, bytes) in every_form() {
            assert_eq!(state.encode(), bytes, "{state:?}");
            assert_eq!(decoded(&bytes), state, "{bytes:?}");
        }
        // A ConfigMap's view: 88 bytes, where 0.1.0's JSON took 164.
        assert_eq!(every_form()[2].1.len(), 2 + 16 + 70);
    }

    #[test]
    fn the_json_view_of_0_1_0_is_still_read_and_written_again_in_format_1() {
        let hex: String = sha().iter().map(|b| format!("{b:02x}")).collect();
        for fields in [Some(fields()), None] {
            let old = json!({"fields": fields, "digest": format!("sha256:{hex}")});
            let state = decoded(&serde_json::to_vec(&old).unwrap());
            assert_eq!(state, PrivateState::Seen(Seen::new(fields, &sha())));
            assert_eq!(state.encode()[0], SEEN_FORMAT);
            assert_eq!(decoded(&state.encode()), state);
        }
    }

    #[test]
    fn hashicorps_sdk_data_gives_its_timeouts_and_stays_as_written() {
        let PrivateState::SdkV2(sdk) = decoded(SDK) else {
            panic!("not the SDK's: {:?}", decoded(SDK));
        };
        assert_eq!(sdk.timeouts["create"], Duration::from_secs(120));
        assert_eq!(sdk.timeouts["delete"], Duration::from_secs(600));
        // Data of a resource without timeouts is the SDK's too.
        let bare = br#"{"schema_version":"1"}"#;
        assert_eq!(
            decoded(bare),
            PrivateState::SdkV2(SdkV2 {
                timeouts: BTreeMap::new(),
                written: bare.to_vec(),
            })
        );
    }

    #[test]
    fn short_garbled_or_foreign_bytes_are_errors_saying_why() {
        let mut trailing = PrivateState::Seen(Seen::new(None, &sha())).encode();
        trailing.push(b'x');
        let mut bad_fields = PrivateState::Seen(Seen::new(Some(fields()), &sha())).encode();
        bad_fields.truncate(bad_fields.len() - 1);
        let flag_2 = [&[SEEN_FORMAT, 2][..], &[0; DIGEST_LEN]].concat();
        // Each with the variant its error is.
        let cases: [(&[u8], &str); 12] = [
            (&[SEEN_FORMAT], "Truncated"),
            (&[SEEN_FORMAT, 0, 1, 2], "Truncated"),
            (&flag_2, "Flag(2)"),
            (&trailing, "Trailing(1)"),
            (&bad_fields, "Fields("),
            (br#"{"fields": null, "digest": "sha256:zz"}"#, "Digest"),
            (br#"{"fields": null, "digest": "md5:00"}"#, "Digest"),
            (br#"{"provider": {}}"#, "Json("),
            (b"pending-create:{", "Pending("),
            (b"absent ", "Unknown"),
            (b"pending", "Unknown"),
            (b"\x02", "Unknown"),
        ];
        for (bytes, variant) in cases {
            let e = PrivateState::decode(bytes).unwrap_err();
            assert!(format!("{e:?}").starts_with(variant), "{bytes:?}: {e:?}");
        }
        let d = Diagnostic::from(PrivateStateError::Truncated);
        assert!(d.detail.contains("(a view cut short)"), "{d:?}");
    }
}
