//! `kubernetes_resource` and `kubernetes_resources`: objects of any kind, found through the
//! API server's discovery as `kubernetes_manifest` finds them, returned as dynamic values
//! (`object`, `objects`) shaped as the manifest module shows a live object: no status and no
//! server bookkeeping, as hashicorp's. One GET by name, or one LIST with the label and field
//! selectors and `limit`.

use std::sync::Arc;

use async_trait::async_trait;
use kube::api::ListParams;
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostics, NestedBlock, ReadDataRequest, ReadDataResponse,
    Schema, Type, Value,
};
use serde_json::Value as Json;

use super::{DataSourceReadError, diags, first, get, list};
use crate::context::Context;
use crate::discovery::Resolved;
use crate::manifest::as_manifest;

/// The kind a configuration names, resolved through discovery.
async fn resolve(
    ctx: &Context,
    client: &kube::Client,
    config: &Value,
) -> Result<Resolved, DataSourceReadError> {
    let text = |name: &str| config.get(name).as_str().unwrap_or_default().to_string();
    Ok(ctx
        .discovery
        .resolve(client, &text("api_version"), &text("kind"))
        .await?)
}

fn api_version_and_kind(block: Block) -> Block {
    block
        .attribute(Attribute::required(
            "api_version",
            Type::String,
            "The API version of the kind, as in a manifest (`v1`, `apps/v1`).",
        ))
        .attribute(Attribute::required(
            "kind",
            Type::String,
            "The kind, as in a manifest (`ConfigMap`).",
        ))
}

/// The object as the data source shows it.
fn shown(live: &Json) -> Value {
    Value::from_json(&as_manifest(live))
}

pub struct One {
    ctx: Arc<Context>,
}

impl One {
    pub fn new(ctx: Arc<Context>) -> One {
        One { ctx }
    }
}

#[async_trait]
impl DataSource for One {
    fn type_name(&self) -> &'static str {
        "kubernetes_resource"
    }

    fn schema(&self) -> Schema {
        let metadata = Block::new("Which object to read.")
            .attribute(Attribute::required("name", Type::String, "The object's name."))
            .attribute(Attribute::optional(
                "namespace",
                Type::String,
                "The object's namespace (namespaced kinds; default `default`).",
            ));
        let block = api_version_and_kind(Block::new("One object of any kind, by name, as a dynamic value."))
            .attribute(Attribute::optional_computed(
                "object",
                Type::Dynamic,
                "The object as the API server has it, without its status and server bookkeeping.",
            ))
            .block(NestedBlock::exactly_one("metadata", metadata));
        Schema::new(0, block)
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let resolved = resolve(&self.ctx, &conn.client, &req.config)
            .await
            .map_err(diags)?;
        let meta = first(&req.config, "metadata");
        let name = meta.get("name").as_str().unwrap_or_default();
        let namespace = resolved.namespaced.then(|| {
            meta.get("namespace")
                .as_str()
                .or(self.ctx.default_namespace())
                .unwrap_or_default()
        });
        let live = get(
            &conn.client,
            self.type_name(),
            &resolved.resource,
            namespace,
            name,
        )
        .await
        .map_err(diags)?;
        let mut state = req.config.clone();
        state.set("object", shown(&live));
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}

pub struct Many {
    ctx: Arc<Context>,
}

impl Many {
    pub fn new(ctx: Arc<Context>) -> Many {
        Many { ctx }
    }
}

/// The list request a configuration asks for.
fn list_params(config: &Value) -> Result<ListParams, DataSourceReadError> {
    let mut params = ListParams::default();
    if let Some(labels) = config.get("label_selector").as_str() {
        params = params.labels(labels);
    }
    if let Some(fields) = config.get("field_selector").as_str() {
        params = params.fields(fields);
    }
    match config.get("limit").as_i64() {
        None => {}
        Some(limit) if limit > 0 => params = params.limit(limit as u32),
        Some(limit) => {
            return Err(DataSourceReadError::Invalid {
                path: AttributePath::root("limit"),
                message: format!("{limit} is not a positive number of objects"),
            });
        }
    }
    Ok(params)
}

#[async_trait]
impl DataSource for Many {
    fn type_name(&self) -> &'static str {
        "kubernetes_resources"
    }

    fn schema(&self) -> Schema {
        let block = api_version_and_kind(Block::new(
            "Every object of a kind matching selectors, in one list request, as dynamic values.",
        ))
        .attribute(Attribute::optional(
            "namespace",
            Type::String,
            "Only objects of this namespace (namespaced kinds; every namespace when not set).",
        ))
        .attribute(Attribute::optional(
            "label_selector",
            Type::String,
            "A label selector, as kubectl's `-l` (`app=web,tier!=db`).",
        ))
        .attribute(Attribute::optional(
            "field_selector",
            Type::String,
            "A field selector, as kubectl's `--field-selector` (`metadata.name=web`).",
        ))
        .attribute(Attribute::optional(
            "limit",
            Type::Number,
            "At most this many objects (the API server's `limit`).",
        ))
        .attribute(Attribute::optional_computed(
            "objects",
            Type::Dynamic,
            "The objects, each without its status and server bookkeeping.",
        ));
        Schema::new(0, block)
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let params = list_params(&req.config).map_err(diags)?;
        let resolved = resolve(&self.ctx, &conn.client, &req.config)
            .await
            .map_err(diags)?;
        let namespace = req
            .config
            .get("namespace")
            .as_str()
            .filter(|_| resolved.namespaced);
        let items = list(&conn.client, &resolved.resource, namespace, &params)
            .await
            .map_err(diags)?;
        let mut state = req.config.clone();
        state.set("objects", Value::Tuple(items.iter().map(shown).collect()));
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_limit_make_one_list_request() {
        let config = Value::object([
            ("label_selector", Value::string("app=web")),
            ("field_selector", Value::string("metadata.name=a")),
            ("limit", Value::int(2)),
        ]);
        let params = list_params(&config).unwrap();
        assert_eq!(params.label_selector.as_deref(), Some("app=web"));
        assert_eq!(params.field_selector.as_deref(), Some("metadata.name=a"));
        assert_eq!(params.limit, Some(2));
        let bad = Value::object([("limit", Value::int(0))]);
        let err = Diagnostics::from(plugin_runtime::Diagnostic::from(list_params(&bad).unwrap_err()));
        assert_eq!(err.0[0].attribute.as_ref().unwrap().to_string(), "limit");
    }
}
