//! The service's type tables: an entry per resource, data source, ephemeral resource, list
//! resource and function, each building its schema on first use, and the lookups by type name
//! that fail as [`ServerError`]s.

use std::sync::{Arc, OnceLock};

use super::ProviderService;
use super::error::ServerError;
use crate::ephemeral::EphemeralResource;
use crate::function::{Function, Signature};
use crate::identity::IdentitySchema;
use crate::list::ListResource;
use crate::provider::{DataSource, Resource};
use crate::schema::Schema;
use crate::types::Type;

/// A type's schema and the value type its messages decode to, built when the type is first
/// used. The engine starts a plugin process for each phase of a command, and most of them
/// serve one or two types: building all of provider-live's schemas before the handshake took
/// 16 ms of every start, and only the process that answers GetProviderSchema needs them all.
/// The two are built apart: the process that answers GetProviderSchema needs every schema and
/// no value type.
#[derive(Default)]
pub(super) struct Described {
    schema: OnceLock<Schema>,
    value_type: OnceLock<Type>,
}

/// An entry of one of the service's type tables: how to build its schema, and the cell that
/// keeps it.
pub(super) trait Typed {
    fn described(&self) -> &Described;
    fn build_schema(&self) -> Schema;

    fn schema(&self) -> &Schema {
        self.described().schema.get_or_init(|| self.build_schema())
    }

    fn value_type(&self) -> &Type {
        self.described()
            .value_type
            .get_or_init(|| self.schema().value_type())
    }
}

/// A resource type; its identity schema (small) is computed at once.
pub(super) struct ResourceEntry {
    pub(super) resource: Arc<dyn Resource>,
    pub(super) described: Described,
    pub(super) identity: Option<(IdentitySchema, Type)>,
}

pub(super) struct DataSourceEntry {
    pub(super) data_source: Arc<dyn DataSource>,
    pub(super) described: Described,
}

pub(super) struct EphemeralEntry {
    pub(super) ephemeral: Arc<dyn EphemeralResource>,
    pub(super) described: Described,
}

pub(super) struct ListEntry {
    pub(super) list: Arc<dyn ListResource>,
    pub(super) described: Described,
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
pub(super) struct FunctionEntry {
    pub(super) function: Arc<dyn Function>,
    pub(super) signature: Signature,
}

impl ProviderService {
    pub(super) fn resource(&self, type_name: &str) -> Result<Arc<ResourceEntry>, ServerError> {
        self.resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownResource(type_name.to_string()))
    }

    pub(super) fn data_source(&self, type_name: &str) -> Result<Arc<DataSourceEntry>, ServerError> {
        self.data_sources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownDataSource(type_name.to_string()))
    }

    pub(super) fn ephemeral_resource(&self, type_name: &str) -> Result<Arc<EphemeralEntry>, ServerError> {
        self.ephemeral_resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownEphemeralResource(type_name.to_string()))
    }

    pub(super) fn list_entry(&self, type_name: &str) -> Result<Arc<ListEntry>, ServerError> {
        self.list_resources
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownListResource(type_name.to_string()))
    }
}
