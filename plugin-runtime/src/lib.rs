//! The Terraform/OpenTofu plugin runtime shared by both providers.
//!
//! It speaks the plugin protocol (tfplugin6 over gRPC, behind go-plugin's handshake and
//! AutoMTLS) and hands resources plain values. Layers, each in its own module:
//!
//! - `types`, `value`: cty types and values; [`codec`]: msgpack and JSON on the wire;
//! - `schema`, `diagnostics`: what providers declare and report; [`rules`]: the validators,
//!   defaults and replacements declared on a schema, which the runtime applies to every resource;
//! - `provider`: the traits a provider, resource and data source implement;
//!   `function` and `ephemeral`: provider-defined functions and ephemeral resources; `identity`:
//!   resource identity schemas; `list`: list resources for `terraform query`; `action`:
//!   actions (`action` blocks); [`upgrade`]: stored state of older schema versions and other
//!   providers, brought to the current schema;
//! - `server`: the tfplugin6 gRPC service, translating requests to those traits
//!   ([`proto`] holds the generated code);
//! - `handshake`, [`tls`], `listener`, `go_plugin`, `lifecycle`, `parent`: go-plugin's handshake,
//!   AutoMTLS, the socket (TCP on Windows), go-plugin's own services, the process from start to
//!   exit, and its end when the engine goes away.
//!
//! A provider binary's `main` is one call: `plugin_runtime::serve(MyProvider::new())`
//! ([`serve_async`] inside an existing tokio runtime).
//!
//! Nothing here knows about Kubernetes.

#![warn(missing_docs)]

mod action;
pub mod codec;
mod diagnostics;
pub mod duration;
pub mod engine_run;
mod ephemeral;
mod function;
mod go_plugin;
mod handshake;
mod identity;
mod lifecycle;
mod list;
mod listener;
mod parent;
pub mod proto;
mod provider;
pub mod rules;
mod schema;
mod server;
pub mod tls;
mod types;
pub mod upgrade;
mod value;

pub use action::{Action, InvokeRequest, Progress};
pub use diagnostics::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
pub use ephemeral::{
    CloseRequest, EphemeralResource, OpenRequest, OpenResponse, RenewRequest, RenewResponse,
};
pub use function::{Function, FunctionError, Parameter, Signature};
/// go-plugin's magic cookie, which an engine (or a test acting as one) sets in the plugin's environment.
pub use handshake::{MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE};
pub use identity::{IdentityAttribute, IdentitySchema};
pub use lifecycle::{serve, serve_async};
pub use list::{ListEvent, ListRequest, ListResource, ListedObject};
pub use provider::{
    ApplyRequest, ApplyResponse, DataSource, ImportRequest, ImportResponse, ImportedResource, MoveSource,
    PlanRequest, PlanResponse, Provider, ReadDataRequest, ReadDataResponse, ReadRequest, ReadResponse,
    Resource,
};
pub use schema::{Attribute, Block, NestedAttributes, NestedBlock, Nesting, Schema};
/// The tfplugin6 gRPC service over a [`Provider`], and the largest message it takes.
pub use server::{MAX_MESSAGE_SIZE, ProviderService};
pub use types::Type;
pub use upgrade::{Change, StateUpgrade};
pub use value::{Number, Refinements, Typed, Value};
