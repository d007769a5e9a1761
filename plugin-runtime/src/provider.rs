//! The provider interface: what a provider, a resource and a data source implement
//! (functions, ephemeral resources, list resources and actions have their own modules,
//! [`crate::function`], [`crate::ephemeral`], [`crate::list`] and [`crate::action`]).
//!
//! A resource is a schema plus validate/plan/apply/read/import functions over plain
//! [`Value`]s. It never sees msgpack, gRPC or the handshake: the server module does that.
//! Every function returns its diagnostics; errors end the call, warnings ride along.

use std::sync::Arc;

use async_trait::async_trait;

use crate::action::Action;
use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics};
use crate::ephemeral::EphemeralResource;
use crate::function::Function;
use crate::identity::IdentitySchema;
use crate::list::ListResource;
use crate::schema::Schema;
use crate::upgrade::StateUpgrade;
use crate::value::Value;

/// A provider: its configuration block, and the resources and data sources it serves.
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// The provider block's schema.
    fn schema(&self) -> Schema;

    /// The provider's version, logged when the plugin starts: `env!("CARGO_PKG_VERSION")` of
    /// the provider's crate, so the version has one source, the workspace `Cargo.toml`.
    fn version(&self) -> &'static str {
        "unknown"
    }

    /// Checks the provider block; values may still be unknown.
    fn validate_config(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Configures the provider before any resource call that needs it. Called once per
    /// engine run; the provider keeps what it builds (one API client shared by every call).
    async fn configure(&self, config: &Value) -> Diagnostics;

    /// Every resource type this provider serves, each under its name and aliases.
    fn resources(&self) -> Vec<Arc<dyn Resource>>;

    /// Every data source type this provider serves.
    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        Vec::new()
    }

    /// Every provider-defined function this provider serves.
    fn functions(&self) -> Vec<Arc<dyn Function>> {
        Vec::new()
    }

    /// Every ephemeral resource type this provider serves.
    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        Vec::new()
    }

    /// Every list resource type this provider serves (`terraform query`), each named after
    /// the managed resource whose objects it finds.
    fn list_resources(&self) -> Vec<Arc<dyn ListResource>> {
        Vec::new()
    }

    /// Every action type this provider serves (`action` blocks, Terraform 1.14+).
    fn actions(&self) -> Vec<Arc<dyn Action>> {
        Vec::new()
    }

    /// The engine asked to stop (Ctrl-C): give up on long waits.
    async fn stop(&self) {}
}

