//! An in-memory Kubernetes API server for the project's tests and demo.
//!
//! It stands in for a real cluster where none can be installed, and is held to transcripts
//! recorded from a real kube-apiserver v1.36 (`acceptance/kube-golden/`). Pure API semantics
//! (selectors, patches, server-side apply, validation, defaults, RBAC) live in their own
//! modules over plain JSON; the HTTP server, storage and controllers use them.
//!
//! Start one with [`TestServer::start`]; it listens on `https://127.0.0.1:PORT` with its own
//! CA and accepts the static tokens `admin`, `app-planner` and `restricted` plus any users
//! added through [`Options`]. The binary `kube-test-server` does the same from the command
//! line (see `main.rs`).
//!
//! Request path: `api` (authentication, RBAC, routing) -> `handlers` / `subresources` /
//! `reviews` / `watch` over `store`. A write goes through `defaults` (driven by the recorded
//! OpenAPI in `schema`), `strategy`, `admission`, `validation`, `policies`
//! (ValidatingAdmissionPolicy over `cel`) and `allocation` like the real registry; `builtin`
//! holds the objects a fresh apiserver creates; `simulation` runs the controller-manager's
//! parts and a cluster with nodes (`controllers`, `rollout`, `workloads`, `jobs`, `storage`,
//! `scheduler`, `kubelet`), as `make test-real`'s cluster has them, so Pods run; `testing`
//! serves the `/_test/...` hooks (request counters, injected faults, users).
//!
//! The modules are declared below by layer, bottom to top; a module uses only its own layer and
//! those below, without cycles (README.md, "Module layers"; checked by `layering.rs`).

// Foundations.
mod auth;
mod cel;
mod client;
mod discovery;
mod index;
mod kubeconfig;
mod meta;
mod names;
mod protobuf;
mod request;
mod schema;
mod status;
mod table;
mod telemetry;
pub mod tls;

// Object semantics.
mod defaults;
mod patch;
mod rbac;
mod resources;
mod selectors;
mod semantics;
mod ssa;
mod store;
mod typed_patch;
mod validation;

// Registry.
mod admission;
mod allocation;
mod builtin;
mod crd;
mod kinds;
mod openapi;
mod policies;
mod state;
mod strategy;
mod webhooks;

// Controllers.
mod controllers;
mod jobs;
mod kubelet;
mod pass;
mod pods;
mod rollout;
mod scheduler;
mod simulation;
mod storage;
mod workloads;

// Request handling.
mod exchange;
mod handlers;
mod reviews;
mod subresources;
mod testing;
mod watch;

// Serving.
mod api;
mod server;

#[cfg(test)]
mod layering;

/// A minimal HTTPS client of the server, for tests and the benchmark.
pub use client::{Client, ClientError, ClientResponse};
/// A kubeconfig pointing at a server, with a context per user.
pub use kubeconfig::render as render_kubeconfig;
pub use schema::references;
pub use server::{Options, ServerError, TestServer};
pub use state::Controllers;
