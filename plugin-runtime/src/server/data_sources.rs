//! The data source RPCs: `ValidateDataResourceConfig` and `ReadDataSource`.

use super::ProviderService;
use super::convert::{decode, diagnostics_of, encode, to_proto_diagnostics};
use super::tables::Typed;
use crate::diagnostics::Diagnostics;
use crate::proto::tfplugin6 as pb;
use crate::provider::ReadDataRequest;
use crate::rules;

impl ProviderService {
    pub(super) fn validate_data_source(
        &self,
        request: pb::validate_data_resource_config::Request,
    ) -> pb::validate_data_resource_config::Response {
        let result = self.data_source(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "data source configuration",
            )?;
            let mut diagnostics = rules::validate(&entry.schema().block, &config, false);
            diagnostics.extend(entry.data_source.validate(&config));
            Ok(diagnostics)
        });
        pb::validate_data_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) async fn read_data(
        &self,
        request: pb::read_data_source::Request,
    ) -> pb::read_data_source::Response {
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
        outcome.unwrap_or_else(|diagnostics| pb::read_data_source::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }
}
