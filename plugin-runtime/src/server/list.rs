//! The list resource RPCs (`terraform query`): `ValidateListResourceConfig` and `ListResource`,
//! whose stream carries each listed object in its managed resource's identity and schema.

use super::ProviderService;
use super::convert::{decode, diagnostics_of, encode, to_proto_diagnostics};
use super::error::ServerError;
use super::tables::{ResourceEntry, Typed};
use crate::diagnostics::Diagnostics;
use crate::list::{ListEvent, ListRequest, ListedObject};
use crate::proto::tfplugin6 as pb;

impl ProviderService {
    pub(super) fn validate_list(
        &self,
        request: pb::validate_list_resource_config::Request,
    ) -> pb::validate_list_resource_config::Response {
        let result = self.list_entry(&request.type_name).and_then(|entry| {
            let config = decode(request.config.as_ref(), entry.value_type(), "list configuration")?;
            Ok(entry.list.validate(&config))
        });
        pb::validate_list_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) fn list(
        &self,
        request: pb::list_resource::Request,
    ) -> tonic::codegen::BoxStream<pb::list_resource::Event> {
        self.start_listing(request).unwrap_or_else(|e| {
            let event = diagnostics_event(e.into());
            Box::pin(futures::stream::once(async move { Ok(event) }))
        })
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
