//! The tfplugin6 `Provider` gRPC service, translating each RPC into calls on the
//! [`Provider`], [`Resource`] and [`DataSource`] traits.
//!
//! Values are decoded against the schema of the type named in the request and encoded
//! back the same way; failures of the protocol layer itself (an unknown type name, a value
//! that does not decode) become error diagnostics here, at one boundary. Nothing here logs
//! a value: configurations and states carry secrets.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::codec::{self, CodecError};
use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
use crate::proto::tfplugin6 as pb;
use crate::provider::{
    ApplyRequest, DataSource, ImportRequest, PlanRequest, Provider, ReadDataRequest, ReadRequest, Resource,
};
use crate::schema::{Attribute, Block, Nesting, Schema};
use crate::types::Type;
use crate::value::Value;

type RpcResult<T> = Result<Response<T>, Status>;

/// The largest message the service takes or sends: the engine sends a resource's config,
/// prior state and proposed state in one request (a large CRD manifest three times), far
/// beyond tonic's default 4 MiB. 256 MiB is what terraform-plugin-go's servers allow.
pub const MAX_MESSAGE_SIZE: usize = 256 << 20;

/// The tfplugin6 gRPC service for `provider`, with [`MAX_MESSAGE_SIZE`] both ways.
pub fn grpc_service<P: Provider>(provider: P) -> pb::provider_server::ProviderServer<ProviderService<P>> {
    pb::provider_server::ProviderServer::new(ProviderService::new(provider))
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
}

/// What went wrong in the protocol layer, before or after a provider call.
#[derive(Debug, thiserror::Error)]
enum ServerError {
    #[error("this provider has no resource type {0:?}")]
    UnknownResource(String),
    #[error("this provider has no data source {0:?}")]
    UnknownDataSource(String),
    #[error("invalid {what} from the engine: {source}")]
    Decode { what: &'static str, source: CodecError },
    #[error("the provider produced an invalid {what}: {source}")]
    Encode { what: &'static str, source: CodecError },
    #[error("stored state in the legacy flatmap format cannot be upgraded by this provider")]
    FlatmapState,
}

impl From<ServerError> for Diagnostic {
    fn from(e: ServerError) -> Diagnostic {
        let path = match &e {
            ServerError::Decode { source, .. } | ServerError::Encode { source, .. } => {
                Some(source.path.clone()).filter(|p| !p.0.is_empty())
            }
            _ => None,
        };
        let summary = match &e {
            ServerError::UnknownResource(_) => "Unknown resource type",
            ServerError::UnknownDataSource(_) => "Unknown data source",
            ServerError::Decode { .. } => "Invalid value from Terraform",
            ServerError::Encode { .. } => "Provider produced an invalid value",
            ServerError::FlatmapState => "Unsupported state format",
        };
        let diagnostic = Diagnostic::error(summary, e.to_string());
        match path {
            Some(p) => diagnostic.at(p),
            None => diagnostic,
        }
    }
}

impl From<ServerError> for Diagnostics {
    fn from(e: ServerError) -> Diagnostics {
        Diagnostic::from(e).into()
    }
}

/// A resource type with its schema, computed once.
struct ResourceEntry {
    resource: Arc<dyn Resource>,
    schema: Schema,
    value_type: Type,
}

struct DataSourceEntry {
    data_source: Arc<dyn DataSource>,
    schema: Schema,
    value_type: Type,
}

/// The tfplugin6 service over one provider.
pub struct ProviderService<P: Provider> {
    provider: Arc<P>,
    provider_schema: Schema,
    provider_type: Type,
    /// Keyed by type name and by every alias.
    resources: BTreeMap<String, Arc<ResourceEntry>>,
    data_sources: BTreeMap<String, Arc<DataSourceEntry>>,
}

impl<P: Provider> ProviderService<P> {
    pub fn new(provider: P) -> ProviderService<P> {
        let provider_schema = provider.schema();
        let mut resources = BTreeMap::new();
        for resource in provider.resources() {
            let schema = resource.schema();
            let entry = Arc::new(ResourceEntry {
                value_type: schema.value_type(),
                schema,
                resource: resource.clone(),
            });
            for name in std::iter::once(resource.type_name()).chain(resource.aliases().iter().copied()) {
                resources.insert(name.to_string(), entry.clone());
            }
        }
        let data_sources = provider
            .data_sources()
            .into_iter()
            .map(|data_source| {
                let schema = data_source.schema();
                let entry = DataSourceEntry {
                    value_type: schema.value_type(),
                    schema,
                    data_source: data_source.clone(),
                };
                (data_source.type_name().to_string(), Arc::new(entry))
            })
            .collect();
        ProviderService {
            provider_type: provider_schema.value_type(),
            provider_schema,
            provider: Arc::new(provider),
            resources,
            data_sources,
        }
    }

    fn resource(&self, type_name: &str) -> Result<Arc<ResourceEntry>, ServerError> {
        self.resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownResource(type_name.to_string()))
    }

    fn data_source(&self, type_name: &str) -> Result<Arc<DataSourceEntry>, ServerError> {
        self.data_sources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownDataSource(type_name.to_string()))
    }

