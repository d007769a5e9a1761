//! provider-live: hashicorp/kubernetes-compatible resources whose every object carries its
//! estate's label `tofu-estate=<estate>`.
//!
//! Layers: [`provider`] (the provider block), [`resource`] (the machinery every typed kind
//! shares) over [`kind`] and [`kinds`] (what differs per kind), [`manifest`] (any kind, as
//! written), both through [`lifecycle`]; [`fields`] converts between configuration and object
//! by field table, [`behaviour`] is what a kind does beyond its fields, and [`readiness`] judges
//! and awaits an applied object; [`metadata`], [`plan`], [`guard`] are pure rules;
//! [`objects`], [`cache`] and [`discovery`] talk to the API, [`create`] makes the objects the
//! server names exactly once, and [`stop`] cuts waits short on Ctrl-C; [`ownership`] reads who
//! owns which field; [`facts`] are hashicorp's per-attribute behaviour as data. [`data_sources`]
//! reads the cluster without writing; [`list`] finds existing objects for `terraform query`;
//! [`actions`] are the `action` blocks' operations (restart, scale, wait, run a Job).

pub mod actions;
pub mod behaviour;
pub mod cache;
pub mod catalog;
pub mod context;
pub mod create;
pub mod data_sources;
pub mod discovery;
pub mod duplicate_keys;
pub mod ephemeral;
pub mod facts;
pub(crate) mod fields;
pub mod functions;
pub mod guard;
pub mod identity;
pub mod kind;
pub mod kinds;
pub mod kubectl;
pub mod lifecycle;
pub mod list;
pub mod locate;
pub mod manifest;
pub mod metadata;
pub mod moves;
pub mod objects;
pub mod openapi;
pub mod ownership;
pub mod patch;
pub mod plan;
pub mod provider;
pub(crate) mod readiness;
pub mod resource;
pub mod seen;
pub mod stop;
pub mod strategy;
pub mod timeouts;
pub mod tolerations;
pub mod unset;
pub mod zero_fields;

pub use provider::LiveProvider;
