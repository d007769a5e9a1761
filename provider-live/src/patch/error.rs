//! Why a patch could not be written: its target is missing, another field manager owns a
//! field it sets, or the API refused it.

use kube_estate::{ApiError, FieldConflict, ObjectRef};
use plugin_runtime::Diagnostic;

/// Why a patch could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("The {object} does not exist")]
    Missing { object: ObjectRef, type_name: String },
    #[error("Field manager conflict on {object}: fields owned by {}", managers(.fields))]
    Conflict {
        object: ObjectRef,
        fields: Vec<FieldConflict>,
        /// The type has a `force` attribute.
        forceable: bool,
    },
    #[error(transparent)]
    Api(#[from] ApiError),
}

fn managers(fields: &[FieldConflict]) -> String {
    let mut names: Vec<String> = fields.iter().map(|f| format!("{:?}", f.manager)).collect();
    names.dedup();
    names.join(", ")
}

impl From<PatchError> for Diagnostic {
    fn from(e: PatchError) -> Diagnostic {
        let summary = e.to_string();
        let detail = match e {
            PatchError::Api(e) => return e.into(),
            PatchError::Missing { object, type_name } => format!(
                "{type_name} edits an existing object and never creates one, but {object} was not \
                 found. Create it first (with its own resource, or another tool), or correct the \
                 target's name, namespace, api_version or kind."
            ),
            PatchError::Conflict {
                object,
                fields,
                forceable,
            } => {
                let mut detail = format!(
                    "Server-side apply did not take fields of {object} that another field manager owns:"
                );
                for f in &fields {
                    detail.push_str(&format!("\n- {} (owned by {:?})", f.field, f.manager));
                }
                detail.push_str(if forceable {
                    "\n\nLeave these fields to that manager (remove them from the configuration), or take \
                     them over by setting `force = true` in the resource."
                } else {
                    "\n\nLeave these fields to that manager: remove them from the configuration."
                });
                detail
            }
        };
        Diagnostic::error(summary, detail)
    }
}
