//! The contract between the shared resource machinery (`resource.rs`) and the kinds
//! (`kinds/*.rs`): a kind says only what differs per Kubernetes kind.

use kube::api::ApiResource;
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
    pub metadata: MetadataShape,
}

/// How hashicorp shapes a type's `metadata`: a required block for most, but an optional one
/// for a few types and a nested attribute (`metadata = { ... }`) for plugin-framework types.
#[derive(Clone, Copy, Debug)]
pub struct MetadataShape {
    /// `metadata = { ... }` instead of a block.
    pub attribute: bool,
    pub required: bool,
    /// Has `namespace` (namespaced kinds, and framework types even when cluster-scoped).
    pub namespace: bool,
    /// `uid`, `resource_version` and `generation` are optional+computed, not computed only.
    pub server_fields_optional: bool,
}

impl MetadataShape {
    /// The usual block: required, with `namespace` where the kind is namespaced.
    pub const fn block(namespaced: bool) -> MetadataShape {
        MetadataShape {
            attribute: false,
            required: true,
            namespace: namespaced,
            server_fields_optional: false,
        }
    }
}

/// The API resource of a kind known at compile time.
pub fn api_resource(info: &KindInfo) -> ApiResource {
    let (group, version) = info.api_version.split_once('/').unwrap_or(("", info.api_version));
    ApiResource {
        group: group.to_string(),
        version: version.to_string(),
        api_version: info.api_version.to_string(),
        kind: info.kind.to_string(),
        plural: info.plural.to_string(),
    }
}

/// How a kind converts its object. Catalog kinds get it from their field table
/// (`kinds::generic::CatalogKind`); the others write it out.
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

    /// Whether the object is deleted once its wait is over and the state alone keeps what it
    /// gave (a signed certificate), so that a read finding no object keeps the state. Default:
    /// no.
    fn local_once_ready(&self) -> bool {
        false
    }

    /// How long a delete waits for the object to be gone (a namespace deletes its contents
    /// first), from the resource's prior value (`timeouts.delete`). Default: no wait.
    fn delete_wait(&self, _resource: &Value) -> Option<std::time::Duration> {
        None
    }

    /// Fills in what the API requires and the kind's Terraform shape cannot say (an ingress of
    /// the networking/v1beta1 shape has no `path_type`), and leaves out what hashicorp never
    /// sends for the object's shape (a Service's load-balancer settings on another type).
    /// Default: nothing.
    fn complete(&self, _object: &mut Map<String, Json>) {}

    /// The live object as it is read into `prior`'s shape, and the prior to read it against,
    /// where the resource's attributes stand for the object's fields in another form or the
    /// prior cannot tell the user's items from the server's. Default: `None`, both as they are.
    fn read_view(&self, _object: &Json, _prior: &Value) -> Option<(Json, Value)> {
        None
    }

    /// Top-level fields of the live object that the cluster fills in for the user: unless this
    /// provider writes them, they are read into the state whoever wrote them. A service-account
    /// token Secret's `data`, which the token controller writes and configurations read
    /// (`data["token"]`), as hashicorp's read shows it. Default: none; every other manager's
    /// field stays out of the state.
    fn server_filled(&self, _live: &Json) -> &'static [&'static str] {
        &[]
    }

    /// Removes from an object being imported what the API server added by itself inside
    /// values owned whole (items of an atomic list, like a pod's default tolerations), which
    /// field ownership cannot tell from the user's. Default: nothing.
    fn unclaim(&self, _object: &mut Json) {}

    /// Sets what an import can tell of the Terraform-only settings from the object (a signing
    /// request already approved was `auto_approve`d). Default: nothing, so they take their
    /// defaults.
    fn imported(&self, _object: &Json, _state: &mut Value) {}

    /// Attributes whose change replaces the object given the prior state (an immutable
    /// ConfigMap's `data`: hashicorp's CustomizeDiff). Default: none.
    fn replaced_after(&self, _prior: &Value) -> Vec<plugin_runtime::AttributePath> {
        Vec::new()
    }

    /// Attributes the API server refuses to change once set (a Service's `cluster_ip`, a
    /// Deployment's `selector`): a planned change to one replaces the object instead of
    /// failing at apply. Paths start at the resource's top level, e.g. `spec[0].selector`.
    fn immutable_paths(&self) -> Vec<plugin_runtime::AttributePath> {
        Vec::new()
    }
}
