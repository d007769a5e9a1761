//! The contract between the shared resource machinery (`resource.rs`) and the kinds
//! (`kinds/*.rs`): a kind says only what differs per Kubernetes kind.

use plugin_runtime::{Block, Diagnostics, Value};
use serde_json::{Map, Value as Json};

/// Static facts about a Kubernetes kind served as a typed resource.
pub struct KindInfo {
    pub type_name: &'static str,          // "kubernetes_deployment"
    pub aliases: &'static [&'static str], // &["kubernetes_deployment_v1"]
    pub api_version: &'static str,        // "apps/v1"
    pub kind: &'static str,               // "Deployment"
    pub plural: &'static str,             // "deployments"
    pub namespaced: bool,
    pub description: &'static str, // markdown, for the schema
}

/// How a kind converts its object. Field-table kinds get it from their table
/// (`kinds::spec_convert::TableKind`); the others write it out.
pub trait Kind: Behaviour {
    fn info(&self) -> &'static KindInfo;

    /// The resource's schema block WITHOUT `id`, `estate`, `metadata` (added by TypedResource).
    /// Includes the kind's own attributes and blocks (e.g. `spec`, `data`, `wait_for_rollout`,
    /// `timeouts`), with names, nesting, optional/computed/required exactly as hashicorp/kubernetes
    /// v3 has them for the fields we support. Server-defaulted attributes are Optional+Computed.
    fn block(&self) -> Block;

    /// The object's top-level fields other than apiVersion/kind/metadata (e.g. {"spec": ...} or
    /// {"data": ..., "type": ...}) from a wholly known planned value of the whole resource
    /// (the resource object: `value.get("spec")` etc.). Only what the user configured (non-null)
    /// is included: this is the server-side-apply body, so omitted fields stay with other
    /// managers (HPA-owned replicas) and fields we sent before and now omit are removed.
    /// Bad input -> error diagnostics with an attribute path.
    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics>;

    /// The kind's attributes read back from the live object, as a Value::Object holding ONLY
    /// the kind's own attributes (not id/estate/metadata). `prior` is the resource value being
    /// refreshed or planned (Value::Null on import). Blocks that `prior` does not have and whose
    /// live content is just the server's defaults are left out, and defaults the server filled in
    /// inside configured blocks go to Optional+Computed attributes, so a server default never
    /// shows as a diff. Values the server canonicalises (quantities "0.5" -> "500m") keep the
    /// prior's spelling when they mean the same.
    #[allow(clippy::wrong_self_convention)] // the name is the kinds' contract; it reads the kind's own fields
    fn from_object(&self, object: &Json, prior: &Value) -> Value;
}

/// What a kind does beyond converting its object: waits and immutable fields. Every method
/// has a default, so a kind that does none of it says `impl Behaviour for X {}`.
#[async_trait::async_trait]
pub trait Behaviour: Send + Sync + 'static {
    /// Waits after a create/update until the object is ready (Deployment rollout when
    /// `wait_for_rollout` is true; honouring `timeouts`). Returns the object as last read when
    /// waiting read it again (the state then records its final resourceVersion). Default: no wait.
    async fn wait_ready(
        &self,
        _client: &kube::Client,
        _object: &Json,
        _planned: &Value,
    ) -> Result<Option<Json>, plugin_runtime::Diagnostic> {
        Ok(None)
    }

    /// How long a delete waits for the object to be gone (a namespace deletes its contents
    /// first), from the resource's prior value (`timeouts.delete`). Default: no wait.
    fn delete_wait(&self, _resource: &Value) -> Option<std::time::Duration> {
        None
    }

    /// Attributes the API server refuses to change once set (a Service's `cluster_ip`, a
    /// Deployment's `selector`): a planned change to one replaces the object instead of
    /// failing at apply. Paths start at the resource's top level, e.g. `spec[0].selector`.
    fn immutable_paths(&self) -> Vec<plugin_runtime::AttributePath> {
        Vec::new()
    }
}
