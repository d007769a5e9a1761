//! The ephemeral resources of hashicorp/kubernetes 3.4.0: values asked of the cluster during
//! a run (a ServiceAccount token, a signed client certificate) that the engine hands to
//! provider blocks and write-only attributes and never writes to a plan or state.
//!
//! Neither stores an object, so neither carries the estate label. Their blocks nest as single
//! objects (hashicorp's framework schemas), not as the lists of one of the typed resources.
//! Tokens and certificates never reach a log or a diagnostic.

mod certificate_signing_request;
mod token_request;

use std::sync::Arc;

use plugin_runtime::{EphemeralResource, NestedBlock, Nesting};

use crate::context::Context;

pub use certificate_signing_request::CertificateSigningRequest;
pub use token_request::TokenRequest;

/// Every ephemeral resource type, sharing the provider's context.
pub fn all(ctx: &Arc<Context>) -> Vec<Arc<dyn EphemeralResource>> {
    vec![
        Arc::new(TokenRequest::new(ctx.clone())),
        Arc::new(CertificateSigningRequest::new(ctx.clone())),
    ]
}

/// A block required exactly once, nested as a single object.
fn required_block(type_name: &str, block: plugin_runtime::Block) -> NestedBlock {
    NestedBlock::new(type_name, Nesting::Single, block).items(1, 1)
}

/// `block` with every block of at most one (list nesting, the typed resources' shape) nested
/// as an optional single object instead, at any depth.
fn as_single(mut block: NestedBlock) -> NestedBlock {
    if block.nesting == Nesting::List && block.max_items == 1 {
        block.nesting = Nesting::Single;
        block.min_items = 0;
        block.max_items = 0;
    }
    block.block.blocks = block.block.blocks.into_iter().map(as_single).collect();
    block
}
