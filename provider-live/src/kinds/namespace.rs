//! `kubernetes_namespace`: a Namespace. Nothing to write beyond metadata; deleting waits
//! until the namespace (and everything in it) is gone.

use std::time::Duration;

use plugin_runtime::{Attribute, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use crate::kind::{Behaviour, Kind, KindInfo};
use crate::objects::{self, Target};
use crate::resource::api_resource;
use crate::timeouts;

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_namespace",
    aliases: &["kubernetes_namespace_v1"],
    api_version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    description: "Kubernetes supports multiple virtual clusters backed by the same physical cluster. \
                  These virtual clusters are called namespaces. The namespace carries the estate label \
                  `tofu-estate`; destroying it waits until it is gone.",
};

const DEFAULT_DELETE_TIMEOUT: Duration = Duration::from_secs(300);
const SERVICE_ACCOUNT_WAIT: Duration = Duration::from_secs(60);

pub struct Namespace;

impl Kind for Namespace {
    fn info(&self) -> &'static KindInfo {
        &INFO
    }

    fn block(&self) -> Block {
        Block::new(INFO.description)
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
