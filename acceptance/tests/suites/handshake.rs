//! The go-plugin handshake, AutoMTLS and lifecycle of the provider binaries, driven the way
//! the engine drives them (see `acceptance::plugin_process`).

use std::time::Duration;

use acceptance::plugin_process::{self, PluginError, PluginProcess, StartOptions, binary};
use plugin_runtime::codec;
use plugin_runtime::proto::plugin::{Empty, grpc_controller_client::GrpcControllerClient};
use plugin_runtime::proto::tfplugin6::{self as pb, provider_client::ProviderClient};
use plugin_runtime::{Type, Value};

const ECHO: &str = "echo_provider";

async fn start(name: &str) -> PluginProcess {
    let path = binary(name).expect("binary available");
    plugin_process::start_plugin(&path, &StartOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{name} did not hand-shake: {e}"))
}

async fn provider_client(plugin: &PluginProcess) -> ProviderClient<tonic::transport::Channel> {
    ProviderClient::new(plugin.connect().await.expect("mTLS connection"))
}

async fn schema_of(name: &str) -> pb::get_provider_schema::Response {
    let plugin = start(name).await;
    assert_eq!(plugin.handshake.protocol, 6);
    assert_eq!(plugin.handshake.network, "unix");
    assert!(
        plugin.handshake.server_cert.is_some(),
        "AutoMTLS puts the server certificate in the line"
    );
    let mut client = provider_client(&plugin).await;
    client
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await
        .expect("GetProviderSchema")
        .into_inner()
}

#[tokio::test]
async fn echo_provider_schema_over_mtls() {
    let schema = schema_of(ECHO).await;
    let provider = schema.provider.and_then(|s| s.block).expect("provider schema");
    let greeting = provider
        .attributes
        .iter()
        .find(|a| a.name == "greeting")
        .expect("greeting");
    assert_eq!(greeting.r#type, b"\"string\"");
    assert!(greeting.optional);
    assert_eq!(greeting.description_kind, pb::StringKind::Markdown as i32);
    for alias in ["echo_message", "echo_message_v1"] {
        assert!(
            schema.resource_schemas.contains_key(alias),
            "resource {alias} missing"
        );
    }
    assert!(schema.data_source_schemas.contains_key("echo_message"));
    let capabilities = schema.server_capabilities.expect("capabilities");
    assert!(!capabilities.plan_destroy);
}

#[tokio::test]
async fn health_reports_the_plugin_service_serving() {
    use tonic_health::pb::{
        HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
    };
    let plugin = start(ECHO).await;
    let mut health = HealthClient::new(plugin.connect().await.expect("connect"));
    let response = health
        .check(HealthCheckRequest {
            service: "plugin".into(),
        })
        .await
        .expect("health check")
        .into_inner();
    assert_eq!(response.status, ServingStatus::Serving as i32);
}

#[tokio::test]
async fn live_provider_schema() {
    let schema = schema_of("terraform-provider-live").await;
    assert!(schema.provider.and_then(|s| s.block).is_some());
    assert!(schema.diagnostics.is_empty(), "{:?}", schema.diagnostics);
}

#[tokio::test]
async fn records_provider_schema() {
    let schema = schema_of("terraform-provider-records").await;
    assert!(schema.provider.and_then(|s| s.block).is_some());
    assert!(schema.diagnostics.is_empty(), "{:?}", schema.diagnostics);
}

fn dynamic_value(value: &Value, ty: &Type) -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: codec::encode_msgpack(value, ty).expect("encodable"),
        json: Vec::new(),
    })
}

#[tokio::test]
async fn validate_provider_config_reports_the_attribute() {
    let plugin = start(ECHO).await;
    let mut client = provider_client(&plugin).await;
    let ty = Type::object([("greeting", Type::String)]);
    let validate = |greeting: &str| pb::validate_provider_config::Request {
        config: dynamic_value(&Value::object([("greeting", Value::string(greeting))]), &ty),
    };

    let ok = client
        .validate_provider_config(validate("hello"))
        .await
        .expect("rpc")
        .into_inner();
    assert!(ok.diagnostics.is_empty(), "{:?}", ok.diagnostics);

    let bad = client
        .validate_provider_config(validate("forbidden"))
        .await
        .expect("rpc")
        .into_inner();
    let [diagnostic] = bad.diagnostics.as_slice() else {
        panic!("one diagnostic expected: {:?}", bad.diagnostics)
    };
    assert_eq!(diagnostic.severity, pb::diagnostic::Severity::Error as i32);
    let steps = &diagnostic.attribute.as_ref().expect("attribute path").steps;
    assert_eq!(
        steps[0].selector,
        Some(pb::attribute_path::step::Selector::AttributeName(
            "greeting".into()
        ))
    );
}

