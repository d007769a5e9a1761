//! Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`)
//! into JSON, for the kinds kubectl's typed clients send that way (`create namespace`,
//! `create configmap|secret|serviceaccount`, `auth can-i`, `create token`) and Terraform's
//! kubernetes state backend (Leases, DeleteOptions).
//!
//! The body is the `k8s\0` magic followed by a `runtime.Unknown` envelope whose `raw` field
//! holds the object message; field numbers below come from the upstream `generated.proto`s.

use base64::Engine;
use serde_json::{Map, Value, json};

#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("the body does not start with the k8s protobuf magic")]
    Magic,
    #[error("truncated or malformed protobuf")]
    Malformed,
    #[error("kind {0:?} cannot be sent as protobuf to this server")]
    UnsupportedKind(String),
}

/// How one field is turned into JSON.
#[derive(Clone, Copy)]
enum F {
    Str,
    Bytes,
    Int,
    Bool,
    RepStr,
    MapStr,
    MapBytes,
    /// `metav1.MicroTime` (`{seconds, nanos}`) as RFC 3339 with microseconds.
    MicroTime,
    Msg(&'static [(u32, &'static str, F)]),
    RepMsg(&'static [(u32, &'static str, F)]),
}

type Schema = &'static [(u32, &'static str, F)];

const OWNER_REF: Schema = &[
    (1, "kind", F::Str),
    (3, "name", F::Str),
    (4, "uid", F::Str),
    (5, "apiVersion", F::Str),
    (6, "controller", F::Bool),
    (7, "blockOwnerDeletion", F::Bool),
];
const OBJECT_META: Schema = &[
    (1, "name", F::Str),
    (2, "generateName", F::Str),
    (3, "namespace", F::Str),
    (5, "uid", F::Str),
    (6, "resourceVersion", F::Str),
    (11, "labels", F::MapStr),
    (12, "annotations", F::MapStr),
    (13, "ownerReferences", F::RepMsg(OWNER_REF)),
    (14, "finalizers", F::RepStr),
];
const NAMESPACE: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "spec", F::Msg(&[(1, "finalizers", F::RepStr)])),
];
const CONFIG_MAP: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "data", F::MapStr),
    (3, "binaryData", F::MapBytes),
    (4, "immutable", F::Bool),
];
const SECRET: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "data", F::MapBytes),
    (3, "type", F::Str),
    (4, "stringData", F::MapStr),
    (5, "immutable", F::Bool),
];
const LOCAL_REF: Schema = &[(1, "name", F::Str)];
const SERVICE_ACCOUNT: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (3, "imagePullSecrets", F::RepMsg(LOCAL_REF)),
    (4, "automountServiceAccountToken", F::Bool),
];
const RESOURCE_ATTRIBUTES: Schema = &[
    (1, "namespace", F::Str),
    (2, "verb", F::Str),
    (3, "group", F::Str),
    (4, "version", F::Str),
    (5, "resource", F::Str),
    (6, "subresource", F::Str),
    (7, "name", F::Str),
];
const NON_RESOURCE_ATTRIBUTES: Schema = &[(1, "path", F::Str), (2, "verb", F::Str)];
const SSAR: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[
            (1, "resourceAttributes", F::Msg(RESOURCE_ATTRIBUTES)),
            (2, "nonResourceAttributes", F::Msg(NON_RESOURCE_ATTRIBUTES)),
        ]),
    ),
];
const SSRR: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "spec", F::Msg(&[(1, "namespace", F::Str)])),
];
const TOKEN_REQUEST: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[(1, "audiences", F::RepStr), (4, "expirationSeconds", F::Int)]),
    ),
];

const MAP_STR: Schema = &[(1, "k", F::Str), (2, "v", F::Str)];
const MAP_BYTES: Schema = &[(1, "k", F::Str), (2, "v", F::Bytes)];

const LEASE: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[
            (1, "holderIdentity", F::Str),
            (2, "leaseDurationSeconds", F::Int),
            (3, "acquireTime", F::MicroTime),
            (4, "renewTime", F::MicroTime),
            (5, "leaseTransitions", F::Int),
            (6, "strategy", F::Str),
            (7, "preferredHolder", F::Str),
        ]),
    ),
];
const DELETE_OPTIONS: Schema = &[
    (1, "gracePeriodSeconds", F::Int),
    (
        2,
        "preconditions",
        F::Msg(&[(1, "uid", F::Str), (2, "resourceVersion", F::Str)]),
    ),
    (3, "orphanDependents", F::Bool),
    (4, "propagationPolicy", F::Str),
    (5, "dryRun", F::RepStr),
];

fn schema(kind: &str) -> Option<Schema> {
    Some(match kind {
        "Namespace" => NAMESPACE,
        "ConfigMap" => CONFIG_MAP,
        "Secret" => SECRET,
        "ServiceAccount" => SERVICE_ACCOUNT,
        "SelfSubjectAccessReview" => SSAR,
        "SelfSubjectRulesReview" => SSRR,
        "TokenRequest" => TOKEN_REQUEST,
        "Lease" => LEASE,
        "DeleteOptions" => DELETE_OPTIONS,
        _ => return None,
    })
}

