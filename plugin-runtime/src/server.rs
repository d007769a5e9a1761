//! The tfplugin6 `Provider` gRPC service, translating each RPC into calls on the
//! [`Provider`], [`Resource`] and [`DataSource`] traits, and on provider-defined
//! [`Function`]s, [`EphemeralResource`]s, [`ListResource`]s and [`Action`]s.
//!
//! Values are decoded against the schema of the type named in the request and encoded
//! back the same way; failures of the protocol layer itself (an unknown type name, a value
//! that does not decode) become error diagnostics here, at one boundary. Nothing here logs
//! a value: configurations and states carry secrets.
//!
//! This file holds the service and its tonic trait impl, one line per RPC; the RPCs live by
//! family in `provider`, `resources`, `identity`, `data_sources`, `ephemeral`, `list`,
//! `functions` and `actions`, over the type tables of `tables`, the conversions of `convert`,
//! the errors of `error` and the write-only check of `write_only`.
//!
//! [`Resource`]: crate::provider::Resource
//! [`DataSource`]: crate::provider::DataSource
//! [`Function`]: crate::function::Function
//! [`EphemeralResource`]: crate::ephemeral::EphemeralResource
//! [`ListResource`]: crate::list::ListResource
//! [`Action`]: crate::action::Action

mod actions;
mod convert;
mod data_sources;
mod ephemeral;
mod error;
mod functions;
mod identity;
mod list;
mod provider;
mod resources;
mod tables;
mod write_only;

use std::collections::BTreeMap;
use std::sync::Arc;

use tonic::{Request, Response, Status};

use crate::proto::tfplugin6 as pb;
use crate::provider::Provider;
use crate::schema::Schema;
use crate::types::Type;
use tables::{DataSourceEntry, Described, EphemeralEntry, FunctionEntry, ListEntry, ResourceEntry};

type RpcResult<T> = Result<Response<T>, Status>;

/// The largest message the service takes or sends: the engine sends a resource's config,
/// prior state and proposed state in one request (a large CRD manifest three times), far
/// beyond tonic's default 4 MiB. 256 MiB is what terraform-plugin-go's servers allow.
pub const MAX_MESSAGE_SIZE: usize = 256 << 20;

/// The tfplugin6 gRPC service over `service`, with [`MAX_MESSAGE_SIZE`] both ways.
pub fn grpc_service(service: Arc<ProviderService>) -> pb::provider_server::ProviderServer<ProviderService> {
    pb::provider_server::ProviderServer::from_arc(service)
        .max_decoding_message_size(MAX_MESSAGE_SIZE)
        .max_encoding_message_size(MAX_MESSAGE_SIZE)
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
    /// The service for `provider`, its schemas gathered once up front.
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
}

#[tonic::async_trait]
impl pb::provider_server::Provider for ProviderService {
    async fn get_metadata(
        &self,
        _: Request<pb::get_metadata::Request>,
    ) -> RpcResult<pb::get_metadata::Response> {
        Ok(Response::new(self.metadata()))
    }

    async fn get_provider_schema(
        &self,
        _: Request<pb::get_provider_schema::Request>,
    ) -> RpcResult<pb::get_provider_schema::Response> {
        Ok(Response::new(self.schemas()))
    }

    async fn validate_provider_config(
        &self,
        request: Request<pb::validate_provider_config::Request>,
    ) -> RpcResult<pb::validate_provider_config::Response> {
        Ok(Response::new(self.validate_provider(request.into_inner())))
    }

    async fn validate_resource_config(
        &self,
        request: Request<pb::validate_resource_config::Request>,
    ) -> RpcResult<pb::validate_resource_config::Response> {
        Ok(Response::new(self.validate_resource(request.into_inner())))
    }

    async fn validate_data_resource_config(
        &self,
        request: Request<pb::validate_data_resource_config::Request>,
    ) -> RpcResult<pb::validate_data_resource_config::Response> {
        Ok(Response::new(self.validate_data_source(request.into_inner())))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<pb::upgrade_resource_state::Request>,
    ) -> RpcResult<pb::upgrade_resource_state::Response> {
        Ok(Response::new(self.upgrade_state(request.into_inner())))
    }

