//! Counting the API requests a piece of work makes, the same way on the test server and on a
//! real cluster: from the API server's `/metrics` (`apiserver_request_total`, which both
//! serve), before and after the work.
//!
//! A real cluster is shared by every test of the process, by the other test processes on it
//! (`make test-real` runs two suites at a time) and by its own control plane, so a measurement
//! keeps all of them out: series of control-plane clients (`system_client` set) are left out,
//! and while one test measures, no other test runs kubectl or the engine against that cluster.
//! Every command takes `shared`, a measurement `exclusive`: within the process through a
//! lock, across processes through lock files named after `KUBECONFIG` (no `KUBECONFIG`: each
//! test has a test server of its own, and the process lock is enough).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::{File, TryLockError};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

/// How long a command waits at the gate while a measurement waits to start (see [`ClusterLock`]).
const GATE_WAIT: Duration = Duration::from_secs(2);

/// Held shared by every command a test runs, exclusively by a measurement.
static TRAFFIC: RwLock<()> = RwLock::new(());

thread_local! {
    /// Set on the thread that measures: its own commands are what it counts.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

/// What a command holds while it runs: the process's lock, and the cluster's lock file.
pub(crate) struct Shared {
    _process: RwLockReadGuard<'static, ()>,
    /// Closing the file releases its lock.
    _cluster: Option<File>,
}

/// The shared hold a command keeps while it runs; None on the measuring thread itself.
pub(crate) fn shared() -> Option<Shared> {
    if MEASURING.with(Cell::get) {
        return None;
    }
    // A test that panicked while holding it leaves nothing inconsistent behind.
    let process = TRAFFIC.read().unwrap_or_else(|e| e.into_inner());
    let cluster = ClusterLock::named().map(|lock| lock.shared());
    Some(Shared {
        _process: process,
        _cluster: cluster,
    })
}

/// Runs `work` while no other thread of this process, and no other test process on the same
/// cluster, runs a command.
pub(crate) fn exclusive<T>(work: impl FnOnce() -> T) -> T {
    let _process = TRAFFIC.write().unwrap_or_else(|e| e.into_inner());
    let _cluster = ClusterLock::named().map(|lock| lock.exclusive());
    MEASURING.with(|m| m.set(true));
    // Reset even when `work` panics, so the thread's later commands take the lock again.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            MEASURING.with(|m| m.set(false));
        }
    }
    let _reset = Reset;
    work()
}

/// Two lock files in the temporary folder for the cluster `KUBECONFIG` names. Commands hold
/// `traffic` shared; a measurement holds it exclusively. `flock` grants new shared holds while
/// an exclusive one waits, so a measurement would wait as long as two busy suites overlap
/// their commands: it first takes `gate` exclusively, which every command passes through
/// (shared, released at once) before it takes `traffic`, waiting at most [`GATE_WAIT`]. Not
/// for ever: the running command a measurement waits for may itself wait on a command of its
/// own process (an apply deleting a volume that the volume-protection stand-in releases).
struct ClusterLock {
    gate: PathBuf,
    traffic: PathBuf,
}

impl ClusterLock {
    fn named() -> Option<ClusterLock> {
        let kubeconfig = std::env::var_os("KUBECONFIG").filter(|k| !k.is_empty())?;
        Some(ClusterLock::of(&kubeconfig))
    }

    fn of(kubeconfig: &OsStr) -> ClusterLock {
        // DefaultHasher::new has fixed keys: every test process finds the same files.
        let mut hasher = DefaultHasher::new();
        kubeconfig.hash(&mut hasher);
        let stem = std::env::temp_dir().join(format!("acceptance-requests-{:016x}", hasher.finish()));
        ClusterLock {
            gate: stem.with_extension("gate"),
            traffic: stem.with_extension("traffic"),
        }
    }

    fn shared(&self) -> File {
        let gate = open(&self.gate);
        let deadline = Instant::now() + GATE_WAIT;
        loop {
            match gate.try_lock_shared() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                // Past the gate: the measurement still waits for this command to end.
                Err(TryLockError::WouldBlock) => break,
                Err(TryLockError::Error(e)) => panic!("locking {}: {e}", self.gate.display()),
            }
        }
        drop(gate);
        let traffic = open(&self.traffic);
        traffic
            .lock_shared()
            .unwrap_or_else(|e| panic!("locking {}: {e}", self.traffic.display()));
        traffic
    }

    /// Both files, held until dropped.
    fn exclusive(&self) -> (File, File) {
        let gate = open(&self.gate);
        gate.lock()
            .unwrap_or_else(|e| panic!("locking {}: {e}", self.gate.display()));
        let traffic = open(&self.traffic);
        traffic
            .lock()
            .unwrap_or_else(|e| panic!("locking {}: {e}", self.traffic.display()));
        (gate, traffic)
    }
}

fn open(path: &std::path::Path) -> File {
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("opening the lock file {}: {e}", path.display()))
}

/// Answered requests by `(verb, resource)`, verbs as the apiserver counts them (`GET`, `LIST`,
/// `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, ...), clients of the control plane left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestCounts(BTreeMap<(String, String), u64>);

