//! Typed Kubernetes API errors, and the words a user can act on.
//!
//! Every call site names the object and the verb, so a failure reads
//! `Not allowed to get Secret "tofu-records-network/gateway-host"` rather than a bare
//! HTTP status. A request that got no usable answer names its verb, what it was about (a LIST
//! with its selector), the root cause and the tries its retries made; refusals that are not
//! about permissions (a namespace being deleted, a quota, an admission webhook) say so
//! rather than pointing at RBAC.

use std::time::Duration;

use plugin_runtime::Diagnostic;

use crate::object_ref::ObjectRef;
use crate::retry::{Connection, Ended, Failure, connection, failed_webhook};

/// A failed Kubernetes API request, sorted by what the user can do about it; its `Display`
/// names the object and the verb, and resources turn it into a diagnostic through `From`.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The object does not exist (404): gone from state on refresh, nothing to do on delete.
    #[error("{object} not found")]
    NotFound {
        /// The object asked for.
        object: ObjectRef,
    },
    /// A create found the name taken (409 `AlreadyExists`): the object wants importing.
    #[error("{object} already exists")]
    AlreadyExists {
        /// The object whose name is taken.
        object: ObjectRef,
    },
    /// The server refused the credential itself (401): expired past renewal, revoked, or
    /// another cluster's. The message names the identity (see `authorized`).
    #[error("cannot {verb} {object}: {message}")]
    Unauthorized {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The server's Status message.
        message: String,
    },
    /// RBAC refused the request (403): the identity lacks a permission.
    #[error("not allowed to {verb} {object}: {message}")]
    Forbidden {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The server's Status message, e.g. `User "x" cannot get resource ...`.
        message: String,
    },
    /// A write into a namespace that is being deleted (403, cause `NamespaceTerminating`).
    #[error("cannot {verb} {object}: namespace {namespace:?} is being deleted")]
    NamespaceTerminating {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The namespace being deleted.
        namespace: String,
        /// The server's Status message.
        message: String,
    },
    /// A write into a namespace that does not exist (404 `namespaces "x" not found`).
    #[error("cannot {verb} {object}: namespace {namespace:?} not found")]
    NamespaceMissing {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The namespace that does not exist.
        namespace: String,
    },
    /// A ResourceQuota refused the object (403 `exceeded quota` / `failed quota`).
    #[error("cannot {verb} {object}: {message}")]
    QuotaExceeded {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The server's Status message.
        message: String,
    },
    /// An admission webhook or ValidatingAdmissionPolicy denied the request.
    #[error("cannot {verb} {object}: {message}")]
    AdmissionDenied {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The denial as the policy or webhook worded it.
        message: String,
    },
    /// The API server could not call an admission webhook whose `failurePolicy` is `Fail`
    /// (500 `failed calling webhook "x"`): its service is down, missing or too slow. Not
    /// retried: the server itself is up, and the webhook's owners must act.
    #[error("cannot {verb} {object}: {message}")]
    WebhookFailed {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// The webhook's name, which tells the user whom to ask.
        webhook: String,
        /// The server's Status message.
        message: String,
    },
    /// Another writer changed the object first (409): a stale resourceVersion, or fields that
    /// other field managers own.
    #[error("conflicting change to {object}: {message}")]
    Conflict {
        /// The object the request was about.
        object: ObjectRef,
        /// The server's Status message.
        message: String,
        /// The fields other managers own, when server-side apply refused to take them
        /// (empty for any other conflict).
        fields: Vec<FieldConflict>,
        /// An earlier try of the same request got no answer (or a 5xx): the change that
        /// conflicts may be that try's own.
        uncertain: bool,
    },
    /// Validation refused the object (422): the configuration must change.
    #[error("{object} is invalid: {message}")]
    Invalid {
        /// The object the request was about.
        object: ObjectRef,
        /// The server's Status message.
        message: String,
        /// (field, message) pairs from the Status details.
        causes: Vec<(String, String)>,
    },
    /// Server-side apply cannot make a typed patch of the object (a keyed list holding a key
    /// twice, a value of the wrong type): the object must change, no retry helps.
    #[error("cannot {verb} {object}: {}", errors.join("; "))]
    Untypable {
        /// The object the request was about.
        object: ObjectRef,
        /// The verb refused, as a user would say it (`get`, `create`, `patch`).
        verb: String,
        /// `path: problem`, as the server names them: `.spec.template.spec.containers[name="c"].env:
        /// duplicate entries for key [name="A"]`.
        errors: Vec<String>,
    },
    /// No usable answer: the connection failed, or 429 or 5xx, after the retries.
    #[error("Kubernetes API unavailable: could not {request}: {cause}")]
    Unavailable {
        /// The request that got no answer.
        request: Request,
        /// The root cause, e.g. `tcp connect error: Connection refused (os error 111)` or
        /// `the API server answered 503 Service Unavailable: ...`.
        cause: String,
        /// Attempts made, the last one included.
        tries: u32,
        /// Time spent waiting between the attempts.
        waited: Duration,
        /// Why the retries stopped, which the message explains.
        ended: Ended,
        /// Some try may have reached the server and acted on the request.
        uncertain: bool,
    },
    /// Any other status, passed on with its code.
    #[error("Kubernetes API error {code} for {object}: {message}")]
    Other {
        /// The object the request was about.
        object: ObjectRef,
        /// The HTTP status code.
        code: u16,
        /// The server's Status message.
        message: String,
    },
}

