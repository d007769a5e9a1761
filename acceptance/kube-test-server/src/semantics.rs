//! Adapters between the HTTP layer and the pure API-semantics modules (selectors, patches,
//! server-side apply, validation, defaults, RBAC), so handlers call one stable surface.

use serde_json::{Map, Value};

use crate::patch::{self, PatchError};
use crate::resources::ResourceType;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::{self, ApiError};
use crate::{defaults, validation};

/// A parsed `labelSelector` / `fieldSelector` pair.
#[derive(Debug, Clone, Default)]
pub struct Selectors {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Selectors {
    /// Parses both selectors for `kind`; bad ones are 400 with the apiserver's message.
    pub fn parse(label: Option<&str>, field: Option<&str>, kind: &str) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(label.unwrap_or("")).map_err(|m| status::bad_request(&m))?;
        let fields = FieldSelector::parse_for_kind(field.unwrap_or(""), kind).map_err(|m| status::bad_request(&m))?;
        Ok(Self { labels, fields })
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches_object(obj) && self.fields.matches(obj)
    }
}

fn patch_error(e: PatchError) -> ApiError {
    ApiError { code: e.status_code(), body: e.status() }
}

/// RFC 7386 merge patch.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    patch::merge_patch(target, patch)
}

/// Strategic merge patch for `kind`.
pub fn strategic_merge_patch(kind: &str, target: &Value, patch: &Value) -> Result<Value, ApiError> {
    patch::strategic_merge_patch(target, patch, kind).map_err(patch_error)
}

/// RFC 6902 JSON patch; a failed `test` is the generic 422.
pub fn json_patch(target: &Value, ops: &Value) -> Result<Value, ApiError> {
    patch::json_patch(target, ops).map_err(patch_error)
}

/// Inputs for recording a write in `metadata.managedFields`.
pub struct WriteInfo<'a> {
    pub manager: &'a str,
    pub api_version: &'a str,
    pub subresource: Option<&'a str>,
    pub time: &'a str,
}

/// Records an Update operation by `info.manager` turning `old` into `new`.
pub fn record_update(old: Option<&Value>, new: &mut Value, info: &WriteInfo) {
    let _ = (old, new, info);
}

/// Server-side apply of `config` onto `current` (None when creating).
pub fn apply(
    current: Option<&Value>,
    config: &Value,
    info: &WriteInfo,
    force: bool,
) -> Result<Value, ApiError> {
    let _ = (info, force);
    Ok(match current {
        Some(c) => merge_patch(c, config),
        None => config.clone(),
    })
}

/// Fills the server-side defaults of `kind`.
pub fn apply_defaults(kind: &str, obj: &mut Value) {
    defaults::apply_defaults(kind, obj);
}

/// Validates a create (`old` None) or an update; Err is the 422 body.
pub fn validate(kind: &str, group: &str, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let errors = validation::validate(kind, obj, old);
    if errors.is_empty() {
        return Ok(());
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    Err(ApiError { code: 422, body: validation::invalid_status(kind, group, name, &errors) })
}

/// The 422 for an update without `metadata.resourceVersion` on kinds that require one
/// (reported by storage, so it names the resource rather than the kind).
pub fn require_resource_version(rt: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    match validation::resource_version_required(rt.kind, obj) {
        None => Ok(()),
        Some(e) => {
            let name = obj["metadata"]["name"].as_str().unwrap_or("");
            Err(ApiError { code: 422, body: validation::invalid_status(rt.resource, rt.group, name, &[e]) })
        }
    }
}

/// What RBAC is asked about one request.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    pub verb: String,
    pub namespace: String,
    pub api_group: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    /// Set for non-resource requests (`/version`, `/api`, ...).
    pub path: Option<String>,
}

/// Everything RBAC needs from storage: the stored Roles, ClusterRoles and bindings.
pub struct Policy {
    pub roles: Vec<Value>,
    pub cluster_roles: Vec<Value>,
    pub role_bindings: Vec<Value>,
    pub cluster_role_bindings: Vec<Value>,
}

/// The decision and, when allowed, the reason SelfSubjectAccessReview reports.
pub struct Decision {
    pub allowed: bool,
    pub reason: Option<String>,
}

pub fn authorize(_policy: &Policy, user: &crate::auth::UserInfo, _attrs: &Attributes) -> Decision {
    Decision { allowed: user.is_admin(), reason: None }
}

/// The 403 body for a denied request.
pub fn forbidden(user: &crate::auth::UserInfo, attrs: &Attributes) -> ApiError {
    let scope = if attrs.namespace.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{}\"", attrs.namespace)
    };
    let t = status::Target {
        group: &attrs.api_group,
        resource: &attrs.resource,
        name: (!attrs.name.is_empty()).then_some(attrs.name.as_str()),
    };
    let subject = match t.name {
        Some(n) => format!("{} \"{n}\"", t.qualified()),
        None => t.qualified(),
    };
    let message = format!(
        "{subject} is forbidden: User \"{}\" cannot {} resource \"{}\" in API group \"{}\" {scope}",
        user.name, attrs.verb, attrs.resource, attrs.api_group
    );
    status::failure(403, "Forbidden", &message, Some(t.details()))
}

/// The bootstrap ClusterRoles and ClusterRoleBindings every cluster starts with.
pub fn bootstrap_policy() -> (Vec<Value>, Vec<Value>) {
    (Vec::new(), Vec::new())
}

/// SelfSubjectRulesReview status for `user` in `namespace`.
pub fn rules_review(_policy: &Policy, _user: &crate::auth::UserInfo, _namespace: &str) -> Value {
    Value::Object(Map::new())
}
