//! The managed resource RPCs: `ValidateResourceConfig`, `UpgradeResourceState`, `ReadResource`,
//! `PlanResourceChange`, `ApplyResourceChange` and `ImportResourceState`. The schema's own
//! rules (validations, planned defaults, replacement paths) run here around the resource's calls.

use super::ProviderService;
use super::convert::{decode, diagnostics_of, encode, to_proto_diagnostics, to_proto_path};
use super::error::ServerError;
use super::tables::{ResourceEntry, Typed};
use super::write_only::write_only_refused;
use crate::codec;
use crate::diagnostics::Diagnostics;
use crate::proto::tfplugin6 as pb;
use crate::provider::{ApplyRequest, ImportRequest, MoveSource, PlanRequest, ReadRequest};
use crate::rules;
use crate::upgrade;
use crate::value::Value;

impl ProviderService {
    pub(super) fn validate_resource(
        &self,
        request: pb::validate_resource_config::Request,
    ) -> pb::validate_resource_config::Response {
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
            let legacy = entry.resource.legacy_type_system();
            diagnostics.extend(rules::validate(&entry.schema().block, &config, legacy));
            diagnostics.extend(entry.resource.validate(&config));
            Ok(diagnostics)
        });
        pb::validate_resource_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) fn upgrade_state(
        &self,
        request: pb::upgrade_resource_state::Request,
    ) -> pb::upgrade_resource_state::Response {
        let outcome = (|| {
            let entry = self.resource(&request.type_name)?;
            let raw = request.raw_state.unwrap_or_default();
            let upgraded = stored_state(&entry, &request.type_name, &raw, request.version)?;
            Ok(encode(&upgraded, entry.value_type(), "upgraded state")?)
        })();
        let (upgraded_state, diagnostics) = match outcome {
            Ok(state) => (Some(state), Vec::new()),
            Err(diagnostics) => (None, to_proto_diagnostics(diagnostics)),
        };
        pb::upgrade_resource_state::Response {
            upgraded_state,
            diagnostics,
        }
    }

    /// A `moved` block from another resource type (or provider): the target type decides
    /// whether it takes the source's state, which is then upgraded as its own.
    pub(super) fn move_state(
        &self,
        request: pb::move_resource_state::Request,
    ) -> pb::move_resource_state::Response {
        let outcome = (|| {
            let entry = self.resource(&request.target_type_name)?;
            let source = MoveSource {
                provider_address: &request.source_provider_address,
                type_name: &request.source_type_name,
                schema_version: request.source_schema_version,
            };
            if !entry.resource.accepts_move(&source) {
                return Err(ServerError::MoveRefused {
                    source_provider: request.source_provider_address.clone(),
                    source_type: request.source_type_name.clone(),
                    target: request.target_type_name.clone(),
                }
                .into());
            }
            let raw = request.source_state.clone().unwrap_or_default();
            let translated = serde_json::from_slice::<serde_json::Value>(&raw.json)
                .ok()
                .and_then(|stored| entry.resource.translate_move(&source, &stored));
            let state = match translated {
                Some(state) => state?,
                None => stored_state(
                    &entry,
                    &request.source_type_name,
                    &raw,
                    request.source_schema_version,
                )?,
            };
            Ok(pb::move_resource_state::Response {
                target_state: Some(encode(&state, entry.value_type(), "moved state")?),
                target_identity: entry.identity_of(&state)?,
                target_private: request.source_private.clone(),
                diagnostics: Vec::new(),
            })
        })();
        outcome.unwrap_or_else(|diagnostics: Diagnostics| pb::move_resource_state::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn read_state(
        &self,
        request: pb::read_resource::Request,
    ) -> pb::read_resource::Response {
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
        outcome.unwrap_or_else(|diagnostics| pb::read_resource::Response {
            new_state: request.current_state,
            private: request.private,
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn plan_change(
        &self,
        request: pb::plan_resource_change::Request,
    ) -> pb::plan_resource_change::Response {
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
            let legacy = entry.resource.legacy_type_system();
            let proposed_new_state = rules::plan(block, &config, &prior_state, proposed_new_state, legacy);
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
                legacy_type_system: legacy,
                ..Default::default()
            })
        }
        .await;
        outcome.unwrap_or_else(|diagnostics| pb::plan_resource_change::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn apply_change(
        &self,
        request: pb::apply_resource_change::Request,
    ) -> pb::apply_resource_change::Response {
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
                legacy_type_system: entry.resource.legacy_type_system(),
            })
        }
        .await;
        outcome.unwrap_or_else(|diagnostics| pb::apply_resource_change::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }

    pub(super) async fn import_state(
        &self,
        request: pb::import_resource_state::Request,
    ) -> pb::import_resource_state::Response {
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
        outcome.unwrap_or_else(|diagnostics| pb::import_resource_state::Response {
            diagnostics: to_proto_diagnostics(diagnostics),
            ..Default::default()
        })
    }
}

/// Stored state of schema `version` (JSON; a flatmap is refused) as a value of the entry's
/// current schema: the resource's declared upgrade steps on the JSON, the read against the
/// current schema (dropping attributes it no longer has), then the resource's own upgrade.
fn stored_state(
    entry: &ResourceEntry,
    type_name: &str,
    raw: &pb::RawState,
    version: i64,
) -> Result<Value, Diagnostics> {
    if raw.json.is_empty() && !raw.flatmap.is_empty() {
        return Err(ServerError::FlatmapState(type_name.to_string()).into());
    }
    let decoded = |what| move |source| ServerError::Decode { what, source };
    let mut json = codec::parse_json(&raw.json).map_err(decoded("stored state"))?;
    let current = entry.schema().version;
    if version < current {
        upgrade::apply(&mut json, &entry.resource.state_upgrades(), version, current);
    }
    let state = codec::decode_parsed_json(&json, entry.value_type()).map_err(decoded("stored state"))?;
    entry.resource.upgrade_state(version, state)
}