/// One resource type.
#[async_trait]
pub trait Resource: Send + Sync + 'static {
    /// The type name, e.g. `kubernetes_config_map`.
    fn type_name(&self) -> &'static str;

    /// Other names the same resource answers to, e.g. `kubernetes_config_map_v1`.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// What the resource accepts and stores; its version drives state upgrades.
    fn schema(&self) -> Schema;

    /// Checks a configuration; values may be unknown.
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Proposes the state a create or update will produce, and which changes replace.
    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics>;

    /// Whether the engine treats this resource as one of the legacy SDK's (the protocol's
    /// `legacy_type_system`): it then accepts a plan that keeps the prior's form of a value the
    /// rules find equivalent to the configured one, and an applied value that differs from the
    /// planned one, as it does for every SDKv2 provider. A drop-in for an SDKv2 provider says
    /// so, so that its users' states hold what they held; the rules follow ([`crate::rules`]).
    fn legacy_type_system(&self) -> bool {
        false
    }

    /// Carries out a planned change. On failure the response still says what state the
    /// object is in now (`Value::Null` when nothing exists), with the error in `diagnostics`.
    async fn apply(&self, request: ApplyRequest) -> ApplyResponse;

    /// Refreshes state from the real object; `Value::Null` when it is gone.
    async fn read(&self, request: ReadRequest) -> Result<ReadResponse, Diagnostics>;

    /// Reads existing objects for `terraform import` / `import` blocks.
    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics>;

    /// What changed in the stored state between schema versions, as steps the runtime applies
    /// to the stored JSON before reading it against the current schema ([`crate::upgrade`]).
    fn state_upgrades(&self) -> Vec<StateUpgrade> {
        Vec::new()
    }

    /// Brings stored state of an older schema version up to date, after [`state_upgrades`]
    /// and the read against the current schema (which drops attributes it no longer has).
    ///
    /// [`state_upgrades`]: Resource::state_upgrades
    fn upgrade_state(&self, _version: i64, state: Value) -> Result<Value, Diagnostics> {
        Ok(state)
    }

    /// Whether a `moved` block may move the state of `source` into this type. An accepted
    /// state is upgraded as this type's own of `source.schema_version`, so only a source whose
    /// states are this type's (another name of it, the same type of a provider this one
    /// replaces) may be accepted.
    fn accepts_move(&self, _source: &MoveSource<'_>) -> bool {
        false
    }

    /// The state of a moved `source` whose states are of another shape (another provider's
    /// type that manages the same objects), made from its stored JSON. `None`: the source's
    /// states are this type's own, upgraded by version (the default).
    fn translate_move(
        &self,
        _source: &MoveSource<'_>,
        _stored: &serde_json::Value,
    ) -> Option<Result<Value, Diagnostics>> {
        None
    }

    /// The identity schema, for resources that have one ([`crate::IdentitySchema`]).
    fn identity_schema(&self) -> Option<IdentitySchema> {
        None
    }

    /// The identity of the object `state` describes, or `None` while `state` does not name
    /// it yet (a create whose name is still unknown). Derived from state, so that the same
    /// object always has the same identity.
    fn identity(&self, _state: &Value) -> Option<Value> {
        None
    }

    /// The import id an `import { identity = {...} }` block names, so that an import by
    /// identity is an import by id.
    fn import_id(&self, _identity: &Value) -> Result<String, Diagnostics> {
        Err(Diagnostic::error(
            "Import by identity is not supported",
            format!("{} has no resource identity; import it by id", self.type_name()),
        )
        .into())
    }
}

/// Where the state of a `moved` block comes from.
#[derive(Clone, Copy, Debug)]
pub struct MoveSource<'a> {
    /// `registry.terraform.io/hashicorp/kubernetes`
    pub provider_address: &'a str,
    /// The source's resource type.
    pub type_name: &'a str,
    /// The schema version its state was stored at.
    pub schema_version: i64,
}

/// One data source type.
#[async_trait]
pub trait DataSource: Send + Sync + 'static {
    /// The type name, e.g. `kubernetes_config_map`.
    fn type_name(&self) -> &'static str;

    /// What the data source accepts and returns.
    fn schema(&self) -> Schema;

    /// Checks a configuration; values may be unknown.
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Reads what the configuration asks for, filling in the computed attributes.
    async fn read(&self, request: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics>;
}

/// Plan a change. `prior_state` is `Value::Null` for a create and `proposed_new_state`
/// is `Value::Null` for a destroy (the default behaviour of the server plans destroys
/// without calling the resource, so resources only see creates and updates).
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// The resource type called, as the engine names it (an alias included).
    pub type_name: String,
    /// The state as last stored or refreshed.
    pub prior_state: Value,
    /// The engine's proposal: the configuration merged with the prior's computed values.
    pub proposed_new_state: Value,
    /// The configuration as written, unknowns included.
    pub config: Value,
    /// The private bytes the last apply or read returned.
    pub prior_private: Vec<u8>,
}

/// The plan a resource proposes.
#[derive(Clone, Debug, Default)]
pub struct PlanResponse {
    /// The state the apply will produce; unknown where only the apply can tell.
    pub planned_state: Value,
    /// Attribute paths whose change forces a replace.
    pub requires_replace: Vec<AttributePath>,
    /// Opaque bytes handed back at apply (e.g. a fingerprint of the live object).
    pub planned_private: Vec<u8>,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}

