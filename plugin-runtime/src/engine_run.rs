//! When the engine run that started this plugin began: the start of the parent process.
//!
//! The engine starts a plugin process per phase (plan, apply), so a plugin's own start says
//! little; its parent, the `terraform` or `tofu` process, lives for the whole run. Read from
//! Linux's `/proc`; elsewhere, and in a process no engine started (no handshake cookie), it is
//! not known.
//!
//! A run also has an identity ([`engine_run_id`]): what a lock it takes may record, so that a
//! later run on the same machine can tell a lock whose run has ended (failed, or killed) from one
//! still held ([`has_ended`]).

use std::sync::OnceLock;
use std::time::SystemTime;

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
    SystemTime::now().checked_sub(std::time::Duration::from_secs_f64(since_start.max(0.0)))
}

#[cfg(not(target_os = "linux"))]
fn parent_started() -> Option<SystemTime> {
    None
}

/// This engine run, as `<machine>.<pid>.<start>`: the machine a hash of its host name and boot
/// (no name leaves it), the engine's process id, and its start in clock ticks since boot, which
/// tells a reused process id apart. `None` where [`engine_started`] is not known.
pub fn engine_run_id() -> Option<String> {
    static ID: OnceLock<Option<String>> = OnceLock::new();
    ID.get_or_init(|| {
        engine_started()?;
        let (pid, start) = parent_process()?;
        Some(format!("{:016x}.{pid}.{start}", machine()?))
    })
    .clone()
}

/// Whether the engine run `id` ([`engine_run_id`]) names has ended: `Some(true)` when it ran on
/// this machine since its last boot and its process is gone, `Some(false)` when that process
/// still runs, and `None` when it ran elsewhere (another machine, container or boot) or this
/// cannot be known here.
pub fn has_ended(id: &str) -> Option<bool> {
    let mut parts = id.split('.');
    let (Some(machine_of), Some(pid), Some(start), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    if machine_of != format!("{:016x}", machine()?) {
        return None;
    }
    let pid: u32 = pid.parse().ok()?;
    Some(process_start(pid).as_deref() != Some(start))
}

/// The parent process's id and start (clock ticks since boot).
#[cfg(target_os = "linux")]
fn parent_process() -> Option<(u32, String)> {
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    let parent: u32 = stat_field(&own, 4)?.parse().ok()?;
    Some((parent, process_start(parent)?))
}

#[cfg(not(target_os = "linux"))]
fn parent_process() -> Option<(u32, String)> {
    None
}

/// When process `pid` started, in clock ticks since boot; `None` when no such process runs.
#[cfg(target_os = "linux")]
fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 22).map(str::to_string)
}

#[cfg(not(target_os = "linux"))]
fn process_start(_pid: u32) -> Option<String> {
    None
}

/// This machine since its last boot: FNV-1a of its host name and boot id. Containers on one host
/// share the boot id but not, as a rule, the host name (nor the process ids).
#[cfg(target_os = "linux")]
fn machine() -> Option<u64> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let bytes = host.trim().bytes().chain([0]).chain(boot.trim().bytes());
    Some(bytes.fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    }))
}

#[cfg(not(target_os = "linux"))]
fn machine() -> Option<u64> {
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
    use std::time::Duration;

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

    #[cfg(target_os = "linux")]
    #[test]
    fn a_run_on_this_machine_has_ended_once_its_process_is_gone() {
        let here = format!("{:016x}", machine().expect("this machine"));
        let (pid, start) = parent_process().expect("the parent process");
        assert_eq!(has_ended(&format!("{here}.{pid}.{start}")), Some(false));
        assert_eq!(
            has_ended(&format!("{here}.{pid}.1{start}")),
            Some(true),
            "a reused pid"
        );
        assert_eq!(has_ended(&format!("{here}.{}.1", u32::MAX)), Some(true));
        let elsewhere = format!("{}{}", if here.starts_with('0') { 1 } else { 0 }, &here[1..]);
        assert_eq!(
            has_ended(&format!("{elsewhere}.{pid}.{start}")),
            None,
            "another machine"
        );
        assert_eq!(has_ended("not an id"), None);
    }
}
