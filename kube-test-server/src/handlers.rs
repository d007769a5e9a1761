//! Object handlers: GET, LIST, POST, PUT, PATCH, DELETE and DELETECOLLECTION on the stored
//! kinds, with the apiserver's order of checks (decode, options, namespace lifecycle,
//! validation, storage) so the same request fails the same way.

mod body;
mod call;
mod deletes;
mod reads;
mod writes;

pub use body::{apply_patch, parse_body};
pub use call::{Call, Recording};
