//! Object metadata helpers: timestamps, uids, generated names and key order.

use serde_json::{Map, Value};

/// Now as the apiserver writes `metav1.Time`: RFC 3339 in whole seconds, UTC.
pub fn now() -> String {
    timestamp(epoch_now())
}

/// A `metav1.Time` (RFC 3339) as seconds since the epoch; None when it is not one.
pub fn epoch(time: &str) -> Option<f64> {
    let t = time::OffsetDateTime::parse(time, &time::format_description::well_known::Rfc3339).ok()?;
    Some(t.unix_timestamp() as f64)
}

/// Seconds since the epoch as the apiserver writes `metav1.Time` (whole seconds, UTC).
pub fn timestamp(epoch: f64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(epoch.floor() as i64)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Now as seconds since the epoch, with the fraction.
pub fn epoch_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

pub fn new_uid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The 5-character suffix `generateName` gets (consonants and digits, like the apiserver's).
pub fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let bytes = uuid::Uuid::new_v4().into_bytes();
    bytes[..5]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect()
}

/// The order in which ObjectMeta serialises its fields.
const META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Puts `kind`, `apiVersion`, `metadata` first and metadata fields in ObjectMeta order, and
/// sorts label/annotation keys like Go maps serialise, so output reads like the apiserver's.
pub fn canonicalize(obj: &mut Value) {
    let Some(map) = obj.as_object_mut() else { return };
    let mut out = Map::new();
    for key in ["kind", "apiVersion"] {
        if let Some(v) = map.shift_remove(key) {
            out.insert(key.into(), v);
        }
    }
    if let Some(mut meta) = map.shift_remove("metadata") {
        if let Some(m) = meta.as_object_mut() {
            let mut ordered = Map::new();
            for key in META_ORDER {
                if let Some(mut v) = m.shift_remove(*key) {
                    if matches!(*key, "labels" | "annotations") {
                        sort_keys(&mut v);
                    }
                    ordered.insert((*key).into(), v);
                }
            }
            ordered.extend(std::mem::take(m));
            *m = ordered;
        }
        out.insert("metadata".into(), meta);
    }
    out.extend(std::mem::take(map));
    *map = out;
}

/// Sorts an object's keys, as Go serialises `map[string]T`.
pub fn sort_keys(v: &mut Value) {
    if let Some(m) = v.as_object_mut() {
        m.sort_keys();
    }
}
