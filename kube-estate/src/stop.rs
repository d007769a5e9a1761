//! Ctrl-C: the engine forwards it to each provider as StopProvider and then waits for the calls
//! in flight. Waits on the cluster (a rollout, a deletion, a manifest's wait conditions) and the
//! retries of a failing request ([`crate::retry`]) end at once with an error that says so,
//! instead of running on to their timeout: the object stays in state as last read, as after a
//! timeout, and the engine can exit.
//!
//! One signal per process: the engine starts a plugin process per provider configuration and
//! stops each process, so the process is the provider.

use std::sync::OnceLock;

use tokio::sync::watch;

/// Set once, never reset: a stopped provider process is shut down next.
pub struct Stop(watch::Sender<bool>);

impl Default for Stop {
    fn default() -> Stop {
        Stop(watch::channel(false).0)
    }
}

impl Stop {
    /// This process's signal, which each provider sets on StopProvider.
    pub fn process() -> &'static Stop {
        static STOP: OnceLock<Stop> = OnceLock::new();
        STOP.get_or_init(Stop::default)
    }

    /// Asks every wait and retry of the process to end now; called on StopProvider.
    pub fn request(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once a stop was requested, at once when it already was.
    pub async fn requested(&self) {
        let mut seen = self.0.subscribe();
        // The sender lives as long as `self`: wait_for cannot fail while we wait.
        let _ = seen.wait_for(|stopped| *stopped).await;
    }
}