    fn capabilities() -> pb::ServerCapabilities {
        pb::ServerCapabilities {
            plan_destroy: false,
            get_provider_schema_optional: false,
            move_resource_state: false,
            generate_resource_config: false,
        }
    }
}

fn decode(value: Option<&pb::DynamicValue>, ty: &Type, what: &'static str) -> Result<Value, ServerError> {
    let Some(value) = value else {
        return Ok(Value::Null);
    };
    codec::decode_dynamic_value(&value.msgpack, &value.json, ty)
        .map_err(|source| ServerError::Decode { what, source })
}

fn encode(value: &Value, ty: &Type, what: &'static str) -> Result<pb::DynamicValue, ServerError> {
    let msgpack = codec::encode_msgpack(value, ty).map_err(|source| ServerError::Encode { what, source })?;
    Ok(pb::DynamicValue {
        msgpack,
        json: Vec::new(),
    })
}

fn to_proto_diagnostics(diagnostics: Diagnostics) -> Vec<pb::Diagnostic> {
    diagnostics.into_iter().map(to_proto_diagnostic).collect()
}

fn to_proto_diagnostic(d: Diagnostic) -> pb::Diagnostic {
    let severity = match d.severity {
        Severity::Error => pb::diagnostic::Severity::Error,
        Severity::Warning => pb::diagnostic::Severity::Warning,
    };
    pb::Diagnostic {
        severity: severity as i32,
        summary: d.summary,
        detail: d.detail,
        attribute: d.attribute.map(to_proto_path),
    }
}

fn to_proto_path(path: AttributePath) -> pb::AttributePath {
    use pb::attribute_path::step::Selector;
    let steps = path
        .0
        .into_iter()
        .map(|step| pb::attribute_path::Step {
            selector: Some(match step {
                PathStep::Attribute(name) => Selector::AttributeName(name),
                PathStep::Key(key) => Selector::ElementKeyString(key),
                PathStep::Index(i) => Selector::ElementKeyInt(i),
            }),
        })
        .collect();
    pb::AttributePath { steps }
}

fn to_proto_schema(schema: &Schema) -> pb::Schema {
    pb::Schema {
        version: schema.version,
        block: Some(to_proto_block(&schema.block, schema.version)),
    }
}

/// An attribute; a nested one carries its attributes instead of a type.
fn to_proto_attribute(a: &Attribute) -> pb::schema::Attribute {
    use pb::schema::object::NestingMode;
    let nested_type = a.nested.as_ref().map(|n| pb::schema::Object {
        attributes: n.attributes.iter().map(to_proto_attribute).collect(),
        nesting: match n.nesting {
            Nesting::Single | Nesting::Group => NestingMode::Single,
            Nesting::List => NestingMode::List,
            Nesting::Set => NestingMode::Set,
            Nesting::Map => NestingMode::Map,
        } as i32,
        ..Default::default()
    });
    pb::schema::Attribute {
        name: a.name.clone(),
        r#type: if nested_type.is_some() {
            Vec::new()
        } else {
            a.ty.to_json_bytes()
        },
        nested_type,
        description: a.description.clone(),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: pb::StringKind::Markdown as i32,
        deprecated: a.deprecated,
        write_only: a.write_only,
    }
}

