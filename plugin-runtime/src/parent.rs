//! Ending the plugin when the engine that started it goes away without asking it to stop
//! (killed, crashed). The engine is the plugin's parent process, and how to tell that it is
//! still there differs per system: on Unix the plugin is re-parented when its parent exits
//! (`getppid` changes); on Windows nothing is re-parented, so the plugin holds a handle to its
//! parent's process and asks whether it has exited. The polling itself is the same everywhere
//! ([`watch_with`]), so its logic is tested on any host.

use std::time::Duration;

use crate::go_plugin::ShutdownSignal;

/// How often the parent process is checked for.
const PARENT_POLL: Duration = Duration::from_millis(500);

/// Whether the parent is still there; made once, at start, while it certainly is.
pub(crate) type Probe = Box<dyn FnMut() -> bool + Send>;

/// Triggers `shutdown` once the engine is gone. Where the parent cannot be found (a Windows
/// process whose parent already exited, or one started by a foreign loader), nothing is watched:
/// the engine still ends the plugin itself, as it does everywhere.
pub(crate) fn watch(shutdown: ShutdownSignal) {
    match engine_probe() {
        Some(probe) => watch_with(probe, PARENT_POLL, shutdown),
        None => tracing::debug!("the parent process cannot be watched; relying on the engine to end us"),
    }
}

/// Polls `alive` every `interval` and triggers `shutdown` the first time it says no.
pub(crate) fn watch_with(mut alive: Probe, interval: Duration, shutdown: ShutdownSignal) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(interval);
        loop {
            ticks.tick().await;
            if !alive() {
                tracing::debug!("the engine is gone; exiting");
                shutdown.trigger();
                return;
            }
        }
    });
}

/// Unix: the parent is gone once this process has been re-parented.
#[cfg(unix)]
fn engine_probe() -> Option<Probe> {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    // SAFETY: as above.
    Some(Box::new(move || unsafe { libc::getppid() } == parent))
}

/// Windows: a handle to the parent process, signalled when it exits (what go-plugin's
/// clients do with their own plugins' handles).
#[cfg(windows)]
fn engine_probe() -> Option<Probe> {
    let handle = windows::ParentHandle::open()?;
    Some(Box::new(move || handle.is_running()))
}

#[cfg(windows)]
mod windows {
    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
    };
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcessId, OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject,
    };

    /// An open handle to the parent process, closed on drop.
    pub(super) struct ParentHandle(HANDLE);

    // SAFETY: a process handle is a kernel object reference, usable from any thread.
    unsafe impl Send for ParentHandle {}

    impl ParentHandle {
        /// The parent named in this process's entry of a process snapshot, opened for waiting.
        pub(super) fn open() -> Option<ParentHandle> {
            let parent = parent_id()?;
            // SAFETY: plain FFI call; a null handle means failure and is checked.
            let handle = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, parent) };
            (!handle.is_null()).then_some(ParentHandle(handle))
        }

        /// Not yet signalled, i.e. the process has not exited.
        pub(super) fn is_running(&self) -> bool {
            // SAFETY: the handle is open for SYNCHRONIZE until drop; a zero wait only polls.
            unsafe { WaitForSingleObject(self.0, 0) == WAIT_TIMEOUT }
        }
    }

    impl Drop for ParentHandle {
        fn drop(&mut self) {
            // SAFETY: the handle is ours and closed once.
            unsafe { CloseHandle(self.0) };
        }
    }

    fn parent_id() -> Option<u32> {
        // SAFETY: plain FFI calls on a snapshot handle that is checked and closed below;
        // the entry's dwSize is set as the API requires.
        unsafe {
            let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
            if snapshot == INVALID_HANDLE_VALUE {
                return None;
            }
            let own = GetCurrentProcessId();
            let mut entry: PROCESSENTRY32W = std::mem::zeroed();
            entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
            let mut found = None;
            let mut more = Process32FirstW(snapshot, &mut entry) != 0;
            while more {
                if entry.th32ProcessID == own {
                    found = Some(entry.th32ParentProcessID).filter(|&id| id != 0);
                    break;
                }
                more = Process32NextW(snapshot, &mut entry) != 0;
            }
            CloseHandle(snapshot);
            found
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    #[tokio::test]
    async fn shutdown_follows_the_first_probe_that_finds_the_parent_gone() {
        let alive = Arc::new(AtomicBool::new(true));
        let polls = Arc::new(AtomicUsize::new(0));
        let shutdown = ShutdownSignal::new();
        let probe = {
            let (alive, polls) = (alive.clone(), polls.clone());
            Box::new(move || {
                polls.fetch_add(1, Ordering::SeqCst);
                alive.load(Ordering::SeqCst)
            })
        };
        watch_with(probe, Duration::from_millis(10), shutdown.clone());
        let stopped = shutdown.wait();
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(polls.load(Ordering::SeqCst) >= 2, "the probe is polled");
        assert!(
            tokio::time::timeout(Duration::ZERO, shutdown.wait())
                .await
                .is_err(),
            "no shutdown while the parent is there"
        );
        alive.store(false, Ordering::SeqCst);
        tokio::time::timeout(Duration::from_secs(2), stopped)
            .await
            .expect("shutdown once the parent is gone");
    }

    #[tokio::test]
    async fn this_process_parent_is_watched_and_present() {
        let mut probe = engine_probe().expect("the test runner's parent can be watched");
        assert!(probe(), "the test runner's parent is alive");
    }
}
