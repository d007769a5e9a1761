//! What ConfigureProvider builds, shared by every resource and data source of a provider.

use plugin_runtime::Diagnostic;
use tokio::sync::OnceCell;

use crate::connection::Connection;

/// Set once by `Provider::configure`; resources hold an `Arc<Configured>` and call [`get`].
///
/// [`get`]: Configured::get
#[derive(Default)]
pub struct Configured(OnceCell<Connection>);

impl Configured {
    /// Keeps the connection. The engine configures a provider once per run, so a second
    /// call keeps the first connection.
    pub fn set(&self, c: Connection) {
        let _ = self.0.set(c);
    }

    /// The connection, or an error diagnostic when configure has not run.
    pub fn get(&self) -> Result<&Connection, Diagnostic> {
        self.0.get().ok_or_else(|| {
            Diagnostic::error(
                "Provider not configured",
                "The provider was asked to reach Kubernetes before its provider block was \
                 configured. This is a bug in the provider or the engine; run the command again.",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_before_set_is_an_error() {
        let c = Configured::default();
        let err = c.get().err().unwrap();
        assert_eq!(err.summary, "Provider not configured");
    }
}
