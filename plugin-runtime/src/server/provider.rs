//! The provider-level RPCs: `GetMetadata`, `GetProviderSchema`, `ValidateProviderConfig`,
//! `ConfigureProvider` and `StopProvider`, and the server capabilities they announce.

use std::collections::HashMap;

use super::ProviderService;
use super::convert::{decode, diagnostics_of, to_proto_diagnostics, to_proto_schema};
use super::tables::Typed;
use crate::proto::tfplugin6 as pb;

impl ProviderService {
    pub(super) fn metadata(&self) -> pb::get_metadata::Response {
        use pb::get_metadata::{DataSourceMetadata, EphemeralMetadata, FunctionMetadata, ResourceMetadata};
        pb::get_metadata::Response {
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
        }
    }

    pub(super) fn schemas(&self) -> pb::get_provider_schema::Response {
        pb::get_provider_schema::Response {
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
        }
    }

    pub(super) fn validate_provider(
        &self,
        request: pb::validate_provider_config::Request,
    ) -> pb::validate_provider_config::Response {
        let result = decode(
            request.config.as_ref(),
            &self.provider_type,
            "provider configuration",
        )
        .map(|config| self.provider.validate_config(&config));
        pb::validate_provider_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) async fn configure(
        &self,
        request: pb::configure_provider::Request,
    ) -> pb::configure_provider::Response {
        let diagnostics = match decode(
            request.config.as_ref(),
            &self.provider_type,
            "provider configuration",
        ) {
            Ok(config) => self.provider.configure(&config).await,
            Err(e) => e.into(),
        };
        pb::configure_provider::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
        }
    }

    pub(super) async fn stop(&self) -> pb::stop_provider::Response {
        self.provider.stop().await;
        pb::stop_provider::Response::default()
    }

    fn capabilities() -> pb::ServerCapabilities {
        pb::ServerCapabilities {
            plan_destroy: false,
            // The schema is built once, in `new`, whether asked for or not: the engine may reuse
            // the copy it fetched from the first provider process of a run instead of fetching
            // and converting the whole schema again in every later one (a plan starts several).
            get_provider_schema_optional: true,
            // `moved` across resource types: each type says which sources it takes.
            move_resource_state: true,
            generate_resource_config: false,
        }
    }
}
