//! `kubernetes_manifest` as a list resource (`terraform query`): any apiVersion and kind,
//! each object found read as a manifest.

use async_trait::async_trait;
use plugin_runtime::{Attribute, AttributePath, Diagnostics, Resource, Type, Value};
use serde_json::Value as Json;

use super::*;

#[async_trait]
impl Listable for Manifest {
    fn list_attributes(&self) -> Vec<Attribute> {
        vec![
            Attribute::required(
                "api_version",
                Type::String,
                "The apiVersion to list, e.g. `apps/v1`.",
            ),
            Attribute::required("kind", Type::String, "The kind to list, e.g. `Deployment`."),
        ]
    }

    async fn collection(&self, ctx: &Context, config: &Value) -> Result<Resolved, Diagnostics> {
        let conn = ctx.connection().map_err(diag)?;
        let text = |name: &str| config.get(name).as_str().unwrap_or_default().to_string();
        ctx.discovery
            .resolve(&conn.client, &text("api_version"), &text("kind"))
            .await
            .map_err(|e| {
                diag(e)
                    .into_iter()
                    .map(|d| d.at(AttributePath::root("kind")))
                    .collect()
            })
    }

    /// The whole live object as the manifest (fields other managers own left out).
    fn imported_state(&self, live: &Json) -> Value {
        let live = &Ownership::of(live, DEFAULT_FIELD_MANAGER).without_foreign(live);
        let manifest = as_manifest(live);
        plan::conform(
            &self.schema().block,
            Value::object([
                ("manifest", Value::from_json(&manifest)),
                ("object", object_value(live, &manifest, None)),
                (
                    "estate",
                    Value::from(metadata::estate_of(live).map(str::to_string)),
                ),
            ]),
        )
    }
}
