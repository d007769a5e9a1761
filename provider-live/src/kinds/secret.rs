//! `kubernetes_secret`: a Secret. `data` holds plain text (sent base64-encoded),
//! `binary_data` base64 text sent as is; both land in the Secret's `data`.
//!
//! `data_wo` and `binary_data_wo` are the same maps as write-only attributes, for secrets that
//! must never reach a plan or state file: the engine sends them in the configuration only.
//! Every write merges them into the Secret's `data`; a change of `data_wo_revision` or
//! `binary_data_wo_revision` (ordinary attributes, kept in state) is what plans a write once
//! they changed. While either is in use, `data` and `binary_data` read back only the keys they
//! set themselves, so the write-only keys stay out of state too. [`SecretResource`] wraps the
//! typed resource to carry the write-only values from the configuration into the write and to
//! keep them null everywhere else.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, Diagnostic, Diagnostics, IdentitySchema,
    ImportRequest, ImportResponse, MoveSource, PlanRequest, PlanResponse, ReadRequest, ReadResponse,
    Resource, Schema, StateUpgrade, Type, Value,
};
use serde_json::{Map, Value as Json};

use super::read_string_map;
use crate::context::Context;
use crate::discovery::Resolved;
use crate::kind::{Behaviour, Kind, KindInfo, MetadataShape, api_resource};
use crate::list::Listable;
use crate::objects::{self, Target};
use crate::resource::TypedResource;
use crate::timeouts;

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_secret",
    aliases: &["kubernetes_secret_v1"],
    api_version: "v1",
    kind: "Secret",
    plural: "secrets",
    namespaced: true,
    description: "The resource provides mechanisms to inject containers with sensitive information, such \
                  as passwords, while keeping containers agnostic of Kubernetes. The secret carries the \
                  estate label `tofu-estate`.",
    metadata: MetadataShape::block(true),
};

const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
const DEFAULT_CREATE_TIMEOUT: Duration = Duration::from_secs(60);

/// The write-only maps, each with the revision attribute whose change sends it again.
const WRITE_ONLY: [(&str, &str); 2] = [
    ("data_wo", "data_wo_revision"),
    ("binary_data_wo", "binary_data_wo_revision"),
];

/// The maps that land in the Secret's `data`, in the order their keys are claimed, and
/// whether their values are base64 already.
const DATA_MAPS: [(&str, bool); 4] = [
    ("data", false),
    ("binary_data", true),
    ("data_wo", false),
    ("binary_data_wo", true),
];

/// A write-only attribute: the engine keeps its value out of plan and state.
fn write_only(attribute: Attribute) -> Attribute {
    Attribute {
        write_only: true,
        ..attribute
    }
}

pub struct Secret;