/// A request as errors name it: the verb and what it was about, an object (`get ConfigMap
/// "shop/app-config"`) or a collection with its selector (`list ConfigMap objects in namespace
/// "shop" with label selector "tofu-estate=app"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// What was asked (`get`, `list`, `patch`).
    pub verb: String,
    /// The object; for a collection, its name is empty.
    pub object: ObjectRef,
    /// A LIST's label and field selectors, as sent.
    pub selector: Option<String>,
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let object = &self.object;
        if !object.name.is_empty() {
            return write!(f, "{} {object}", self.verb);
        }
        write!(f, "{} {} objects", self.verb, object.kind)?;
        if let Some(ns) = &object.namespace {
            write!(f, " in namespace {ns:?}")?;
        }
        match &self.selector {
            Some(selector) if !selector.is_empty() => write!(f, " with selector {selector:?}"),
            _ => Ok(()),
        }
    }
}

/// A field a server-side apply wanted that another field manager owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldConflict {
    /// The other manager, e.g. `kubectl-edit`.
    pub manager: String,
    /// The field, as the server spells it: `.data.key`, `.spec.replicas`.
    pub field: String,
}

impl FieldConflict {
    /// From a Status cause `{reason: FieldManagerConflict, message: "conflict with \"m\" ...",
    /// field: ".data.a"}`; other causes are not field conflicts.
    fn of(cause: &kube::core::response::StatusCause) -> Option<FieldConflict> {
        if cause.reason != "FieldManagerConflict" {
            return None;
        }
        let quoted = cause.message.split('"').nth(1).filter(|m| !m.is_empty());
        Some(FieldConflict {
            manager: quoted.unwrap_or(&cause.message).to_string(),
            field: cause.field.clone(),
        })
    }
}

impl ApiError {
    /// Classifies the failure of a call that did `verb` on `object`.
    pub fn from_kube(failure: impl Into<Failure>, object: &ObjectRef, verb: &str) -> ApiError {
        ApiError::of(
            failure.into(),
            Request {
                verb: verb.to_string(),
                object: object.clone(),
                selector: None,
            },
        )
    }

    /// Classifies the failure of a LIST of `kind` objects (in `namespace`) with `selector`.
    pub fn from_list(
        failure: impl Into<Failure>,
        kind: &str,
        namespace: Option<&str>,
        selector: &str,
    ) -> ApiError {
        let object = match namespace {
            Some(ns) => ObjectRef::namespaced(kind, ns, ""),
            None => ObjectRef::cluster(kind, ""),
        };
        ApiError::of(
            failure.into(),
            Request {
                verb: "list".into(),
                object,
                selector: Some(selector.to_string()),
            },
        )
    }

