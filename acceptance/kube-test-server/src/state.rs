//! The shared state of one running server: storage, credentials, options and test hooks.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::auth::Authenticator;
use crate::rollout::ReplicaSets;
use crate::store::Store;
use crate::telemetry::Telemetry;
use crate::tls::CaMaterial;

/// What the Deployment controller does with new Deployments (and the Job controller with
/// Jobs, [`crate::jobs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rollout {
    /// Status is filled in shortly after each change, with all replicas ready (Jobs run to
    /// their end).
    #[default]
    Ready,
    /// Status is filled in but no replica ever becomes ready or available (a Job starts, its
    /// pods never end).
    NeverReady,
    /// No Deployment or Job controller, as in the recorded cluster: status stays `{}`.
    Off,
}

pub struct State {
    store: Mutex<Store>,
    pub auth: Authenticator,
    pub ca: CaMaterial,
    /// `host:port` the server listens on (for `/api`'s serverAddressByClientCIDRs).
    pub address: String,
    pub rollout: Mutex<Rollout>,
    /// The Deployment controller's ReplicaSets (not served, see [`crate::rollout`]).
    pub replica_sets: Mutex<ReplicaSets>,
    pub telemetry: Telemetry,
    /// Where the store is saved after writes, if anywhere.
    pub state_file: Option<PathBuf>,
    /// Signals the persistence task that something was written.
    pub written: tokio::sync::Notify,
    /// How long a deleted namespace stays Terminating.
    pub namespace_grace: Duration,
}

pub type Shared = Arc<State>;

impl State {
    pub fn new(
        store: Store,
        ca: CaMaterial,
        address: String,
        rollout: Rollout,
        state_file: Option<PathBuf>,
        namespace_grace: Duration,
    ) -> Self {
        Self {
            store: Mutex::new(store),
            auth: Authenticator::new(),
            ca,
            address,
            rollout: Mutex::new(rollout),
            replica_sets: Mutex::new(ReplicaSets::default()),
            telemetry: Telemetry::default(),
            state_file,
            written: tokio::sync::Notify::new(),
            namespace_grace,
        }
    }

    /// Locks the store; a panic while it was held leaves it usable (data is plain JSON).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn rollout(&self) -> Rollout {
        *self.rollout.lock().unwrap_or_else(|e| e.into_inner())
    }
}