/// Decodes a protobuf body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, ProtoError> {
    let envelope = body.strip_prefix(b"k8s\0").ok_or(ProtoError::Magic)?;
    let mut type_meta = (String::new(), String::new());
    let mut raw: &[u8] = &[];
    for (num, field) in Fields(envelope) {
        match (num, field?) {
            (1, Wire::Len(tm)) => {
                for (n, f) in Fields(tm) {
                    if let (n @ (1 | 2), Wire::Len(s)) = (n, f?) {
                        let s = String::from_utf8_lossy(s).into_owned();
                        if n == 1 { type_meta.0 = s } else { type_meta.1 = s }
                    }
                }
            }
            (2, Wire::Len(r)) => raw = r,
            _ => {}
        }
    }
    let (api_version, kind) = type_meta;
    let schema = schema(&kind).ok_or_else(|| ProtoError::UnsupportedKind(kind.clone()))?;
    let mut obj = message(raw, schema)?;
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    Ok(Value::Object(obj))
}

enum Wire<'a> {
    Varint(u64),
    Len(&'a [u8]),
    Fixed,
}

/// Iterates `(field number, value)` pairs of one message.
struct Fields<'a>(&'a [u8]);

fn varint(buf: &mut &[u8]) -> Option<u64> {
    let mut out = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = buf.split_first()?;
        *buf = rest;
        out |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(out);
        }
    }
    None
}

impl<'a> Iterator for Fields<'a> {
    type Item = (u32, Result<Wire<'a>, ProtoError>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let Some(key) = varint(&mut self.0) else {
            self.0 = &[];
            return Some((0, Err(ProtoError::Malformed)));
        };
        let num = (key >> 3) as u32;
        let wire = match key & 7 {
            0 => varint(&mut self.0).map(Wire::Varint),
            2 => varint(&mut self.0).and_then(|len| {
                let len = usize::try_from(len).ok()?;
                (len <= self.0.len()).then(|| {
                    let (v, rest) = self.0.split_at(len);
                    self.0 = rest;
                    Wire::Len(v)
                })
            }),
            1 => (self.0.len() >= 8)
                .then(|| self.0 = &self.0[8..])
                .map(|_| Wire::Fixed),
            5 => (self.0.len() >= 4)
                .then(|| self.0 = &self.0[4..])
                .map(|_| Wire::Fixed),
            _ => None,
        };
        match wire {
            Some(w) => Some((num, Ok(w))),
            None => {
                self.0 = &[];
                Some((num, Err(ProtoError::Malformed)))
            }
        }
    }
}

fn text(b: &[u8]) -> Value {
    json!(String::from_utf8_lossy(b))
}

fn message(buf: &[u8], schema: Schema) -> Result<Map<String, Value>, ProtoError> {
    let mut out = Map::new();
    for (num, wire) in Fields(buf) {
        let wire = wire?;
        let Some((_, name, f)) = schema.iter().find(|(n, _, _)| *n == num) else {
            continue;
        };
        let name = (*name).to_string();
        match (f, wire) {
            // Go marshals empty strings too; JSON omits them.
            (F::Str, Wire::Len([])) => {}
            (F::Str, Wire::Len(b)) => {
                out.insert(name, text(b));
            }
            (F::Bytes, Wire::Len(b)) => {
                out.insert(name, json!(base64::engine::general_purpose::STANDARD.encode(b)));
            }
            (F::Int, Wire::Varint(v)) => {
                out.insert(name, json!(v as i64));
            }
            (F::Bool, Wire::Varint(v)) => {
                out.insert(name, json!(v != 0));
            }
            (F::RepStr, Wire::Len(b)) => push(&mut out, name, text(b)),
            (F::MapStr | F::MapBytes, Wire::Len(b)) => {
                let entry = message(
                    b,
                    if matches!(f, F::MapStr) {
                        MAP_STR
                    } else {
                        MAP_BYTES
                    },
                )?;
                let key = entry.get("k").and_then(Value::as_str).unwrap_or("").to_string();
                let value = entry.get("v").cloned().unwrap_or(json!(""));
                let map = out.entry(name).or_insert_with(|| json!({}));
                map[key] = value;
            }
            (F::MicroTime, Wire::Len(b)) => {
                out.insert(name, json!(micro_time(b)?));
            }
            (F::Msg(s), Wire::Len(b)) => {
                out.insert(name, Value::Object(message(b, s)?));
            }
            (F::RepMsg(s), Wire::Len(b)) => push(&mut out, name, Value::Object(message(b, s)?)),
            _ => return Err(ProtoError::Malformed),
        }
    }
    Ok(out)
}

/// RFC 3339 with microseconds, as `metav1.MicroTime` marshals to JSON.
fn micro_time(b: &[u8]) -> Result<String, ProtoError> {
    let (mut seconds, mut nanos) = (0i64, 0i64);
    for (num, wire) in Fields(b) {
        match (num, wire?) {
            (1, Wire::Varint(v)) => seconds = v as i64,
            (2, Wire::Varint(v)) => nanos = v as i64,
            _ => {}
        }
    }
    let t = time::OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| ProtoError::Malformed)?;
    Ok(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        nanos / 1000
    ))
}

fn push(out: &mut Map<String, Value>, name: String, v: Value) {
    if let Some(list) = out.entry(name).or_insert_with(|| json!([])).as_array_mut() {
        list.push(v);
    }
}