    /// Classifies the failure of `request`.
    pub fn of(failure: Failure, request: Request) -> ApiError {
        let Failure {
            error,
            tries,
            waited,
            uncertain,
            ended,
        } = failure;
        let unavailable = |cause| ApiError::Unavailable {
            request: request.clone(),
            cause,
            tries,
            waited,
            ended,
            uncertain,
        };
        let status = match error {
            kube::Error::Api(status)
                if let Some(errors) = crate::typed_patch::refusal(status.code, &status.message) =>
            {
                return ApiError::Untypable {
                    object: request.object,
                    verb: request.verb,
                    errors,
                };
            }
            kube::Error::Api(status) if let Some(webhook) = failed_webhook(&status.message) => {
                return ApiError::WebhookFailed {
                    object: request.object,
                    verb: request.verb,
                    webhook,
                    message: status.message.clone(),
                };
            }
            kube::Error::Api(status) if status.code == 429 || status.code >= 500 => {
                return unavailable(answered(&status));
            }
            kube::Error::Api(status) => status,
            kube::Error::HyperError(_) | kube::Error::Service(_) => {
                return unavailable(connection_cause(&error));
            }
            other => {
                return ApiError::Other {
                    object: request.object,
                    code: 0,
                    message: other.to_string(),
                };
            }
        };
        let Request { verb, object, .. } = request;
        let message = status.message.clone();
        if is_admission_denial(&message) {
            return ApiError::AdmissionDenied {
                object,
                verb,
                message,
            };
        }
        match status.code {
            404 if let Some(namespace) = missing_namespace(&message, &object) => ApiError::NamespaceMissing {
                object,
                verb,
                namespace,
            },
            404 => ApiError::NotFound { object },
            409 if status.is_already_exists() => ApiError::AlreadyExists { object },
            409 => ApiError::Conflict {
                object,
                message,
                fields: status
                    .details
                    .iter()
                    .flat_map(|d| d.causes.iter().filter_map(FieldConflict::of))
                    .collect(),
                uncertain,
            },
            403 if terminating(&status) => ApiError::NamespaceTerminating {
                namespace: object.namespace.clone().unwrap_or_default(),
                object,
                verb,
                message,
            },
            403 if message.contains("exceeded quota:") || message.contains("failed quota:") => {
                ApiError::QuotaExceeded {
                    object,
                    verb,
                    message,
                }
            }
            403 => ApiError::Forbidden {
                object,
                verb,
                message,
            },
            401 => ApiError::Unauthorized {
                object,
                verb,
                message,
            },
            422 => ApiError::Invalid {
                object,
                message,
                causes: status
                    .details
                    .map(|d| d.causes.into_iter().map(|c| (c.field, c.message)).collect())
                    .unwrap_or_default(),
            },
            code => ApiError::Other {
                object,
                code,
                message,
            },
        }
    }

