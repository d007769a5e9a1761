//! The tfplugin6 `Provider` gRPC service, translating each RPC into calls on the
//! [`Provider`], [`Resource`] and [`DataSource`] traits, and on provider-defined
//! [`Function`]s, [`EphemeralResource`]s, [`ListResource`]s and actions (their RPCs in
//! [`actions`]).
//!
//! Values are decoded against the schema of the type named in the request and encoded
//! back the same way; failures of the protocol layer itself (an unknown type name, a value
//! that does not decode) become error diagnostics here, at one boundary. Nothing here logs
//! a value: configurations and states carry secrets.

mod actions;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use tonic::{Request, Response, Status};

use crate::codec::{self, CodecError};
use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
use crate::ephemeral::{CloseRequest, EphemeralResource, OpenRequest, RenewRequest};
use crate::function::{Function, FunctionError, Parameter, Signature};
use crate::identity::IdentitySchema;
use crate::list::{ListEvent, ListRequest, ListResource, ListedObject};
use crate::proto::tfplugin6 as pb;
use crate::provider::{
    ApplyRequest, DataSource, ImportRequest, PlanRequest, Provider, ReadDataRequest, ReadRequest, Resource,
};
use crate::rules;
use crate::schema::{Attribute, Block, Nesting, Schema};
use crate::types::Type;
use crate::value::Value;

type RpcResult<T> = Result<Response<T>, Status>;

/// The largest message the service takes or sends: the engine sends a resource's config,
/// prior state and proposed state in one request (a large CRD manifest three times), far
/// beyond tonic's default 4 MiB. 256 MiB is what terraform-plugin-go's servers allow.
pub const MAX_MESSAGE_SIZE: usize = 256 << 20;

