//! `kubernetes_secret`: a Secret. `data` holds plain text (sent base64-encoded),
//! `binary_data` base64 text sent as is; both land in the Secret's `data`.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use plugin_runtime::{Attribute, AttributePath, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use super::read_string_map;
use crate::kind::{Behaviour, Kind, KindInfo};
use crate::objects::{self, Target};
use crate::resource::api_resource;
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
};

const TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
const DEFAULT_CREATE_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Secret;

impl Kind for Secret {
    fn info(&self) -> &'static KindInfo {
        &INFO
    }

    fn block(&self) -> Block {
        Block::new(INFO.description)
            .attribute(Attribute::optional("data", Type::map(Type::String), "A map of the secret data.").sensitive())
            .attribute(
                Attribute::optional(
                    "binary_data",
                    Type::map(Type::String),
                    "A map of the secret data in base64 encoding. Use this for binary data.",
                )
                .sensitive(),
            )
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
        let mut data = Map::new();
        let mut errors = Diagnostics::new();
        for (k, v) in value.get("data").entries().into_iter().flatten() {
            if let Some(text) = v.as_str() {
                data.insert(k.clone(), Json::from(STANDARD.encode(text)));
            }
        }
        for (k, v) in value.get("binary_data").entries().into_iter().flatten() {
            let Some(text) = v.as_str() else { continue };
            let path = AttributePath::root("binary_data").key(k);
            if data.contains_key(k) {
                errors.push(
                    Diagnostic::error(
                        "Duplicate secret key",
                        format!("{k:?} is set in both data and binary_data."),
                    )
                    .at(path),
                );
            } else if STANDARD.decode(text).is_err() {
                errors.push(
                    Diagnostic::error(
                        "Invalid base64",
                        format!("The value of {k:?} is not base64 text."),
                    )
                    .at(path),
                );
            } else {
                data.insert(k.clone(), Json::from(text));
            }
        }
        if errors.has_errors() {
            return Err(errors);
        }
        let mut out = Map::new();
        if !value.get("data").is_null() || !value.get("binary_data").is_null() {
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
        Value::object([
            ("data", read_string_map(Some(&Json::Object(text)), prior, "data")),
            (
                "binary_data",
                read_string_map(Some(&Json::Object(binary)), prior, "binary_data"),
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
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        let is_token = object.get("type").and_then(Json::as_str) == Some(TOKEN_TYPE);
        if !is_token || planned.get("wait_for_service_account_token").as_bool() == Some(false) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(data: Value, binary: Value) -> Value {
        Value::object([
            ("data", data),
            ("binary_data", binary),
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
    fn import_splits_text_from_binary() {
        let object = json!({"data": {"user": "YWRtaW4=", "bin": "/w=="}, "type": "Opaque"});
        let got = Secret.from_object(&object, &Value::Null);
        assert_eq!(got.get("data"), &Value::string_map([("user", "admin")]));
        assert_eq!(got.get("binary_data"), &Value::string_map([("bin", "/w==")]));
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
