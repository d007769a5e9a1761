//! `kubernetes_service_account`: a ServiceAccount, its image pull secrets, mountable secrets
//! and token automount flag.
//!
//! Clusters before Kubernetes 1.24 create a token Secret for every new ServiceAccount: as
//! hashicorp does, a create there waits for it (bounded by `timeouts.create`) and records its
//! name in `default_secret_name`. Newer clusters create none, so nothing waits and
//! `default_secret_name` stays "" (kept as first recorded: it never turns into a diff).

use std::time::Duration;

use plugin_runtime::{Attribute, Block, Diagnostic, Diagnostics, NestedBlock, Nesting, Type, Value};
use serde_json::{Map, Value as Json};

use crate::kind::{Behaviour, Kind, KindInfo, MetadataShape, api_resource};
use crate::objects::{self, Target};
use crate::timeouts;

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_service_account",
    aliases: &["kubernetes_service_account_v1"],
    api_version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
    description: "A service account provides an identity for processes that run in a Pod. The service \
                  account carries the estate label `tofu-estate`.",
    metadata: MetadataShape::block(true),
};

/// The ServiceAccount kind's facts (namespaces wait for their `default` one).
pub fn info() -> &'static KindInfo {
    &INFO
}

/// The set blocks of secret references: (attribute, JSON field).
const REFERENCES: [(&str, &str); 2] = [("image_pull_secret", "imagePullSecrets"), ("secret", "secrets")];

/// hashicorp's default for `timeouts.create`: the wait for the legacy token Secret.
const DEFAULT_CREATE_TIMEOUT: Duration = Duration::from_secs(30);

/// The first Kubernetes minor version (of major 1) that no longer creates token Secrets.
const NO_LEGACY_TOKENS_FROM: u32 = 24;

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
            .attribute(
                Attribute::computed(
                    "default_secret_name",
                    Type::String,
                    "The name of the token Secret the cluster created with the service account. Starting \
                     from version 1.24.0 Kubernetes does not automatically generate a token for service \
                     accounts, in this case, `default_secret_name` will be empty.",
                )
                .deprecated(),
            )
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
            .block(timeouts::block(&["create"]))
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
        // Recorded once, like hashicorp: the state's name, else the one the object lists.
        let default_secret = prior
            .get("default_secret_name")
            .as_str()
            .map(str::to_string)
            .or_else(|| default_secret(object))
            .unwrap_or_default();
        let mut out = Value::object([
            (
                "automount_service_account_token",
                Value::from(object.get("automountServiceAccountToken").and_then(Json::as_bool)),
            ),
            ("default_secret_name", Value::string(default_secret.as_str())),
            ("timeouts", prior.get("timeouts").clone()),
        ]);
        for (attribute, field) in REFERENCES {
            // References other tools added do not show where the user configures none.
            let managed = prior.is_null() || !prior.get(attribute).elements().is_empty();
            let names = object
                .get(field)
                .and_then(Json::as_array)
                .filter(|_| managed)
                .into_iter()
                .flatten();
            // The default token Secret is the cluster's, not one the user lists.
            let refs = names
                .filter_map(|r| r.get("name").and_then(Json::as_str))
                .filter(|name| attribute != "secret" || default_secret.is_empty() || *name != default_secret)
                .map(|name| Value::object([("name", Value::string(name))]))
                .collect();
            out.set(attribute, Value::Set(refs));
        }
        out
    }
}

/// The token Secret a cluster before 1.24 created for the account: the first listed secret
/// named `<account>-token-…`.
fn default_secret(object: &Json) -> Option<String> {
    let account = object.pointer("/metadata/name").and_then(Json::as_str)?;
    let prefix = format!("{account}-token-");
    object
        .get("secrets")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("name").and_then(Json::as_str))
        .find(|name| name.starts_with(&prefix))
        .map(str::to_string)
}

