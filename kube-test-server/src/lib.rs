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

pub mod defaults;
pub mod patch;
pub mod rbac;
pub mod schema;
pub mod selectors;
pub mod ssa;
pub mod validation;

pub mod admission;
pub mod allocation;
pub mod api;
pub mod auth;
pub mod builtin;
pub mod cel;
pub mod client;
pub mod controllers;
pub mod crd;
pub mod discovery;
pub mod handlers;
pub mod index;
pub mod jobs;
pub mod kinds;
pub mod kubeconfig;
pub mod kubelet;
pub mod meta;
pub mod names;
pub mod openapi;
pub mod policies;
pub mod protobuf;
pub mod request;
pub mod resources;
pub mod reviews;
pub mod rollout;
pub mod scheduler;
pub mod semantics;
pub mod server;
pub mod simulation;
pub mod state;
pub mod status;
pub mod storage;
pub mod store;
pub mod strategy;
pub mod subresources;
pub mod table;
pub mod telemetry;
pub mod testing;
pub mod tls;
pub mod typed_patch;
pub mod watch;
pub mod workloads;

pub use server::{Options, ServerError, TestServer};
pub use state::Controllers;