/// The tfplugin6 gRPC service for `provider`, with [`MAX_MESSAGE_SIZE`] both ways.
pub fn grpc_service(provider: Arc<dyn Provider>) -> pb::provider_server::ProviderServer<ProviderService> {
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
    #[error("this provider has no ephemeral resource type {0:?}")]
    UnknownEphemeralResource(String),
    #[error("this provider has no list resource type {0:?}")]
    UnknownListResource(String),
    #[error("this provider has no action type {0:?}")]
    UnknownAction(String),
    #[error("invalid {what} from the engine: {source}")]
    Decode { what: &'static str, source: CodecError },
    #[error("the provider produced an invalid {what}: {source}")]
    Encode { what: &'static str, source: CodecError },
    #[error("stored state in the legacy flatmap format cannot be upgraded by this provider")]
    FlatmapState,
    #[error("resource type {0:?} has no resource identity")]
    NoIdentity(String),
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
            ServerError::UnknownEphemeralResource(_) => "Unknown ephemeral resource type",
            ServerError::UnknownListResource(_) => "Unknown list resource type",
            ServerError::UnknownAction(_) => "Unknown action type",
            ServerError::Decode { .. } => "Invalid value from Terraform",
            ServerError::Encode { .. } => "Provider produced an invalid value",
            ServerError::FlatmapState => "Unsupported state format",
            ServerError::NoIdentity(_) => "No resource identity",
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

/// A type's schema and the value type its messages decode to, built when the type is first
/// used. The engine starts a plugin process for each phase of a command, and most of them
/// serve one or two types: building all of provider-live's schemas before the handshake took
/// 16 ms of every start, and only the process that answers GetProviderSchema needs them all.
#[derive(Default)]
struct Described(OnceLock<(Schema, Type)>);

/// An entry of one of the service's type tables: how to build its schema, and the cell that
/// keeps it.
trait Typed {
    fn described(&self) -> &Described;
    fn build_schema(&self) -> Schema;

    fn schema(&self) -> &Schema {
        &self.built().0
    }

    fn value_type(&self) -> &Type {
        &self.built().1
    }

    fn built(&self) -> &(Schema, Type) {
        self.described().0.get_or_init(|| {
            let schema = self.build_schema();
            let value_type = schema.value_type();
            (schema, value_type)
        })
    }
}

/// A resource type; its identity schema (small) is computed at once.
struct ResourceEntry {
    resource: Arc<dyn Resource>,
    described: Described,
    identity: Option<(IdentitySchema, Type)>,
}

impl ResourceEntry {
    /// The identity of the object `state` describes, on the wire: `None` when the resource
    /// has no identity or it is not wholly known yet (the engine refuses unknown identities).
    fn identity_of(&self, state: &Value) -> Result<Option<pb::ResourceIdentityData>, ServerError> {
        let Some((_, ty)) = &self.identity else {
            return Ok(None);
        };
        match self.resource.identity(state) {
            Some(identity) if identity.is_wholly_known() => Ok(Some(pb::ResourceIdentityData {
                identity_data: Some(encode(&identity, ty, "resource identity")?),
            })),
            _ => Ok(None),
        }
    }

    fn identity_type(&self, type_name: &str) -> Result<&Type, ServerError> {
        self.identity
            .as_ref()
            .map(|(_, ty)| ty)
            .ok_or_else(|| ServerError::NoIdentity(type_name.to_string()))
    }
}

struct DataSourceEntry {
    data_source: Arc<dyn DataSource>,
    described: Described,
}

struct EphemeralEntry {
    ephemeral: Arc<dyn EphemeralResource>,
    described: Described,
}

struct ListEntry {
    list: Arc<dyn ListResource>,
    described: Described,
}

/// Each entry builds its schema from the type it holds.
macro_rules! typed {
    ($($entry:ident . $field:ident),*) => {$(
        impl Typed for $entry {
            fn described(&self) -> &Described {
                &self.described
            }

            fn build_schema(&self) -> Schema {
                self.$field.schema()
            }
        }
    )*};
}

typed!(
    ResourceEntry.resource,
    DataSourceEntry.data_source,
    EphemeralEntry.ephemeral,
    ListEntry.list
);

/// A function with its signature, computed once.
struct FunctionEntry {
    function: Arc<dyn Function>,
    signature: Signature,
}

/// The tfplugin6 service over one provider.
///
/// Not generic over the provider: the whole gRPC server (tonic's and hyper's generic code under
/// it) is compiled once, here, instead of again in every plugin binary and test that serves one.
pub struct ProviderService {
    provider: Arc<dyn Provider>,
    provider_schema: Schema,
    provider_type: Type,
    /// Keyed by type name and by every alias.
    resources: BTreeMap<String, Arc<ResourceEntry>>,
    data_sources: BTreeMap<String, Arc<DataSourceEntry>>,
    ephemeral_resources: BTreeMap<String, Arc<EphemeralEntry>>,
    /// Keyed by type name and by every alias.
    list_resources: BTreeMap<String, Arc<ListEntry>>,
    actions: BTreeMap<String, Arc<actions::ActionEntry>>,
    functions: BTreeMap<String, Arc<FunctionEntry>>,
}

impl ProviderService {
    pub fn new(provider: Arc<dyn Provider>) -> ProviderService {
        let provider_schema = provider.schema();
        let mut resources = BTreeMap::new();
        for resource in provider.resources() {
            let entry = Arc::new(ResourceEntry {
                described: Described::default(),
                identity: resource.identity_schema().map(|identity| {
                    let ty = identity.value_type();
                    (identity, ty)
                }),
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
                let entry = DataSourceEntry {
                    described: Described::default(),
                    data_source: data_source.clone(),
                };
                (data_source.type_name().to_string(), Arc::new(entry))
            })
            .collect();
        let ephemeral_resources = provider
            .ephemeral_resources()
            .into_iter()
            .map(|ephemeral| {
                let entry = EphemeralEntry {
                    described: Described::default(),
                    ephemeral: ephemeral.clone(),
                };
                (ephemeral.type_name().to_string(), Arc::new(entry))
            })
            .collect();
        let mut list_resources = BTreeMap::new();
        for list in provider.list_resources() {
            let entry = Arc::new(ListEntry {
                described: Described::default(),
                list: list.clone(),
            });
            for name in std::iter::once(list.type_name()).chain(list.aliases().iter().copied()) {
                list_resources.insert(name.to_string(), entry.clone());
            }
        }
        let functions = provider
            .functions()
            .into_iter()
            .map(|function| {
                let entry = FunctionEntry {
                    signature: function.signature(),
                    function: function.clone(),
                };
                (function.name().to_string(), Arc::new(entry))
            })
            .collect();
        ProviderService {
            provider_type: provider_schema.value_type(),
            provider_schema,
            actions: actions::table(provider.as_ref()),
            provider,
            resources,
            data_sources,
            ephemeral_resources,
            list_resources,
            functions,
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

    fn ephemeral_resource(&self, type_name: &str) -> Result<Arc<EphemeralEntry>, ServerError> {
        self.ephemeral_resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownEphemeralResource(type_name.to_string()))
    }

    fn list_entry(&self, type_name: &str) -> Result<Arc<ListEntry>, ServerError> {
        self.list_resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownListResource(type_name.to_string()))
    }

    /// Starts a listing: the provider's events, each object encoded against the managed
    /// resource's identity and schema, ending after `limit` objects or at the first error.
    fn start_listing(
        &self,
        request: pb::list_resource::Request,
    ) -> Result<tonic::codegen::BoxStream<pb::list_resource::Event>, ServerError> {
        use futures::StreamExt;
        let entry = self.list_entry(&request.type_name)?;
        let target = self.resource(&request.type_name)?;
        target.identity_type(&request.type_name)?;
        let config = decode(request.config.as_ref(), entry.value_type(), "list configuration")?;
        let include = request.include_resource_object;
        let limit = usize::try_from(request.limit).ok().filter(|l| *l > 0);
        let events = entry.list.list(ListRequest {
            type_name: request.type_name,
            config,
            include_resource_object: include,
            limit,
        });
        // (objects still allowed, whether an error ended the listing)
        let mut remaining = limit.unwrap_or(usize::MAX);
        let mut ended = false;
        let events = events
            .take_while(move |event| {
                let go_on = !ended && (remaining > 0 || !matches!(event, ListEvent::Object(_)));
                match event {
                    ListEvent::Object(_) => remaining = remaining.saturating_sub(1),
                    ListEvent::Diagnostics(d) => ended = d.has_errors(),
                }
                futures::future::ready(go_on)
            })
            .map(move |event| {
                let event = match event {
                    ListEvent::Object(object) => listed_event(&target, *object, include)
                        .unwrap_or_else(|e| diagnostics_event(e.into())),
                    ListEvent::Diagnostics(diagnostics) => diagnostics_event(diagnostics),
                };
                Ok(event)
            });
        Ok(events.boxed())
    }

    fn function_definitions(&self) -> HashMap<String, pb::Function> {
        self.functions
            .iter()
            .map(|(name, entry)| (name.clone(), to_proto_function(&entry.signature)))
            .collect()
    }

    /// Calls function `name`: each argument decoded against its parameter's type, the result
    /// encoded against the return type. Anything wrong is the call's error.
    fn run_function(
        &self,
        name: &str,
        arguments: &[pb::DynamicValue],
    ) -> Result<pb::DynamicValue, FunctionError> {
        let entry = self
            .functions
            .get(name)
            .ok_or_else(|| FunctionError::new(format!("this provider has no function {name:?}")))?;
        let signature = &entry.signature;
        let count = signature.parameters.len();
        if arguments.len() < count || (signature.variadic.is_none() && arguments.len() > count) {
            return Err(FunctionError::new(format!(
                "{name} takes {count} argument(s), found {}",
                arguments.len()
            )));
        }
        let args = arguments
            .iter()
            .enumerate()
            .map(|(i, argument)| {
                let ty = signature
                    .argument_type(i)
                    .expect("the argument count was checked");
                codec::decode_dynamic_value(&argument.msgpack, &argument.json, ty)
                    .map_err(|e| FunctionError::argument(i, format!("invalid value from Terraform: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let result = entry.function.call(args)?;
        encode(&result, &signature.return_type, "function result")
            .map_err(|e| FunctionError::new(e.to_string()))
    }

    fn capabilities() -> pb::ServerCapabilities {
        pb::ServerCapabilities {
            plan_destroy: false,
            // The schema is built once, in `new`, whether asked for or not: the engine may reuse
            // the copy it fetched from the first provider process of a run instead of fetching
            // and converting the whole schema again in every later one (a plan starts several).
            get_provider_schema_optional: true,
            move_resource_state: false,
            generate_resource_config: false,
        }
    }
}

/// One listed object on the wire, in the managed resource's identity and schema.
fn listed_event(
    target: &ResourceEntry,
    object: ListedObject,
    include_resource_object: bool,
) -> Result<pb::list_resource::Event, ServerError> {
    let identity_type = target.identity_type(target.resource.type_name())?;
    let resource_object = match object.resource_object {
        Some(value) if include_resource_object => {
            Some(encode(&value, target.value_type(), "listed resource object")?)
        }
        _ => None,
    };
    Ok(pb::list_resource::Event {
        identity: Some(pb::ResourceIdentityData {
            identity_data: Some(encode(&object.identity, identity_type, "listed identity")?),
        }),
        display_name: object.display_name,
        resource_object,
        diagnostic: Vec::new(),
    })
}

fn diagnostics_event(diagnostics: Diagnostics) -> pb::list_resource::Event {
    pb::list_resource::Event {
        diagnostic: to_proto_diagnostics(diagnostics),
        ..Default::default()
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

fn to_proto_identity_schema(schema: &IdentitySchema) -> pb::ResourceIdentitySchema {
    pb::ResourceIdentitySchema {
        version: schema.version,
        identity_attributes: schema
            .attributes
            .iter()
            .map(|a| pb::resource_identity_schema::IdentityAttribute {
                name: a.name.to_string(),
                r#type: a.ty.to_json_bytes(),
                required_for_import: a.required_for_import,
                optional_for_import: !a.required_for_import,
                description: a.description.to_string(),
            })
            .collect(),
    }
}

fn to_proto_function(signature: &Signature) -> pb::Function {
    let parameter = |p: &Parameter| pb::function::Parameter {
        name: p.name.clone(),
        r#type: p.ty.to_json_bytes(),
        allow_null_value: p.allow_null,
        allow_unknown_values: p.allow_unknown,
        description: p.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
    };
    pb::Function {
        parameters: signature.parameters.iter().map(parameter).collect(),
        variadic_parameter: signature.variadic.as_ref().map(parameter),
        r#return: Some(pb::function::Return {
            r#type: signature.return_type.to_json_bytes(),
        }),
        summary: signature.summary.clone(),
        description: signature.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
        deprecation_message: String::new(),
    }
}

fn to_proto_function_error(e: FunctionError) -> pb::FunctionError {
    pb::FunctionError {
        text: e.message,
        function_argument: e.argument.map(|i| i64::try_from(i).unwrap_or(i64::MAX)),
    }
}

/// Opaque private bytes as the protocol's optional field: absent when empty.
fn optional_private(private: Vec<u8>) -> Option<Vec<u8>> {
    (!private.is_empty()).then_some(private)
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
impl pb::provider_server::Provider for ProviderService {
    async fn get_metadata(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> RpcResult<pb::get_metadata::Response> {
        use pb::get_metadata::{DataSourceMetadata, EphemeralMetadata, FunctionMetadata, ResourceMetadata};
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
            ephemeral_resources: self
                .ephemeral_resources
                .keys()
                .map(|name| EphemeralMetadata {
                    type_name: name.clone(),
                })
                .collect(),
            functions: self
                .functions
                .keys()
                .map(|name| FunctionMetadata { name: name.clone() })
                .collect(),
            list_resources: self
                .list_resources
                .keys()
                .map(|name| pb::get_metadata::ListResourceMetadata {
                    type_name: name.clone(),
                })
                .collect(),
            actions: self.action_metadata(),
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
                .map(|(name, entry)| (name.clone(), to_proto_schema(entry.schema())))
                .collect::<HashMap<_, _>>(),
            data_source_schemas: self
                .data_sources
                .iter()
                .map(|(name, entry)| (name.clone(), to_proto_schema(entry.schema())))
                .collect::<HashMap<_, _>>(),
            ephemeral_resource_schemas: self
                .ephemeral_resources
                .iter()
                .map(|(name, entry)| (name.clone(), to_proto_schema(entry.schema())))
                .collect::<HashMap<_, _>>(),
            functions: self.function_definitions(),
            list_resource_schemas: self
                .list_resources
                .iter()
                .map(|(name, entry)| (name.clone(), to_proto_schema(entry.schema())))
                .collect::<HashMap<_, _>>(),
            action_schemas: self.action_schemas(),
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
                entry.value_type(),
                "resource configuration",
            )?;
            let allowed = request
                .client_capabilities
                .as_ref()
                .is_some_and(|c| c.write_only_attributes_allowed);
            let mut diagnostics = if allowed {
                Diagnostics::new()
            } else {
                write_only_refused(&entry.schema().block, &config)
            };
            diagnostics.extend(rules::validate(&entry.schema().block, &config));
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
                entry.value_type(),
                "data source configuration",
            )?;
            let mut diagnostics = rules::validate(&entry.schema().block, &config);
            diagnostics.extend(entry.data_source.validate(&config));
            Ok(diagnostics)
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
                codec::decode_json(&raw.json, entry.value_type()).map_err(|source| ServerError::Decode {
                    what: "stored state",
                    source,
                })?;
            let upgraded = entry.resource.upgrade_state(request.version, state)?;
            Ok(encode(&upgraded, entry.value_type(), "upgraded state")?)
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
        let identity_schemas = self
            .resources
            .iter()
            .filter_map(|(name, entry)| {
                let (schema, _) = entry.identity.as_ref()?;
                Some((name.clone(), to_proto_identity_schema(schema)))
            })
            .collect();
        Ok(Response::new(pb::get_resource_identity_schemas::Response {
            identity_schemas,
            diagnostics: Vec::new(),
        }))
    }

    async fn upgrade_resource_identity(
        &self,
        request: Request<pb::upgrade_resource_identity::Request>,
    ) -> RpcResult<pb::upgrade_resource_identity::Response> {
        let request = request.into_inner();
        // An identity keeps its attributes across versions but may lose some: the stored JSON
        // is re-encoded without the attributes the schema no longer has.
        let outcome = (|| {
            let entry = self.resource(&request.type_name)?;
            let ty = entry.identity_type(&request.type_name)?;
            let raw = request.raw_identity.unwrap_or_default();
            let json = match (serde_json::from_slice::<serde_json::Value>(&raw.json), ty) {
                (Ok(serde_json::Value::Object(mut stored)), Type::Object(attributes)) => {
                    stored.retain(|name, _| attributes.contains_key(name));
                    serde_json::to_vec(&stored).unwrap_or_default()
                }
                _ => raw.json,
            };
            let identity = codec::decode_json(&json, ty).map_err(|source| ServerError::Decode {
                what: "stored identity",
                source,
            })?;
            Ok::<_, ServerError>(pb::ResourceIdentityData {
                identity_data: Some(encode(&identity, ty, "upgraded identity")?),
            })
        })();
        let (upgraded_identity, diagnostics) = match outcome {
            Ok(identity) => (Some(identity), Vec::new()),
            Err(e) => (None, to_proto_diagnostics(e.into())),
        };
        Ok(Response::new(pb::upgrade_resource_identity::Response {
            upgraded_identity,
            diagnostics,
        }))
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
            let current_state = decode(
                request.current_state.as_ref(),
                entry.value_type(),
                "current state",
            )?;
            let response = entry
                .resource
                .read(ReadRequest {
                    type_name: request.type_name.clone(),
                    current_state,
                    private: request.private.clone(),
                })
                .await?;
            Ok(pb::read_resource::Response {
                new_state: Some(encode(
                    &response.new_state,
                    entry.value_type(),
                    "refreshed state",
                )?),
                new_identity: entry.identity_of(&response.new_state)?,
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
            let ty = entry.value_type();
            let proposed_new_state = decode(request.proposed_new_state.as_ref(), ty, "proposed new state")?;
            if proposed_new_state.is_null() {
                // A destroy: nothing to plan, and resources never see it.
                return Ok(pb::plan_resource_change::Response {
                    planned_state: Some(encode(&Value::Null, ty, "planned state")?),
                    planned_private: request.prior_private,
                    ..Default::default()
                });
            }
            let block = &entry.schema().block;
            let prior_state = decode(request.prior_state.as_ref(), ty, "prior state")?;
            let config = decode(request.config.as_ref(), ty, "configuration")?;
            let proposed_new_state = rules::plan(block, &config, &prior_state, proposed_new_state);
            let mut response = entry
                .resource
                .plan(PlanRequest {
                    type_name: request.type_name.clone(),
                    prior_state: prior_state.clone(),
                    proposed_new_state,
                    config,
                    prior_private: request.prior_private,
                })
                .await?;
            for path in rules::replace_paths(block, &prior_state, &response.planned_state) {
                if !response.requires_replace.contains(&path) {
                    response.requires_replace.push(path);
                }
            }
            Ok(pb::plan_resource_change::Response {
                planned_state: Some(encode(&response.planned_state, ty, "planned state")?),
                planned_identity: entry.identity_of(&response.planned_state)?,
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
            let ty = entry.value_type();
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
            let new_identity = entry.identity_of(&response.new_state).unwrap_or_else(|e| {
                diagnostics.push(e.into());
                None
            });
            Ok(pb::apply_resource_change::Response {
                new_state,
                new_identity,
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
            // An `import { identity = ... }` block: the resource turns it into its import id.
            let id = match request.identity.and_then(|i| i.identity_data) {
                Some(identity) if request.id.is_empty() => {
                    let ty = entry.identity_type(&request.type_name)?;
                    let identity = decode(Some(&identity), ty, "import identity")?;
                    entry.resource.import_id(&identity)?
                }
                _ => request.id,
            };
            let response = entry
                .resource
                .import(ImportRequest {
                    type_name: request.type_name.clone(),
                    id,
                })
                .await?;
            let imported_resources = response
                .imported
                .into_iter()
                .map(|imported| {
                    let target = self.resource(&imported.type_name)?;
                    Ok(pb::import_resource_state::ImportedResource {
                        state: Some(encode(&imported.state, target.value_type(), "imported state")?),
                        identity: target.identity_of(&imported.state)?,
                        type_name: imported.type_name,
                        private: imported.private,
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
            let config = decode(request.config.as_ref(), entry.value_type(), "configuration")?;
            let response = entry
                .data_source
                .read(ReadDataRequest {
                    type_name: request.type_name.clone(),
                    config,
                })
                .await?;
            Ok(pb::read_data_source::Response {
                state: Some(encode(&response.state, entry.value_type(), "data source state")?),
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
        Ok(Response::new(pb::get_functions::Response {
            functions: self.function_definitions(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        request: Request<pb::call_function::Request>,
    ) -> RpcResult<pb::call_function::Response> {
        let request = request.into_inner();
        let response = match self.run_function(&request.name, &request.arguments) {
            Ok(result) => pb::call_function::Response {
                result: Some(result),
                error: None,
            },
            Err(e) => pb::call_function::Response {
                result: None,
                error: Some(to_proto_function_error(e)),
            },
        };
        Ok(Response::new(response))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        request: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> RpcResult<pb::validate_ephemeral_resource_config::Response> {
        let request = request.into_inner();
        let result = self.ephemeral_resource(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "ephemeral resource configuration",
            )?;
            Ok(entry.ephemeral.validate(&config))
        });
        Ok(Response::new(pb::validate_ephemeral_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }))
    }

    async fn open_ephemeral_resource(
        &self,
        request: Request<pb::open_ephemeral_resource::Request>,
    ) -> RpcResult<pb::open_ephemeral_resource::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::open_ephemeral_resource::Response, Diagnostics> = async {
            let entry = self.ephemeral_resource(&request.type_name)?;
            let ty = entry.value_type();
            let config = decode(request.config.as_ref(), ty, "ephemeral resource configuration")?;
            let response = entry
                .ephemeral
                .open(OpenRequest {
                    type_name: request.type_name.clone(),
                    config,
                })
                .await?;
            Ok(pb::open_ephemeral_resource::Response {
                result: Some(encode(&response.result, ty, "ephemeral resource result")?),
                renew_at: response.renew_at.map(prost_types::Timestamp::from),
                private: optional_private(response.private),
                diagnostics: to_proto_diagnostics(response.diagnostics),
                deferred: None,
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::open_ephemeral_resource::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn renew_ephemeral_resource(
        &self,
        request: Request<pb::renew_ephemeral_resource::Request>,
    ) -> RpcResult<pb::renew_ephemeral_resource::Response> {
        let request = request.into_inner();
        let outcome: Result<pb::renew_ephemeral_resource::Response, Diagnostics> = async {
            let entry = self.ephemeral_resource(&request.type_name)?;
            let response = entry
                .ephemeral
                .renew(RenewRequest {
                    type_name: request.type_name.clone(),
                    private: request.private.unwrap_or_default(),
                })
                .await?;
            Ok(pb::renew_ephemeral_resource::Response {
                renew_at: response.renew_at.map(prost_types::Timestamp::from),
                private: optional_private(response.private),
                diagnostics: to_proto_diagnostics(response.diagnostics),
            })
        }
        .await;
        Ok(Response::new(outcome.unwrap_or_else(|diagnostics| {
            pb::renew_ephemeral_resource::Response {
                diagnostics: to_proto_diagnostics(diagnostics),
                ..Default::default()
            }
        })))
    }

    async fn close_ephemeral_resource(
        &self,
        request: Request<pb::close_ephemeral_resource::Request>,
    ) -> RpcResult<pb::close_ephemeral_resource::Response> {
        let request = request.into_inner();
        let diagnostics = match self.ephemeral_resource(&request.type_name) {
            Ok(entry) => {
                entry
                    .ephemeral
                    .close(CloseRequest {
                        type_name: request.type_name.clone(),
                        private: request.private.unwrap_or_default(),
                    })
                    .await
            }
            Err(e) => e.into(),
        };
        Ok(Response::new(pb::close_ephemeral_resource::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
        }))
    }

    async fn list_resource(
        &self,
        request: Request<pb::list_resource::Request>,
    ) -> RpcResult<tonic::codegen::BoxStream<pb::list_resource::Event>> {
        let events = self.start_listing(request.into_inner()).unwrap_or_else(|e| {
            let event = diagnostics_event(e.into());
            Box::pin(futures::stream::once(async move { Ok(event) }))
        });
        Ok(Response::new(events))
    }

    async fn validate_list_resource_config(
        &self,
        request: Request<pb::validate_list_resource_config::Request>,
    ) -> RpcResult<pb::validate_list_resource_config::Response> {
        let request = request.into_inner();
        let result = self.list_entry(&request.type_name).and_then(|entry| {
            let config = decode(request.config.as_ref(), entry.value_type(), "list configuration")?;
            Ok(entry.list.validate(&config))
        });
        Ok(Response::new(pb::validate_list_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }))
    }

    async fn validate_action_config(
        &self,
        request: Request<pb::validate_action_config::Request>,
    ) -> RpcResult<pb::validate_action_config::Response> {
        Ok(Response::new(self.validate_action(request.into_inner())))
    }

    async fn plan_action(
        &self,
        request: Request<pb::plan_action::Request>,
    ) -> RpcResult<pb::plan_action::Response> {
        Ok(Response::new(self.plan_invocation(request.into_inner()).await))
    }

    async fn invoke_action(
        &self,
        request: Request<pb::invoke_action::Request>,
    ) -> RpcResult<actions::EventStream> {
        Ok(Response::new(self.start_invocation(request.into_inner())))
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
    use crate::ephemeral::{OpenResponse, RenewResponse};
    use crate::identity::IdentityAttribute;
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
            assert!(capabilities.expect("capabilities").get_provider_schema_optional);
        }
    }

    #[tokio::test]
    async fn functions_take_typed_arguments_and_return_dynamic_values() {
        let call = |arguments: Vec<pb::DynamicValue>| async move {
            service()
                .call_function(Request::new(pb::call_function::Request {
                    name: "describe".into(),
                    arguments,
                }))
                .await
                .expect("rpc")
                .into_inner()
        };
        let answer = call(vec![
            argument(&Value::string("x"), &Type::String),
            argument(&Value::int(1), &Type::Number),
            argument(&Value::int(2), &Type::Number),
        ])
        .await;
        assert_eq!(answer.error, None);
        let result = answer.result.expect("result");
        // A dynamic return goes as [type, value]: the type is the value's own.
        let value = codec::decode_msgpack(&result.msgpack, &Type::Dynamic).expect("decodes");
        assert_eq!(
            value.infer_type(),
            Type::object([
                ("text", Type::String),
                ("numbers", Type::Tuple(vec![Type::Number, Type::Number])),
            ])
        );
        assert_eq!(value.get("numbers").elements(), [Value::int(1), Value::int(2)]);

        let refused = call(vec![argument(&Value::string(""), &Type::String)]).await;
        assert_eq!(refused.result, None);
        let error = refused.error.expect("error");
        assert_eq!(
            (error.text.as_str(), error.function_argument),
            ("text is empty", Some(0))
        );

        let missing = call(vec![]).await.error.expect("error");
        assert!(missing.text.contains("takes 1 argument"), "{missing:?}");
        assert_eq!(missing.function_argument, None);

        // A number where text is due: the argument it came in is named.
        let wrong = call(vec![
            argument(&Value::string("x"), &Type::String),
            argument(&Value::string("y"), &Type::String),
        ])
        .await
        .error
        .expect("error");
        assert_eq!(wrong.function_argument, Some(1), "{wrong:?}");

        let unknown = service()
            .call_function(Request::new(pb::call_function::Request {
                name: "nope".into(),
                arguments: vec![],
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(unknown.error.expect("error").text.contains("\"nope\""));
    }

    #[tokio::test]
    async fn ephemeral_resources_open_renew_and_close_with_their_private_bytes() {
        let service = service();
        let config = Value::object([("holder", Value::string("me")), ("id", Value::Null)]);
        let validated = service
            .validate_ephemeral_resource_config(Request::new(
                pb::validate_ephemeral_resource_config::Request {
                    type_name: "test_lease".into(),
                    config: Some(argument(
                        &Value::object([("holder", Value::string(""))]),
                        &lease_type(),
                    )),
                },
            ))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(validated.diagnostics[0].summary, "Empty holder");

        let opened = service
            .open_ephemeral_resource(Request::new(pb::open_ephemeral_resource::Request {
                type_name: "test_lease".into(),
                config: Some(argument(&config, &lease_type())),
                client_capabilities: None,
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(opened.diagnostics.is_empty(), "{:?}", opened.diagnostics);
        let result = decode(opened.result.as_ref(), &lease_type(), "result").expect("decodes");
        assert_eq!(result.get("id").as_str(), Some("lease-of-me"));
        assert_eq!(opened.renew_at.map(|t| t.seconds), Some(1_000));
        assert_eq!(opened.private.as_deref(), Some(&b"lease-of-me"[..]));

        let renewed = service
            .renew_ephemeral_resource(Request::new(pb::renew_ephemeral_resource::Request {
                type_name: "test_lease".into(),
                private: opened.private,
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(renewed.renew_at, None);
        assert_eq!(renewed.private.as_deref(), Some(&b"lease-of-me+renewed"[..]));

        let closed = service
            .close_ephemeral_resource(Request::new(pb::close_ephemeral_resource::Request {
                type_name: "test_lease".into(),
                private: renewed.private,
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(closed.diagnostics[0].detail, "lease-of-me+renewed");

        let unknown = service
            .open_ephemeral_resource(Request::new(pb::open_ephemeral_resource::Request {
                type_name: "test_other".into(),
                ..Default::default()
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(unknown.diagnostics[0].summary, "Unknown ephemeral resource type");
        assert_eq!(unknown.result, None);
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
    async fn identity_is_declared_derived_from_state_and_imports_by_id() {
        let service = service();
        let schemas = service
            .get_resource_identity_schemas(Request::new(pb::get_resource_identity_schemas::Request {}))
            .await
            .expect("rpc")
            .into_inner()
            .identity_schemas;
        assert_eq!(schemas.get("test_widget"), schemas.get("test_widget_v1"));
        let attributes = &schemas["test_widget"].identity_attributes;
        assert_eq!(
            attributes
                .iter()
                .map(|a| (a.name.as_str(), a.required_for_import, a.optional_for_import))
                .collect::<Vec<_>>(),
            vec![("name", true, false), ("zone", false, true)]
        );

        let identity_type = Widget.identity_schema().unwrap().value_type();
        let identity = Value::object([("name", Value::string("w1")), ("zone", Value::Null)]);
        let response = service
            .import_resource_state(Request::new(pb::import_resource_state::Request {
                type_name: "test_widget".into(),
                id: String::new(),
                client_capabilities: None,
                identity: Some(pb::ResourceIdentityData {
                    identity_data: Some(encode(&identity, &identity_type, "identity").unwrap()),
                }),
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(response.diagnostics.is_empty(), "{:?}", response.diagnostics);
        let imported = &response.imported_resources[0];
        let state = decode(imported.state.as_ref(), &widget_type(), "state").unwrap();
        assert_eq!(state.get("id").as_str(), Some("by-identity:w1"));
        let returned = imported.identity.as_ref().and_then(|i| i.identity_data.as_ref());
        let returned = decode(returned, &identity_type, "identity").unwrap();
        assert_eq!(returned.get("name").as_str(), Some("by-identity:w1"));

        // A create whose id is still unknown plans no identity: the engine refuses unknowns.
        let mut proposed = state.clone();
        proposed.set("id", Value::unknown());
        let planned = service
            .plan_resource_change(Request::new(pb::plan_resource_change::Request {
                type_name: "test_widget".into(),
                proposed_new_state: Some(encode(&proposed, &widget_type(), "p").unwrap()),
                config: Some(encode(&proposed, &widget_type(), "c").unwrap()),
                ..Default::default()
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(planned.diagnostics.is_empty(), "{:?}", planned.diagnostics);
        assert!(planned.planned_identity.is_none());

        let upgraded = service
            .upgrade_resource_identity(Request::new(pb::upgrade_resource_identity::Request {
                type_name: "test_widget_v1".into(),
                version: 0,
                // An attribute the schema no longer has ("gone") is dropped.
                raw_identity: Some(pb::RawState {
                    json: br#"{"name":"w1","zone":null,"gone":"x"}"#.to_vec(),
                    flatmap: HashMap::new(),
                }),
            }))
            .await
            .expect("rpc")
            .into_inner();
        let upgraded = upgraded.upgraded_identity.and_then(|i| i.identity_data);
        assert_eq!(decode(upgraded.as_ref(), &identity_type, "i").unwrap(), identity);
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

    async fn list(
        type_name: &str,
        config: Value,
        include_resource_object: bool,
        limit: i64,
    ) -> Vec<pb::list_resource::Event> {
        use futures::StreamExt;
        let ty = Widgets.schema().value_type();
        let response = service()
            .list_resource(Request::new(pb::list_resource::Request {
                type_name: type_name.into(),
                config: Some(encode(&config, &ty, "config").unwrap()),
                include_resource_object,
                limit,
            }))
            .await
            .unwrap();
        response.into_inner().map(|event| event.unwrap()).collect().await
    }

    #[tokio::test]
    async fn list_resources_stream_identities_up_to_the_limit_and_stop_at_an_error() {
        let svc = service();
        let metadata = svc
            .get_metadata(Request::new(pb::get_metadata::Request {}))
            .await
            .unwrap()
            .into_inner();
        let names: Vec<_> = metadata
            .list_resources
            .iter()
            .map(|l| l.type_name.as_str())
            .collect();
        assert_eq!(names, ["test_widget", "test_widget_v1"]);
        let schema = svc
            .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
            .await
            .unwrap()
            .into_inner();
        assert!(schema.list_resource_schemas.contains_key("test_widget_v1"));

        let identity_type = Widget.identity_schema().unwrap().value_type();
        let config = |count: i64, fail: bool| {
            Value::object([("count", Value::from(count)), ("fail", Value::Bool(fail))])
        };
        let events = list("test_widget", config(5, false), false, 2).await;
        assert_eq!(events.len(), 2);
        let identity = events[1].identity.as_ref().and_then(|i| i.identity_data.as_ref());
        let identity = decode(identity, &identity_type, "identity").unwrap();
        assert_eq!(identity.get("name").as_str(), Some("w1"));
        assert_eq!(events[1].display_name, "w1");
        assert!(events[1].resource_object.is_none());

        // No limit: every object, each with its resource object in the resource's schema.
        let events = list("test_widget_v1", config(3, false), true, 0).await;
        assert_eq!(events.len(), 3);
        let object = decode(events[2].resource_object.as_ref(), &widget_type(), "object").unwrap();
        assert_eq!(object.get("id").as_str(), Some("w2"));

        // An error is the last event.
        let events = list("test_widget", config(1, true), false, 10).await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[1].diagnostic[0].summary, "Listing failed");

        let events = list("test_nothing", config(1, false), false, 10).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].diagnostic[0].summary, "Unknown list resource type");

        let ty = Widgets.schema().value_type();
        let validated = svc
            .validate_list_resource_config(Request::new(pb::validate_list_resource_config::Request {
                type_name: "test_widget".into(),
                config: Some(encode(&config(-1, false), &ty, "config").unwrap()),
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(validated.diagnostics[0].summary, "Negative count");
    }
}
