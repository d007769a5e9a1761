//! Adapters between the HTTP layer and the pure API-semantics modules (selectors, patches,
//! server-side apply, validation, defaults, RBAC), so handlers call one stable surface.

use serde_json::Value;

use crate::patch::{self, PatchError};
use crate::resources::ResourceType;
use crate::selectors::{FieldSelector, LabelSelector};
use crate::status::{self, ApiError};
use crate::{defaults, ssa, validation};

/// A parsed `labelSelector` / `fieldSelector` pair.
#[derive(Debug, Clone, Default)]
pub struct Selectors {
    labels: LabelSelector,
    fields: FieldSelector,
    /// The label selector's terms when all are `key=value` (answerable from the label index).
    equalities: Vec<(String, String)>,
}

impl Selectors {
    /// Parses both selectors for `kind`; bad ones are 400 with the apiserver's message.
    pub fn parse(label: Option<&str>, field: Option<&str>, kind: &str) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(label.unwrap_or("")).map_err(|m| status::bad_request(&m))?;
        let fields =
            FieldSelector::parse_for_kind(field.unwrap_or(""), kind).map_err(|m| status::bad_request(&m))?;
        let equalities = label.map(simple_equalities).unwrap_or_default();
        Ok(Self {
            labels,
            fields,
            equalities,
        })
    }

    /// `(label, value)` pairs that together are the whole label selector, if it is only
    /// equality terms; a LIST can then start from the label index.
    pub fn label_equalities(&self) -> Option<&[(String, String)]> {
        (!self.equalities.is_empty()).then_some(self.equalities.as_slice())
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether `obj` is selected. Empty selectors skip their work: this runs for every
    /// stored object a LIST or watch walks.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels_ok = self.labels.is_empty()
            || match obj
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(Value::as_object)
            {
                Some(labels) => self.labels.matches(labels),
                None => self.labels.matches(&serde_json::Map::new()),
            };
        labels_ok && (self.fields.is_empty() || self.fields.matches(obj))
    }
}

/// Splits `a=b,c==d` into pairs; empty unless every term is a plain equality (anything
/// else, `!=`, `in`, existence, is left to the full selector).
fn simple_equalities(selector: &str) -> Vec<(String, String)> {
    let plain = |s: &str| !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || "!=()<>".contains(c));
    let mut pairs = Vec::new();
    for term in selector.split(',') {
        let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) else {
            return Vec::new();
        };
        if !plain(k) || !plain(v) {
            return Vec::new();
        }
        pairs.push((k.to_string(), v.to_string()));
    }
    pairs
}

fn patch_error(e: PatchError) -> ApiError {
    ApiError {
        code: e.status_code(),
        body: e.status(),
    }
}

/// RFC 7386 merge patch.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    patch::merge_patch(target, patch)
}

/// Strategic merge patch, with the merge keys of the target's kind.
pub fn strategic_merge_patch(target: &Value, patch: &Value) -> Result<Value, ApiError> {
    patch::strategic_merge_patch(target, patch).map_err(patch_error)
}

/// RFC 6902 JSON patch; a failed `test` is the generic 422.
pub fn json_patch(target: &Value, ops: &Value) -> Result<Value, ApiError> {
    patch::json_patch(target, ops).map_err(patch_error)
}

/// Inputs for recording a write in `metadata.managedFields`.
#[derive(Clone, Copy)]
pub struct WriteInfo<'a> {
    pub manager: &'a str,
    pub subresource: Option<&'a str>,
    pub time: &'a str,
}

/// Records an Update operation by `info.manager` turning `old` into `new`.
pub fn record_update(old: Option<&Value>, new: &mut Value, info: &WriteInfo) {
    ssa::record_update(old, new, info.manager, info.subresource, info.time);
}

/// Server-side apply of `config` onto `current` (None when creating). Returns the new
/// object and whether anything changed (a no-op apply keeps the stored object).
pub fn apply(
    current: Option<&Value>,
    config: &Value,
    info: &WriteInfo,
    force: bool,
) -> Result<(Value, bool), ApiError> {
    ssa::apply(current, config, info.manager, force, info.time)
        .map(|o| (o.object, o.changed))
        .map_err(|c| ApiError {
            code: 409,
            body: c.status(),
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
    Err(ApiError {
        code: 422,
        body: validation::invalid_status(kind, group, name, &errors),
    })
}

/// The 422 for an update without `metadata.resourceVersion` on kinds that require one
/// (reported by storage, so it names the resource rather than the kind).
pub fn require_resource_version(rt: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    match validation::resource_version_required(rt.kind, obj) {
        None => Ok(()),
        Some(e) => {
            let name = obj["metadata"]["name"].as_str().unwrap_or("");
            Err(ApiError {
                code: 422,
                body: validation::invalid_status(rt.resource, rt.group, name, &[e]),
            })
        }
    }
}
