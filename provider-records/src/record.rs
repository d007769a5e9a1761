//! The Secret format of one recorded output: its value as JSON beside its cty type, so a
//! reader gets back exactly the type the producer recorded (a list stays a list, an object
//! an object, a big integer every digit, an empty `list(string)` or a null `map(string)`
//! keeps that type). The type is the one the producer's engine sent with the value.
//!
//! A Secret `output-<name>` in `tofu-records-<estate>` holds `data.value` (the value as
//! JSON; numbers that JSON cannot carry exactly are decimal strings) and `data.type` (cty
//! type JSON). Labels mark it as an output of the estate; annotations carry the output's
//! exact name, whether it is sensitive, and the time and serial of the apply that wrote it.
//!
//! `data.history` keeps the output's earlier versions, newest first (a JSON array of
//! `{serial, applied_at, sensitive, value, type}`), so the Secret holds the last N versions
//! of this one output and never more: a reader granted one output sees that output's past
//! only, and one GET reads a pinned version as cheaply as the current one. The history is
//! contiguous (each version replaced the one after it), so the version in force at a
//! serial is the newest kept one at or before it.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_estate::{ESTATE_LABEL, Estate};
use plugin_runtime::{Diagnostic, Number, Type, Value};
use serde_json::Value as Json;

/// Label marking a Secret as a recorded output (value `true`).
pub const OUTPUT_LABEL: &str = "tofu-records/output";
/// Annotation with the output's name as the configuration spells it.
pub const NAME_ANNOTATION: &str = "tofu-records/output-name";
pub const SENSITIVE_ANNOTATION: &str = "tofu-records/sensitive";
pub const APPLIED_AT_ANNOTATION: &str = "tofu-records/applied-at";
pub const SERIAL_ANNOTATION: &str = "tofu-records/serial";
/// The estate's head Secret (see `head`); no output's Secret is named so (theirs start with
/// `output`).
pub const HEAD_SECRET: &str = "records-head";
const VALUE_KEY: &str = "value";
const TYPE_KEY: &str = "type";
const HISTORY_KEY: &str = "history";
/// How many versions of each output are kept (the current one included) when the
/// resource's `history` does not say.
pub const DEFAULT_HISTORY: usize = 5;

/// One output as the configuration gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: String,
    pub value: Value,
    pub sensitive: bool,
}

/// When and in which apply a record was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub serial: u64,
    /// RFC 3339, UTC.
    pub applied_at: String,
}

/// An output read back from its Secret.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub output: Output,
    pub stamp: Stamp,
    /// Earlier versions, newest first.
    pub history: Vec<Version>,
}

/// One recorded version of an output.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub value: Value,
    pub sensitive: bool,
    pub stamp: Stamp,
}

impl Recorded {
    /// The version recorded last.
    pub fn current(&self) -> Version {
        Version {
            value: self.output.value.clone(),
            sensitive: self.output.sensitive,
            stamp: self.stamp.clone(),
        }
    }

    /// The version in force at the estate's `serial`: the newest kept one recorded at or
    /// before it. `Err` with the serials still kept (newest first) when the history no
    /// longer reaches back that far (or the output did not exist yet).
    pub fn at(&self, serial: u64) -> Result<Version, Vec<u64>> {
        if self.stamp.serial <= serial {
            return Ok(self.current());
        }
        self.history
            .iter()
            .find(|v| v.stamp.serial <= serial)
            .cloned()
            .ok_or_else(|| self.serials())
    }

    /// The serials of the versions kept, newest first.
    pub fn serials(&self) -> Vec<u64> {
        std::iter::once(self.stamp.serial)
            .chain(self.history.iter().map(|v| v.stamp.serial))
            .collect()
    }

    /// The history a new version of this output carries when `keep` versions are kept in
    /// all: this version first, then the earlier ones, the oldest dropped.
    pub fn history_after(&self, keep: usize) -> Vec<Version> {
        std::iter::once(self.current())
            .chain(self.history.iter().cloned())
            .take(keep.saturating_sub(1))
            .collect()
    }
}

impl Stamp {
    /// How long before `now` this version was recorded (zero when `applied_at` is in the
    /// future, e.g. another machine's clock ahead of ours).
    pub fn age(&self, now: time::OffsetDateTime) -> Result<std::time::Duration, String> {
        let at =
            time::OffsetDateTime::parse(&self.applied_at, &time::format_description::well_known::Rfc3339)
                .map_err(|e| format!("applied-at {:?} is not an RFC 3339 time: {e}", self.applied_at))?;
        Ok((now - at).try_into().unwrap_or_default())
    }
}

