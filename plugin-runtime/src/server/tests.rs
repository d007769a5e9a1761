//! The service's tests, one module per RPC family, over the test provider defined here: a
//! resource with an alias, an identity and every nesting mode, a function, an ephemeral
//! resource and a list resource.

use std::collections::HashMap;
use std::sync::Arc;

use tonic::Request;

use super::ProviderService;
use super::convert::{decode, encode, to_proto_path};
use crate::codec;
use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics};
use crate::ephemeral::{
    CloseRequest, EphemeralResource, OpenRequest, OpenResponse, RenewRequest, RenewResponse,
};
use crate::function::{Function, FunctionError, Parameter, Signature};
use crate::identity::{IdentityAttribute, IdentitySchema};
use crate::list::{ListEvent, ListRequest, ListResource, ListedObject};
use crate::proto::tfplugin6 as pb;
use crate::provider::{
    ApplyRequest, ApplyResponse, ImportRequest, ImportResponse, MoveSource, PlanRequest, PlanResponse,
    Provider, ReadRequest, ReadResponse, Resource,
};
use crate::schema::{Attribute, Block, NestedBlock, Nesting, Schema};
use crate::types::Type;
use crate::upgrade::{Change, StateUpgrade};
use crate::value::Value;
use async_trait::async_trait;
use pb::provider_server::Provider as _;

mod ephemeral;
mod functions;
mod list;
mod provider;
mod resources;

struct TestProvider;
struct Widget;

#[async_trait]
impl Provider for TestProvider {
    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new("p").attribute(Attribute::optional("token", Type::String, "t").sensitive()),
        )
    }

    async fn configure(&self, _: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(Widget)]
    }

    fn functions(&self) -> Vec<Arc<dyn Function>> {
        vec![Arc::new(Describe)]
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        vec![Arc::new(Lease)]
    }

    fn list_resources(&self) -> Vec<Arc<dyn ListResource>> {
        vec![Arc::new(Widgets)]
    }
}

#[async_trait]
impl Resource for Widget {
    fn type_name(&self) -> &'static str {
        "test_widget"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["test_widget_v1"]
    }

    fn schema(&self) -> Schema {
        let inner = Block::new("inner").attribute(Attribute::required("key", Type::String, "k"));
        Schema::new(
            2,
            Block::new("w")
                .attribute(Attribute::computed("id", Type::String, "i").deprecated())
                .attribute(Attribute::optional("size", Type::Number, "s"))
                .block(NestedBlock::exactly_one("spec", inner.clone()))
                .block(NestedBlock::new("tags", Nesting::Set, inner.clone()))
                .block(NestedBlock::new("named", Nesting::Map, inner.clone()))
                .block(NestedBlock::new("single", Nesting::Single, inner.clone()))
                .block(NestedBlock::new("group", Nesting::Group, inner)),
        )
    }

    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        Ok(PlanResponse {
            planned_state: request.proposed_new_state,
            ..PlanResponse::default()
        })
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        ApplyResponse::as_planned(request)
    }

    async fn read(&self, _: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        Err(Diagnostic::error("Read failed", "the API is down").into())
    }

    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        Ok(ImportResponse::one(
            request.type_name,
            Value::object([("id", Value::string(request.id))]),
        ))
    }

    /// Version 1 kept `named` as a list of one map.
    fn state_upgrades(&self) -> Vec<StateUpgrade> {
        vec![StateUpgrade::new(1, "named", Change::BlockToMap)]
    }

    /// Another name of the widget, or the widget of the provider this one replaces.
    fn accepts_move(&self, source: &MoveSource<'_>) -> bool {
        source.type_name == "test_widget" || source.provider_address.ends_with("/old/test")
    }

    fn upgrade_state(&self, version: i64, mut state: Value) -> Result<Value, Diagnostics> {
        state.set("id", Value::string(format!("upgraded from {version}")));
        Ok(state)
    }

    fn identity_schema(&self) -> Option<IdentitySchema> {
        Some(IdentitySchema {
            version: 0,
            attributes: vec![
                IdentityAttribute::required("name", Type::String, "n"),
                IdentityAttribute::optional("zone", Type::String, "z"),
            ],
        })
    }

    fn identity(&self, state: &Value) -> Option<Value> {
        let id = state.get("id");
        (!id.is_null()).then(|| Value::object([("name", id.clone()), ("zone", Value::Null)]))
    }

    fn import_id(&self, identity: &Value) -> Result<String, Diagnostics> {
        Ok(format!(
            "by-identity:{}",
            identity.get("name").as_str().unwrap_or_default()
        ))
    }
}