/// A large CRD in a manifest reaches the provider three times in one plan request (config,
/// prior and proposed state): the plugin takes and sends such messages, far past gRPC's
/// default 4 MiB, as the engine's own client does (go-plugin allows any size).
#[tokio::test]
async fn a_plan_of_many_mebibytes_passes_through_the_plugin() {
    let plugin = start(ECHO).await;
    let max = plugin_runtime::MAX_MESSAGE_SIZE;
    let mut client = provider_client(&plugin)
        .await
        .max_decoding_message_size(max)
        .max_encoding_message_size(max);
    let ty = Type::object([("input", Type::String), ("output", Type::String)]);
    let big = "x".repeat(5 << 20);
    let prior = Value::object([("input", Value::string(&big)), ("output", Value::string(&big))]);
    let proposed = Value::object([("input", Value::string(&big)), ("output", Value::unknown())]);
    let config = Value::object([("input", Value::string(&big)), ("output", Value::Null)]);
    // 15 MiB in, 10 MiB out.
    let plan = client
        .plan_resource_change(pb::plan_resource_change::Request {
            type_name: "echo_message".into(),
            prior_state: dynamic_value(&prior, &ty),
            proposed_new_state: dynamic_value(&proposed, &ty),
            config: dynamic_value(&config, &ty),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|status| panic!("a 15 MiB plan request failed: {status}"))
        .into_inner();
    assert!(plan.diagnostics.is_empty(), "{:?}", plan.diagnostics);
    let planned = plan.planned_state.expect("planned state");
    assert_eq!(
        codec::decode_msgpack(&planned.msgpack, &ty).expect("decodes"),
        prior
    );
}

#[tokio::test]
async fn plan_and_apply_round_trip_values() {
    let plugin = start(ECHO).await;
    let mut client = provider_client(&plugin).await;
    let ty = Type::object([("input", Type::String), ("output", Type::String)]);
    let config = Value::object([("input", Value::string("hi")), ("output", Value::Null)]);
    let proposed = Value::object([("input", Value::string("hi")), ("output", Value::unknown())]);
    let plan = client
        .plan_resource_change(pb::plan_resource_change::Request {
            type_name: "echo_message_v1".into(),
            prior_state: dynamic_value(&Value::Null, &ty),
            proposed_new_state: dynamic_value(&proposed, &ty),
            config: dynamic_value(&config, &ty),
            ..Default::default()
        })
        .await
        .expect("rpc")
        .into_inner();
    assert!(plan.diagnostics.is_empty(), "{:?}", plan.diagnostics);
    let planned = plan.planned_state.expect("planned state");
    let expected = Value::object([("input", Value::string("hi")), ("output", Value::string("hi"))]);
    assert_eq!(
        codec::decode_msgpack(&planned.msgpack, &ty).expect("decodes"),
        expected
    );

    let apply = client
        .apply_resource_change(pb::apply_resource_change::Request {
            type_name: "echo_message".into(),
            prior_state: dynamic_value(&Value::Null, &ty),
            planned_state: Some(planned),
            config: dynamic_value(&config, &ty),
            ..Default::default()
        })
        .await
        .expect("rpc")
        .into_inner();
    let new_state = apply.new_state.expect("new state");
    assert_eq!(
        codec::decode_msgpack(&new_state.msgpack, &ty).expect("decodes"),
        expected
    );

    // A destroy is planned without the resource, as a null.
    let destroy = client
        .plan_resource_change(pb::plan_resource_change::Request {
            type_name: "echo_message".into(),
            prior_state: Some(new_state),
            proposed_new_state: dynamic_value(&Value::Null, &ty),
            config: dynamic_value(&Value::Null, &ty),
            ..Default::default()
        })
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(destroy.planned_state.expect("planned").msgpack, vec![0xc0]);

    let unknown = client
        .validate_resource_config(pb::validate_resource_config::Request {
            type_name: "echo_nothing".into(),
            config: dynamic_value(&Value::Null, &ty),
            client_capabilities: None,
        })
        .await
        .expect("rpc")
        .into_inner();
    assert!(
        unknown.diagnostics[0].detail.contains("echo_nothing"),
        "{:?}",
        unknown.diagnostics
    );
}

#[tokio::test]
async fn shutdown_ends_the_process() {
    let mut plugin = start(ECHO).await;
    let mut controller = GrpcControllerClient::new(plugin.connect().await.expect("connect"));
    controller.shutdown(Empty {}).await.expect("Shutdown");
    let status = plugin
        .wait_exit(Duration::from_secs(3))
        .await
        .expect("exits within 3 s");
    assert!(status.success(), "{status}");
    assert!(
        !std::path::Path::new(&plugin.handshake.address).exists(),
        "the socket is removed at exit"
    );
}

#[tokio::test]
async fn other_client_certificates_are_refused() {
    let plugin = start(ECHO).await;
    let stranger = plugin_process::engine_identity().expect("certificate");
    for identity in [Some(stranger), None] {
        let described = format!("{identity:?}").len();
        let refused = match plugin.connect_as(identity).await {
            Err(_) => true,
            Ok(channel) => ProviderClient::new(channel)
                .get_provider_schema(pb::get_provider_schema::Request {})
                .await
                .is_err(),
        };
        assert!(
            refused,
            "a connection without the engine's certificate was served ({described})"
        );
    }
    // The rightful client still gets in afterwards.
    let mut client = provider_client(&plugin).await;
    client
        .get_metadata(pb::get_metadata::Request {})
        .await
        .expect("GetMetadata");
}

#[tokio::test]
async fn refuses_to_run_without_the_cookie() {
    let options = StartOptions {
        cookie: false,
        ..StartOptions::default()
    };
    match plugin_process::start_plugin(&binary(ECHO).expect("binary"), &options).await {
        Err(PluginError::Exited { status, stderr }) => {
            assert_eq!(status.code(), Some(1));
            assert!(stderr.contains("This binary is a plugin"), "{stderr}");
        }
        Err(e) => panic!("unexpected failure: {e}"),
        Ok(_) => panic!("the plugin ran without the magic cookie"),
    }
}

#[tokio::test]
async fn refuses_protocol_5_only() {
    let options = StartOptions {
        protocol_versions: "5".into(),
        ..StartOptions::default()
    };
    match plugin_process::start_plugin(&binary(ECHO).expect("binary"), &options).await {
        Err(PluginError::Exited { status, stderr }) => {
            assert_eq!(status.code(), Some(1));
            assert!(stderr.contains("protocol 6 only"), "{stderr}");
        }
        Err(e) => panic!("unexpected failure: {e}"),
        Ok(_) => panic!("the plugin served protocol 5"),
    }
}

#[tokio::test]
async fn plain_connection_without_tls() {
    let options = StartOptions {
        tls: false,
        ..StartOptions::default()
    };
    let plugin = plugin_process::start_plugin(&binary(ECHO).expect("binary"), &options)
        .await
        .expect("handshake");
    assert!(plugin.handshake.server_cert.is_none());
    let mut client = provider_client(&plugin).await;
    client
        .get_metadata(pb::get_metadata::Request {})
        .await
        .expect("GetMetadata");
}

#[tokio::test]
async fn exits_when_the_parent_dies() {
    // A shell starts the plugin in the background, prints its pid, and exits shortly after.
    let echo = binary(ECHO).expect("binary");
    let output = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(r#""$0" > /dev/null 2>&1 & echo $!; sleep 1"#)
        .arg(&echo)
        .env(
            plugin_runtime::MAGIC_COOKIE_KEY,
            plugin_runtime::MAGIC_COOKIE_VALUE,
        )
        .env("TF_DISABLE_PLUGIN_TLS", "1")
        .output()
        .await
        .expect("shell runs");
    let pid: u32 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .expect("pid printed");
    let status_file = format!("/proc/{pid}/status");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        // Gone, or a zombie waiting for a reaper: either way the plugin has exited.
        let alive = std::fs::read_to_string(&status_file)
            .map(|s| !s.lines().any(|l| l.starts_with("State:") && l.contains('Z')))
            .unwrap_or(false);
        if !alive {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "plugin {pid} outlived its parent"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
