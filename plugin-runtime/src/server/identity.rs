//! Resource identity: `GetResourceIdentitySchemas`, `UpgradeResourceIdentity`, and the identity
//! a resource entry derives from a state for the engine to keep beside it.

use super::ProviderService;
use super::convert::{encode, to_proto_diagnostics, to_proto_identity_schema};
use super::error::ServerError;
use super::tables::ResourceEntry;
use crate::codec;
use crate::proto::tfplugin6 as pb;
use crate::types::Type;
use crate::value::Value;

impl ProviderService {
    pub(super) fn identity_schemas(&self) -> pb::get_resource_identity_schemas::Response {
        let identity_schemas = self
            .resources
            .iter()
            .filter_map(|(name, entry)| {
                let (schema, _) = entry.identity.as_ref()?;
                Some((name.clone(), to_proto_identity_schema(schema)))
            })
            .collect();
        pb::get_resource_identity_schemas::Response {
            identity_schemas,
            diagnostics: Vec::new(),
        }
    }

    pub(super) fn upgrade_identity(
        &self,
        request: pb::upgrade_resource_identity::Request,
    ) -> pb::upgrade_resource_identity::Response {
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
            // A state written before identities (another provider's, an older one) has none: the
            // engine still asks, with nothing, and a null identity is what it holds.
            let identity = if json.is_empty() {
                Value::Null
            } else {
                codec::decode_json(&json, ty).map_err(|source| ServerError::Decode {
                    what: "stored identity",
                    source,
                })?
            };
            Ok::<_, ServerError>(pb::ResourceIdentityData {
                identity_data: Some(encode(&identity, ty, "upgraded identity")?),
            })
        })();
        let (upgraded_identity, diagnostics) = match outcome {
            Ok(identity) => (Some(identity), Vec::new()),
            Err(e) => (None, to_proto_diagnostics(e.into())),
        };
        pb::upgrade_resource_identity::Response {
            upgraded_identity,
            diagnostics,
        }
    }
}

impl ResourceEntry {
    /// The identity of the object `state` describes, on the wire: `None` when the resource
    /// has no identity or it is not wholly known yet (the engine refuses unknown identities).
    pub(super) fn identity_of(&self, state: &Value) -> Result<Option<pb::ResourceIdentityData>, ServerError> {
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

    pub(super) fn identity_type(&self, type_name: &str) -> Result<&Type, ServerError> {
        self.identity
            .as_ref()
            .map(|(_, ty)| ty)
            .ok_or_else(|| ServerError::NoIdentity(type_name.to_string()))
    }
}
