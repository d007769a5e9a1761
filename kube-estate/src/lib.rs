//! The Kubernetes side shared by both providers: the provider block and the client it
//! builds, the estate label, how objects are named in messages, typed API errors, the retry
//! policy and the process's stop signal. Nothing here knows about gRPC; resources turn
//! [`ApiError`]s and [`ConnectError`]s into diagnostics through their `From` impls.

#![warn(missing_docs)]

pub mod api_error;
mod authorized;
pub mod configured;
pub mod connect_error;
pub mod connection;
mod credential;
pub mod estate;
pub mod https;
mod kubeconfig;
pub mod object_ref;
pub mod retry;
mod retry_after;
mod settings;
pub mod stop;
pub mod typed_patch;

pub use api_error::{ApiError, FieldConflict};
pub use configured::{Configured, Deferred};
pub use connect_error::ConnectError;
pub use connection::{Connection, connect, provider_block, validate};
pub use credential::CredentialError;
pub use estate::{ESTATE_LABEL, Estate, EstateError};
pub use object_ref::ObjectRef;
pub use retry::{Failure, Repeat, with_retry, with_retry_unprocessed};
pub use settings::EnvError;
pub use stop::Stop;
