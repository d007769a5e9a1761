//! What a patch-style type declares: its facts ([`PatchInfo`]: name, target kind, metadata
//! shape, field manager) and what it does ([`PatchKind`]: its attributes, the fields it claims
//! and how it reads them back).

use std::time::Duration;

use async_trait::async_trait;
use plugin_runtime::{Block, Diagnostic, Diagnostics, Value};
use serde_json::{Map, Value as Json};

/// The facts of a patch-style type.
pub struct PatchInfo {
    pub type_name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub target: TargetKind,
    pub metadata: MetaShape,
    /// Has `field_manager` and `force` (all but the default service account).
    pub manager_attributes: bool,
    /// The last part of the default field manager, `tofu-live-<estate>-<manages>`.
    pub manages: &'static str,
    /// hashicorp's type declares a resource identity (version 1) naming its fixed target, so
    /// a state it wrote carries one the engine checks against ours.
    pub identity: bool,
}

/// Which kind of object a type edits.
pub enum TargetKind {
    /// The one its `api_version` and `kind` attributes name.
    Configured,
    /// Always this one.
    Fixed(FixedKind),
}

/// A kind of the core group (`v1`) known at compile time.
pub struct FixedKind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

/// The `metadata` block a type has.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MetaShape {
    /// `name` (required) only: a cluster-scoped target.
    Name,
    /// `name` (required) and `namespace` (optional; the target's default is `default`).
    NameNamespace,
    /// As [`MetaShape::NameNamespace`], with `namespace` planned as `default` when unset (so
    /// state reads as hashicorp's, whose schema defaults it).
    NameDefaultNamespace,
    /// The default service account's: labels, annotations, `name` and `namespace` defaulted to
    /// `default`, and the object's uid, resource version and generation.
    Account,
}

/// What one patch-style type does: its own attributes, the fields it claims and how it reads
/// them back. The shared machinery ([`PatchResource`]) does everything else.
#[async_trait]
pub trait PatchKind: Send + Sync + 'static {
    fn info(&self) -> &'static PatchInfo;

    /// The type's own attributes and blocks (not `id`, `metadata`, `field_manager`, `force`).
    fn block(&self) -> Block;

    /// Configuration checks beyond the schema (values may be unknown).
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// apiVersion and kind of the target, as the API spells them (for [`TargetKind::Configured`]).
    fn target_kind(&self, value: &Value) -> Option<(String, String)> {
        Some((
            value.get("api_version").as_str()?.to_string(),
            value.get("kind").as_str()?.to_string(),
        ))
    }

    /// The fields the resource claims, from a resource value whose configured parts are
    /// known: a partial object (`metadata`, `data`, `spec` ...), without apiVersion, kind,
    /// name and namespace.
    fn intent(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics>;

    /// The resource's attributes that come from the cluster, read from `view`: the live object
    /// reduced to the fields of the prior state's intent. `live` is the whole object.
    fn read(&self, view: &Json, live: &Json, prior: &Value) -> Value;

    /// Refuses a write the live object cannot take (a container that is not there).
    fn check(&self, _live: &Json, _value: &Value) -> Result<(), Diagnostic> {
        Ok(())
    }

    /// Adds to `body` what must ride along with the claimed fields: items of atomic lists
    /// (a Node's taints) that other writers own, which an apply would otherwise remove.
    /// `claimed` is every resource value whose items are this resource's.
    fn keep_others(&self, _body: &mut Map<String, Json>, _live: &Json, _claimed: &[&Value]) {}

    /// How long a create waits for the cluster to create the target (the default service
    /// account); `None`: a missing target is an error at once.
    fn create_wait(&self, _value: &Value) -> Option<Duration> {
        None
    }

    /// The `id` of a resource value, when hashicorp's differs from the default of its target
    /// kind. `None` from the default: use the kind's.
    fn id(&self, _value: &Value) -> Option<String> {
        None
    }

    /// Whether `terraform import` takes an object of a fixed kind by its `<namespace>/<name>`
    /// id, as hashicorp's type has an importer (the default service account); the others claim
    /// only what they set, so there is nothing to import.
    fn importable(&self) -> bool {
        false
    }
}
