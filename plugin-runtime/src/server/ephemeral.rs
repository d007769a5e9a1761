//! The ephemeral resource RPCs: `ValidateEphemeralResourceConfig`, `OpenEphemeralResource`,
//! `RenewEphemeralResource` and `CloseEphemeralResource`; the resource's private bytes travel
//! through the engine untouched between them.

use super::ProviderService;
use super::convert::{decode, diagnostics_of, encode, optional_private, to_proto_diagnostics};
use super::tables::Typed;
use crate::diagnostics::Diagnostics;
use crate::ephemeral::{CloseRequest, OpenRequest, RenewRequest};
use crate::proto::tfplugin6 as pb;

impl ProviderService {
    pub(super) fn validate_ephemeral(
        &self,
        request: pb::validate_ephemeral_resource_config::Request,
    ) -> pb::validate_ephemeral_resource_config::Response {
        let result = self.ephemeral_resource(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "ephemeral resource configuration",
            )?;
            Ok(entry.ephemeral.validate(&config))
        });
        pb::validate_ephemeral_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) async fn open(
        &self,
        request: pb::open_ephemeral_resource::Request,
    ) -> pb::open_ephemeral_resource::Response {
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
        outcome.unwrap_or_else(|diagnostics| pb::open_ephemeral_resource::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn renew(
        &self,
        request: pb::renew_ephemeral_resource::Request,
    ) -> pb::renew_ephemeral_resource::Response {
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
        outcome.unwrap_or_else(|diagnostics| pb::renew_ephemeral_resource::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn close(
        &self,
        request: pb::close_ephemeral_resource::Request,
    ) -> pb::close_ephemeral_resource::Response {
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
        pb::close_ephemeral_resource::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
        }
    }
}
