//! Typed Kubernetes API errors, and the words a user can act on.
//!
//! Every call site names the object and the verb, so a failure reads
//! `Not allowed to get Secret "tofu-records-network/gateway-host"` rather than a bare
//! HTTP status.

use plugin_runtime::Diagnostic;

use crate::object_ref::ObjectRef;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{object} not found")]
    NotFound { object: ObjectRef },
    #[error("{object} already exists")]
    AlreadyExists { object: ObjectRef },
    #[error("not allowed to {verb} {object}: {message}")]
    Forbidden {
        object: ObjectRef,
        verb: String,
        /// The server's Status message, e.g. `User "x" cannot get resource ...`.
        message: String,
    },
    #[error("conflicting change to {object}: {message}")]
    Conflict {
        object: ObjectRef,
        message: String,
        /// The fields other managers own, when server-side apply refused to take them
        /// (empty for any other conflict).
        fields: Vec<FieldConflict>,
    },
    #[error("{object} is invalid: {message}")]
    Invalid {
        object: ObjectRef,
        message: String,
        /// (field, message) pairs from the Status details.
        causes: Vec<(String, String)>,
    },
    /// 429 or 5xx after retries, timeouts and connection errors.
    #[error("Kubernetes API unavailable for {object}: {message}")]
    Unavailable { object: ObjectRef, message: String },
    #[error("Kubernetes API error {code} for {object}: {message}")]
    Other {
        object: ObjectRef,
        code: u16,
        message: String,
    },
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
    /// Classifies an error from a call that did `verb` on `object`.
    pub fn from_kube(err: kube::Error, object: &ObjectRef, verb: &str) -> ApiError {
        let object = object.clone();
        let status = match err {
            kube::Error::Api(status) => status,
            kube::Error::HyperError(_) | kube::Error::Service(_) => {
                return ApiError::Unavailable {
                    object,
                    message: err.to_string(),
                };
            }
            other => {
                return ApiError::Other {
                    object,
                    code: 0,
                    message: other.to_string(),
                };
            }
        };
        let message = status.message.clone();
        match status.code {
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
            },
            403 => ApiError::Forbidden {
                object,
                verb: verb.to_string(),
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
            429 | 500..=599 => ApiError::Unavailable { object, message },
            code => ApiError::Other {
                object,
                code,
                message,
            },
        }
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, ApiError::NotFound { .. })
    }

    pub fn is_forbidden(&self) -> bool {
        matches!(self, ApiError::Forbidden { .. })
    }

    /// The object the failed call was about.
    pub fn object(&self) -> &ObjectRef {
        match self {
            ApiError::NotFound { object }
            | ApiError::AlreadyExists { object }
            | ApiError::Forbidden { object, .. }
            | ApiError::Conflict { object, .. }
            | ApiError::Invalid { object, .. }
            | ApiError::Unavailable { object, .. }
            | ApiError::Other { object, .. } => object,
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
            ApiError::Forbidden {
                object,
                verb,
                message,
            } => Diagnostic::error(
                format!("Not allowed to {verb} {object}"),
                format!(
                    "The Kubernetes API refused: {message}\n\nThe identity this provider connects \
                     as needs RBAC permission to {verb} this object: grant it with a Role (or \
                     ClusterRole) and binding, or connect with another identity."
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
                Diagnostic::error(format!("{object} is invalid"), detail)
            }
            ApiError::Unavailable { object, message } => Diagnostic::error(
                format!("Kubernetes API unavailable for {object}"),
                format!(
                    "{message}\n\nThe API server did not answer successfully, even after \
                     retries. Check that the cluster is reachable and healthy, then run again."
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
mod tests {
    use kube::core::{Status, response::StatusCause, response::StatusDetails};

    use super::*;

    fn cm() -> ObjectRef {
        ObjectRef::namespaced("ConfigMap", "shop", "app-config")
    }

    fn api(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(Status::failure(message, reason).with_code(code).boxed())
    }

    #[test]
    fn maps_statuses_to_variants() {
        let e = ApiError::from_kube(
            api(404, "NotFound", "configmaps \"app-config\" not found"),
            &cm(),
            "get",
        );
        assert!(e.is_not_found() && !e.is_forbidden());
        assert_eq!(e.to_string(), "ConfigMap \"shop/app-config\" not found");

        let msg = "configmaps \"app-config\" is forbidden: User \"app-planner\" cannot get resource";
        let e = ApiError::from_kube(api(403, "Forbidden", msg), &cm(), "get");
        assert!(e.is_forbidden());
        match &e {
            ApiError::Forbidden { verb, message, .. } => {
                assert_eq!(verb, "get");
                assert_eq!(message, msg);
            }
            other => panic!("{other:?}"),
        }

        let e = ApiError::from_kube(api(409, "AlreadyExists", "exists"), &cm(), "create");
        assert!(matches!(e, ApiError::AlreadyExists { .. }));
        let e = ApiError::from_kube(
            api(409, "Conflict", "the object has been modified"),
            &cm(),
            "update",
        );
        assert!(
            matches!(e, ApiError::Conflict { ref message, .. } if message == "the object has been modified")
        );

        for code in [429, 500, 503] {
            let e = ApiError::from_kube(api(code, "", "busy"), &cm(), "get");
            assert!(matches!(e, ApiError::Unavailable { .. }), "{code}");
        }
        let e = ApiError::from_kube(api(410, "Gone", "too old"), &cm(), "list");
        assert!(matches!(e, ApiError::Other { code: 410, .. }));
        assert_eq!(e.object(), &cm());
    }

    #[test]
    fn invalid_keeps_causes_and_lists_them() {
        let status = Status::failure("ConfigMap \"Bad\" is invalid", "Invalid")
            .with_code(422)
            .with_details(StatusDetails {
                name: "Bad".into(),
                group: String::new(),
                kind: "ConfigMap".into(),
                uid: String::new(),
                causes: vec![StatusCause {
                    reason: "FieldValueInvalid".into(),
                    message: "a lowercase RFC 1123 subdomain must consist of ...".into(),
                    field: "metadata.name".into(),
                }],
                retry_after_seconds: 0,
            });
        let e = ApiError::from_kube(kube::Error::Api(status.boxed()), &cm(), "create");
        match &e {
            ApiError::Invalid { causes, .. } => assert_eq!(causes[0].0, "metadata.name"),
            other => panic!("{other:?}"),
        }
        let d = Diagnostic::from(e);
        assert_eq!(d.summary, "ConfigMap \"shop/app-config\" is invalid");
        assert!(
            d.detail.contains("\n- metadata.name: a lowercase RFC 1123"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn field_manager_conflicts_name_manager_field_and_force_conflicts() {
        // As kube-apiserver answers (kube-golden 12), with a second manager added.
        let cause = |manager: &str, field: &str| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with \"{manager}\" using v1"),
            field: field.into(),
        };
        let status = Status::failure("Apply failed with 2 conflicts: ...", "Conflict")
            .with_code(409)
            .with_details(StatusDetails {
                name: "app-config".into(),
                group: String::new(),
                kind: "configmaps".into(),
                uid: String::new(),
                causes: vec![cause("kubectl-edit", ".data.a"), cause("helm", ".data.b")],
                retry_after_seconds: 0,
            });
        let e = ApiError::from_kube(kube::Error::Api(status.boxed()), &cm(), "apply");
        let ApiError::Conflict { fields, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(
            fields[0],
            FieldConflict {
                manager: "kubectl-edit".into(),
                field: ".data.a".into()
            }
        );
        let d = Diagnostic::from(e);
        assert_eq!(
            d.summary,
            "Field manager conflict on ConfigMap \"shop/app-config\": fields owned by \"kubectl-edit\", \"helm\""
        );
        assert!(
            d.detail.contains("\n- .data.a (owned by \"kubectl-edit\")"),
            "{}",
            d.detail
        );
        assert!(
            d.detail.contains("\n- .data.b (owned by \"helm\")"),
            "{}",
            d.detail
        );
        assert!(
            d.detail
                .contains("field_manager {\n    force_conflicts = true\n  }"),
            "{}",
            d.detail
        );
        assert!(!d.detail.contains("since it was read"), "{}", d.detail);

        // Any other conflict still says the object moved.
        let d = Diagnostic::from(ApiError::from_kube(
            api(409, "Conflict", "the object has been modified"),
            &cm(),
            "update",
        ));
        assert!(d.detail.contains("since it was read"), "{}", d.detail);
    }

    #[test]
    fn diagnostics_name_verb_and_object() {
        let e = ApiError::from_kube(api(403, "Forbidden", "User \"u\" cannot delete"), &cm(), "delete");
        let d = Diagnostic::from(e);
        assert_eq!(d.summary, "Not allowed to delete ConfigMap \"shop/app-config\"");
        assert!(d.detail.contains("User \"u\" cannot delete"));
    }
}
