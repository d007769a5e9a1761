//! `Status` bodies: the error (and delete-success) documents the apiserver answers with.
//!
//! Every message is worded exactly as kube-apiserver words it, since clients and the
//! conformance transcripts match on them.

use serde_json::{Map, Value, json};

/// A failed request: the HTTP code and the `Status` body to send.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {}", body["message"].as_str().unwrap_or(""))]
pub struct ApiError {
    pub code: u16,
    pub body: Value,
}

/// What a status names: the plural resource (and its group) and maybe an object name.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub group: &'a str,
    pub resource: &'a str,
    pub name: Option<&'a str>,
}

impl Target<'_> {
    /// `configmaps` or `deployments.apps`, as messages spell a resource.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    /// `details` naming the target: name, group (when not core), kind (the plural resource).
    pub fn details(&self) -> Value {
        let mut d = Map::new();
        if let Some(name) = self.name {
            d.insert("name".into(), json!(name));
        }
        if !self.group.is_empty() {
            d.insert("group".into(), json!(self.group));
        }
        d.insert("kind".into(), json!(self.resource));
        Value::Object(d)
    }
}

/// Builds a `Failure` status; `details` is left out when `None`.
pub fn failure(code: u16, reason: &str, message: &str, details: Option<Value>) -> ApiError {
    let mut body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason,
    });
    if let Some(d) = details {
        body["details"] = d;
    }
    body["code"] = json!(code);
    ApiError { code, body }
}

pub fn not_found(t: Target) -> ApiError {
    let msg = format!("{} \"{}\" not found", t.qualified(), t.name.unwrap_or(""));
    failure(404, "NotFound", &msg, Some(t.details()))
}

pub fn already_exists(t: Target) -> ApiError {
    let msg = format!("{} \"{}\" already exists", t.qualified(), t.name.unwrap_or(""));
    failure(409, "AlreadyExists", &msg, Some(t.details()))
}

/// The optimistic-concurrency conflict (stale resourceVersion).
pub fn conflict(t: Target) -> ApiError {
    let msg = format!(
        "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your \
         changes to the latest version and try again",
        t.qualified(),
        t.name.unwrap_or("")
    );
    failure(409, "Conflict", &msg, Some(t.details()))
}

/// A conflict whose message the caller words (delete preconditions name the Kind, not the resource).
pub fn conflict_with(message: &str, details: Value) -> ApiError {
    failure(409, "Conflict", message, Some(details))
}

pub fn bad_request(message: &str) -> ApiError {
    failure(400, "BadRequest", message, None)
}

/// 404 for a resource this server does not know in a group it does.
pub fn unknown_resource() -> ApiError {
    failure(
        404,
        "NotFound",
        "the server could not find the requested resource",
        Some(json!({})),
    )
}

pub fn method_not_allowed() -> ApiError {
    failure(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        Some(json!({})),
    )
}

pub fn not_acceptable() -> ApiError {
    failure(
        406,
        "NotAcceptable",
        "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, \
         application/vnd.kubernetes.protobuf",
        Some(json!({})),
    )
}

pub fn unsupported_media_type() -> ApiError {
    failure(
        415,
        "UnsupportedMediaType",
        "415: Unsupported Media Type",
        Some(json!({})),
    )
}

pub fn unauthorized() -> ApiError {
    failure(401, "Unauthorized", "Unauthorized", None)
}

/// 422 on a request option (`PatchOptions`, `CreateOptions`, ...) rather than on the object.
pub fn invalid_options(kind: &str, field: &str, reason: &str, detail: &str) -> ApiError {
    let message = format!("{kind}.meta.k8s.io \"\" is invalid: {field}: {detail}");
    let details = json!({
        "group": "meta.k8s.io", "kind": kind,
        "causes": [{"reason": reason, "message": detail, "field": field}],
    });
    failure(422, "Invalid", &message, Some(details))
}

/// 403 for writes into a namespace that is being deleted.
pub fn namespace_terminating(t: Target, namespace: &str) -> ApiError {
    let message = format!(
        "{} \"{}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
        t.qualified(),
        t.name.unwrap_or("")
    );
    let mut details = t.details();
    details["causes"] = json!([{
        "reason": "NamespaceTerminating",
        "message": format!("namespace {namespace} is being terminated"),
        "field": "metadata.namespace",
    }]);
    failure(403, "Forbidden", &message, Some(details))
}

/// 403 from an admission plugin: `<resource> "<name>" is forbidden: <message>`.
pub fn forbidden(t: Target, message: &str) -> ApiError {
    let message = format!(
        "{} \"{}\" is forbidden: {message}",
        t.qualified(),
        t.name.unwrap_or("")
    );
    failure(403, "Forbidden", &message, Some(t.details()))
}

/// 429 and 500 bodies for injected faults.
pub fn too_many_requests() -> ApiError {
    failure(
        429,
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
        Some(json!({"retryAfterSeconds": 1})),
    )
}

pub fn internal_error(message: &str) -> ApiError {
    failure(
        500,
        "InternalError",
        &format!("Internal error occurred: {message}"),
        Some(json!({"causes": [{"message": message}]})),
    )
}

/// The `Success` status a DELETE answers for most kinds.
pub fn delete_success(t: Target, uid: &str) -> Value {
    let mut details = t.details();
    details["uid"] = json!(uid);
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}
