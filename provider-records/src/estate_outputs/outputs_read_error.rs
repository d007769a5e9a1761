//! Why another estate's outputs could not be read ([`OutputsReadError`]: not recorded, refused,
//! no longer at the pinned serial, older than the consumer accepts) and the diagnostic each
//! reason becomes.

use crate::rbac_refusal::RbacRefusal;
use crate::record::{self, RecordError};
use kube_estate::{ApiError, Estate};
use plugin_runtime::duration;
use plugin_runtime::{AttributePath, Diagnostic};
use std::time::Duration;

/// Why outputs could not be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum OutputsReadError {
    #[error(transparent)]
    Estate(#[from] kube_estate::EstateError),
    #[error("outputs of estate {estate} are not recorded")]
    NotRecorded { estate: Estate, missing: Vec<String> },
    #[error("refused")]
    Refused(Box<RbacRefusal>),
    #[error(transparent)]
    Undecodable(#[from] RecordError),
    #[error(transparent)]
    Api(Box<ApiError>),
    #[error("serial {serial} of estate {estate} is no longer recorded")]
    SerialGone {
        estate: Estate,
        serial: u64,
        output: String,
        kept: Vec<u64>,
    },
    #[error("outputs of estate {estate} are older than serial {min_serial}")]
    BelowMinSerial {
        estate: Estate,
        min_serial: u64,
        newest: record::Stamp,
    },
    #[error("outputs of estate {estate} are older than {max_age}")]
    TooOld {
        estate: Estate,
        max_age: String,
        /// Output name, its age and the apply that recorded it, oldest first.
        stale: Vec<(String, Duration, String)>,
        /// The newest apply among the outputs read.
        last_apply: record::Stamp,
    },
}

impl From<ApiError> for OutputsReadError {
    fn from(e: ApiError) -> OutputsReadError {
        OutputsReadError::Api(Box::new(e))
    }
}

impl From<OutputsReadError> for Diagnostic {
    fn from(err: OutputsReadError) -> Diagnostic {
        match err {
            OutputsReadError::Estate(e) => {
                Diagnostic::error("Invalid estate", e.to_string()).at(AttributePath::root("estate"))
            }
            OutputsReadError::NotRecorded { estate, missing } => {
                let namespace = estate.records_namespace();
                let which = if missing.is_empty() {
                    format!(
                        "No outputs of estate \"{estate}\" are recorded: namespace \"{namespace}\" holds none."
                    )
                } else {
                    let names: Vec<String> = missing.iter().map(|n| format!("{n:?}")).collect();
                    let (noun, verb) = if missing.len() == 1 {
                        ("Output", "is")
                    } else {
                        ("Outputs", "are")
                    };
                    format!(
                        "{noun} {} of estate \"{estate}\" {verb} not recorded in namespace \"{namespace}\".",
                        names.join(", ")
                    )
                };
                Diagnostic::error(
                    format!("Outputs of estate \"{estate}\" are not recorded"),
                    format!(
                        "{which}\nEstate \"{estate}\" records its outputs when it applies a records_outputs \
                         resource: it may not have applied yet, it may not record these outputs, or it \
                         was destroyed. Give `defaults` to plan without them."
                    ),
                )
            }
            OutputsReadError::Refused(r) => (*r).into(),
            OutputsReadError::Undecodable(e) => e.into(),
            OutputsReadError::Api(e) => (*e).into(),
            OutputsReadError::SerialGone {
                estate,
                serial,
                output,
                kept,
            } => {
                let kept: Vec<String> = kept.iter().map(u64::to_string).collect();
                Diagnostic::error(
                    format!("Serial {serial} of estate \"{estate}\" is no longer recorded"),
                    format!(
                        "Output {output:?} of estate \"{estate}\" keeps serials {} only (newest first): \
                         its history does not reach back to serial {serial}, or it was not recorded yet \
                         then. Pin a serial that remains, or ask the owners of estate \"{estate}\" for a \
                         longer `history` on its records_outputs resource.",
                        kept.join(", ")
                    ),
                )
                .at(AttributePath::root("serial"))
            }
            OutputsReadError::BelowMinSerial {
                estate,
                min_serial,
                newest,
            } => Diagnostic::error(
                format!("Outputs of estate \"{estate}\" are older than min_serial {min_serial}"),
                format!(
                    "The newest of the outputs read was recorded at serial {} (applied at {}), before \
                     serial {min_serial}. Apply estate \"{estate}\" first, or lower min_serial.",
                    newest.serial, newest.applied_at
                ),
            )
            .at(AttributePath::root("min_serial")),
            OutputsReadError::TooOld {
                estate,
                max_age,
                stale,
                last_apply,
            } => {
                let each: Vec<String> = stale
                    .iter()
                    .map(|(name, age, at)| {
                        format!("{name:?} is {} old (recorded at {at})", duration::format(*age))
                    })
                    .collect();
                Diagnostic::error(
                    format!("Outputs of estate \"{estate}\" are older than max_age {max_age}"),
                    format!(
                        "{}. Estate \"{estate}\" last applied a change to these outputs at {} (serial {}). \
                         Outputs change only when that estate applies a change to them: apply it, or \
                         raise max_age.",
                        each.join("; "),
                        last_apply.applied_at,
                        last_apply.serial
                    ),
                )
                .at(AttributePath::root("max_age"))
            }
        }
    }
}