/// A Secret that is not a readable record.
#[derive(Debug, thiserror::Error)]
#[error("Secret \"{namespace}/{secret}\" does not hold a readable recorded output: {reason}")]
pub struct RecordError {
    pub namespace: String,
    pub secret: String,
    pub reason: String,
}

impl From<RecordError> for Diagnostic {
    fn from(e: RecordError) -> Diagnostic {
        Diagnostic::error(
            format!(
                "Cannot decode the recorded output in Secret \"{}/{}\"",
                e.namespace, e.secret
            ),
            format!("{e}. The Secret was not written by this provider, or was changed by hand."),
        )
    }
}

/// The Secret name an output is recorded under: `output-` and the name lowercased, with
/// every character other than a letter or digit turned into '-'. Distinct names that map
/// to the same Secret are refused when the configuration is validated.
pub fn secret_name(output: &str) -> String {
    let body: String = output
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let body = body.trim_end_matches('-');
    if body.is_empty() {
        "output".to_string()
    } else {
        format!("output-{body}")
    }
}

/// The label selector of an estate's output Secrets.
pub fn selector(estate: &Estate) -> String {
    format!("{},{OUTPUT_LABEL}=true", estate.selector())
}

/// The Secret recording `output` for `estate`, with its earlier versions (newest first).
pub fn to_secret(estate: &Estate, output: &Output, stamp: &Stamp, history: &[Version]) -> Secret {
    let labels = BTreeMap::from([
        (ESTATE_LABEL.to_string(), estate.as_str().to_string()),
        (OUTPUT_LABEL.to_string(), "true".to_string()),
    ]);
    let annotations = BTreeMap::from([
        (NAME_ANNOTATION.to_string(), output.name.clone()),
        (SENSITIVE_ANNOTATION.to_string(), output.sensitive.to_string()),
        (APPLIED_AT_ANNOTATION.to_string(), stamp.applied_at.clone()),
        (SERIAL_ANNOTATION.to_string(), stamp.serial.to_string()),
    ]);
    Secret {
        metadata: ObjectMeta {
            name: Some(secret_name(&output.name)),
            namespace: Some(estate.records_namespace()),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        },
        data: Some(with_history(data_of(&output.value), history)),
        type_: Some("Opaque".to_string()),
        ..Secret::default()
    }
}

fn data_of(value: &Value) -> BTreeMap<String, ByteString> {
    let value_json = serde_json::to_vec(&encode(value)).expect("JSON values always serialize");
    BTreeMap::from([
        (VALUE_KEY.to_string(), ByteString(value_json)),
        (
            TYPE_KEY.to_string(),
            ByteString(value.infer_type().to_json_bytes()),
        ),
    ])
}

/// `data` with the `history` key added, unless there is no history.
fn with_history(mut data: BTreeMap<String, ByteString>, history: &[Version]) -> BTreeMap<String, ByteString> {
    if history.is_empty() {
        return data;
    }
    let entries: Vec<Json> = history
        .iter()
        .map(|v| {
            let ty: Json =
                serde_json::from_slice(&v.value.infer_type().to_json_bytes()).expect("type JSON is JSON");
            serde_json::json!({
                "serial": v.stamp.serial,
                "applied_at": v.stamp.applied_at,
                "sensitive": v.sensitive,
                "value": encode(&v.value),
                "type": ty,
            })
        })
        .collect();
    let bytes = serde_json::to_vec(&entries).expect("JSON values always serialize");
    data.insert(HISTORY_KEY.to_string(), ByteString(bytes));
    data
}

/// The versions in a Secret's `history` key (none when it has none).
fn history_of(data: &BTreeMap<String, ByteString>) -> Result<Vec<Version>, String> {
    let Some(bytes) = data.get(HISTORY_KEY) else {
        return Ok(Vec::new());
    };
    let entries: Vec<Json> =
        serde_json::from_slice(&bytes.0).map_err(|e| format!("history is not a JSON array: {e}"))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let bad = |what: &str| format!("history[{i}] has no {what}");
            let json_bytes = |k: &str| serde_json::to_vec(&e[k]).expect("JSON values always serialize");
            Ok(Version {
                value: decode(&json_bytes("value"), &json_bytes("type"))
                    .map_err(|r| format!("history[{i}]: {r}"))?,
                sensitive: e["sensitive"].as_bool().unwrap_or(false),
                stamp: Stamp {
                    serial: e["serial"].as_u64().ok_or_else(|| bad("serial"))?,
                    applied_at: e["applied_at"]
                        .as_str()
                        .ok_or_else(|| bad("applied_at"))?
                        .to_string(),
                },
            })
        })
        .collect()
}