impl Kind for Secret {
    fn info(&self) -> &'static KindInfo {
        &INFO
    }

    fn block(&self) -> Block {
        Block::new(INFO.description)
            // Optional and computed, as hashicorp's (resource_kubernetes_secret_v1.go:64): a
            // Secret the server fills (a service account's token) keeps what it holds.
            .attribute(
                Attribute::optional_computed("data", Type::map(Type::String), "A map of the secret data.").sensitive(),
            )
            .attribute(
                Attribute::optional(
                    "binary_data",
                    Type::map(Type::String),
                    "A map of the secret data in base64 encoding. Use this for binary data.",
                )
                .sensitive(),
            )
            .attribute(write_only(
                Attribute::optional(
                    "data_wo",
                    Type::map(Type::String),
                    "A write-only map of the secret data: never stored in plan or state. A changed value is \
                     sent when `data_wo_revision` changes.",
                )
                .sensitive(),
            ))
            .attribute(Attribute::optional(
                "data_wo_revision",
                Type::Number,
                "The current revision of the write-only `data_wo` attribute. Incrementing this integer \
                 value sends the write-only value again.",
            ))
            .attribute(write_only(
                Attribute::optional(
                    "binary_data_wo",
                    Type::map(Type::String),
                    "A write-only map of the secret data in base64 encoding: never stored in plan or state. \
                     A changed value is sent when `binary_data_wo_revision` changes.",
                )
                .sensitive(),
            ))
            .attribute(Attribute::optional(
                "binary_data_wo_revision",
                Type::Number,
                "The current revision of the write-only `binary_data_wo` attribute. Incrementing this \
                 integer value sends the write-only value again.",
            ))
            .attribute(Attribute::optional(
                "immutable",
                Type::Bool,
                "Ensures that data stored in the Secret cannot be updated (only object metadata can be modified).",
            ))
            .attribute(Attribute::optional_computed("type", Type::String, "Type of secret. Default `Opaque`."))
            .attribute(Attribute::optional(
                "wait_for_service_account_token",
                Type::Bool,
                "Wait for the service account token to be created (type `kubernetes.io/service-account-token`). \
                 Default true.",
            ))
            .block(timeouts::block(&["create"]))
    }

    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut out = Map::new();
        if let Some(data) = merged_data(value)? {
            out.insert("data".into(), Json::Object(data));
        }
        if let Some(t) = value.get("type").as_str() {
            out.insert("type".into(), Json::from(t));
        }
        if let Some(immutable) = value.get("immutable").as_bool() {
            out.insert("immutable".into(), Json::Bool(immutable));
        }
        Ok(out)
    }

    fn from_object(&self, object: &Json, prior: &Value) -> Value {
        // Keys the prior holds as binary stay binary; others show as text when they are UTF-8.
        let binary_keys = prior.get("binary_data").entries().cloned().unwrap_or_default();
        let (mut text, mut binary) = (Map::new(), Map::new());
        for (k, v) in object.get("data").and_then(Json::as_object).into_iter().flatten() {
            let Some(encoded) = v.as_str() else { continue };
            let decoded = STANDARD
                .decode(encoded)
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            match decoded {
                Some(plain) if !binary_keys.contains_key(k) => text.insert(k.clone(), Json::from(plain)),
                _ => binary.insert(k.clone(), Json::from(encoded)),
            };
        }
        let (data, binary_data) = if write_only_in_use(prior) {
            (
                managed_only(&text, prior.get("data")),
                managed_only(&binary, prior.get("binary_data")),
            )
        } else {
            // The token controller's keys are the point of such a Secret: `data` reads whole,
            // as an import reads it (no prior), where the configuration leaves it to the cluster.
            let data_prior = if filled_by_cluster(object, prior) {
                &Value::Null
            } else {
                prior
            };
            (
                read_string_map(Some(&Json::Object(text)), data_prior, "data"),
                read_string_map(Some(&Json::Object(binary)), prior, "binary_data"),
            )
        };
        Value::object([
            ("data", data),
            ("binary_data", binary_data),
            ("data_wo_revision", prior.get("data_wo_revision").clone()),
            (
                "binary_data_wo_revision",
                prior.get("binary_data_wo_revision").clone(),
            ),
            (
                "immutable",
                Value::from(object.get("immutable").and_then(Json::as_bool)),
            ),
            (
                "type",
                Value::from(object.get("type").and_then(Json::as_str).map(str::to_string)),
            ),
            (
                "wait_for_service_account_token",
                prior.get("wait_for_service_account_token").clone(),
            ),
            ("timeouts", prior.get("timeouts").clone()),
        ])
    }
}

#[async_trait::async_trait]
impl Behaviour for Secret {
    fn replaced_after(&self, prior: &Value) -> Vec<plugin_runtime::AttributePath> {
        super::immutable_contents(prior)
    }

    fn server_filled(&self, live: &Json) -> &'static [&'static str] {
        if is_token(live) { &["data"] } else { &[] }
    }

    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if !is_token(object) || planned.get("wait_for_service_account_token").as_bool() == Some(false) {
            return Ok(None);
        }
        let target = Target::of(api_resource(&INFO), object);
        let timeout = timeouts::of(planned, "create", DEFAULT_CREATE_TIMEOUT);
        let has_token = |s: Option<&Json>| s.and_then(|s| s.pointer("/data/token")).is_some();
        objects::wait_until(
            client,
            &target,
            timeout,
            "receive its service account token",
            has_token,
        )
        .await
        .map_err(Diagnostic::from)
    }
}

