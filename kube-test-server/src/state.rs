//! The shared state of one running server: storage, credentials, options and test hooks.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::auth::Authenticator;
use crate::store::Store;
use crate::telemetry::Telemetry;
use crate::tls::CaMaterial;

/// Which of a cluster's moving parts run beside the API (the `simulation` module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Controllers {
    /// The controller manager's workload, storage, service and signing controllers, and nodes
    /// with a scheduler and a kubelet, as on `make test-real`'s cluster: Pods run.
    #[default]
    Nodes,
    /// The controllers without nodes: Pods stay Pending (kube-golden 23 was recorded so).
    NoNodes,
    /// None of them, as in most recorded transcripts: status stays as written.
    Off,
}

pub struct State {
    store: Mutex<Store>,
    pub auth: Authenticator,
    pub ca: CaMaterial,
    /// `host:port` the server listens on (for `/api`'s serverAddressByClientCIDRs).
    pub address: String,
    pub controllers: Controllers,
    pub telemetry: Telemetry,
    /// Where the store is saved after writes, if anywhere.
    pub state_file: Option<PathBuf>,
    /// Signals the persistence task that something was written.
    pub written: tokio::sync::Notify,
    /// How long a deleted namespace stays Terminating.
    pub namespace_grace: Duration,
    /// The OpenAPI index entries (path, URL) of custom group-versions published so far.
    pub openapi_published: Mutex<std::collections::BTreeMap<String, String>>,
}

pub type Shared = Arc<State>;

impl State {
    pub fn new(
        store: Store,
        ca: CaMaterial,
        address: String,
        controllers: Controllers,
        state_file: Option<PathBuf>,
        namespace_grace: Duration,
    ) -> Self {
        Self {
            store: Mutex::new(store),
            auth: Authenticator::new(),
            ca,
            address,
            controllers,
            telemetry: Telemetry::default(),
            state_file,
            written: tokio::sync::Notify::new(),
            namespace_grace,
            openapi_published: Mutex::default(),
        }
    }

    /// Locks the store; a panic while it was held leaves it usable (data is plain JSON).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}