/// True when `secret` already records `output` exactly (value, type and sensitivity), so
/// an apply can leave it untouched. Its history is not compared: a smaller `history`
/// takes effect at the output's next change.
pub fn records_same(secret: &Secret, output: &Output) -> bool {
    let annotation = |k: &str| {
        secret
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(k))
            .map(String::as_str)
    };
    let current =
        |data: &BTreeMap<String, ByteString>| (data.get(VALUE_KEY).cloned(), data.get(TYPE_KEY).cloned());
    secret.data.as_ref().map(current) == Some(current(&data_of(&output.value)))
        && annotation(NAME_ANNOTATION) == Some(output.name.as_str())
        && annotation(SENSITIVE_ANNOTATION) == Some(if output.sensitive { "true" } else { "false" })
}

/// Reads the output a Secret records.
pub fn from_secret(secret: &Secret) -> Result<Recorded, RecordError> {
    let fail = |reason: String| RecordError {
        namespace: secret.metadata.namespace.clone().unwrap_or_default(),
        secret: secret.metadata.name.clone().unwrap_or_default(),
        reason,
    };
    let annotations = secret.metadata.annotations.clone().unwrap_or_default();
    let annotation = |k: &str| {
        annotations
            .get(k)
            .ok_or_else(|| fail(format!("annotation {k} is missing")))
    };
    let data = secret.data.clone().unwrap_or_default();
    let bytes = |k: &str| {
        data.get(k)
            .map(|b| b.0.clone())
            .ok_or_else(|| fail(format!("data key {k:?} is missing")))
    };
    let name = annotation(NAME_ANNOTATION)?.clone();
    let serial = annotation(SERIAL_ANNOTATION)?
        .parse()
        .map_err(|_| fail(format!("annotation {SERIAL_ANNOTATION} is not a number")))?;
    let applied_at = annotation(APPLIED_AT_ANNOTATION)?.clone();
    let sensitive = annotations.get(SENSITIVE_ANNOTATION).is_some_and(|s| s == "true");
    let value = decode(&bytes(VALUE_KEY)?, &bytes(TYPE_KEY)?).map_err(fail)?;
    let history = history_of(&data).map_err(fail)?;
    Ok(Recorded {
        output: Output {
            name,
            value,
            sensitive,
        },
        stamp: Stamp { serial, applied_at },
        history,
    })
}

/// A wholly known value as JSON. Numbers JSON holds exactly (64-bit integers and the
/// shortest round-tripping doubles) stay numbers; others become their decimal text.
pub fn encode(value: &Value) -> Json {
    match value {
        Value::Null | Value::Unknown(_) => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(Number::Int(i)) => Json::from(*i),
        Value::Number(Number::Float(f)) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or_else(|| Json::String(f.to_string())),
        Value::Number(Number::Decimal(text)) => Json::String(text.clone()),
        Value::String(s) => Json::String(s.clone()),
        Value::List(v) | Value::Set(v) | Value::Tuple(v) => Json::Array(v.iter().map(encode).collect()),
        Value::Map(m) | Value::Object(m) => {
            Json::Object(m.iter().map(|(k, v)| (k.clone(), encode(v))).collect())
        }
        Value::Typed(t) => encode(t.value()),
    }
}

/// The value recorded as `value_json` with type `type_json`, carrying that type wherever
/// its content does not say it (an empty list, a null), so it goes to the engine exactly
/// as the producer's engine sent it.
pub fn decode(value_json: &[u8], type_json: &[u8]) -> Result<Value, String> {
    let ty = Type::from_json_bytes(type_json).map_err(|e| e.to_string())?;
    let json: Json = serde_json::from_slice(value_json).map_err(|e| format!("value is not JSON: {e}"))?;
    Ok(Value::typed(&ty, decode_typed(&json, &ty)?))
}