/// Carry out a change. `planned_state` is `Value::Null` for a destroy, `prior_state`
/// is `Value::Null` for a create.
#[derive(Clone, Debug)]
pub struct ApplyRequest {
    /// The resource type called, as the engine names it (an alias included).
    pub type_name: String,
    /// The state before the change.
    pub prior_state: Value,
    /// The state the plan promised, which the result must match where it was known.
    pub planned_state: Value,
    /// The configuration as written, unknowns included.
    pub config: Value,
    /// The private bytes the plan returned.
    pub planned_private: Vec<u8>,
}

/// What an apply did.
#[derive(Clone, Debug, Default)]
pub struct ApplyResponse {
    /// The state now, all known; `Value::Null` when nothing exists.
    pub new_state: Value,
    /// Bytes kept beside the state for the next plan and read, unseen by users.
    pub private: Vec<u8>,
    /// Warnings, and the error when the apply failed.
    pub diagnostics: Diagnostics,
}

impl ApplyResponse {
    /// The planned state (and private data) as the outcome: for a resource whose state is all
    /// there is, with nothing outside the engine to change.
    pub fn as_planned(request: ApplyRequest) -> ApplyResponse {
        ApplyResponse {
            new_state: request.planned_state,
            private: request.planned_private,
            diagnostics: Diagnostics::new(),
        }
    }
}

/// Refresh the state of one object.
#[derive(Clone, Debug)]
pub struct ReadRequest {
    /// The resource type called, as the engine names it (an alias included).
    pub type_name: String,
    /// The state as stored.
    pub current_state: Value,
    /// The private bytes stored with it.
    pub private: Vec<u8>,
}

/// A refreshed state.
#[derive(Clone, Debug, Default)]
pub struct ReadResponse {
    /// `Value::Null` when the object no longer exists.
    pub new_state: Value,
    /// The private bytes to store with it.
    pub private: Vec<u8>,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}

impl ReadResponse {
    /// The state as it was: for a resource with nothing outside the engine to refresh from.
    pub fn unchanged(request: ReadRequest) -> ReadResponse {
        ReadResponse {
            new_state: request.current_state,
            private: request.private,
            diagnostics: Diagnostics::new(),
        }
    }
}

/// Import the object an id names.
#[derive(Clone, Debug)]
pub struct ImportRequest {
    /// The resource type called, as the engine names it (an alias included).
    pub type_name: String,
    /// The id the user gave (or [`Resource::import_id`] made of an identity).
    pub id: String,
}

/// What an import found.
#[derive(Clone, Debug, Default)]
pub struct ImportResponse {
    /// Usually one object; the engine then reads it to fill in the state.
    pub imported: Vec<ImportedResource>,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}

impl ImportResponse {
    /// One object of `type_name` imported with `state` (the engine reads it next).
    pub fn one(type_name: String, state: Value) -> ImportResponse {
        ImportResponse {
            imported: vec![ImportedResource {
                type_name,
                state,
                private: Vec::new(),
            }],
            diagnostics: Diagnostics::new(),
        }
    }
}

/// One imported object, with enough state for the read that follows to find it.
#[derive(Clone, Debug)]
pub struct ImportedResource {
    /// The resource type it is stored as.
    pub type_name: String,
    /// Its state before the read (often just the id).
    pub state: Value,
    /// The private bytes to store with it.
    pub private: Vec<u8>,
}

/// Read a data source.
#[derive(Clone, Debug)]
pub struct ReadDataRequest {
    /// The data source type called.
    pub type_name: String,
    /// The configuration, all known (the engine defers the read until it is).
    pub config: Value,
}

/// What a data source read.
#[derive(Clone, Debug, Default)]
pub struct ReadDataResponse {
    /// The configuration with the computed attributes filled in.
    pub state: Value,
    /// Warnings only; errors are the `Err` side.
    pub diagnostics: Diagnostics,
}
