//! The protocol layer's own errors (an unknown type name, a value that does not decode or
//! encode, a state it cannot upgrade) and how each becomes a diagnostic.

use crate::codec::CodecError;
use crate::diagnostics::{Diagnostic, Diagnostics};

/// What went wrong in the protocol layer, before or after a provider call.
#[derive(Debug, thiserror::Error)]
pub(super) enum ServerError {
    #[error("this provider has no resource type {0:?}")]
    UnknownResource(String),
    #[error("this provider has no data source {0:?}")]
    UnknownDataSource(String),
    #[error("this provider has no ephemeral resource type {0:?}")]
    UnknownEphemeralResource(String),
    #[error("this provider has no list resource type {0:?}")]
    UnknownListResource(String),
    #[error("this provider has no action type {0:?}")]
    UnknownAction(String),
    #[error("invalid {what} from the engine: {source}")]
    Decode { what: &'static str, source: CodecError },
    #[error("the provider produced an invalid {what}: {source}")]
    Encode { what: &'static str, source: CodecError },
    #[error("stored state in the legacy flatmap format cannot be upgraded by this provider")]
    FlatmapState,
    #[error("resource type {0:?} has no resource identity")]
    NoIdentity(String),
}

impl From<ServerError> for Diagnostic {
    fn from(e: ServerError) -> Diagnostic {
        let path = match &e {
            ServerError::Decode { source, .. } | ServerError::Encode { source, .. } => {
                Some(source.path.clone()).filter(|p| !p.0.is_empty())
            }
            _ => None,
        };
        let summary = match &e {
            ServerError::UnknownResource(_) => "Unknown resource type",
            ServerError::UnknownDataSource(_) => "Unknown data source",
            ServerError::UnknownEphemeralResource(_) => "Unknown ephemeral resource type",
            ServerError::UnknownListResource(_) => "Unknown list resource type",
            ServerError::UnknownAction(_) => "Unknown action type",
            ServerError::Decode { .. } => "Invalid value from Terraform",
            ServerError::Encode { .. } => "Provider produced an invalid value",
            ServerError::FlatmapState => "Unsupported state format",
            ServerError::NoIdentity(_) => "No resource identity",
        };
        let diagnostic = Diagnostic::error(summary, e.to_string());
        match path {
            Some(p) => diagnostic.at(p),
            None => diagnostic,
        }
    }
}

impl From<ServerError> for Diagnostics {
    fn from(e: ServerError) -> Diagnostics {
        Diagnostic::from(e).into()
    }
}