fn service() -> ProviderService {
    ProviderService::new(Arc::new(TestProvider))
}

fn widget_type() -> Type {
    Widget.schema().value_type()
}

/// `describe(text, numbers...)`: an object of the text and the numbers as a tuple.
struct Describe;

impl Function for Describe {
    fn name(&self) -> &'static str {
        "describe"
    }

    fn signature(&self) -> Signature {
        Signature {
            parameters: vec![Parameter::new("text", Type::String, "t")],
            variadic: Some(Parameter::new("numbers", Type::Number, "n")),
            return_type: Type::Dynamic,
            summary: "s".into(),
            description: "d".into(),
        }
    }

    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError> {
        let text = args[0].as_str().unwrap_or_default();
        if text.is_empty() {
            return Err(FunctionError::argument(0, "text is empty"));
        }
        Ok(Value::object([
            ("text", Value::string(text)),
            ("numbers", Value::Tuple(args[1..].to_vec())),
        ]))
    }
}

/// An ephemeral lease: its id is computed, and private bytes carry it to renew and close.
struct Lease;

#[async_trait]
impl EphemeralResource for Lease {
    fn type_name(&self) -> &'static str {
        "test_lease"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new("l")
                .attribute(Attribute::required("holder", Type::String, "h"))
                .attribute(Attribute::computed("id", Type::String, "i").sensitive()),
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match config.get("holder").as_str() {
            Some("") => Diagnostic::error("Empty holder", "holder is empty")
                .at(AttributePath::root("holder"))
                .into(),
            _ => Diagnostics::new(),
        }
    }

    async fn open(&self, request: OpenRequest) -> Result<OpenResponse, Diagnostics> {
        let mut result = request.config.clone();
        let id = format!(
            "lease-of-{}",
            request.config.get("holder").as_str().unwrap_or_default()
        );
        result.set("id", Value::string(&id));
        Ok(OpenResponse {
            result,
            renew_at: Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000)),
            private: id.into_bytes(),
            diagnostics: Diagnostics::new(),
        })
    }

    async fn renew(&self, request: RenewRequest) -> Result<RenewResponse, Diagnostics> {
        let mut private = request.private;
        private.extend_from_slice(b"+renewed");
        Ok(RenewResponse {
            private,
            ..RenewResponse::default()
        })
    }

    async fn close(&self, request: CloseRequest) -> Diagnostics {
        Diagnostic::warning("Closed", String::from_utf8_lossy(&request.private).into_owned()).into()
    }
}

fn lease_type() -> Type {
    Lease.schema().value_type()
}

fn argument(value: &Value, ty: &Type) -> pb::DynamicValue {
    encode(value, ty, "argument").expect("encodes")
}

/// Lists `count` widgets `w0, w1, ...`, then an error when `fail` is set, then one more
/// widget that must never arrive.
struct Widgets;

impl ListResource for Widgets {
    fn type_name(&self) -> &'static str {
        "test_widget"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["test_widget_v1"]
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new("l")
                .attribute(Attribute::required("count", Type::Number, "c"))
                .attribute(Attribute::optional("fail", Type::Bool, "f")),
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match config.get("count").as_i64() {
            Some(n) if n < 0 => Diagnostic::error("Negative count", "count must be >= 0")
                .at(AttributePath::root("count"))
                .into(),
            _ => Diagnostics::new(),
        }
    }

    fn list(&self, request: ListRequest) -> futures::stream::BoxStream<'static, ListEvent> {
        use futures::StreamExt;
        let count = request.config.get("count").as_i64().unwrap_or_default();
        let fail = request.config.get("fail").as_bool() == Some(true);
        let include = request.include_resource_object;
        let widget = move |i: i64| {
            let id = format!("w{i}");
            ListEvent::Object(Box::new(ListedObject {
                identity: Value::object([("name", Value::string(&id)), ("zone", Value::Null)]),
                display_name: id.clone(),
                resource_object: include.then(|| Value::object([("id", Value::string(id))])),
            }))
        };
        let mut events: Vec<ListEvent> = (0..count).map(widget).collect();
        if fail {
            events.push(ListEvent::Diagnostics(
                Diagnostic::error("Listing failed", "the API is down").into(),
            ));
            events.push(widget(99));
        }
        futures::stream::iter(events).boxed()
    }
}
