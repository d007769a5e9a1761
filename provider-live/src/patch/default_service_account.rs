//! `kubernetes_default_service_account` (`_v1`): the `default` ServiceAccount the cluster
//! creates in every namespace. A create waits for it (within `timeouts.create`, as hashicorp
//! does) and applies only the configured fields, with the typed service account's attributes
//! and conversions; a destroy gives those fields back and leaves the account in place.

use std::time::Duration;

use plugin_runtime::{Block, Diagnostics, Value};
use serde_json::{Map, Value as Json};

use super::{FixedKind, MetaShape, PatchInfo, PatchKind, TargetKind, meta};
use crate::kind::Kind;
use crate::kinds::service_account::ServiceAccount;
use crate::{kinds, timeouts};

static INFO: PatchInfo = PatchInfo {
    type_name: "kubernetes_default_service_account",
    aliases: &["kubernetes_default_service_account_v1"],
    description: "The `default` service account of a namespace, which the cluster creates: only the fields set \
                  here are applied, and a destroy leaves the account in place.",
    target: TargetKind::Fixed(FixedKind {
        api_version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        namespaced: true,
    }),
    metadata: MetaShape::Account,
    manager_attributes: false,
    manages: "default-service-account",
    identity: true,
};

/// hashicorp's default for `timeouts.create`.
const DEFAULT_CREATE_TIMEOUT: Duration = Duration::from_secs(30);

pub struct DefaultServiceAccount;

impl PatchKind for DefaultServiceAccount {
    fn info(&self) -> &'static PatchInfo {
        &INFO
    }

    fn block(&self) -> Block {
        ServiceAccount.block()
    }

    fn intent(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut out = ServiceAccount.to_object(value)?;
        let meta = meta(value);
        let mut metadata = Map::new();
        for field in ["labels", "annotations"] {
            if let Some(map) = kinds::write_string_map(meta.get(field))
                .filter(|m| m.as_object().is_some_and(|m| !m.is_empty()))
            {
                metadata.insert(field.into(), map);
            }
        }
        if !metadata.is_empty() {
            out.insert("metadata".into(), Json::Object(metadata));
        }
        Ok(out)
    }

    fn read(&self, view: &Json, _live: &Json, prior: &Value) -> Value {
        ServiceAccount.from_object(view, prior)
    }

    fn create_wait(&self, value: &Value) -> Option<Duration> {
        Some(timeouts::of(value, "create", DEFAULT_CREATE_TIMEOUT))
    }

    /// hashicorp's type imports with the typed service account's importer.
    fn importable(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claims_only_what_is_configured_and_never_the_estate_label() {
        let value = Value::object([
            (
                "metadata",
                Value::List(vec![Value::object([
                    ("name", Value::string("default")),
                    ("labels", Value::string_map([("team", "a")])),
                    ("annotations", Value::Null),
                ])]),
            ),
            ("automount_service_account_token", Value::Bool(false)),
            ("image_pull_secret", Value::Set(vec![])),
            ("secret", Value::Set(vec![])),
        ]);
        assert_eq!(
            Json::Object(DefaultServiceAccount.intent(&value).unwrap()),
            json!({"automountServiceAccountToken": false, "metadata": {"labels": {"team": "a"}}})
        );
    }
}
