//! Decoding of Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`)
//! into JSON, for the kinds kubectl's typed clients send that way (`create namespace`,
//! `create configmap|secret|serviceaccount|deployment|service`, `create role|rolebinding|
//! clusterrole|clusterrolebinding`, `auth can-i`, `create token`, `certificate approve`) and
//! Terraform's kubernetes state backend (Leases, DeleteOptions).
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
    /// A field this server cannot decode holds a value: dropping it would lose what the
    /// client wrote, so the request is refused and names it.
    #[error(
        "field number {field} under {at:?} of a {kind} cannot be decoded from protobuf by this server (send JSON)"
    )]
    UnsupportedField { kind: String, at: String, field: u32 },
}

/// How one field is turned into JSON.
#[derive(Clone, Copy)]
enum F {
    Str,
    Bytes,
    /// A pointer or required integer: kept when zero.
    Int,
    /// An `omitempty` integer: Go marshals zero too, JSON omits it.
    IntNonZero,
    /// A pointer boolean: kept when false.
    Bool,
    /// An `omitempty` boolean: kept only when true.
    True,
    /// `intstr.IntOrString` (`{type, intVal, strVal}`) as a JSON number or string.
    IntOrString,
    RepStr,
    MapStr,
    MapBytes,
    /// `metav1.MicroTime` (`{seconds, nanos}`) as RFC 3339 with microseconds.
    MicroTime,
    /// `metav1.Time` (`{seconds, nanos}`) as RFC 3339 in whole seconds.
    Time,
    /// Read but not kept: a client sends back the managedFields it read, and an update
    /// without them keeps the object's own.
    Unchanged,
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
    (7, "generation", F::IntNonZero),
    (8, "creationTimestamp", F::Time),
    (11, "labels", F::MapStr),
    (12, "annotations", F::MapStr),
    (13, "ownerReferences", F::RepMsg(OWNER_REF)),
    (14, "finalizers", F::RepStr),
    (17, "managedFields", F::Unchanged),
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
const CSR_CONDITION: Schema = &[
    (1, "type", F::Str),
    (2, "reason", F::Str),
    (3, "message", F::Str),
    (4, "lastUpdateTime", F::Time),
    (5, "lastTransitionTime", F::Time),
    (6, "status", F::Str),
];
const CERTIFICATE_SIGNING_REQUEST: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[
            (1, "request", F::Bytes),
            (2, "username", F::Str),
            (3, "uid", F::Str),
            (4, "groups", F::RepStr),
            (5, "usages", F::RepStr),
            (7, "signerName", F::Str),
            (8, "expirationSeconds", F::Int),
        ]),
    ),
    (
        3,
        "status",
        F::Msg(&[
            (1, "conditions", F::RepMsg(CSR_CONDITION)),
            (2, "certificate", F::Bytes),
        ]),
    ),
];
const LOCAL_REF: Schema = &[(1, "name", F::Str)];
const OBJECT_REF: Schema = &[
    (1, "kind", F::Str),
    (2, "namespace", F::Str),
    (3, "name", F::Str),
    (4, "uid", F::Str),
    (5, "apiVersion", F::Str),
    (6, "resourceVersion", F::Str),
    (7, "fieldPath", F::Str),
];
const SERVICE_ACCOUNT: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "secrets", F::RepMsg(OBJECT_REF)),
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