fn decode_typed(json: &Json, ty: &Type) -> Result<Value, String> {
    let mismatch = || format!("{json} is not a value of type {}", ty.to_json());
    if json.is_null() {
        return Ok(Value::Null);
    }
    let each = |items: &Vec<Json>, element: &Type| -> Result<Vec<Value>, String> {
        items.iter().map(|j| decode_typed(j, element)).collect()
    };
    Ok(match (ty, json) {
        (Type::String, Json::String(s)) => Value::String(s.clone()),
        (Type::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Type::Number, Json::Number(n)) => Value::Number(Number::parse(&n.to_string()).ok_or_else(mismatch)?),
        (Type::Number, Json::String(s)) => Value::Number(Number::parse(s).ok_or_else(mismatch)?),
        (Type::List(e), Json::Array(items)) => Value::List(each(items, e)?),
        (Type::Set(e), Json::Array(items)) => Value::Set(each(items, e)?),
        (Type::Tuple(types), Json::Array(items)) if types.len() == items.len() => Value::Tuple(
            items
                .iter()
                .zip(types)
                .map(|(j, t)| decode_typed(j, t))
                .collect::<Result<_, _>>()?,
        ),
        (Type::Map(e), Json::Object(o)) => Value::Map(
            o.iter()
                .map(|(k, j)| Ok((k.clone(), decode_typed(j, e)?)))
                .collect::<Result<_, String>>()?,
        ),
        (Type::Object(attrs), Json::Object(o)) if attrs.len() == o.len() => Value::Object(
            attrs
                .iter()
                .map(|(k, t)| Ok((k.clone(), decode_typed(o.get(k).ok_or_else(mismatch)?, t)?)))
                .collect::<Result<_, String>>()?,
        ),
        (Type::Dynamic, j) => Value::from_json(j),
        _ => return Err(mismatch()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: Value) -> Value {
        let estate = Estate::parse("network").unwrap();
        let output = Output {
            name: "x".into(),
            value,
            sensitive: false,
        };
        let stamp = Stamp {
            serial: 3,
            applied_at: "2026-12-02T12:00:00Z".into(),
        };
        let secret = to_secret(&estate, &output, &stamp, &[]);
        assert!(records_same(&secret, &output));
        let back = from_secret(&secret).unwrap();
        assert_eq!(back.stamp, stamp);
        assert_eq!(back.output.name, "x");
        back.output.value
    }

    /// Asserts the value and its type both survive.
    fn survives(value: Value) {
        let back = round_trip(value.clone());
        assert_eq!(back, value);
        assert_eq!(back.infer_type(), value.infer_type());
    }

    #[test]
    fn scalars_keep_their_types() {
        survives(Value::string("gateway.platform.svc.cluster.local"));
        survives(Value::int(8080));
        survives(Value::int(-3));
        survives(Value::Number(Number::Float(0.1)));
        survives(Value::Number(Number::Float(1.5e300)));
        survives(Value::Bool(true));
        survives(Value::Bool(false));
        survives(Value::Null);
        // A string of digits stays a string, a number stays a number.
        assert_eq!(round_trip(Value::string("42")), Value::string("42"));
        assert!(matches!(round_trip(Value::int(42)), Value::Number(_)));
    }

    #[test]
    fn big_integers_keep_every_digit() {
        let big = Number::parse("123456789012345678901234567890").unwrap();
        assert!(matches!(big, Number::Decimal(_)));
        let back = round_trip(Value::Number(big.clone()));
        assert_eq!(back, Value::Number(big));
        assert_eq!(back.as_i64(), None);
        let Value::Number(n) = back else { panic!() };
        assert_eq!(n.to_string(), "123456789012345678901234567890");
        survives(Value::int(i64::MAX));
    }

    #[test]
    fn collections_keep_their_kinds() {
        survives(Value::List(vec![Value::string("a"), Value::string("b")]));
        survives(Value::Set(vec![Value::int(1), Value::int(2)]));
        survives(Value::Tuple(vec![
            Value::string("a"),
            Value::int(1),
            Value::Bool(true),
        ]));
        survives(Value::string_map([("k", "v")]));
        survives(Value::Tuple(vec![]));
        survives(Value::object(Vec::<(String, Value)>::new()));
    }

    #[test]
    fn values_keep_the_exact_type_they_were_sent_with() {
        let exact = |ty: Type, value: Value| {
            let value = Value::typed(&ty, value);
            survives(value.clone());
            let data = data_of(&value);
            assert_eq!(Type::from_json_bytes(&data["type"].0).unwrap(), ty);
        };
        exact(Type::list(Type::String), Value::List(vec![]));
        exact(Type::set(Type::String), Value::Set(vec![]));
        exact(Type::map(Type::String), Value::Map(BTreeMap::new()));
        // tomap({}): a map of `dynamic`.
        exact(Type::map(Type::Dynamic), Value::Map(BTreeMap::new()));
        exact(Type::map(Type::String), Value::Null);
        exact(Type::String, Value::Null);
        exact(
            Type::object([
                ("ids", Type::list(Type::String)),
                ("n", Type::Number),
                ("tags", Type::map(Type::String)),
            ]),
            Value::object([
                ("ids", Value::List(vec![])),
                ("n", Value::int(1)),
                ("tags", Value::Null),
            ]),
        );
        exact(
            Type::map(Type::list(Type::Number)),
            Value::Map(BTreeMap::from([
                ("a".to_string(), Value::List(vec![])),
                ("b".to_string(), Value::List(vec![Value::int(1)])),
            ])),
        );
    }

    #[test]
    fn nested_objects_survive() {
        let nested = Value::object([
            ("host", Value::string("gateway")),
            ("port", Value::int(80)),
            (
                "limits",
                Value::object([
                    ("cpu", Value::Number(Number::Float(0.5))),
                    ("tags", Value::List(vec![Value::string("a")])),
                    ("none", Value::Null),
                    (
                        "flags",
                        Value::Map(BTreeMap::from([("on".to_string(), Value::Bool(true))])),
                    ),
                ]),
            ),
        ]);
        survives(nested);
    }

    #[test]
    fn secret_carries_labels_annotations_and_data() {
        let estate = Estate::parse("network").unwrap();
        let output = Output {
            name: "gateway_host".into(),
            value: Value::string("g"),
            sensitive: true,
        };
        let stamp = Stamp {
            serial: 7,
            applied_at: "2026-12-02T12:00:00Z".into(),
        };
        let s = to_secret(&estate, &output, &stamp, &[]);
        assert_eq!(s.metadata.name.as_deref(), Some("output-gateway-host"));
        assert_eq!(s.metadata.namespace.as_deref(), Some("tofu-records-network"));
        let labels = s.metadata.labels.clone().unwrap();
        assert_eq!(labels["tofu-estate"], "network");
        assert_eq!(labels[OUTPUT_LABEL], "true");
        let ann = s.metadata.annotations.clone().unwrap();
        assert_eq!(ann[SERIAL_ANNOTATION], "7");
        assert_eq!(ann[SENSITIVE_ANNOTATION], "true");
        let data = s.data.clone().unwrap();
        assert_eq!(data["value"].0, b"\"g\"");
        assert_eq!(data["type"].0, b"\"string\"");
        assert!(from_secret(&s).unwrap().output.sensitive);
        let changed = Output {
            sensitive: false,
            ..output.clone()
        };
        assert!(!records_same(&s, &changed));
        assert_eq!(selector(&estate), "tofu-estate=network,tofu-records/output=true");
    }

    #[test]
    fn secret_names_are_dns_labels() {
        assert_eq!(secret_name("gateway_host"), "output-gateway-host");
        assert_eq!(secret_name("Namespace"), "output-namespace");
        assert_eq!(secret_name("a-b"), "output-a-b");
        assert_eq!(secret_name("x_"), "output-x");
        assert_eq!(secret_name("_"), "output");
    }

    /// The Secret recording output `n` = 1 of estate `network` at `serial`, with no history.
    fn secret_at(serial: u64) -> Secret {
        let estate = Estate::parse("network").unwrap();
        let output = Output {
            name: "n".into(),
            value: Value::int(1),
            sensitive: false,
        };
        let stamp = Stamp {
            serial,
            applied_at: "t".into(),
        };
        to_secret(&estate, &output, &stamp, &[])
    }

    #[test]
    fn undecodable_records_name_the_secret() {
        let mut s = secret_at(1);
        s.data
            .as_mut()
            .unwrap()
            .insert("type".into(), ByteString(b"\"string\"".to_vec()));
        let err = from_secret(&s).unwrap_err().to_string();
        assert!(
            err.starts_with("Secret \"tofu-records-network/output-n\" does not hold"),
            "{err}"
        );
        assert!(err.contains("is not a value of type"), "{err}");
        s.data
            .as_mut()
            .unwrap()
            .insert("type".into(), ByteString(b"[\"nonsense\"]".to_vec()));
        assert!(from_secret(&s).is_err());
        s.data = None;
        assert!(
            from_secret(&s)
                .unwrap_err()
                .to_string()
                .contains("data key \"value\" is missing")
        );
    }

    /// The Secret of output "host" after `values` were recorded at serials 1, 2, ... in
    /// turn, each new version carrying the history `keep` allows.
    fn recorded_in_turn(values: &[&str], keep: usize) -> Recorded {
        let estate = Estate::parse("network").unwrap();
        let mut last: Option<Recorded> = None;
        for (i, v) in values.iter().enumerate() {
            let output = Output {
                name: "host".into(),
                value: Value::string(*v),
                sensitive: i == 0,
            };
            let stamp = Stamp {
                serial: i as u64 + 1,
                applied_at: format!("2026-12-02T12:00:0{}Z", i + 1),
            };
            let history = last.map(|r| r.history_after(keep)).unwrap_or_default();
            let secret = to_secret(&estate, &output, &stamp, &history);
            assert!(records_same(&secret, &output));
            last = Some(from_secret(&secret).unwrap());
        }
        last.unwrap()
    }

    #[test]
    fn history_keeps_the_last_versions_newest_first() {
        let r = recorded_in_turn(&["a", "b", "c"], 5);
        assert_eq!(r.output.value, Value::string("c"));
        assert_eq!(r.serials(), [3, 2, 1]);
        let old: Vec<&Value> = r.history.iter().map(|v| &v.value).collect();
        assert_eq!(old, [&Value::string("b"), &Value::string("a")]);
        // Each version keeps its own stamp and sensitivity.
        assert_eq!(r.history[1].stamp.applied_at, "2026-12-02T12:00:01Z");
        assert!(r.history[1].sensitive && !r.history[0].sensitive);

        // Trimmed to `keep` versions in all, the current one included.
        let r = recorded_in_turn(&["a", "b", "c", "d", "e", "f", "g"], 3);
        assert_eq!(r.serials(), [7, 6, 5]);
        assert_eq!(recorded_in_turn(&["a", "b"], 1).serials(), [2]);
    }

    #[test]
    fn a_serial_reads_the_version_in_force_then() {
        let r = recorded_in_turn(&["a", "b", "c", "d"], 3);
        assert_eq!(r.at(4).unwrap().value, Value::string("d"));
        // The estate moved on without changing this output: still "d".
        assert_eq!(r.at(9).unwrap().value, Value::string("d"));
        assert_eq!(r.at(2).unwrap().value, Value::string("b"));
        assert_eq!(r.at(2).unwrap().stamp.serial, 2);
        // Serial 1 is gone from the history: the error says which remain.
        assert_eq!(r.at(1).unwrap_err(), [4, 3, 2]);
        assert_eq!(r.at(0).unwrap_err(), [4, 3, 2]);
    }

    #[test]
    fn a_stamp_knows_its_age() {
        let stamp = Stamp {
            serial: 1,
            applied_at: "2026-12-01T10:00:00Z".into(),
        };
        let now = time::macros::datetime!(2026-12-02 12:30:00 UTC);
        assert_eq!(
            stamp.age(now).unwrap(),
            std::time::Duration::from_secs(26 * 3600 + 1800)
        );
        let future = time::macros::datetime!(2026-12-01 09:00:00 UTC);
        assert_eq!(stamp.age(future).unwrap(), std::time::Duration::ZERO);
        let bad = Stamp {
            serial: 1,
            applied_at: "yesterday".into(),
        };
        assert!(
            bad.age(now)
                .unwrap_err()
                .contains("\"yesterday\" is not an RFC 3339 time")
        );
    }

    #[test]
    fn a_broken_history_names_the_secret() {
        let mut s = secret_at(2);
        s.data.as_mut().unwrap().insert(
            "history".into(),
            ByteString(br#"[{"value":1,"type":"number"}]"#.to_vec()),
        );
        let err = from_secret(&s).unwrap_err().to_string();
        assert!(err.contains("history[0] has no serial"), "{err}");
    }
}
