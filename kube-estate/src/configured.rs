//! What ConfigureProvider builds, shared by every resource and data source of a provider: a
//! connection, or, when a connection setting is known only at apply (the cluster is created in
//! the same run: `host = module.eks.cluster_endpoint`), the knowledge that there is none yet.
//! Resources then plan without the cluster; whatever needs it now says which setting it waits
//! for.

use plugin_runtime::{Diagnostic, ReadRequest, ReadResponse, Value};
use tokio::sync::OnceCell;

use crate::connect_error::ConnectError;
use crate::connection::{Connection, connect};
use crate::estate::Estate;

/// A provider block whose connection is known only at apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Deferred {
    /// The first setting not known yet (`host`, `exec`, ...).
    pub setting: String,
    /// The estate, when it is known already.
    pub estate: Option<Estate>,
}

impl Deferred {
    /// The error for what cannot wait for apply: a data source, an import, an ephemeral
    /// resource, a listing.
    pub fn needed_now(&self) -> Diagnostic {
        Diagnostic::error(
            "Cannot connect to Kubernetes yet",
            format!(
                "This needs the cluster now, but the provider setting {setting} depends on a value \
                 known only at apply (the cluster is created in this run). Resources plan without \
                 the cluster; data sources, imports and ephemeral resources cannot. Give a data \
                 source depends_on on what {setting} comes from (for example the module that creates \
                 the cluster) so that the engine reads it at apply, or apply that first \
                 (terraform apply -target=...).",
                setting = self.setting
            ),
        )
    }

    /// A refresh without a connection: the state stays as last saved, with a warning that
    /// says so (the same for every resource, so the engine folds them).
    pub fn unrefreshed(&self, req: ReadRequest) -> ReadResponse {
        ReadResponse {
            new_state: req.current_state,
            private: req.private,
            diagnostics: self.not_refreshed().into(),
        }
    }

    /// The warning a refresh gives for a resource it kept as it was.
    pub fn not_refreshed(&self) -> Diagnostic {
        Diagnostic::warning(
            "Not refreshed: the connection is known only at apply",
            format!(
                "The provider setting {} depends on a value known only at apply, so objects already in \
                 state were not read from the cluster: the plan compares the configuration with the \
                 state as last saved. Apply reads each object before it writes it.",
                self.setting
            ),
        )
    }
}

#[derive(Debug)]
enum Configuration {
    Connected(Connection),
    Deferred(Deferred),
}

/// Set once by `Provider::configure`; resources hold an `Arc<Configured>` and call [`get`].
///
/// [`get`]: Configured::get
#[derive(Default)]
pub struct Configured(OnceCell<Configuration>);

impl Configured {
    /// Keeps the connection. The engine configures a provider once per run, so a second
    /// call keeps the first connection.
    pub fn set(&self, c: Connection) {
        let _ = self.0.set(Configuration::Connected(c));
    }

    /// Connects from the provider block; a setting not known yet defers the connection
    /// instead of failing ([`Configured::deferred`]). Other errors are returned.
    pub async fn connect(&self, config: &Value) -> Result<(), ConnectError> {
        match connect(config).await {
            Ok(connection) => self.set(connection),
            Err(ConnectError::Unknown { attribute }) => {
                let estate = config.get("estate").as_str().and_then(|e| Estate::parse(e).ok());
                let _ = self.0.set(Configuration::Deferred(Deferred {
                    setting: attribute,
                    estate,
                }));
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// The connection, or an error diagnostic when configure has not run or the connection
    /// is known only at apply.
    pub fn get(&self) -> Result<&Connection, Diagnostic> {
        match self.0.get() {
            Some(Configuration::Connected(c)) => Ok(c),
            Some(Configuration::Deferred(d)) => Err(d.needed_now()),
            None => Err(Diagnostic::error(
                "Provider not configured",
                "The provider was asked to reach Kubernetes before its provider block was \
                 configured. This is a bug in the provider or the engine; run the command again.",
            )),
        }
    }

    /// What is not known yet, when the connection is deferred to apply.
    pub fn deferred(&self) -> Option<&Deferred> {
        match self.0.get() {
            Some(Configuration::Deferred(d)) => Some(d),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("estate", &self.estate)
            .finish()
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

    #[tokio::test]
    async fn an_unknown_setting_defers_the_connection_and_names_it() {
        let c = Configured::default();
        let config = Value::object([("estate", Value::string("app")), ("host", Value::unknown())]);
        c.connect(&config).await.expect("deferred, not failed");
        let deferred = c.deferred().expect("deferred");
        assert_eq!(deferred.setting, "host");
        assert_eq!(deferred.estate, Some(Estate::parse("app").unwrap()));
        let err = c.get().err().unwrap();
        assert!(err.detail.contains("host"), "{}", err.detail);
        assert!(err.detail.contains("depends_on"), "{}", err.detail);
        let warning = deferred.not_refreshed();
        assert!(warning.summary.contains("known only at apply"));
    }
}