    async fn move_resource_state(
        &self,
        request: Request<pb::move_resource_state::Request>,
    ) -> RpcResult<pb::move_resource_state::Response> {
        Ok(Response::new(self.move_state(request.into_inner())))
    }

    async fn get_resource_identity_schemas(
        &self,
        _: Request<pb::get_resource_identity_schemas::Request>,
    ) -> RpcResult<pb::get_resource_identity_schemas::Response> {
        Ok(Response::new(self.identity_schemas()))
    }

    async fn upgrade_resource_identity(
        &self,
        request: Request<pb::upgrade_resource_identity::Request>,
    ) -> RpcResult<pb::upgrade_resource_identity::Response> {
        Ok(Response::new(self.upgrade_identity(request.into_inner())))
    }

    async fn configure_provider(
        &self,
        request: Request<pb::configure_provider::Request>,
    ) -> RpcResult<pb::configure_provider::Response> {
        Ok(Response::new(self.configure(request.into_inner()).await))
    }

    async fn read_resource(
        &self,
        request: Request<pb::read_resource::Request>,
    ) -> RpcResult<pb::read_resource::Response> {
        Ok(Response::new(self.read_state(request.into_inner()).await))
    }

    async fn plan_resource_change(
        &self,
        request: Request<pb::plan_resource_change::Request>,
    ) -> RpcResult<pb::plan_resource_change::Response> {
        Ok(Response::new(self.plan_change(request.into_inner()).await))
    }

    async fn apply_resource_change(
        &self,
        request: Request<pb::apply_resource_change::Request>,
    ) -> RpcResult<pb::apply_resource_change::Response> {
        Ok(Response::new(self.apply_change(request.into_inner()).await))
    }

    async fn import_resource_state(
        &self,
        request: Request<pb::import_resource_state::Request>,
    ) -> RpcResult<pb::import_resource_state::Response> {
        Ok(Response::new(self.import_state(request.into_inner()).await))
    }

    async fn read_data_source(
        &self,
        request: Request<pb::read_data_source::Request>,
    ) -> RpcResult<pb::read_data_source::Response> {
        Ok(Response::new(self.read_data(request.into_inner()).await))
    }

    async fn get_functions(
        &self,
        _: Request<pb::get_functions::Request>,
    ) -> RpcResult<pb::get_functions::Response> {
        Ok(Response::new(self.declared_functions()))
    }

    async fn call_function(
        &self,
        request: Request<pb::call_function::Request>,
    ) -> RpcResult<pb::call_function::Response> {
        Ok(Response::new(self.call(request.into_inner())))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        request: Request<pb::validate_ephemeral_resource_config::Request>,
    ) -> RpcResult<pb::validate_ephemeral_resource_config::Response> {
        Ok(Response::new(self.validate_ephemeral(request.into_inner())))
    }

    async fn open_ephemeral_resource(
        &self,
        request: Request<pb::open_ephemeral_resource::Request>,
    ) -> RpcResult<pb::open_ephemeral_resource::Response> {
        Ok(Response::new(self.open(request.into_inner()).await))
    }

    async fn renew_ephemeral_resource(
        &self,
        request: Request<pb::renew_ephemeral_resource::Request>,
    ) -> RpcResult<pb::renew_ephemeral_resource::Response> {
        Ok(Response::new(self.renew(request.into_inner()).await))
    }

    async fn close_ephemeral_resource(
        &self,
        request: Request<pb::close_ephemeral_resource::Request>,
    ) -> RpcResult<pb::close_ephemeral_resource::Response> {
        Ok(Response::new(self.close(request.into_inner()).await))
    }

    async fn list_resource(
        &self,
        request: Request<pb::list_resource::Request>,
    ) -> RpcResult<tonic::codegen::BoxStream<pb::list_resource::Event>> {
        Ok(Response::new(self.list(request.into_inner())))
    }

    async fn validate_list_resource_config(
        &self,
        request: Request<pb::validate_list_resource_config::Request>,
    ) -> RpcResult<pb::validate_list_resource_config::Response> {
        Ok(Response::new(self.validate_list(request.into_inner())))
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
        Ok(Response::new(self.stop().await))
    }
}

#[cfg(test)]
mod tests;