/// Whether the Secret is a service account's token, which the token controller fills.
fn is_token(object: &Json) -> bool {
    object.get("type").and_then(Json::as_str) == Some(TOKEN_TYPE)
}

/// Whether `data` is the token controller's: a token Secret whose configuration leaves `data`
/// to the cluster, so the prior holds none or the unknown a create plans. A prior that holds
/// the keys reads them as any map does.
fn filled_by_cluster(object: &Json, prior: &Value) -> bool {
    let data = prior.get("data");
    is_token(object) && (data.is_null() || data.is_unknown())
}

/// Why a Secret's data cannot be written as configured. Messages name keys, never values.
#[derive(Debug, thiserror::Error)]
enum DataError {
    #[error("{key:?} is set in both {first} and {attribute}.")]
    Duplicate {
        key: String,
        first: &'static str,
        attribute: &'static str,
    },
    #[error("The value of {key:?} in {attribute} is not base64 text.")]
    NotBase64 { key: String, attribute: &'static str },
}

impl From<DataError> for Diagnostic {
    fn from(e: DataError) -> Diagnostic {
        let (summary, key, attribute) = match &e {
            DataError::Duplicate { key, attribute, .. } => ("Duplicate secret key", key, attribute),
            DataError::NotBase64 { key, attribute } => ("Invalid base64", key, attribute),
        };
        let path = AttributePath::root(attribute).key(key);
        Diagnostic::error(summary, e.to_string()).at(path)
    }
}

/// The Secret's `data` (base64 values) from `data`, `binary_data`, `data_wo` and
/// `binary_data_wo` together; `None` when all four are null. A key may come from one of them
/// only.
fn merged_data(value: &Value) -> Result<Option<Map<String, Json>>, Diagnostics> {
    let mut data = Map::new();
    let mut claimed: BTreeMap<&str, &'static str> = BTreeMap::new();
    let mut errors = Diagnostics::new();
    for (attribute, encoded) in DATA_MAPS {
        for (key, v) in value.get(attribute).entries().into_iter().flatten() {
            let Some(text) = v.as_str() else { continue };
            if let Some(first) = claimed.get(key.as_str()) {
                errors.push(
                    DataError::Duplicate {
                        key: key.clone(),
                        first,
                        attribute,
                    }
                    .into(),
                );
            } else if encoded && STANDARD.decode(text).is_err() {
                errors.push(
                    DataError::NotBase64 {
                        key: key.clone(),
                        attribute,
                    }
                    .into(),
                );
            } else {
                let sent = if encoded {
                    text.to_string()
                } else {
                    STANDARD.encode(text)
                };
                data.insert(key.clone(), Json::from(sent));
                claimed.insert(key, attribute);
            }
        }
    }
    if errors.has_errors() {
        return Err(errors);
    }
    let any = DATA_MAPS
        .iter()
        .any(|(attribute, _)| !value.get(attribute).is_null());
    Ok(any.then_some(data))
}

/// Whether a resource value uses the write-only maps: the planned value of an apply holds
/// them, a stored state only their revisions.
fn write_only_in_use(value: &Value) -> bool {
    WRITE_ONLY
        .iter()
        .any(|(map, revision)| !value.get(map).is_null() || !value.get(revision).is_null())
}

/// The live entries whose keys the prior map holds (null when the prior holds no map): with
/// write-only data in the same Secret, every other key may be a write-only one.
fn managed_only(live: &Map<String, Json>, prior: &Value) -> Value {
    let Some(prior) = prior.entries() else {
        return Value::Null;
    };
    Value::string_map(
        live.iter()
            .filter(|(k, _)| prior.contains_key(*k))
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))),
    )
}

/// `value` with its write-only attributes null, as every plan and state must have them.
fn without_write_only(mut value: Value) -> Value {
    if !value.is_null() {
        for (map, _) in WRITE_ONLY {
            value.set(map, Value::Null);
        }
    }
    value
}

