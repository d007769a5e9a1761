//! What the provider and all its resources share: the connection ConfigureProvider built,
//! the label/annotation keys to ignore, the read cache and the discovery cache.

use std::sync::OnceLock;

use kube_estate::{Configured, Connection};
use plugin_runtime::Diagnostic;

use crate::cache::ReadCache;
use crate::discovery::Discovery;
use crate::metadata::Ignore;

#[derive(Default)]
pub struct Context {
    configured: Configured,
    ignore: OnceLock<Ignore>,
    pub cache: ReadCache,
    pub discovery: Discovery,
}

impl Context {
    pub fn configure(&self, connection: Connection, ignore: Ignore) {
        self.configured.set(connection);
        // A second configure in one process keeps the first rules, like the connection.
        let _ = self.ignore.set(ignore);
    }

    /// The connection, or the "provider not configured" error.
    pub fn connection(&self) -> Result<&Connection, Diagnostic> {
        self.configured.get()
    }

    pub fn ignore(&self) -> &Ignore {
        self.ignore.get_or_init(Ignore::default)
    }
}