    /// Whether the object does not exist, which reads and deletes take as an answer.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ApiError::NotFound { .. })
    }

    /// A `continue` token or resourceVersion the server no longer has (410 Gone, etcd was
    /// compacted since): the list starts again from the beginning.
    pub fn is_expired(&self) -> bool {
        matches!(self, ApiError::Other { code: 410, .. })
    }

    /// Whether RBAC refused the request; a refused LIST sends readers to GET object by object.
    pub fn is_forbidden(&self) -> bool {
        matches!(self, ApiError::Forbidden { .. })
    }

    /// Whether server-side apply refused the object only for keys its keyed lists hold twice,
    /// which a create or an update accepts.
    pub fn is_duplicate_keys(&self) -> bool {
        matches!(self, ApiError::Untypable { errors, .. }
            if errors.iter().all(|e| crate::typed_patch::is_duplicate_key(e)))
    }

    /// The fields server-side apply refused only because the object's schema does not declare
    /// them (a CustomResourceDefinition's `spec.validation` of apiextensions v1beta1), each as
    /// its map keys; `None` when anything else is wrong too.
    pub fn undeclared_fields(&self) -> Option<Vec<Vec<String>>> {
        match self {
            ApiError::Untypable { errors, .. } => errors
                .iter()
                .map(|e| crate::typed_patch::undeclared_field(e))
                .collect(),
            _ => None,
        }
    }

    /// Whether the request may have been carried out although it failed: a try got no answer
    /// or a 5xx, so a create may have created and a write may have written.
    pub fn is_uncertain(&self) -> bool {
        matches!(
            self,
            ApiError::Unavailable { uncertain: true, .. } | ApiError::Conflict { uncertain: true, .. }
        )
    }
}

/// An admission webhook's denial (`admission webhook "x" denied the request: ...`, any 4xx code
/// the webhook chose) or a ValidatingAdmissionPolicy's (`... denied request: ...`).
fn is_admission_denial(message: &str) -> bool {
    (message.contains("admission webhook \"") && message.contains("denied the request"))
        || (message.contains("ValidatingAdmissionPolicy '") && message.contains("denied request"))
}

/// A create refused because its namespace is being deleted.
fn terminating(status: &kube::core::Status) -> bool {
    status
        .details
        .iter()
        .flat_map(|d| &d.causes)
        .any(|c| c.reason == "NamespaceTerminating")
        || status.message.contains("because it is being terminated")
}

/// What a 429 or 5xx answer said.
fn answered(status: &kube::core::Status) -> String {
    let phrase = http::StatusCode::from_u16(status.code)
        .ok()
        .and_then(|c| c.canonical_reason())
        .unwrap_or_default();
    let mut cause = format!("the API server answered {} {phrase}", status.code);
    if !status.message.is_empty() {
        cause.push_str(&format!(": {}", status.message));
    }
    if let Some(after) = status
        .details
        .as_ref()
        .map(|d| d.retry_after_seconds)
        .filter(|s| *s > 0)
    {
        cause.push_str(&format!(" (retry after {after} s)"));
    }
    cause
}

/// The root cause of a failed connection, from its chain of errors without the client's
/// wrappers: `could not connect: tcp connect error: Connection refused (os error 111)`,
/// `the connection broke: connection closed before message completed`.
fn connection_cause(error: &kube::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        // hyper's client says only which stage failed ("client error (Connect)").
        if e.downcast_ref::<hyper_util::client::legacy::Error>().is_none() {
            let text = e.to_string();
            if !text.is_empty() && !parts.last().is_some_and(|last| last.contains(&text)) {
                parts.push(text);
            }
        }
        source = e.source();
    }
    let chain = if parts.is_empty() {
        error.to_string()
    } else {
        parts.join(": ")
    };
    match connection(error) {
        Connection::Tls => format!("TLS with the API server failed: {chain}"),
        Connection::NotMade => format!("could not connect to the API server: {chain}"),
        Connection::Broken => format!("the connection to the API server broke before the answer: {chain}"),
    }
}