/// Whether a `/version` answer is a cluster that still creates token Secrets (before 1.24).
/// Minor versions may carry a suffix ("23+").
fn creates_token_secrets(major: &str, minor: &str) -> bool {
    let number = |s: &str| -> Option<u32> {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    match (number(major), number(minor)) {
        (Some(1), Some(minor)) => minor < NO_LEGACY_TOKENS_FROM,
        (Some(0), _) => true,
        _ => false,
    }
}

#[async_trait::async_trait]
impl Behaviour for ServiceAccount {
    /// A create (its `default_secret_name` still unknown) on a cluster before 1.24 waits for
    /// the token Secret. A cluster whose version cannot be read is taken to be a current one.
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if !planned.get("default_secret_name").is_unknown() {
            return Ok(None);
        }
        let legacy = match client.apiserver_version().await {
            Ok(info) => creates_token_secrets(&info.major, &info.minor),
            Err(_) => false,
        };
        if !legacy {
            return Ok(None);
        }
        let target = Target::of(api_resource(&INFO), object);
        let timeout = timeouts::of(planned, "create", DEFAULT_CREATE_TIMEOUT);
        let has_secret = |live: Option<&Json>| live.and_then(default_secret).is_some();
        objects::wait_until(
            client,
            &target,
            timeout,
            "receive its default token secret",
            has_secret,
        )
        .await
        .map_err(Diagnostic::from)
    }
}

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
            ("default_secret_name", Value::string("")),
            ("timeouts", Value::Null),
        ]);
        let object = Json::Object(ServiceAccount.to_object(&v).unwrap());
        assert_eq!(
            object,
            json!({"automountServiceAccountToken": false, "imagePullSecrets": [{"name": "regcred"}]})
        );
        assert_eq!(ServiceAccount.from_object(&object, &v), v);
    }

    #[test]
    fn the_default_secret_name_is_the_legacy_token_secret_or_empty() {
        let legacy = json!({"metadata": {"name": "ci"},
            "secrets": [{"name": "registry"}, {"name": "ci-token-x7k2p"}]});
        assert_eq!(default_secret(&legacy).as_deref(), Some("ci-token-x7k2p"));
        // Created: the plan left it unknown; read from the object.
        let planned = Value::object([
            ("default_secret_name", Value::unknown()),
            (
                "secret",
                Value::Set(vec![Value::object([("name", Value::string("registry"))])]),
            ),
        ]);
        let got = ServiceAccount.from_object(&legacy, &planned);
        assert_eq!(got.get("default_secret_name"), &Value::string("ci-token-x7k2p"));
        assert_eq!(
            got.get("secret"),
            &Value::Set(vec![Value::object([("name", Value::string("registry"))])]),
            "the token secret is not the user's"
        );
        // A current cluster: "" on create, and "" ever after, with no diff.
        let current = json!({"metadata": {"name": "ci"}});
        let created = ServiceAccount.from_object(&current, &planned);
        assert_eq!(created.get("default_secret_name"), &Value::string(""));
        let refreshed = ServiceAccount.from_object(&current, &created);
        assert_eq!(refreshed, created);
        // Recorded once: a later look keeps the recorded name.
        assert_eq!(
            ServiceAccount
                .from_object(&current, &got)
                .get("default_secret_name"),
            &Value::string("ci-token-x7k2p")
        );
    }

    #[test]
    fn only_clusters_before_1_24_create_token_secrets() {
        assert!(creates_token_secrets("1", "23+"));
        assert!(creates_token_secrets("1", "16"));
        assert!(!creates_token_secrets("1", "24"));
        assert!(!creates_token_secrets("1", "36"));
        assert!(!creates_token_secrets("", ""));
    }

    #[test]
    fn the_schema_has_hashicorps_timeouts_and_default_secret_name() {
        let block = ServiceAccount.block();
        let name = block.find_attribute("default_secret_name").unwrap();
        assert!(name.computed && !name.optional);
        let timeouts = block.find_block("timeouts").unwrap();
        assert_eq!(timeouts.nesting, Nesting::Single);
        assert!(timeouts.block.find_attribute("create").is_some());
    }
}
