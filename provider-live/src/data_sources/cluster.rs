//! Facts about the cluster as a whole: `kubernetes_all_namespaces` (the names of every
//! Namespace, one list request) and `kubernetes_server_version` (the API server's `/version`).

use std::sync::Arc;

use async_trait::async_trait;
use kube::api::ListParams;
use kube_estate::{ApiError, ObjectRef, with_retry};
use plugin_runtime::{
    Attribute, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};
use serde_json::Value as Json;

use super::{diags, list};
use crate::context::Context;

pub struct AllNamespaces {
    ctx: Arc<Context>,
}

impl AllNamespaces {
    pub fn new(ctx: Arc<Context>) -> AllNamespaces {
        AllNamespaces { ctx }
    }
}

#[async_trait]
impl DataSource for AllNamespaces {
    fn type_name(&self) -> &'static str {
        "kubernetes_all_namespaces"
    }

    fn schema(&self) -> Schema {
        let block = Block::new("The names of every Namespace of the cluster.")
            .attribute(Attribute::computed(
                "id",
                Type::String,
                "Always `all-namespaces`.",
            ))
            .attribute(Attribute::computed(
                "namespaces",
                Type::list(Type::String),
                "The names of the cluster's Namespaces, sorted.",
            ));
        Schema::new(0, block)
    }

    async fn read(&self, _req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let resource = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&());
        let items = list(&conn.client, &resource, None, &ListParams::default())
            .await
            .map_err(diags)?;
        let mut names: Vec<String> = items
            .iter()
            .filter_map(|n| n.pointer("/metadata/name").and_then(Json::as_str))
            .map(str::to_string)
            .collect();
        names.sort();
        let state = Value::object([
            ("id", Value::string("all-namespaces")),
            (
                "namespaces",
                Value::List(names.into_iter().map(Value::String).collect()),
            ),
        ]);
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}

pub struct ServerVersion {
    ctx: Arc<Context>,
}

impl ServerVersion {
    pub fn new(ctx: Arc<Context>) -> ServerVersion {
        ServerVersion { ctx }
    }
}

/// The attributes of `kubernetes_server_version` from `/version`, with their descriptions.
const FIELDS: [(&str, &str); 9] = [
    ("build_date", "When the API server was built."),
    ("compiler", "The Go compiler that built it."),
    ("git_commit", "The Git commit it was built from."),
    ("git_tree_state", "Whether that tree was clean or dirty."),
    ("git_version", "The full version, as `v1.36.0`."),
    ("go_version", "The Go version that built it."),
    ("major", "The major version."),
    ("minor", "The minor version."),
    ("platform", "The API server's operating system and architecture."),
];

#[async_trait]
impl DataSource for ServerVersion {
    fn type_name(&self) -> &'static str {
        "kubernetes_server_version"
    }

    fn schema(&self) -> Schema {
        let mut block = Block::new("The version of the cluster's API server.")
            .attribute(Attribute::optional_computed(
                "id",
                Type::String,
                "The version, as `version`.",
            ))
            .attribute(Attribute::computed(
                "version",
                Type::String,
                "The version without its `v`, as `1.36.0`.",
            ));
        for (name, doc) in FIELDS {
            block = block.attribute(Attribute::computed(name, Type::String, doc));
        }
        Schema::new(0, block)
    }

    async fn read(&self, _req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let info = with_retry(|| conn.client.apiserver_version())
            .await
            .map_err(|e| {
                diags(ApiError::from_kube(
                    e,
                    &ObjectRef::cluster("version", "/version"),
                    "get",
                ))
            })?;
        let version = info.git_version.trim_start_matches('v').to_string();
        let text = |s: &str| Value::string(s);
        let state = Value::object([
            ("id", text(&version)),
            ("version", text(&version)),
            ("build_date", text(&info.build_date)),
            ("compiler", text(&info.compiler)),
            ("git_commit", text(&info.git_commit)),
            ("git_tree_state", text(&info.git_tree_state)),
            ("git_version", text(&info.git_version)),
            ("go_version", text(&info.go_version)),
            ("major", text(&info.major)),
            ("minor", text(&info.minor)),
            ("platform", text(&info.platform)),
        ]);
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}