/// `verb` and `object` as a request names them: `get ConfigMap "shop/app"`, or for a collection
/// (no name) `list ConfigMap objects in namespace "shop"`.
fn call(verb: &str, object: &ObjectRef) -> String {
    Request {
        verb: verb.to_string(),
        object: object.clone(),
        selector: None,
    }
    .to_string()
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// How many tries a failure took, and why they ended.
fn tries_text(tries: u32, waited: Duration, ended: Ended) -> String {
    let times = match tries {
        1 => "once".to_string(),
        n => format!("{n} times over {:.1} s", waited.as_secs_f64()),
    };
    match ended {
        Ended::Final | Ended::Budget => format!("Tried {times}."),
        Ended::NotRepeatable => format!(
            "Tried {times}, and not again: the server may have acted on it, and this request must \
             not be sent twice."
        ),
        Ended::Deadline => format!("Tried {times}; another try would come after the operation's timeout."),
        Ended::Stopped => format!("Tried {times}, then the run was interrupted."),
        Ended::Unreachable => {
            format!("Tried {times}: the requests before it could not reach the API server either.")
        }
    }
}

impl From<ApiError> for Diagnostic {
    fn from(err: ApiError) -> Diagnostic {
        match err {
            ApiError::NotFound { object } => Diagnostic::error(
                format!("{object} not found"),
                "The object does not exist in the cluster: it may have been deleted outside \
                 Terraform. Run plan again to re-create it, or remove it from the configuration.",
            ),
            ApiError::AlreadyExists { object } => Diagnostic::error(
                format!("{object} already exists"),
                "An object with this name exists already and is not managed by this \
                 configuration. Import it, or choose another name.",
            ),
            ApiError::Unauthorized {
                object,
                verb,
                message,
            } => Diagnostic::error(
                format!("Unauthorized: cannot {}", call(&verb, &object)),
                format!(
                    "{message}.\n\nA credential that expires (an exec plugin's token, a token \
                     file) was renewed once after the refusal, and the renewed one was refused too; \
                     trying again does not help. Renew or replace the credential (log in again, \
                     check that the token or its service account still exists, that it is this \
                     cluster's), then run again."
                ),
            ),
            ApiError::Forbidden {
                object,
                verb,
                message,
            } => Diagnostic::error(
                format!("Not allowed to {}", call(&verb, &object)),
                format!(
                    "The Kubernetes API refused: {message}\n\nThe identity this provider connects \
                     as needs RBAC permission to {verb} this object: grant it with a Role (or \
                     ClusterRole) and binding, or connect with another identity."
                ),
            ),
            ApiError::NamespaceMissing {
                object,
                verb,
                namespace,
            } => Diagnostic::error(
                format!(
                    "Cannot {}: namespace {namespace:?} not found",
                    call(&verb, &object)
                ),
                format!(
                    "The namespace {namespace:?} does not exist, so nothing was written. Create it \
                     first (a kubernetes_namespace_v1, or a Namespace manifest this resource depends \
                     on), or correct the object's namespace."
                ),
            ),
            ApiError::NamespaceTerminating {
                object,
                verb,
                namespace,
                message,
            } => Diagnostic::error(
                format!(
                    "Cannot {}: namespace {namespace:?} is being deleted",
                    call(&verb, &object)
                ),
                format!(
                    "The Kubernetes API refused: {message}\n\nNothing new can be created in a \
                     namespace while it is being deleted. Wait until it is gone, then apply again \
                     (a Namespace this configuration manages is created anew then), or use another \
                     namespace."
                ),
            ),
            ApiError::QuotaExceeded {
                object,
                verb,
                message,
            } => Diagnostic::error(
                format!("Cannot {}: a resource quota refused it", call(&verb, &object)),
                format!(
                    "The Kubernetes API refused: {message}\n\nA ResourceQuota of the namespace \
                     limits what its objects may request. Lower the object's requests or limits, \
                     remove other objects, or have the quota raised."
                ),
            ),
            ApiError::WebhookFailed {
                object,
                verb,
                webhook,
                message,
            } => Diagnostic::error(
                format!(
                    "Cannot {}: admission webhook {webhook:?} did not answer",
                    call(&verb, &object)
                ),
                format!(
                    "The Kubernetes API refused: {message}\n\nThe API server must call the webhook \
                     {webhook:?} for this request (its failurePolicy is Fail) and could not: its \
                     service is down, missing or too slow. Nothing was written. This is not retried: \
                     bring the webhook's service back (or ask the cluster's administrators to), \
                     then run again."
                ),
            ),
            ApiError::AdmissionDenied {
                object,
                verb,
                message,
            } => Diagnostic::error(
                format!(
                    "Cannot {}: the cluster's admission control denied it",
                    call(&verb, &object)
                ),
                format!(
                    "The Kubernetes API refused: {message}\n\nAn admission webhook or policy of \
                     the cluster checks such requests and denied this one. Change the \
                     configuration to satisfy it, or ask the cluster's administrators about the \
                     policy."
                ),
            ),
            ApiError::Conflict { object, fields, .. } if !fields.is_empty() => {
                let mut detail = format!(
                    "Server-side apply did not take fields of {object} that another field manager \
                     owns:"
                );
                for f in &fields {
                    detail.push_str(&format!("\n- {} (owned by {:?})", f.field, f.manager));
                }
                detail.push_str(
                    "\n\nLeave these fields to that manager (remove them from the manifest), or \
                     take them over by setting\n\n  field_manager {\n    force_conflicts = true\n  }\n\n\
                     in the resource.",
                );
                let mut managers: Vec<&str> = fields.iter().map(|f| f.manager.as_str()).collect();
                managers.dedup();
                Diagnostic::error(
                    format!(
                        "Field manager conflict on {object}: fields owned by {}",
                        managers
                            .iter()
                            .map(|m| format!("{m:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    detail,
                )
            }
            ApiError::Conflict { object, message, .. } => Diagnostic::error(
                format!("Conflicting change to {object}"),
                format!(
                    "{message}\n\nThe object was changed by someone else since it was read. \
                     Run plan again to see the current state."
                ),
            ),
            ApiError::Invalid {
                object,
                message,
                causes,
            } => {
                let mut detail = format!("The Kubernetes API rejected the object: {message}");
                for (field, why) in &causes {
                    detail.push_str(&format!("\n- {field}: {why}"));
                }
                // The summary names the first refused field, as the engine never wraps a
                // summary: a user (or a test's pattern) finds the reason on one line.
                let summary = match causes.as_slice() {
                    [] => format!("{object} is invalid"),
                    [(field, why)] => format!("{object} is invalid: {field}: {why}"),
                    [(field, why), rest @ ..] => {
                        format!("{object} is invalid: {field}: {why} (and {} more)", rest.len())
                    }
                };
                Diagnostic::error(summary, detail)
            }
            ApiError::Untypable { object, verb, errors } => {
                let mut detail = "Server-side apply could not merge the object field by field (\"failed to \
                                  create typed patch object\"):"
                    .to_string();
                for e in &errors {
                    detail.push_str(&format!("\n- {e}"));
                }
                detail.push_str(
                    "\n\nThe configuration must change where named: a list keyed by a field (env and \
                     ports by name, containers by name, ...) holds each key once, and every value \
                     has its field's type. Trying again does not help.",
                );
                Diagnostic::error(
                    format!(
                        "Cannot {}: the API server refused its fields",
                        call(&verb, &object)
                    ),
                    detail,
                )
            }
            ApiError::Unavailable {
                request,
                cause,
                tries,
                waited,
                ended,
                ..
            } => Diagnostic::error(
                format!("Kubernetes API unavailable: could not {request}"),
                format!(
                    "{}\n\n{} Check that the cluster is reachable and healthy, then run again.",
                    capitalized(&cause),
                    tries_text(tries, waited, ended)
                ),
            ),
            ApiError::Other {
                object,
                code,
                message,
            } => Diagnostic::error(
                format!("Kubernetes API error for {object}"),
                if code == 0 {
                    message
                } else {
                    format!("The API server answered {code}: {message}")
                },
            ),
        }
    }
}

#[cfg(test)]
mod tests;

/// The namespace a 404's message says is missing (`namespaces "x" not found`), when `object` is
/// not that namespace itself: a write into a namespace that does not exist.
fn missing_namespace(message: &str, object: &ObjectRef) -> Option<String> {
    let name = message
        .strip_prefix("namespaces \"")?
        .strip_suffix("\" not found")?;
    (object.namespace.as_deref() == Some(name)).then(|| name.to_string())
}