const POLICY_RULE: Schema = &[
    (1, "verbs", F::RepStr),
    (2, "apiGroups", F::RepStr),
    (3, "resources", F::RepStr),
    (4, "resourceNames", F::RepStr),
    (5, "nonResourceURLs", F::RepStr),
];
const ROLE: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "rules", F::RepMsg(POLICY_RULE)),
];
const LABEL_SELECTOR: Schema = &[
    (1, "matchLabels", F::MapStr),
    (
        2,
        "matchExpressions",
        F::RepMsg(&[
            (1, "key", F::Str),
            (2, "operator", F::Str),
            (3, "values", F::RepStr),
        ]),
    ),
];
const CLUSTER_ROLE: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (2, "rules", F::RepMsg(POLICY_RULE)),
    (
        3,
        "aggregationRule",
        F::Msg(&[(1, "clusterRoleSelectors", F::RepMsg(LABEL_SELECTOR))]),
    ),
];
const ROLE_BINDING: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "subjects",
        F::RepMsg(&[
            (1, "kind", F::Str),
            (2, "apiGroup", F::Str),
            (3, "name", F::Str),
            (4, "namespace", F::Str),
        ]),
    ),
    (
        3,
        "roleRef",
        F::Msg(&[(1, "apiGroup", F::Str), (2, "kind", F::Str), (3, "name", F::Str)]),
    ),
];
const CONTAINER: Schema = &[
    (1, "name", F::Str),
    (2, "image", F::Str),
    (3, "command", F::RepStr),
    (4, "args", F::RepStr),
    (5, "workingDir", F::Str),
    (
        6,
        "ports",
        F::RepMsg(&[
            (1, "name", F::Str),
            (2, "hostPort", F::IntNonZero),
            (3, "containerPort", F::Int),
            (4, "protocol", F::Str),
            (5, "hostIP", F::Str),
        ]),
    ),
    (7, "env", F::RepMsg(&[(1, "name", F::Str), (2, "value", F::Str)])),
    // kubectl sends an empty ResourceRequirements; quantities are not decoded.
    (8, "resources", F::Msg(&[])),
    (
        9,
        "volumeMounts",
        F::RepMsg(&[
            (1, "name", F::Str),
            (2, "readOnly", F::True),
            (3, "mountPath", F::Str),
            (4, "subPath", F::Str),
        ]),
    ),
    (13, "terminationMessagePath", F::Str),
    (14, "imagePullPolicy", F::Str),
    (16, "stdin", F::True),
    (17, "stdinOnce", F::True),
    (18, "tty", F::True),
    (20, "terminationMessagePolicy", F::Str),
];
const POD_SPEC: Schema = &[
    (2, "containers", F::RepMsg(CONTAINER)),
    (3, "restartPolicy", F::Str),
    (4, "terminationGracePeriodSeconds", F::Int),
    (6, "dnsPolicy", F::Str),
    (7, "nodeSelector", F::MapStr),
    (8, "serviceAccountName", F::Str),
    (11, "hostNetwork", F::True),
    (15, "imagePullSecrets", F::RepMsg(LOCAL_REF)),
    (19, "schedulerName", F::Str),
    (20, "initContainers", F::RepMsg(CONTAINER)),
    (21, "automountServiceAccountToken", F::Bool),
];
const DEPLOYMENT: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[
            (1, "replicas", F::Int),
            (2, "selector", F::Msg(LABEL_SELECTOR)),
            (
                3,
                "template",
                F::Msg(&[
                    (1, "metadata", F::Msg(OBJECT_META)),
                    (2, "spec", F::Msg(POD_SPEC)),
                ]),
            ),
            (
                4,
                "strategy",
                F::Msg(&[
                    (1, "type", F::Str),
                    (
                        2,
                        "rollingUpdate",
                        F::Msg(&[
                            (1, "maxUnavailable", F::IntOrString),
                            (2, "maxSurge", F::IntOrString),
                        ]),
                    ),
                ]),
            ),
            (5, "minReadySeconds", F::IntNonZero),
            (6, "revisionHistoryLimit", F::Int),
            (7, "paused", F::True),
            (9, "progressDeadlineSeconds", F::Int),
        ]),
    ),
];
const SERVICE: Schema = &[
    (1, "metadata", F::Msg(OBJECT_META)),
    (
        2,
        "spec",
        F::Msg(&[
            (
                1,
                "ports",
                F::RepMsg(&[
                    (1, "name", F::Str),
                    (2, "protocol", F::Str),
                    (3, "port", F::Int),
                    (4, "targetPort", F::IntOrString),
                    (5, "nodePort", F::IntNonZero),
                    (6, "appProtocol", F::Str),
                ]),
            ),
            (2, "selector", F::MapStr),
            (3, "clusterIP", F::Str),
            (4, "type", F::Str),
            (5, "externalIPs", F::RepStr),
            (7, "sessionAffinity", F::Str),
            (10, "externalName", F::Str),
            (11, "externalTrafficPolicy", F::Str),
            (13, "publishNotReadyAddresses", F::True),
            (17, "ipFamilies", F::RepStr),
            (18, "clusterIPs", F::RepStr),
            (19, "ipFamilyPolicy", F::Str),
            (22, "internalTrafficPolicy", F::Str),
        ]),
    ),
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
        "CertificateSigningRequest" => CERTIFICATE_SIGNING_REQUEST,
        "DeleteOptions" => DELETE_OPTIONS,
        "Role" => ROLE,
        "ClusterRole" => CLUSTER_ROLE,
        "RoleBinding" | "ClusterRoleBinding" => ROLE_BINDING,
        "Deployment" => DEPLOYMENT,
        "Service" => SERVICE,
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
    let mut obj = message(raw, schema, "").map_err(|e| match e {
        ProtoError::UnsupportedField { at, field, .. } => ProtoError::UnsupportedField {
            kind: kind.clone(),
            at,
            field,
        },
        other => other,
    })?;
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

/// The message in `buf` as JSON; `at` is its field path, for the error naming a field this
/// server cannot decode.
fn message(buf: &[u8], schema: Schema, at: &str) -> Result<Map<String, Value>, ProtoError> {
    let mut out = Map::new();
    for (num, wire) in Fields(buf) {
        let wire = wire?;
        let Some((_, name, f)) = schema.iter().find(|(n, _, _)| *n == num) else {
            // Go marshals zero values too (an empty status); only one that holds something is lost.
            if is_zero(&wire) {
                continue;
            }
            return Err(ProtoError::UnsupportedField {
                kind: String::new(),
                at: at.to_string(),
                field: num,
            });
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
            (F::IntNonZero, Wire::Varint(0)) | (F::True, Wire::Varint(0)) => {}
            (F::IntNonZero, Wire::Varint(v)) => {
                out.insert(name, json!(v as i64));
            }
            (F::Bool | F::True, Wire::Varint(v)) => {
                out.insert(name, json!(v != 0));
            }
            (F::IntOrString, Wire::Len(b)) => {
                out.insert(name, int_or_string(b)?);
            }
            (F::RepStr, Wire::Len(b)) => push(&mut out, name, text(b)),
            (F::MapStr | F::MapBytes, Wire::Len(b)) => {
                let schema = if matches!(f, F::MapStr) {
                    MAP_STR
                } else {
                    MAP_BYTES
                };
                let entry = message(b, schema, &join(at, &name))?;
                let key = entry.get("k").and_then(Value::as_str).unwrap_or("").to_string();
                let value = entry.get("v").cloned().unwrap_or(json!(""));
                let map = out.entry(name).or_insert_with(|| json!({}));
                map[key] = value;
            }
            (F::MicroTime, Wire::Len(b)) => {
                out.insert(name, json!(time_of(b, true)?));
            }
            (F::Unchanged, _) => {}
            (F::Time, Wire::Len(b)) => {
                out.insert(name, json!(time_of(b, false)?));
            }
            (F::Msg(s), Wire::Len(b)) => {
                let inner = message(b, s, &join(at, &name))?;
                out.insert(name, Value::Object(inner));
            }
            (F::RepMsg(s), Wire::Len(b)) => {
                let inner = message(b, s, &join(at, &name))?;
                push(&mut out, name, Value::Object(inner));
            }
            _ => return Err(ProtoError::Malformed),
        }
    }
    Ok(out)
}

/// Whether a field holds a zero value: 0, empty, or a message of zero fields.
fn is_zero(wire: &Wire) -> bool {
    match wire {
        Wire::Varint(v) => *v == 0,
        Wire::Len(b) => Fields(b).all(|(_, f)| f.is_ok_and(|f| is_zero(&f))),
        Wire::Fixed => false,
    }
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

/// `intstr.IntOrString`: type 1 is the string form, anything else the integer.
fn int_or_string(b: &[u8]) -> Result<Value, ProtoError> {
    let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
    for (num, wire) in Fields(b) {
        match (num, wire?) {
            (1, Wire::Varint(t)) => is_string = t == 1,
            (2, Wire::Varint(v)) => int = i64::from(v as i32),
            (3, Wire::Len(s)) => string = String::from_utf8_lossy(s).into_owned(),
            _ => {}
        }
    }
    Ok(if is_string { json!(string) } else { json!(int) })
}

/// RFC 3339, as `metav1.MicroTime` (`micro`, with microseconds) or `metav1.Time` marshal to
/// JSON.
fn time_of(b: &[u8], micro: bool) -> Result<String, ProtoError> {
    let (mut seconds, mut nanos) = (0i64, 0i64);
    for (num, wire) in Fields(b) {
        match (num, wire?) {
            (1, Wire::Varint(v)) => seconds = v as i64,
            (2, Wire::Varint(v)) => nanos = v as i64,
            _ => {}
        }
    }
    let t = time::OffsetDateTime::from_unix_timestamp(seconds).map_err(|_| ProtoError::Malformed)?;
    let seconds = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
    );
    Ok(if micro {
        format!("{seconds}.{:06}Z", nanos / 1000)
    } else {
        format!("{seconds}Z")
    })
}

fn push(out: &mut Map<String, Value>, name: String, v: Value) {
    if let Some(list) = out.entry(name).or_insert_with(|| json!([])).as_array_mut() {
        list.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field (numbers and lengths below 128).
    fn len(num: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![num << 3 | 2, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    fn envelope(kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [len(1, b"v1"), len(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), len(1, &type_meta), len(2, raw)].concat()
    }

    #[test]
    fn a_service_accounts_secrets_are_decoded() {
        let meta = len(1, b"app");
        let secret = len(3, b"app-config-secret");
        let raw = [len(1, &meta), len(2, &secret)].concat();
        let object = decode(&envelope("ServiceAccount", &raw)).expect("decoded");
        assert_eq!(object["secrets"], json!([{"name": "app-config-secret"}]));
    }

    #[test]
    fn a_field_it_cannot_decode_is_refused_unless_it_is_zero() {
        let meta = len(1, b"app");
        let empty_status = len(1, b"");
        let zero = [len(1, &meta), len(9, &empty_status)].concat();
        assert!(
            decode(&envelope("ServiceAccount", &zero)).is_ok(),
            "a zero value is no loss"
        );
        let lost = [len(1, &meta), len(9, b"\x0a\x03abc")].concat();
        let error = decode(&envelope("ServiceAccount", &lost)).expect_err("refused");
        assert!(error.to_string().contains("field number 9"), "{error}");
    }
}
