//! List resources (`list "type" "name" {}` in `*.tfquery.hcl`, `terraform query`, Terraform
//! 1.14 and later): find the existing objects a managed resource type could stand for.
//!
//! A list resource shares its type name with the managed resource whose objects it finds, and
//! the engine reads every result against that resource: each [`ListedObject`] carries the
//! object's resource identity (in the resource's identity schema, so `import { identity }`
//! brings it under management), a display name, and, when asked for, the whole resource
//! object in the resource's own schema (what an import of it would produce). Results stream:
//! the engine stops reading after `limit` of them, and dropping the stream stops the work.
//! OpenTofu has no list resources; nothing else depends on them.

use async_trait::async_trait;
use futures::stream::BoxStream;

use crate::diagnostics::Diagnostics;
use crate::schema::Schema;
use crate::value::Value;

/// One list resource type.
#[async_trait]
pub trait ListResource: Send + Sync + 'static {
    /// The type name: the managed resource type whose objects it lists.
    fn type_name(&self) -> &'static str;

    /// The managed resource's other names, each listing the same objects.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The schema of the list block's `config` body.
    fn schema(&self) -> Schema;

    /// Checks a configuration; values may be unknown.
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Lists the objects `request.config` selects, as they are found. An error ends the
    /// listing: send it as the stream's last event.
    fn list(&self, request: ListRequest) -> BoxStream<'static, ListEvent>;
}

/// Find the objects a `list` block asks for.
#[derive(Clone, Debug)]
pub struct ListRequest {
    /// The list resource type called.
    pub type_name: String,
    /// The wholly known `config` body.
    pub config: Value,
    /// Whether each result should carry its whole resource object (costly to build).
    pub include_resource_object: bool,
    /// The most results the engine reads; `None` when it set no limit.
    pub limit: Option<usize>,
}

/// One event of a listing.
#[derive(Clone, Debug)]
pub enum ListEvent {
    /// Boxed: a resource object is far larger than a diagnostics list.
    Object(Box<ListedObject>),
    /// Warnings, or the error that ends the listing.
    Diagnostics(Diagnostics),
}

/// One object found.
#[derive(Clone, Debug)]
pub struct ListedObject {
    /// The object's identity, in the managed resource's identity schema.
    pub identity: Value,
    /// How the engine shows the result, e.g. `shop/app-config`.
    pub display_name: String,
    /// The resource object in the managed resource's schema, when the request asked for it.
    pub resource_object: Option<Value>,
}
