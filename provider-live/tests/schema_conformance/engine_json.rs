//! The provider's schema as the engine prints it (`terraform providers schema -json`): the
//! GetProviderSchema answer of the tfplugin6 service in process, each block, attribute and
//! function in the engine's JSON form, so the comparison reads what a user reads.

use std::sync::Arc;

use plugin_runtime::ProviderService;
use plugin_runtime::proto::tfplugin6 as pb;
use plugin_runtime::proto::tfplugin6::provider_server::Provider as _;
use provider_live::LiveProvider;
use serde_json::{Map, Value, json};

/// `provider_schemas[<the provider>]` of `providers schema -json`: `resource_schemas`,
/// `data_source_schemas`, `ephemeral_resource_schemas` and `functions`.
pub(crate) fn provider_schema() -> Value {
    let service = ProviderService::new(Arc::new(LiveProvider::default()));
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let response = runtime
        .block_on(service.get_provider_schema(tonic::Request::new(pb::get_provider_schema::Request {})))
        .expect("GetProviderSchema")
        .into_inner();
    assert!(response.diagnostics.is_empty(), "{:?}", response.diagnostics);
    let schemas = |all: &std::collections::HashMap<String, pb::Schema>| -> Value {
        let mut sorted: Vec<_> = all.iter().collect();
        sorted.sort_by_key(|(name, _)| name.as_str());
        Value::Object(
            sorted
                .into_iter()
                .map(|(name, schema)| (name.clone(), json!({ "block": block(schema.block.as_ref()) })))
                .collect(),
        )
    };
    let mut functions: Vec<_> = response.functions.iter().collect();
    functions.sort_by_key(|(name, _)| name.as_str());
    json!({
        "resource_schemas": schemas(&response.resource_schemas),
        "data_source_schemas": schemas(&response.data_source_schemas),
        "ephemeral_resource_schemas": schemas(&response.ephemeral_resource_schemas),
        "functions": Value::Object(functions.into_iter().map(|(name, f)| (name.clone(), function(f))).collect()),
    })
}

/// A cty type as the plugin sends it: the same JSON the engine prints.
fn ty(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("a type that is not JSON ({e}): {bytes:?}"))
}

fn block(block: Option<&pb::schema::Block>) -> Value {
    let Some(block) = block else {
        return json!({});
    };
    let mut out = Map::new();
    if !block.attributes.is_empty() {
        out.insert("attributes".into(), attributes(&block.attributes));
    }
    if !block.block_types.is_empty() {
        let nested = block.block_types.iter().map(|b| {
            let mut nested = Map::new();
            nested.insert("nesting_mode".into(), nesting(b.nesting).into());
            nested.insert("block".into(), self::block(b.block.as_ref()));
            if b.min_items > 0 {
                nested.insert("min_items".into(), b.min_items.into());
            }
            if b.max_items > 0 {
                nested.insert("max_items".into(), b.max_items.into());
            }
            (b.type_name.clone(), Value::Object(nested))
        });
        out.insert("block_types".into(), Value::Object(nested.collect()));
    }
    Value::Object(out)
}

fn attributes(attributes: &[pb::schema::Attribute]) -> Value {
    let attributes = attributes.iter().map(|a| {
        let mut out = Map::new();
        match &a.nested_type {
            Some(object) => {
                let nested = json!({
                    "attributes": self::attributes(&object.attributes),
                    "nesting_mode": nesting(object.nesting),
                });
                out.insert("nested_type".into(), nested);
            }
            None => {
                out.insert("type".into(), ty(&a.r#type));
            }
        }
        for (key, set) in [
            ("required", a.required),
            ("optional", a.optional),
            ("computed", a.computed),
        ] {
            if set {
                out.insert(key.into(), true.into());
            }
        }
        (a.name.clone(), Value::Object(out))
    });
    Value::Object(attributes.collect())
}

/// The engine's word for a nesting mode; blocks and nested attributes number them alike
/// (single 1, list 2, set 3, map 4; group 5 for blocks only).
fn nesting(mode: i32) -> &'static str {
    match mode {
        1 => "single",
        2 => "list",
        3 => "set",
        4 => "map",
        5 => "group",
        other => panic!("nesting mode {other} has no name"),
    }
}

fn function(function: &pb::Function) -> Value {
    let parameter = |p: &pb::function::Parameter| json!({ "name": p.name, "type": ty(&p.r#type) });
    let mut out = Map::new();
    out.insert(
        "parameters".into(),
        Value::Array(function.parameters.iter().map(parameter).collect()),
    );
    if let Some(variadic) = &function.variadic_parameter {
        out.insert("variadic_parameter".into(), parameter(variadic));
    }
    let returns = function
        .r#return
        .as_ref()
        .map(|r| ty(&r.r#type))
        .unwrap_or(Value::Null);
    out.insert("return_type".into(), returns);
    Value::Object(out)
}