/// `proposed` whose `data`, which the configuration leaves out and the prior keeps (it is
/// computed), no longer holds the keys `binary_data` now names: an import read them as text.
/// With none left it is null, as a create leaves it.
fn kept_data(mut proposed: Value, config: &Value) -> Value {
    if !config.get("data").is_null() {
        return proposed;
    }
    let binary = proposed.get("binary_data").entries().cloned().unwrap_or_default();
    if let Some(data) = proposed
        .get("data")
        .entries()
        .filter(|d| d.keys().any(|k| binary.contains_key(k)))
    {
        let kept: std::collections::BTreeMap<String, Value> = data
            .iter()
            .filter(|(k, _)| !binary.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // None left: as a create leaves it, null.
        proposed.set(
            "data",
            if kept.is_empty() {
                Value::Null
            } else {
                Value::Map(kept)
            },
        );
    }
    proposed
}

/// A planned value with the write-only values of `config`, for the write to send them.
fn with_write_only(mut planned: Value, config: &Value) -> Value {
    if !planned.is_null() {
        for (map, _) in WRITE_ONLY {
            planned.set(map, config.get(map).clone());
        }
    }
    planned
}

/// The configuration checks of the write-only attributes (hashicorp's: a revision is at least
/// 1, and set whenever its map is), and of all four data maps once they are known.
fn validate_write_only(config: &Value) -> Diagnostics {
    let mut out = Diagnostics::new();
    for (map, revision) in WRITE_ONLY {
        let path = AttributePath::root(revision);
        let number = config.get(revision);
        let whole_and_positive = match number.plain() {
            Value::Number(n) => n.as_f64() >= 1.0 && n.as_f64().fract() == 0.0,
            _ => true,
        };
        if !whole_and_positive {
            out.push(
                Diagnostic::error(
                    "Invalid revision",
                    format!("{revision} must be a whole number of at least 1."),
                )
                .at(path.clone()),
            );
        }
        if !config.get(map).is_null() && number.is_null() {
            out.push(
                Diagnostic::error(
                    "Missing revision",
                    format!(
                        "{map} is set, so {revision} must be too (all of `{map},{revision}` must be \
                         specified). {map} is never stored, so only a change of {revision} tells a \
                         later plan that {map} changed."
                    ),
                )
                .at(path),
            );
        }
    }
    let maps_known = DATA_MAPS
        .iter()
        .all(|(attribute, _)| config.get(attribute).is_wholly_known());
    if maps_known && let Err(errors) = merged_data(config) {
        out.extend(errors);
    }
    out
}

/// `kubernetes_secret` as served: the typed resource, with the write-only values taken from
/// the configuration into each write and kept out of every plan, state and import.
pub struct SecretResource {
    typed: TypedResource<Secret>,
}

impl SecretResource {
    pub fn new(ctx: Arc<Context>) -> SecretResource {
        SecretResource {
            typed: TypedResource::new(Secret, ctx),
        }
    }
}

#[async_trait]
impl Resource for SecretResource {
    fn type_name(&self) -> &'static str {
        self.typed.type_name()
    }

    fn aliases(&self) -> &'static [&'static str] {
        self.typed.aliases()
    }

    fn schema(&self) -> Schema {
        self.typed.schema()
    }

    fn legacy_type_system(&self) -> bool {
        self.typed.legacy_type_system()
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = self.typed.validate(config);
        out.extend(validate_write_only(config));
        out
    }

    async fn plan(&self, mut req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        req.proposed_new_state = kept_data(without_write_only(req.proposed_new_state), &req.config);
        let mut response = self.typed.plan(req).await?;
        response.planned_state = without_write_only(response.planned_state);
        Ok(response)
    }

    async fn apply(&self, mut req: ApplyRequest) -> ApplyResponse {
        req.planned_state = with_write_only(req.planned_state, &req.config);
        let mut response = self.typed.apply(req).await;
        response.new_state = without_write_only(response.new_state);
        response
    }

    async fn read(&self, req: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        let mut response = self.typed.read(req).await?;
        response.new_state = without_write_only(response.new_state);
        Ok(response)
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let mut response = self.typed.import(req).await?;
        for imported in &mut response.imported {
            imported.state = without_write_only(std::mem::take(&mut imported.state));
        }
        Ok(response)
    }

    fn upgrade_state(&self, version: i64, state: Value) -> Result<Value, Diagnostics> {
        self.typed.upgrade_state(version, state)
    }

    fn state_upgrades(&self) -> Vec<StateUpgrade> {
        self.typed.state_upgrades()
    }

    fn accepts_move(&self, source: &MoveSource<'_>) -> bool {
        self.typed.accepts_move(source)
    }

    fn identity_schema(&self) -> Option<IdentitySchema> {
        self.typed.identity_schema()
    }

    fn identity(&self, state: &Value) -> Option<Value> {
        self.typed.identity(state)
    }

    fn import_id(&self, identity: &Value) -> Result<String, Diagnostics> {
        self.typed.import_id(identity)
    }
}

