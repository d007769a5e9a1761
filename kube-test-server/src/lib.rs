//! An in-memory Kubernetes API server for the project's tests and demo.
//!
//! It stands in for a real cluster where none can be installed, and is held to transcripts
//! recorded from a real kube-apiserver v1.36 (`acceptance/kube-golden/`). Pure API semantics
//! (selectors, patches, server-side apply, validation, defaults, RBAC) live in their own
//! modules over plain JSON; the HTTP server, storage and controllers use them.
//!
//! Start one with [`TestServer::start`]; it listens on `https://127.0.0.1:PORT` with its own
//! CA and accepts the static tokens of [`auth`] plus any users added through [`Options`].
//! The binary `kube-test-server` does the same from the command line (see `main.rs`).
//!
//! Request path: [`api`] (authentication, RBAC, routing) -> [`handlers`] / [`subresources`] /
//! [`reviews`] / [`watch`] over [`store`]. A write goes through [`defaults`] (driven by the
//! recorded OpenAPI in [`schema`]), [`strategy`], [`admission`], [`validation`], [`policies`]
//! (ValidatingAdmissionPolicy over [`cel`]) and [`allocation`] like the real registry;
//! [`builtin`] holds the objects a fresh apiserver creates; [`controllers`] plays the
//! controller-manager's parts the recorded cluster ran, and [`simulation`] the rest of a
//! cluster with nodes ([`rollout`], [`workloads`], [`jobs`], [`storage`], [`scheduler`],
//! [`kubelet`]), as `make test-real`'s cluster has them, so Pods run;
//! [`testing`] serves the `/_test/...` hooks (request counters, injected faults, users).
//! `tests/conformance.rs` replays the recorded transcripts.

mod defaults;
mod patch;
mod rbac;
mod schema;
mod selectors;
mod ssa;
mod validation;

mod admission;
mod allocation;
mod api;
mod auth;
mod builtin;
mod cel;
pub mod client;
mod controllers;
mod crd;
mod discovery;
mod exchange;
mod handlers;
mod index;
mod jobs;
mod kinds;
pub mod kubeconfig;
mod kubelet;
mod meta;
mod names;
mod openapi;
mod pass;
mod pods;
mod policies;
mod protobuf;
mod request;
mod resources;
mod reviews;
mod rollout;
mod scheduler;
mod semantics;
mod server;
mod simulation;
mod state;
mod status;
mod storage;
mod store;
mod strategy;
mod subresources;
mod table;
mod telemetry;
mod testing;
pub mod tls;
mod typed_patch;
mod watch;
mod workloads;

pub use server::{Options, ServerError, TestServer};
pub use state::Controllers;
