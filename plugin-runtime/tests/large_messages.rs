//! The tfplugin6 service as `serve` builds it takes and sends messages far beyond tonic's
//! default 4 MiB: the engine sends a resource's config, prior and proposed state in one
//! request, so a large manifest easily passes that size three times over.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::proto::tfplugin6::{self as pb, provider_client::ProviderClient};
use plugin_runtime::server::{MAX_MESSAGE_SIZE, grpc_service};
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, Block, Diagnostics, ImportRequest, ImportResponse, PlanRequest,
    PlanResponse, Provider, ReadRequest, ReadResponse, Resource, Schema, Type, Value, codec,
};

/// A provider whose one resource plans exactly what it is proposed.
struct Blobs;

struct Blob;

#[async_trait]
impl Provider for Blobs {
    fn schema(&self) -> Schema {
        Schema::new(0, Block::new("blobs"))
    }

    async fn configure(&self, _: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(Blob)]
    }
}

#[async_trait]
impl Resource for Blob {
    fn type_name(&self) -> &'static str {
        "blob"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new("blob").attribute(Attribute::required("content", Type::String, "c")),
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
        Ok(ReadResponse::default())
    }

    async fn import(&self, _: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        Ok(ImportResponse::default())
    }
}

#[tokio::test]
async fn a_plan_of_many_mebibytes_passes_both_ways() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a local port");
    let address = listener.local_addr().expect("bound address");
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(grpc_service(Arc::new(Blobs)))
            .serve_with_incoming(incoming),
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    // The engine's client takes any size (go-plugin sets math.MaxInt32 both ways).
    let mut client = ProviderClient::new(channel)
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE);

    let ty = Type::object([("content", Type::String)]);
    let content = "k".repeat(6 << 20);
    let value = Value::object([("content", Value::string(&content))]);
    let dynamic = || {
        Some(pb::DynamicValue {
            msgpack: codec::encode_msgpack(&value, &ty).expect("encodable"),
            json: Vec::new(),
        })
    };
    // Config and proposed state: 12 MiB in; the planned state: 6 MiB out.
    let response = client
        .plan_resource_change(pb::plan_resource_change::Request {
            type_name: "blob".into(),
            prior_state: None,
            proposed_new_state: dynamic(),
            config: dynamic(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|status| panic!("a 12 MiB plan request failed: {status}"))
        .into_inner();
    assert!(response.diagnostics.is_empty(), "{:?}", response.diagnostics);
    let planned = response.planned_state.expect("a planned state");
    let planned = codec::decode_dynamic_value(&planned.msgpack, &planned.json, &ty).expect("decodable");
    assert_eq!(planned.get("content").as_str().map(str::len), Some(content.len()));
}
