//! provider-live: hashicorp/kubernetes-compatible resources whose every object carries its
//! estate's label `tofu-estate=<estate>`.
//!
//! Layers: `provider` (the provider block), `resource` (the machinery every typed kind
//! shares) over `kind` and `kinds` (what differs per kind), `manifest` (any kind, as
//! written), both through `lifecycle`; `fields` converts between configuration and object
//! by field table, `behaviour` is what a kind does beyond its fields, and `readiness` judges
//! and awaits an applied object; `metadata`, `plan`, `guard` are pure rules;
//! `objects`, `cache` and `discovery` talk to the API (their waits end on Ctrl-C, through
//! [`kube_estate::Stop`]), `create` makes the objects the server names exactly once;
//! `ownership` reads who owns which field; `facts` are hashicorp's per-attribute behaviour as
//! data. `data_sources` reads the cluster without writing; `list` finds existing objects for
//! `terraform query`; `actions` are the `action` blocks' operations (restart, scale, wait, run a
//! Job).
//!
//! Every module is private: the crate's front door is the re-exports below, what the binary,
//! its integration tests, the tools and the acceptance harness use.

mod actions;
mod behaviour;
mod cache;
mod catalog;
mod context;
mod create;
mod data_sources;
mod discovery;
mod duplicate_keys;
mod ephemeral;
mod facts;
mod fields;
mod functions;
mod guard;
mod identity;
mod kind;
mod kinds;
mod kubectl;
mod lifecycle;
mod list;
mod locate;
mod manifest;
mod metadata;
mod moves;
mod objects;
mod openapi;
mod ownership;
mod patch;
mod plan;
mod private_state;
mod provider;
mod readiness;
mod resource;
mod seen;
mod strategy;
mod timeouts;
mod tolerations;
mod unset;
mod zero_fields;

/// A catalog type's behaviour (its trait is left unexported so rustc still flags unused methods).
pub use behaviour::of as behaviour_of;
/// Every typed resource type of the kind catalog, with its [`KindInfo`].
pub use catalog::{Entry, entries};
/// hashicorp/kubernetes facts this provider does differently on purpose.
pub use facts::DIFFERENCES;
/// A catalog type's names and API identity.
pub use kind::KindInfo;
/// The `metadata` element of a resource value (block element or attribute).
pub use metadata::of as metadata_of;
/// Fills what a value read from a live object leaves out, as the engine expects.
pub use plan::conform;
/// The provider `live`: its schema, resources, data sources, functions, actions and list types.
pub use provider::LiveProvider;
/// Errors for `timeouts` values that are not durations.
pub use timeouts::validate as validate_timeouts;
