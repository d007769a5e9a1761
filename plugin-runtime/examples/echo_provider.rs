//! A tiny provider for exercising the runtime: resource `echo_message` (alias
//! `echo_message_v1`) copies `input` to `output`, data source `echo_message` does the same
//! at read time. Used by the handshake tests and the runtime benchmark.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, DataSource, Diagnostic, Diagnostics,
    ImportRequest, ImportResponse, PlanRequest, PlanResponse, Provider, ReadDataRequest, ReadDataResponse,
    ReadRequest, ReadResponse, Resource, Schema, Type, Value,
};

struct Echo;

#[async_trait]
impl Provider for Echo {
    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new("The echo provider.").attribute(Attribute::optional(
                "greeting",
                Type::String,
                "Must not be `forbidden`.",
            )),
        )
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        match config.get("greeting").as_str() {
            Some("forbidden") => Diagnostic::error("Invalid greeting", "`forbidden` is not allowed.")
                .at(AttributePath::root("greeting"))
                .into(),
            _ => Diagnostics::new(),
        }
    }

    async fn configure(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(Message)]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        vec![Arc::new(Message)]
    }
}

struct Message;

fn message_schema() -> Schema {
    Schema::new(
        0,
        Block::new("Echoes its input.")
            .attribute(Attribute::required("input", Type::String, "What to echo."))
            .attribute(Attribute::computed("output", Type::String, "The echo.")),
    )
}

/// `value` with `output` set to its `input`.
fn echoed(mut value: Value) -> Value {
    let input = value.get("input").clone();
    value.set("output", input);
    value
}

#[async_trait]
impl Resource for Message {
    fn type_name(&self) -> &'static str {
        "echo_message"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["echo_message_v1"]
    }

    fn schema(&self) -> Schema {
        message_schema()
    }

    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let changed = request.prior_state.get("input") != request.proposed_new_state.get("input");
        Ok(PlanResponse {
            planned_state: echoed(request.proposed_new_state),
            requires_replace: if changed && !request.prior_state.is_null() {
                vec![AttributePath::root("input")]
            } else {
                Vec::new()
            },
            ..PlanResponse::default()
        })
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        ApplyResponse::as_planned(request)
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        Ok(ReadResponse::unchanged(request))
    }

    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let state = echoed(Value::object([("input", Value::string(request.id))]));
        Ok(ImportResponse::one(request.type_name, state))
    }
}

#[async_trait]
impl DataSource for Message {
    fn type_name(&self) -> &'static str {
        "echo_message"
    }

    fn schema(&self) -> Schema {
        message_schema()
    }

    async fn read(&self, request: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        Ok(ReadDataResponse {
            state: echoed(request.config),
            ..ReadDataResponse::default()
        })
    }
}

fn main() {
    plugin_runtime::serve(Echo)
}