fn to_proto_block(block: &Block, version: i64) -> pb::schema::Block {
    use pb::schema::nested_block::NestingMode;
    let attributes = block.attributes.iter().map(to_proto_attribute).collect();
    let block_types = block
        .blocks
        .iter()
        .map(|b| pb::schema::NestedBlock {
            type_name: b.type_name.clone(),
            block: Some(to_proto_block(&b.block, 0)),
            nesting: match b.nesting {
                Nesting::Single => NestingMode::Single,
                Nesting::Group => NestingMode::Group,
                Nesting::List => NestingMode::List,
                Nesting::Set => NestingMode::Set,
                Nesting::Map => NestingMode::Map,
            } as i32,
            min_items: b.min_items,
            max_items: b.max_items,
        })
        .collect();
    pb::schema::Block {
        version,
        attributes,
        block_types,
        description: block.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
        deprecated: block.deprecated,
    }
}

/// Errors for every write-only attribute `config` sets, for an engine whose client
/// capabilities do not allow write-only attributes: such an engine would keep the value in
/// its plan and state, which is what write-only attributes exist to prevent.
fn write_only_refused(block: &Block, config: &Value) -> Diagnostics {
    let mut paths = Vec::new();
    write_only_set(block, config, &AttributePath::default(), &mut paths);
    paths
        .into_iter()
        .map(|path| {
            Diagnostic::error(
                "Write-only attribute not allowed",
                format!(
                    "{path} is write-only, and this engine does not support write-only attributes \
                     (Terraform 1.11 or later does): its value would be kept in the plan and state. \
                     Leave it unset, or use an engine that supports write-only attributes."
                ),
            )
            .at(path)
        })
        .collect()
}

/// The paths of the write-only attributes set (not null) in `value`, a value of `block`.
fn write_only_set(block: &Block, value: &Value, at: &AttributePath, out: &mut Vec<AttributePath>) {
    if value.is_null() || value.is_unknown() {
        return;
    }
    for attribute in &block.attributes {
        let path = at.clone().attribute(&attribute.name);
        let inner = value.get(&attribute.name);
        if attribute.write_only && !inner.is_null() {
            out.push(path);
        } else if let Some(nested) = &attribute.nested {
            let block = Block {
                attributes: nested.attributes.clone(),
                ..Block::default()
            };
            write_only_in_nesting(&block, nested.nesting, inner, &path, out);
        }
    }
    for nested in &block.blocks {
        let path = at.clone().attribute(&nested.type_name);
        write_only_in_nesting(
            &nested.block,
            nested.nesting,
            value.get(&nested.type_name),
            &path,
            out,
        );
    }
}

fn write_only_in_nesting(
    block: &Block,
    nesting: Nesting,
    value: &Value,
    at: &AttributePath,
    out: &mut Vec<AttributePath>,
) {
    match nesting {
        Nesting::Single | Nesting::Group => write_only_set(block, value, at, out),
        Nesting::List => {
            for (i, element) in value.elements().iter().enumerate() {
                let path = at.clone().index(i64::try_from(i).unwrap_or(i64::MAX));
                write_only_set(block, element, &path, out);
            }
        }
        // A set element has no path of its own: the set's path names it.
        Nesting::Set => {
            for element in value.elements() {
                write_only_set(block, element, at, out);
            }
        }
        Nesting::Map => {
            for (key, element) in value.entries().into_iter().flatten() {
                write_only_set(block, element, &at.clone().key(key), out);
            }
        }
    }
}

/// Turns a handler's outcome into its response's diagnostics: a protocol-layer error
/// ends the call as one error diagnostic.
fn diagnostics_of(result: Result<Diagnostics, ServerError>) -> Vec<pb::Diagnostic> {
    to_proto_diagnostics(result.unwrap_or_else(Diagnostics::from))
}

