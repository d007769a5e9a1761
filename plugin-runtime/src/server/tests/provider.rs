//! Tests of the provider-level RPCs: metadata, schemas (built once, on first use) and the
//! protocol layer's errors.

use super::*;

/// [`Widget`], counting how often its schema is built.
struct CountedWidget(Arc<std::sync::atomic::AtomicUsize>);

#[async_trait]
impl Resource for CountedWidget {
    fn type_name(&self) -> &'static str {
        Widget.type_name()
    }

    fn aliases(&self) -> &'static [&'static str] {
        Widget.aliases()
    }

    fn schema(&self) -> Schema {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Widget.schema()
    }

    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        Widget.plan(request).await
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        Widget.apply(request).await
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        Widget.read(request).await
    }

    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        Widget.import(request).await
    }
}

struct CountedProvider(Arc<std::sync::atomic::AtomicUsize>);

#[async_trait]
impl Provider for CountedProvider {
    fn schema(&self) -> Schema {
        TestProvider.schema()
    }

    async fn configure(&self, _: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![Arc::new(CountedWidget(self.0.clone()))]
    }
}

#[tokio::test]
async fn a_schema_is_built_on_first_use_and_once() {
    let built = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = || built.load(std::sync::atomic::Ordering::SeqCst);
    let service = ProviderService::new(Arc::new(CountedProvider(built.clone())));
    assert_eq!(count(), 0, "a schema was built before any call needed it");

    // Through the alias: the entry the type name shares.
    service
        .validate_resource_config(Request::new(pb::validate_resource_config::Request {
            type_name: "test_widget_v1".into(),
            config: None,
            client_capabilities: None,
        }))
        .await
        .expect("rpc");
    assert_eq!(count(), 1);
    let schemas = service
        .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(count(), 1, "the schema was built again");
    assert_eq!(
        schemas.resource_schemas["test_widget"],
        schemas.resource_schemas["test_widget_v1"]
    );
    assert_eq!(schemas.resource_schemas["test_widget"].version, 2);
}

#[tokio::test]
async fn functions_and_ephemeral_resources_are_declared() {
    let service = service();
    let schema = service
        .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    let describe = &schema.functions["describe"];
    assert_eq!(describe.parameters[0].name, "text");
    assert_eq!(describe.parameters[0].r#type, b"\"string\"");
    assert!(!describe.parameters[0].allow_null_value);
    let variadic = describe.variadic_parameter.as_ref().expect("variadic");
    assert_eq!(variadic.r#type, b"\"number\"");
    assert_eq!(describe.r#return.as_ref().expect("return").r#type, b"\"dynamic\"");
    assert_eq!(describe.summary, "s");
    let lease = schema.ephemeral_resource_schemas["test_lease"]
        .block
        .as_ref()
        .expect("block");
    assert!(
        lease
            .attributes
            .iter()
            .any(|a| a.name == "id" && a.computed && a.sensitive)
    );

    let functions = service
        .get_functions(Request::new(pb::get_functions::Request {}))
        .await
        .expect("rpc")
        .into_inner()
        .functions;
    assert_eq!(functions.get("describe"), Some(describe));

    let metadata = service
        .get_metadata(Request::new(pb::get_metadata::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(metadata.functions[0].name, "describe");
    assert_eq!(metadata.ephemeral_resources[0].type_name, "test_lease");
}

#[tokio::test]
async fn the_schema_need_not_be_fetched_again() {
    let service = service();
    let metadata = service
        .get_metadata(Request::new(pb::get_metadata::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    let schema = service
        .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    for capabilities in [metadata.server_capabilities, schema.server_capabilities] {
        let capabilities = capabilities.expect("capabilities");
        assert!(capabilities.get_provider_schema_optional);
        assert!(capabilities.move_resource_state);
    }
}

#[tokio::test]
async fn schemas_carry_every_alias_and_nesting_mode() {
    use pb::schema::nested_block::NestingMode;
    let response = service()
        .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .expect("rpc")
        .into_inner();
    let provider = response.provider.and_then(|s| s.block).expect("provider block");
    assert!(provider.attributes[0].sensitive);

    let schemas = &response.resource_schemas;
    assert_eq!(schemas.get("test_widget"), schemas.get("test_widget_v1"));
    let widget = schemas.get("test_widget").expect("widget");
    assert_eq!(widget.version, 2);
    let block = widget.block.as_ref().expect("block");
    assert_eq!(block.version, 2);
    let id = &block.attributes[0];
    assert!(id.computed && id.deprecated && !id.optional);
    assert_eq!(id.r#type, b"\"string\"");
    let modes: Vec<(String, i32, i64, i64)> = block
        .block_types
        .iter()
        .map(|b| (b.type_name.clone(), b.nesting, b.min_items, b.max_items))
        .collect();
    assert_eq!(
        modes,
        vec![
            ("spec".into(), NestingMode::List as i32, 1, 1),
            ("tags".into(), NestingMode::Set as i32, 0, 0),
            ("named".into(), NestingMode::Map as i32, 0, 0),
            ("single".into(), NestingMode::Single as i32, 0, 0),
            ("group".into(), NestingMode::Group as i32, 0, 0),
        ]
    );
}

#[tokio::test]
async fn protocol_errors_become_diagnostics() {
    let unknown = service()
        .validate_resource_config(Request::new(pb::validate_resource_config::Request {
            type_name: "test_gadget".into(),
            config: None,
            client_capabilities: None,
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert!(unknown.diagnostics[0].detail.contains("\"test_gadget\""));

    // {"size": "big"} where size is a number: the diagnostic points at `size`.
    let bad = pb::DynamicValue {
        msgpack: vec![0x81, 0xa4, b's', b'i', b'z', b'e', 0xa3, b'b', b'i', b'g'],
        json: Vec::new(),
    };
    let response = service()
        .plan_resource_change(Request::new(pb::plan_resource_change::Request {
            type_name: "test_widget".into(),
            proposed_new_state: Some(bad),
            ..Default::default()
        }))
        .await
        .expect("rpc")
        .into_inner();
    let diagnostic = &response.diagnostics[0];
    assert_eq!(diagnostic.severity, pb::diagnostic::Severity::Error as i32);
    assert_eq!(
        diagnostic.attribute,
        Some(to_proto_path(AttributePath::root("size"))),
        "{diagnostic:?}"
    );

    let flatmap = service()
        .upgrade_resource_state(Request::new(pb::upgrade_resource_state::Request {
            type_name: "test_widget".into(),
            version: 0,
            raw_state: Some(pb::RawState {
                json: Vec::new(),
                flatmap: HashMap::from([("id".to_string(), "x".to_string())]),
            }),
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(flatmap.diagnostics[0].summary, "Unsupported state format");
    // It says what to do, for which type.
    let detail = &flatmap.diagnostics[0].detail;
    assert!(
        detail.contains("test_widget") && detail.contains("terraform apply -refresh-only"),
        "{detail}"
    );
}
