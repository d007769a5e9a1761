//! `kubernetes_namespace`: a Namespace. Nothing to write beyond metadata; deleting waits
//! until the namespace (and everything in it) is gone.

use std::time::Duration;

use plugin_runtime::{Attribute, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use crate::kind::{Behaviour, Kind, KindInfo, MetadataShape, api_resource};
use crate::objects::{self, Target};
use crate::timeouts;

const DESCRIPTION: &str = "Kubernetes supports multiple virtual clusters backed by the same physical cluster. \
                  These virtual clusters are called namespaces. The namespace carries the estate label \
                  `tofu-estate`; destroying it waits until it is gone.";

/// `kubernetes_namespace`: its metadata block is required.
pub static NAMESPACE: KindInfo = KindInfo {
    type_name: "kubernetes_namespace",
    aliases: &[],
    api_version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    description: DESCRIPTION,
    metadata: MetadataShape::block(false),
};

/// `kubernetes_namespace_v1`: the same, but hashicorp made its metadata block optional.
pub static NAMESPACE_V1: KindInfo = KindInfo {
    type_name: "kubernetes_namespace_v1",
    metadata: MetadataShape {
        required: false,
        ..MetadataShape::block(false)
    },
    ..NAMESPACE
};

const DEFAULT_DELETE_TIMEOUT: Duration = Duration::from_secs(300);
const SERVICE_ACCOUNT_WAIT: Duration = Duration::from_secs(60);

/// The Namespace kind, under one of its two type names.
pub struct Namespace(pub &'static KindInfo);

impl Kind for Namespace {
    fn info(&self) -> &'static KindInfo {
        self.0
    }

    fn block(&self) -> Block {
        Block::new(DESCRIPTION)
            .attribute(Attribute::optional(
                "wait_for_default_service_account",
                Type::Bool,
                "Wait for the default service account to be created.",
            ))
            .block(timeouts::block(&["delete"]))
    }

    fn to_object(&self, _value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        Ok(Map::new())
    }

    fn from_object(&self, _object: &Json, prior: &Value) -> Value {
        Value::object([
            (
                "wait_for_default_service_account",
                prior.get("wait_for_default_service_account").clone(),
            ),
            ("timeouts", prior.get("timeouts").clone()),
        ])
    }
}

#[async_trait::async_trait]
impl Behaviour for Namespace {
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if planned.get("wait_for_default_service_account").as_bool() != Some(true) {
            return Ok(None);
        }
        let namespace = object
            .pointer("/metadata/name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        let target = Target {
            resource: api_resource(super::service_account::info()),
            namespace: Some(namespace.to_string()),
            name: "default".into(),
        };
        objects::wait_until(client, &target, SERVICE_ACCOUNT_WAIT, "be created", |sa| {
            sa.is_some()
        })
        .await?;
        Ok(None)
    }

    fn delete_wait(&self, resource: &Value) -> Option<Duration> {
        Some(timeouts::of(resource, "delete", DEFAULT_DELETE_TIMEOUT))
    }
}
