//! The Kubernetes side shared by both providers: the provider block and the client it
//! builds, the estate label, how objects are named in messages, typed API errors, the retry
//! policy and the process's stop signal. Nothing here knows about gRPC; resources turn
//! [`ApiError`]s and [`ConnectError`]s into diagnostics through their `From` impls.

#![warn(missing_docs)]

mod api_error;
mod authorized;
mod configured;
mod connect_error;
mod connection;
mod credential;
mod estate;
mod https;
mod kubeconfig;
mod object_ref;
pub mod retry;
mod retry_after;
mod settings;
mod stop;
mod typed_patch;

pub use api_error::{ApiError, FieldConflict};
pub use configured::{Configured, Deferred};
pub use connect_error::ConnectError;
pub use connection::{Connection, connect, provider_block, validate};
pub use credential::CredentialError;
pub use estate::{ESTATE_LABEL, Estate, EstateError};
/// A `kube::Client` builder over this crate's TLS stack, for clients made outside a connection.
pub use https::{GenericService, TlsSetupError, client_builder};
pub use object_ref::ObjectRef;
pub use retry::{Failure, Repeat, with_retry, with_retry_unprocessed};
pub use settings::EnvError;
pub use stop::Stop;
