//! When the engine run that started this plugin began: the start of the parent process.
//!
//! The engine starts a plugin process per phase (plan, apply), so a plugin's own start says
//! little; its parent, the `terraform` or `tofu` process, lives for the whole run. Read from
//! Linux's `/proc`; elsewhere, and in a process no engine started (no handshake cookie), it is
//! not known.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The start of the engine run, read once per process.
pub fn engine_started() -> Option<SystemTime> {
    static STARTED: OnceLock<Option<SystemTime>> = OnceLock::new();
    *STARTED.get_or_init(|| {
        std::env::var_os(crate::handshake::MAGIC_COOKIE_KEY)?;
        parent_started()
    })
}

#[cfg(target_os = "linux")]
fn parent_started() -> Option<SystemTime> {
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let parent = stat_field(&own, 4)?;
    let stat = std::fs::read_to_string(format!("/proc/{parent}/stat")).ok()?;
    let ticks: u64 = stat_field(&stat, 22)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    // The start is counted from boot. The uptime says how long ago that was to the hundredth of
    // a second (`/proc/stat`'s boot time has whole seconds only).
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let since_start = uptime - ticks as f64 / per_second.max(1) as f64;
    SystemTime::now().checked_sub(Duration::from_secs_f64(since_start.max(0.0)))
}

#[cfg(not(target_os = "linux"))]
fn parent_started() -> Option<SystemTime> {
    None
}

/// Field `n` (1-based, as proc(5) numbers them) of a `/proc/<pid>/stat` line. The second, the
/// command in parentheses, may hold spaces and parentheses itself, so fields are counted from
/// its last ')'.
#[cfg(any(target_os = "linux", test))]
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let after = stat.rsplit_once(')')?.1;
    after.split_whitespace().nth(n.checked_sub(3)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_past_a_command_with_spaces_and_parentheses() {
        let stat = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 98765 1000";
        assert_eq!(stat_field(stat, 3), Some("S"));
        assert_eq!(stat_field(stat, 4), Some("17"));
        assert_eq!(stat_field(stat, 22), Some("98765"));
        assert_eq!(stat_field(stat, 2), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_parent_started_before_its_child_and_after_boot() {
        let started = parent_started().expect("the parent's start, on Linux");
        let now = SystemTime::now();
        assert!(started <= now, "{started:?} after {now:?}");
        assert!(now.duration_since(started).unwrap() < Duration::from_secs(86_400 * 365));
    }
}