#[tonic::async_trait]
impl<P: Provider> pb::provider_server::Provider for ProviderService<P> {
    async fn get_metadata(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> RpcResult<pb::get_metadata::Response> {
        use pb::get_metadata::{DataSourceMetadata, ResourceMetadata};
        Ok(Response::new(pb::get_metadata::Response {
            server_capabilities: Some(Self::capabilities()),
            resources: self
                .resources
                .keys()
                .map(|name| ResourceMetadata {
                    type_name: name.clone(),
                })
                .collect(),
            data_sources: self
                .data_sources
                .keys()
                .map(|name| DataSourceMetadata {
                    type_name: name.clone(),
                })
                .collect(),
            ..Default::default()
        }))
    }

    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> RpcResult<pb::get_provider_schema::Response> {
        Ok(Response::new(pb::get_provider_schema::Response {
            provider: Some(to_proto_schema(&self.provider_schema)),
            resource_schemas: self
                .resources
                .iter()
                .map(|(name, entry)| (name.clone(), to_proto_schema(&entry.schema)))
                .collect::<HashMap<_, _>>(),
            data_source_schemas: self
                .data_sources
                .iter()
                .map(|(name, entry)| (name.clone(), to_proto_schema(&entry.schema)))
                .collect::<HashMap<_, _>>(),
            server_capabilities: Some(Self::capabilities()),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(
        &self,
        request: Request<pb::validate_provider_config::Request>,
    ) -> RpcResult<pb::validate_provider_config::Response> {
        let request = request.into_inner();
        let result = decode(
            request.config.as_ref(),
            &self.provider_type,
            "provider configuration",
        )
        .map(|config| self.provider.validate_config(&config));
        Ok(Response::new(pb::validate_provider_config::Response {
            diagnostics: diagnostics_of(result),
        }))
    }

    async fn validate_resource_config(
        &self,
        request: Request<pb::validate_resource_config::Request>,
    ) -> RpcResult<pb::validate_resource_config::Response> {
        let request = request.into_inner();
        let result = self.resource(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                &entry.value_type,
                "resource configuration",
            )?;
            let allowed = request
                .client_capabilities
                .as_ref()
                .is_some_and(|c| c.write_only_attributes_allowed);
            let mut diagnostics = if allowed {
                Diagnostics::new()
            } else {
                write_only_refused(&entry.schema.block, &config)
            };
            diagnostics.extend(entry.resource.validate(&config));
            Ok(diagnostics)
        });
        Ok(Response::new(pb::validate_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        request: Request<pb::validate_data_resource_config::Request>,
    ) -> RpcResult<pb::validate_data_resource_config::Response> {
        let request = request.into_inner();
        let result = self.data_source(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                &entry.value_type,
                "data source configuration",
            )?;
            Ok(entry.data_source.validate(&config))
        });
        Ok(Response::new(pb::validate_data_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<pb::upgrade_resource_state::Request>,
    ) -> RpcResult<pb::upgrade_resource_state::Response> {
        let request = request.into_inner();
        let outcome = (|| {
            let entry = self.resource(&request.type_name)?;
            let raw = request.raw_state.unwrap_or_default();
            if raw.json.is_empty() && !raw.flatmap.is_empty() {
                return Err(ServerError::FlatmapState.into());
            }
            let state =
                codec::decode_json(&raw.json, &entry.value_type).map_err(|source| ServerError::Decode {
                    what: "stored state",
                    source,
                })?;
            let upgraded = entry.resource.upgrade_state(request.version, state)?;
            Ok(encode(&upgraded, &entry.value_type, "upgraded state")?)
        })();
        let (upgraded_state, diagnostics) = match outcome {
            Ok(state) => (Some(state), Vec::new()),
            Err(diagnostics) => (None, to_proto_diagnostics(diagnostics)),
        };
        Ok(Response::new(pb::upgrade_resource_state::Response {
            upgraded_state,
            diagnostics,
        }))
    }

    async fn get_resource_identity_schemas(
        &self,
        _: Request<pb::get_resource_identity_schemas::Request>,
    ) -> RpcResult<pb::get_resource_identity_schemas::Response> {
        Ok(Response::new(
            pb::get_resource_identity_schemas::Response::default(),
        ))
    }

    async fn configure_provider(
        &self,
        request: Request<pb::configure_provider::Request>,
    ) -> RpcResult<pb::configure_provider::Response> {
        let request = request.into_inner();
        let diagnostics = match decode(
            request.config.as_ref(),
            &self.provider_type,
            "provider configuration",
        ) {
            Ok(config) => self.provider.configure(&config).await,
            Err(e) => e.into(),
        };
        Ok(Response::new(pb::configure_provider::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
        }))
    }

    async fn read_resource(
        &self,
        request: Request<pb::read_resource::Request>,
    ) -> RpcResult<pb::read_resource::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::read_resource::Response, Diagnostics> = async {
            let entry = self.resource(&request.type_name)?;
            let current_state = decode(request.current_state.as_ref(), &entry.value_type, "current state")?;
            let response = entry
                .resource
                .read(ReadRequest {
                    type_name: request.type_name.clone(),
                    current_state,
                    private: request.private.clone(),
                })
                .await?;
            Ok(pb::read_resource::Response {
                new_state: Some(encode(&response.new_state, &entry.value_type, "refreshed state")?),
                private: response.private,
                diagnostics: to_proto_diagnostics(response.diagnostics),
                ..Default::default()
            })
        }
        .await;
        // On failure the engine keeps the state it had; hand it back unchanged.
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::read_resource::Response {
                new_state: request.current_state,
                private: request.private,
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn plan_resource_change(
        &self,
        request: Request<pb::plan_resource_change::Request>,
    ) -> RpcResult<pb::plan_resource_change::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::plan_resource_change::Response, Diagnostics> = async {
            let entry = self.resource(&request.type_name)?;
            let ty = &entry.value_type;
            let proposed_new_state = decode(request.proposed_new_state.as_ref(), ty, "proposed new state")?;
            if proposed_new_state.is_null() {
                // A destroy: nothing to plan, and resources never see it.
                return Ok(pb::plan_resource_change::Response {
                    planned_state: Some(encode(&Value::Null, ty, "planned state")?),
                    planned_private: request.prior_private,
                    ..Default::default()
                });
            }
            let response = entry
                .resource
                .plan(PlanRequest {
                    type_name: request.type_name.clone(),
                    prior_state: decode(request.prior_state.as_ref(), ty, "prior state")?,
                    proposed_new_state,
                    config: decode(request.config.as_ref(), ty, "configuration")?,
                    prior_private: request.prior_private,
                })
                .await?;
            Ok(pb::plan_resource_change::Response {
                planned_state: Some(encode(&response.planned_state, ty, "planned state")?),
                requires_replace: response.requires_replace.into_iter().map(to_proto_path).collect(),
                planned_private: response.planned_private,
                diagnostics: to_proto_diagnostics(response.diagnostics),
                ..Default::default()
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::plan_resource_change::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn apply_resource_change(
        &self,
        request: Request<pb::apply_resource_change::Request>,
    ) -> RpcResult<pb::apply_resource_change::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::apply_resource_change::Response, Diagnostics> = async {
            let entry = self.resource(&request.type_name)?;
            let ty = &entry.value_type;
            let response = entry
                .resource
                .apply(ApplyRequest {
                    type_name: request.type_name.clone(),
                    prior_state: decode(request.prior_state.as_ref(), ty, "prior state")?,
                    planned_state: decode(request.planned_state.as_ref(), ty, "planned state")?,
                    config: decode(request.config.as_ref(), ty, "configuration")?,
                    planned_private: request.planned_private,
                })
                .await;
            let mut diagnostics = response.diagnostics;
            let new_state = match encode(&response.new_state, ty, "new state") {
                Ok(state) => Some(state),
                Err(e) => {
                    diagnostics.push(e.into());
                    None
                }
            };
            Ok(pb::apply_resource_change::Response {
                new_state,
                private: response.private,
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::apply_resource_change::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn import_resource_state(
        &self,
        request: Request<pb::import_resource_state::Request>,
    ) -> RpcResult<pb::import_resource_state::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::import_resource_state::Response, Diagnostics> = async {
            let entry = self.resource(&request.type_name)?;
            let response = entry
                .resource
                .import(ImportRequest {
                    type_name: request.type_name.clone(),
                    id: request.id,
                })
                .await?;
            let imported_resources = response
                .imported
                .into_iter()
                .map(|imported| {
                    let target = self.resource(&imported.type_name)?;
                    Ok(pb::import_resource_state::ImportedResource {
                        state: Some(encode(&imported.state, &target.value_type, "imported state")?),
                        type_name: imported.type_name,
                        private: imported.private,
                        identity: None,
                    })
                })
                .collect::<Result<Vec<_>, ServerError>>()?;
            Ok(pb::import_resource_state::Response {
                imported_resources,
                diagnostics: to_proto_diagnostics(response.diagnostics),
                deferred: None,
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::import_resource_state::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn read_data_source(
        &self,
        request: Request<pb::read_data_source::Request>,
    ) -> RpcResult<pb::read_data_source::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::read_data_source::Response, Diagnostics> = async {
            let entry = self.data_source(&request.type_name)?;
            let config = decode(request.config.as_ref(), &entry.value_type, "configuration")?;
            let response = entry
                .data_source
                .read(ReadDataRequest {
                    type_name: request.type_name.clone(),
                    config,
                })
                .await?;
            Ok(pb::read_data_source::Response {
                state: Some(encode(&response.state, &entry.value_type, "data source state")?),
                diagnostics: to_proto_diagnostics(response.diagnostics),
                deferred: None,
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::read_data_source::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> RpcResult<pb::get_functions::Response> {
        Ok(Response::new(pb::get_functions::Response::default()))
    }

    async fn stop_provider(
        &self,
        _: Request<pb::stop_provider::Request>,
    ) -> RpcResult<pb::stop_provider::Response> {
        self.provider.stop().await;
        Ok(Response::new(pb::stop_provider::Response::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ApplyResponse, ImportResponse, PlanResponse, ReadResponse};
    use crate::schema::{Attribute, NestedBlock};
    use async_trait::async_trait;
    use pb::provider_server::Provider as _;

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
            ApplyResponse {
                new_state: request.planned_state,
                ..ApplyResponse::default()
            }
        }

        async fn read(&self, _: ReadRequest) -> Result<ReadResponse, Diagnostics> {
            Err(Diagnostic::error("Read failed", "the API is down").into())
        }

        async fn import(&self, _: ImportRequest) -> Result<ImportResponse, Diagnostics> {
            Ok(ImportResponse::default())
        }

        fn upgrade_state(&self, version: i64, mut state: Value) -> Result<Value, Diagnostics> {
            state.set("id", Value::string(format!("upgraded from {version}")));
            Ok(state)
        }
    }

    fn service() -> ProviderService<TestProvider> {
        ProviderService::new(TestProvider)
    }

    fn widget_type() -> Type {
        Widget.schema().value_type()
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
    async fn stored_json_state_is_upgraded_to_msgpack() {
        let raw = br#"{"id":"old","size":3,"gone":true,"spec":[{"key":"k"}],"tags":[],"named":{},"single":null,"group":{"key":"g"}}"#;
        let response = service()
            .upgrade_resource_state(Request::new(pb::upgrade_resource_state::Request {
                type_name: "test_widget_v1".into(),
                version: 1,
                raw_state: Some(pb::RawState {
                    json: raw.to_vec(),
                    flatmap: HashMap::new(),
                }),
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(response.diagnostics.is_empty(), "{:?}", response.diagnostics);
        let state = response.upgraded_state.expect("state");
        let value = codec::decode_msgpack(&state.msgpack, &widget_type()).expect("decodes");
        assert_eq!(value.get("id"), &Value::string("upgraded from 1"));
        assert_eq!(value.get("size"), &Value::int(3));
        assert_eq!(value.get("group").get("key"), &Value::string("g"));
    }

    #[tokio::test]
    async fn failed_reads_keep_the_state_and_report() {
        let state = pb::DynamicValue {
            msgpack: codec::encode_msgpack(&Value::object([("id", Value::string("x"))]), &widget_type())
                .expect("encodes"),
            json: Vec::new(),
        };
        let response = service()
            .read_resource(Request::new(pb::read_resource::Request {
                type_name: "test_widget".into(),
                current_state: Some(state.clone()),
                private: b"p".to_vec(),
                ..Default::default()
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(response.new_state, Some(state));
        assert_eq!(response.private, b"p");
        assert_eq!(response.diagnostics[0].summary, "Read failed");
    }

    #[test]
    fn write_only_values_are_refused_where_the_engine_cannot_keep_them_out_of_state() {
        let write_only = |name: &str| Attribute {
            write_only: true,
            ..Attribute::optional(name, Type::String, "w")
        };
        let block = Block::new("r")
            .attribute(write_only("password"))
            .attribute(Attribute::optional("size", Type::Number, "s"))
            .block(NestedBlock::new(
                "user",
                Nesting::List,
                Block::new("u").attribute(write_only("token")),
            ));
        let config = Value::object([
            ("password", Value::string("hunter2")),
            ("size", Value::int(1)),
            (
                "user",
                Value::List(vec![
                    Value::object([("token", Value::Null)]),
                    Value::object([("token", Value::string("t"))]),
                ]),
            ),
        ]);
        let refused = write_only_refused(&block, &config);
        let paths: Vec<String> = refused
            .0
            .iter()
            .map(|d| d.attribute.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect();
        assert_eq!(paths, ["password", "user[1].token"]);
        assert!(refused.has_errors());
        assert!(
            refused.0.iter().all(|d| !d.detail.contains("hunter2")),
            "values never show"
        );
        let unset = Value::object([("password", Value::Null), ("user", Value::List(vec![]))]);
        assert!(write_only_refused(&block, &unset).is_empty());
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
    }
}
