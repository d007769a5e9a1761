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
    #[error(
        "The stored state of {0} is in the flatmap format that Terraform 0.11 and earlier wrote, \
         which this provider cannot read. Bring it to the current format first: with the provider \
         that wrote it still selected, run `terraform apply -refresh-only` once under Terraform \
         0.12 or later (it rewrites the state as JSON), then switch providers. Or remove the \
         instance with `terraform state rm` and take the object back with an `import` block."
    )]
    FlatmapState(String),
    #[error(
        "{target} cannot take the state of {source_type} from {source_provider}: a `moved` block \
         may only move state between two names of the same resource type (such as \
         kubernetes_config_map and kubernetes_config_map_v1) or from the same type of a provider \
         this one replaces. Remove the `moved` block, and import the object into {target} instead."
    )]
    MoveRefused {
        source_provider: String,
        source_type: String,
        target: String,
    },
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
            ServerError::FlatmapState(_) => "Unsupported state format",
            ServerError::MoveRefused { .. } => "Unsupported resource move",
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
