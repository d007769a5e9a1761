//! What ConfigureProvider builds, shared by every resource and data source of a provider: a
//! connection, or, when a connection setting is known only at apply (the cluster is created in
//! the same run: `host = module.eks.cluster_endpoint`) or the kubeconfig cannot be loaded yet
//! with `lazy_load = true` (the kubectl providers' way to plan before the cluster exists), the
//! knowledge that there is none yet. Resources then plan without the cluster; whatever needs it
//! now says what it waits for.

use plugin_runtime::{Diagnostic, ReadRequest, ReadResponse, Value};
use tokio::sync::OnceCell;

use crate::connect_error::ConnectError;
use crate::connection::{Connection, connect};
use crate::estate::Estate;
use crate::settings::LAZY_LOAD;

/// A provider block whose connection is known only at apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Deferred {
    /// The setting the connection waits for: the first one not known yet (`host`, `exec`, ...),
    /// or `lazy_load` when it deferred a kubeconfig that could not be loaded.
    pub setting: String,
    /// The estate, when it is known already.
    pub estate: Option<Estate>,
    /// Why the kubeconfig could not be loaded, when `lazy_load` deferred that.
    pub load_error: Option<String>,
}

impl Deferred {
    /// Why the plan goes without the cluster, as the clause of a sentence: a setting known
    /// only at apply, or a kubeconfig `lazy_load` could not load yet.
    pub fn reason(&self) -> String {
        match &self.load_error {
            Some(error) => format!("the kubeconfig could not be loaded yet ({error}; lazy_load = true)"),
            None => format!("the provider setting {} is known only at apply", self.setting),
        }
    }

    /// The error for what cannot wait for apply: a data source, an import, an ephemeral
    /// resource, a listing; or anything at all once apply still finds no kubeconfig.
    pub fn needed_now(&self) -> Diagnostic {
        let detail = match &self.load_error {
            Some(error) => format!(
                "This needs the cluster now, but the provider could not load its kubeconfig: {error}. \
                 With lazy_load = true that waits for where the cluster is needed, so plans run \
                 before it exists; this is such a place. Create the cluster and its kubeconfig \
                 first (terraform apply -target=...), or fix the connection settings."
            ),
            None => format!(
                "This needs the cluster now, but the provider setting {setting} depends on a value \
                 known only at apply (the cluster is created in this run). Resources plan without \
                 the cluster; data sources, imports and ephemeral resources cannot. Give a data \
                 source depends_on on what {setting} comes from (for example the module that creates \
                 the cluster) so that the engine reads it at apply, or apply that first \
                 (terraform apply -target=...).",
                setting = self.setting
            ),
        };
        Diagnostic::error("Cannot connect to Kubernetes yet", detail)
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
        let why = match &self.load_error {
            Some(error) => format!("The provider could not load its kubeconfig ({error}; lazy_load = true)"),
            None => format!(
                "The provider setting {} depends on a value known only at apply",
                self.setting
            ),
        };
        Diagnostic::warning(
            "Not refreshed: the connection is known only at apply",
            format!(
                "{why}, so objects already in state were not read from the cluster: the plan \
                 compares the configuration with the state as last saved. Apply reads each object \
                 before it writes it."
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

    /// Connects from the provider block; a setting not known yet, or a kubeconfig that
    /// `lazy_load` lets wait, defers the connection instead of failing
    /// ([`Configured::deferred`]). Other errors are returned.
    pub async fn connect(&self, config: &Value) -> Result<(), ConnectError> {
        let (setting, load_error) = match connect(config).await {
            Ok(connection) => {
                self.set(connection);
                return Ok(());
            }
            Err(ConnectError::Unknown { attribute }) => (attribute, None),
            Err(ConnectError::Lazy(error)) => (LAZY_LOAD.to_string(), Some(error.to_string())),
            Err(e) => return Err(e),
        };
        let estate = config.get("estate").as_str().and_then(|e| Estate::parse(e).ok());
        let _ = self.0.set(Configuration::Deferred(Deferred {
            setting,
            estate,
            load_error,
        }));
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

    /// `lazy_load = true` and no kubeconfig yet: configure succeeds, offline, and what needs the
    /// cluster says why there is none.
    #[tokio::test]
    async fn lazy_load_defers_a_kubeconfig_that_cannot_be_loaded() {
        let config = |lazy: bool| {
            Value::object([
                ("estate", Value::string("app")),
                ("config_path", Value::string("/nonexistent/kubeconfig")),
                ("lazy_load", Value::Bool(lazy)),
            ])
        };
        let c = Configured::default();
        c.connect(&config(true)).await.expect("deferred, not failed");
        let deferred = c.deferred().expect("deferred");
        assert_eq!(deferred.setting, "lazy_load");
        assert_eq!(deferred.estate, Some(Estate::parse("app").unwrap()));
        let err = c.get().err().unwrap();
        assert!(err.detail.contains("/nonexistent/kubeconfig"), "{}", err.detail);
        assert!(err.detail.contains("lazy_load"), "{}", err.detail);
        assert!(deferred.not_refreshed().detail.contains("kubeconfig"));
        assert!(
            deferred.reason().contains("could not be loaded yet"),
            "{}",
            deferred.reason()
        );

        let strict = Configured::default();
        let err = strict
            .connect(&config(false))
            .await
            .expect_err("no lazy_load: an error");
        assert!(matches!(err, ConnectError::KubeconfigNotFound { .. }), "{err:?}");
    }
}
