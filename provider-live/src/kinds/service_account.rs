//! `kubernetes_service_account`: a ServiceAccount, its image pull secrets, mountable secrets
//! and token automount flag.

use plugin_runtime::{Attribute, Block, Diagnostics, NestedBlock, Nesting, Type, Value};
use serde_json::{Map, Value as Json};

use crate::kind::{Behaviour, Kind, KindInfo};

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_service_account",
    aliases: &["kubernetes_service_account_v1"],
    api_version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
    description: "A service account provides an identity for processes that run in a Pod. The service \
                  account carries the estate label `tofu-estate`.",
};

/// The ServiceAccount kind's facts (namespaces wait for their `default` one).
pub fn info() -> &'static KindInfo {
    &INFO
}

/// The set blocks of secret references: (attribute, JSON field).
const REFERENCES: [(&str, &str); 2] = [("image_pull_secret", "imagePullSecrets"), ("secret", "secrets")];

pub struct ServiceAccount;

impl Kind for ServiceAccount {
    fn info(&self) -> &'static KindInfo {
        &INFO
    }

    fn block(&self) -> Block {
        let reference = |what: &str| {
            Block::new(what).attribute(Attribute::optional("name", Type::String, "Name of the referent."))
        };
        Block::new(INFO.description)
            .attribute(Attribute::optional(
                "automount_service_account_token",
                Type::Bool,
                "Enable automatic mounting of the service account token.",
            ))
            .block(NestedBlock::new(
                "image_pull_secret",
                Nesting::Set,
                reference("A reference to a secret in the same namespace to use for pulling images."),
            ))
            .block(NestedBlock::new(
                "secret",
                Nesting::Set,
                reference("A secret allowed to be used by pods running using this Service Account."),
            ))
    }

    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut out = Map::new();
        if let Some(automount) = value.get("automount_service_account_token").as_bool() {
            out.insert("automountServiceAccountToken".into(), Json::Bool(automount));
        }
        for (attribute, field) in REFERENCES {
            let names: Vec<Json> = value
                .get(attribute)
                .elements()
                .iter()
                .filter_map(|r| r.get("name").as_str())
                .map(|name| serde_json::json!({ "name": name }))
                .collect();
            if !names.is_empty() {
                out.insert(field.into(), Json::Array(names));
            }
        }
        Ok(out)
    }

    fn from_object(&self, object: &Json, prior: &Value) -> Value {
        let mut out = Value::object([(
            "automount_service_account_token",
            Value::from(object.get("automountServiceAccountToken").and_then(Json::as_bool)),
        )]);
        for (attribute, field) in REFERENCES {
            // References other tools added do not show where the user configures none.
            let managed = prior.is_null() || !prior.get(attribute).elements().is_empty();
            let names = object
                .get(field)
                .and_then(Json::as_array)
                .filter(|_| managed)
                .into_iter()
                .flatten();
            let refs = names
                .filter_map(|r| r.get("name").and_then(Json::as_str))
                .map(|name| Value::object([("name", Value::string(name))]))
                .collect();
            out.set(attribute, Value::Set(refs));
        }
        out
    }
}

impl Behaviour for ServiceAccount {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_round_trip() {
        let v = Value::object([
            ("automount_service_account_token", Value::Bool(false)),
            (
                "image_pull_secret",
                Value::Set(vec![Value::object([("name", Value::string("regcred"))])]),
            ),
            ("secret", Value::Set(vec![])),
        ]);
        let object = Json::Object(ServiceAccount.to_object(&v).unwrap());
        assert_eq!(
            object,
            json!({"automountServiceAccountToken": false, "imagePullSecrets": [{"name": "regcred"}]})
        );
        assert_eq!(ServiceAccount.from_object(&object, &v), v);
    }
}
