//! Ephemeral resources (`ephemeral "type" "name" {}`, Terraform 1.10 and later): values such
//! as tokens that the engine asks for during a run and never writes to a plan or state.
//!
//! The engine opens one in each phase that needs it (plan, apply), may renew it
//! while the run lasts (at `renew_at`), and closes it at the end of that phase. What the
//! provider must remember between those calls goes in `private`, opaque bytes the engine
//! hands back on renew and close. As with resources, the trait sees plain [`Value`]s only.

use std::time::SystemTime;

use async_trait::async_trait;

use crate::diagnostics::Diagnostics;
use crate::schema::Schema;
use crate::value::Value;

/// One ephemeral resource type.
#[async_trait]
pub trait EphemeralResource: Send + Sync + 'static {
    /// The type name, e.g. `kubernetes_token_request_v1`.
    fn type_name(&self) -> &'static str;

    /// What it accepts and produces.
    fn schema(&self) -> Schema;

    /// Checks a configuration; values may be unknown.
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Produces the value for a wholly known configuration.
    async fn open(&self, request: OpenRequest) -> Result<OpenResponse, Diagnostics>;

    /// Extends what `open` produced, when it asked to be renewed. The default asks for no
    /// further renewal.
    async fn renew(&self, request: RenewRequest) -> Result<RenewResponse, Diagnostics> {
        Ok(RenewResponse {
            private: request.private,
            ..RenewResponse::default()
        })
    }

    /// Releases what `open` produced (the engine is done with the value). The default has
    /// nothing to release.
    async fn close(&self, _request: CloseRequest) -> Diagnostics {
        Diagnostics::new()
    }
}

/// Produce the value.
#[derive(Clone, Debug)]
pub struct OpenRequest {
    /// The ephemeral resource type called.
    pub type_name: String,
    /// The configuration, wholly known.
    pub config: Value,
}

/// The value produced, never stored in plan or state.
#[derive(Clone, Debug, Default)]
pub struct OpenResponse {
    /// The configuration with its computed attributes filled in.
    pub result: Value,
    /// When the engine should call `renew`, if the value expires during a long run.
    pub renew_at: Option<SystemTime>,
    /// Handed back on renew and close.
    pub private: Vec<u8>,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}

/// Extend the value's life.
#[derive(Clone, Debug)]
pub struct RenewRequest {
    /// The ephemeral resource type called.
    pub type_name: String,
    /// What the last open or renew handed back.
    pub private: Vec<u8>,
}

/// A renewal done.
#[derive(Clone, Debug, Default)]
pub struct RenewResponse {
    /// When to renew again; `None` for never.
    pub renew_at: Option<SystemTime>,
    /// Handed back on the next renew and on close.
    pub private: Vec<u8>,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}

/// Release the value.
#[derive(Clone, Debug)]
pub struct CloseRequest {
    /// The ephemeral resource type called.
    pub type_name: String,
    /// What the last open or renew handed back.
    pub private: Vec<u8>,
}