impl RequestCounts {
    /// Parses the Prometheus text of `/metrics`.
    pub fn from_metrics(text: &str) -> RequestCounts {
        let mut counts = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.rsplit_once("} ") else {
                continue;
            };
            let label = |name: &str| {
                let start = labels.find(&format!("{name}=\""))? + name.len() + 2;
                let len = labels[start..].find('"')?;
                Some(labels[start..start + len].to_string())
            };
            if label("system_client").is_some_and(|c| !c.is_empty()) {
                continue;
            }
            let (Some(verb), Some(resource)) = (label("verb"), label("resource")) else {
                continue;
            };
            // Counters print as floats when large ("1.2e+06"): parse as one.
            let n = value.trim().parse::<f64>().unwrap_or(0.0) as u64;
            *counts.entry((verb, resource)).or_default() += n;
        }
        RequestCounts(counts)
    }

    /// Requests with `verb` on `resource` (e.g. `"GET"`, `"secrets"`).
    pub fn get(&self, verb: &str, resource: &str) -> u64 {
        self.0
            .get(&(verb.to_string(), resource.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// What was counted after `earlier`.
    pub fn since(&self, earlier: &RequestCounts) -> RequestCounts {
        RequestCounts(
            self.0
                .iter()
                .map(|(k, n)| (k.clone(), n - earlier.0.get(k).copied().unwrap_or(0).min(*n)))
                .filter(|(_, n)| *n > 0)
                .collect(),
        )
    }

    /// Totals by verb over resource requests (non-resource paths like `/metrics` left out).
    pub fn by_verb(&self) -> BTreeMap<String, u64> {
        let mut totals = BTreeMap::new();
        for ((verb, resource), n) in &self.0 {
            if !resource.is_empty() {
                *totals.entry(verb.clone()).or_default() += n;
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// flock conflicts between two opens of a file even within one process, so one process
    /// shows what two test processes see.
    #[test]
    fn a_measurement_and_the_commands_of_other_processes_exclude_each_other() {
        let lock = ClusterLock::of(OsStr::new(&format!(
            "/nowhere/{}-{:?}.kubeconfig",
            std::process::id(),
            std::time::SystemTime::now()
        )));
        let would_block = |result: Result<(), TryLockError>| matches!(result, Err(TryLockError::WouldBlock));

        // A command in another process: no measurement starts, other commands still run.
        let command = lock.shared();
        assert!(
            would_block(open(&lock.traffic).try_lock()),
            "a measurement ran beside a command"
        );
        assert!(open(&lock.traffic).try_lock_shared().is_ok());
        assert!(open(&lock.gate).try_lock().is_ok(), "a command kept the gate");
        drop(command);
        assert!(open(&lock.traffic).try_lock().is_ok());

        // A measurement in another process: no command starts, not even through the gate.
        let measurement = lock.exclusive();
        assert!(would_block(open(&lock.gate).try_lock_shared()));
        assert!(would_block(open(&lock.traffic).try_lock_shared()));
        drop(measurement);

        // A measurement waiting for a running command: a new command waits at the gate, then
        // passes it, so a command the running one waits on still runs.
        let running = lock.shared();
        let gate = open(&lock.gate);
        gate.lock().expect("the gate");
        let started = Instant::now();
        let passed = lock.shared();
        assert!(
            started.elapsed() >= GATE_WAIT,
            "a command did not wait at the gate"
        );
        drop((running, passed, gate));
        assert!(open(&lock.gate).try_lock_shared().is_ok());
        assert!(open(&lock.traffic).try_lock_shared().is_ok());
        let _ = std::fs::remove_file(&lock.gate);
        let _ = std::fs::remove_file(&lock.traffic);
    }

    #[test]
    fn counts_client_series_and_differences() {
        let before = RequestCounts::from_metrics(
            "# TYPE apiserver_request_total counter\n\
             apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"resource\",subresource=\"\",system_client=\"\",verb=\"GET\",version=\"v1\"} 2\n\
             apiserver_request_total{code=\"404\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"resource\",subresource=\"\",system_client=\"\",verb=\"GET\",version=\"v1\"} 1\n\
             apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"cluster\",subresource=\"\",system_client=\"kube-controller-manager\",verb=\"LIST\",version=\"v1\"} 7\n",
        );
        assert_eq!(before.get("GET", "secrets"), 3);
        assert_eq!(
            before.get("LIST", "secrets"),
            0,
            "control-plane clients are left out"
        );
        let after = RequestCounts::from_metrics(
            "apiserver_request_total{code=\"200\",resource=\"secrets\",system_client=\"\",verb=\"GET\"} 5\n\
             apiserver_request_total{code=\"200\",resource=\"\",system_client=\"\",verb=\"GET\"} 1\n",
        );
        let delta = after.since(&before);
        assert_eq!(delta.get("GET", "secrets"), 2);
        assert_eq!(delta.by_verb(), BTreeMap::from([("GET".to_string(), 2)]));
    }
}
