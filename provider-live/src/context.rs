//! What the provider and all its resources share: the connection ConfigureProvider built,
//! the label/annotation keys to ignore, how often `kubectl_manifest` retries an apply, the read
//! cache, the discovery cache and the OpenAPI schemas `kubernetes_manifest` types its values
//! with.

use std::sync::OnceLock;

use kube_estate::{Configured, ConnectError, Connection, Deferred};
use plugin_runtime::{Diagnostic, Value};

use crate::cache::ReadCache;
use crate::discovery::Discovery;
use crate::metadata::Ignore;
use crate::openapi::OpenApi;

/// The provider attribute that opts in to the kubeconfig context's namespace.
pub const NAMESPACE_FROM_CONTEXT: &str = "namespace_from_context";

/// Where a namespaced object goes when its configuration names no namespace.
const DEFAULT_NAMESPACE: &str = "default";

/// How many times a failed `kubectl_manifest` apply is tried again when neither the provider
/// block nor the environment says: the kubectl providers' default.
pub const DEFAULT_APPLY_RETRY_COUNT: u32 = 1;

#[derive(Default)]
pub struct Context {
    configured: Configured,
    ignore: OnceLock<Ignore>,
    namespace_from_context: OnceLock<bool>,
    apply_retry_count: OnceLock<u32>,
    pub cache: ReadCache,
    pub discovery: Discovery,
    pub openapi: OpenApi,
}

impl Context {
    /// Connects from the provider block (or defers the connection to apply, when a setting
    /// is not known yet) with the label and annotation keys to ignore and the resolved
    /// `apply_retry_count`.
    pub async fn configure(
        &self,
        config: &Value,
        ignore: Ignore,
        apply_retry_count: u32,
    ) -> Result<(), ConnectError> {
        // A second configure in one process keeps the first rules, like the connection.
        let _ = self.ignore.set(ignore);
        let _ = self.apply_retry_count.set(apply_retry_count);
        let _ = self
            .namespace_from_context
            .set(config.get(NAMESPACE_FROM_CONTEXT).as_bool() == Some(true));
        self.configured.connect(config).await
    }

    /// The connection, or the error saying why there is none.
    pub fn connection(&self) -> Result<&Connection, Diagnostic> {
        self.configured.get()
    }

    /// What is not known until apply, when the plan runs without the cluster.
    pub fn offline(&self) -> Option<&Deferred> {
        self.configured.deferred()
    }

    /// The connection a plan reads the cluster through: `None` when it waits for apply, and
    /// the plan is made from the configuration and the state alone.
    pub fn plan_connection(&self) -> Result<Option<&Connection>, Diagnostic> {
        match self.connection() {
            Ok(c) => Ok(Some(c)),
            Err(_) if self.offline().is_some() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The estate a plan stamps: the connection's, or the provider block's when the connection
    /// waits for apply (`None`: the estate too is known only then).
    pub fn plan_estate(&self) -> Result<Option<&str>, Diagnostic> {
        Ok(match self.plan_connection()? {
            Some(c) => Some(c.estate.as_str()),
            None => self.offline().and_then(|d| d.estate.as_ref()).map(|e| e.as_str()),
        })
    }

    /// The namespace of a namespaced object whose configuration names none: `default`, as
    /// hashicorp's provider has it, or the kubeconfig context's when the provider block opts in
    /// with `namespace_from_context`. `None` when that context is not known yet (the connection
    /// waits for apply): the plan shows the namespace as known after apply.
    pub fn default_namespace(&self) -> Option<&str> {
        if self.namespace_from_context.get() != Some(&true) {
            return Some(DEFAULT_NAMESPACE);
        }
        self.connection().ok().map(|c| c.client.default_namespace())
    }

    /// [`default_namespace`](Self::default_namespace) as a planned value.
    pub fn planned_namespace(&self) -> Value {
        self.default_namespace()
            .map(Value::string)
            .unwrap_or_else(Value::unknown)
    }

    pub fn ignore(&self) -> &Ignore {
        self.ignore.get_or_init(Ignore::default)
    }

    /// How many times `kubectl_manifest` tries a failed apply again: the provider block's
    /// `apply_retry_count` (or `KUBECTL_PROVIDER_APPLY_RETRY_COUNT`, which overrides it), else 1.
    pub fn apply_retry_count(&self) -> u32 {
        (self.apply_retry_count.get().copied()).unwrap_or(DEFAULT_APPLY_RETRY_COUNT)
    }
}
