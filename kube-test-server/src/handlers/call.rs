//! One request on a stored resource type ([`Call`]: the resource, version, namespace and name
//! from the URL) and how a write records itself in managedFields ([`Recording`]).

use crate::crd;
use crate::exchange::Ctx;
use crate::kinds;
use crate::resources::ResourceType;
use crate::semantics::WriteInfo;
use crate::state::Shared;
use crate::status;
use serde_json::Value;

/// One request on a stored resource type.
pub struct Call<'a> {
    pub st: &'a Shared,
    pub ctx: &'a Ctx,
    pub rt: ResourceType,
    pub version: String,
    /// The namespace in the URL ("" for cluster-scoped kinds and cluster-wide lists).
    pub namespace: String,
    pub name: Option<String>,
    /// The kind a CustomResourceDefinition serves: its schema replaces the built-in registry
    /// code (decoding, defaults, validation).
    pub custom: Option<crd::CustomType>,
}

/// How a write records itself in managedFields.
#[derive(Clone, Copy)]
pub enum Recording<'a> {
    /// An Update by the request's manager, optionally through a subresource.
    Update(Option<&'a str>),
    /// Server-side apply already recorded it.
    Applied,
}

impl<'a> Call<'a> {
    pub(super) fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    pub fn target(&self) -> status::Target<'_> {
        self.rt.target(self.name.as_deref())
    }

    /// The object as the client asked to see it (served version, canonical key order).
    pub fn present(&self, obj: &Value) -> Value {
        kinds::present(&self.rt, &self.version, obj)
    }

    pub fn write_info<'b>(
        &'b self,
        manager: &'b str,
        subresource: Option<&'b str>,
        time: &'b str,
    ) -> WriteInfo<'b> {
        WriteInfo {
            manager,
            subresource,
            time,
        }
    }
}