#[async_trait]
impl Listable for SecretResource {
    async fn collection(&self, ctx: &Context, config: &Value) -> Result<Resolved, Diagnostics> {
        self.typed.collection(ctx, config).await
    }

    /// As [`Resource::import`] makes it: write-only values never in state.
    fn imported_state(&self, live: &Json) -> Value {
        without_write_only(self.typed.imported_state(live))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(data: Value, binary: Value) -> Value {
        Value::object([
            ("data", data),
            ("binary_data", binary),
            ("data_wo_revision", Value::Null),
            ("binary_data_wo_revision", Value::Null),
            ("immutable", Value::Null),
            ("type", Value::string("Opaque")),
            ("wait_for_service_account_token", Value::Null),
            ("timeouts", Value::Null),
        ])
    }

    #[test]
    fn data_is_encoded_and_read_back_as_text() {
        let v = value(
            Value::string_map([("user", "admin")]),
            Value::string_map([("bin", "AAE=")]),
        );
        let object = Json::Object(Secret.to_object(&v).unwrap());
        assert_eq!(
            object,
            json!({"data": {"user": "YWRtaW4=", "bin": "AAE="}, "type": "Opaque"})
        );
        assert_eq!(Secret.from_object(&object, &v), v);
    }

    #[test]
    fn data_kept_from_the_prior_leaves_the_keys_binary_data_names() {
        let proposed = value(
            Value::string_map([("a", "x"), ("k", "y")]),
            Value::string_map([("k", "eQ==")]),
        );
        let config = value(Value::Null, Value::string_map([("k", "eQ==")]));
        let planned = kept_data(proposed, &config);
        assert_eq!(planned.get("data"), &Value::string_map([("a", "x")]));
        let empty = value(
            Value::string_map::<[(&str, &str); 0], _, _>([]),
            Value::string_map([("k", "eQ==")]),
        );
        assert_eq!(
            kept_data(empty.clone(), &config),
            empty,
            "hashicorp's empty data stays"
        );
    }

    #[test]
    fn import_splits_text_from_binary() {
        let object = json!({"data": {"user": "YWRtaW4=", "bin": "/w=="}, "type": "Opaque"});
        let got = Secret.from_object(&object, &Value::Null);
        assert_eq!(got.get("data"), &Value::string_map([("user", "admin")]));
        assert_eq!(got.get("binary_data"), &Value::string_map([("bin", "/w==")]));
    }

    #[test]
    fn the_schema_has_hashicorps_write_only_attributes() {
        let block = Secret.block();
        for name in ["data_wo", "binary_data_wo"] {
            let a = block.find_attribute(name).unwrap();
            assert!(a.write_only && a.sensitive && a.optional && !a.computed, "{name}");
            assert_eq!(a.ty, Type::map(Type::String));
        }
        for name in ["data_wo_revision", "binary_data_wo_revision"] {
            let a = block.find_attribute(name).unwrap();
            assert!(!a.write_only && a.optional && !a.computed, "{name}");
            assert_eq!(a.ty, Type::Number);
        }
    }

    /// A configuration (or the planned value of an apply) with write-only data.
    fn with_secrets() -> Value {
        let mut v = value(Value::string_map([("user", "admin")]), Value::Null);
        v.set("data_wo", Value::string_map([("password", "hunter2")]));
        v.set("data_wo_revision", Value::int(1));
        v.set("binary_data_wo", Value::string_map([("key", "AAE=")]));
        v.set("binary_data_wo_revision", Value::int(3));
        v
    }

    #[test]
    fn write_only_data_is_merged_into_the_secret_and_never_read_back() {
        let planned = with_secrets();
        let object = Json::Object(Secret.to_object(&planned).unwrap());
        assert_eq!(
            object,
            json!({"data": {"user": "YWRtaW4=", "password": "aHVudGVyMg==", "key": "AAE="}, "type": "Opaque"})
        );
        // Read back after the write (prior: the planned value) and on refresh (prior: the
        // state, which has the revisions but never the write-only maps).
        for prior in [planned.clone(), without_write_only(planned.clone())] {
            let got = Secret.from_object(&object, &prior);
            assert_eq!(got.get("data"), &Value::string_map([("user", "admin")]));
            assert_eq!(got.get("binary_data"), &Value::Null);
            assert_eq!(got.get("data_wo_revision"), &Value::int(1));
            assert_eq!(got.get("binary_data_wo_revision"), &Value::int(3));
            assert!(got.get("data_wo").is_null() && got.get("binary_data_wo").is_null());
        }
        // `data` unset (planned unknown, as a computed attribute): nothing of the Secret shows.
        let mut only_write_only = planned.clone();
        only_write_only.set("data", Value::unknown());
        let got = Secret.from_object(&object, &only_write_only);
        assert_eq!(got.get("data"), &Value::Null);
    }

    #[test]
    fn write_only_values_go_into_the_write_and_nowhere_else() {
        let config = with_secrets();
        let planned = without_write_only(config.clone());
        assert!(planned.get("data_wo").is_null() && planned.get("binary_data_wo").is_null());
        assert_eq!(planned.get("data_wo_revision"), &Value::int(1));
        let write = with_write_only(planned.clone(), &config);
        assert_eq!(write.get("data_wo"), config.get("data_wo"));
        assert_eq!(without_write_only(write), planned);
        // A destroy has no planned value to fill.
        assert_eq!(with_write_only(Value::Null, &config), Value::Null);
        assert_eq!(without_write_only(Value::Null), Value::Null);
    }

    #[test]
    fn a_key_set_twice_is_an_error_at_the_second_place() {
        let mut v = with_secrets();
        v.set("data_wo", Value::string_map([("user", "root")]));
        let err = Secret.to_object(&v).unwrap_err();
        assert_eq!(err.0.len(), 1);
        assert_eq!(
            err.0[0].attribute.as_ref().unwrap().to_string(),
            "data_wo[\"user\"]"
        );
        assert_eq!(err.0[0].detail, "\"user\" is set in both data and data_wo.");
        assert!(!validate_write_only(&v).is_empty());
    }

    #[test]
    fn write_only_configuration_is_checked_without_showing_values() {
        assert!(validate_write_only(&with_secrets()).is_empty());
        let mut v = with_secrets();
        v.set("data_wo_revision", Value::Null);
        v.set("binary_data_wo_revision", Value::int(0));
        v.set("binary_data_wo", Value::string_map([("key", "hunter2!")]));
        let found = validate_write_only(&v);
        let paths: Vec<String> = found
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "data_wo_revision",
                "binary_data_wo_revision",
                "binary_data_wo[\"key\"]"
            ]
        );
        assert!(found.0.iter().all(|d| !d.detail.contains("hunter2")));
        // Unknown write-only values (from an ephemeral source) are checked at apply.
        let mut unknown = with_secrets();
        unknown.set("data_wo", Value::unknown());
        assert!(validate_write_only(&unknown).is_empty());
    }

    #[test]
    fn bad_binary_data_is_an_error_at_its_key() {
        let v = value(Value::Null, Value::string_map([("bin", "not base64!")]));
        let err = Secret.to_object(&v).unwrap_err();
        assert_eq!(
            err.0[0].attribute.as_ref().unwrap().to_string(),
            "binary_data[\"bin\"]"
        );
    }
}
