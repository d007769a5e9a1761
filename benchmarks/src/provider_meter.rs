//! What the provider processes of an engine run spend themselves: CPU time (user + system) and
//! peak resident memory, apart from the engine's own cost.
//!
//! The engine is pointed (a CLI configuration with `dev_overrides`) at a folder holding the
//! benchmark program itself under the provider's binary name. Started there with
//! [`REAL_ENV`] set, the program is a meter, not a benchmark ([`run_if_provider`]): it starts
//! the real provider (the binary `init` installed from the mirror) with the same arguments and
//! inherited stdio, so the handshake line and the gRPC socket are the provider's own, waits
//! for it with `wait4`, and appends the child's rusage to the file named by [`LOG_ENV`]. The
//! engine's go-plugin shutdown (`GRPCController.Shutdown`) ends the provider gracefully, so the
//! meter sees every exit and the engine sees the meter exit right after.
//!
//! Why `wait4` rather than sampling `/proc/<pid>`: the kernel's rusage at exit is exact and
//! complete (every thread, up to the last instruction; `ru_maxrss` is the true peak), while a
//! sampler misses the work after its last sample and a short-lived process altogether (the
//! engine starts one provider process just for the schema). The meter's own costs (one fork and
//! a blocked wait) are not counted: `wait4` reports the child alone.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use acceptance::Engine;

/// Set in the engine's environment: the real provider binary the meter starts.
pub const REAL_ENV: &str = "PROVIDER_METER_REAL";
/// Set in the engine's environment: the file the meter appends one line per provider process to.
pub const LOG_ENV: &str = "PROVIDER_METER_LOG";

/// What one provider process spent, from its rusage at exit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// User plus system CPU time, seconds.
    pub cpu_s: f64,
    /// Peak resident set size, KiB.
    pub max_rss_kib: u64,
}

/// The provider processes of one phase (the engine may start several, e.g. one only for the
/// schema): summed CPU, the largest peak RSS.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseUsage {
    pub processes: usize,
    pub cpu_s: f64,
    pub max_rss_kib: u64,
}

impl PhaseUsage {
    fn of(usages: &[Usage]) -> PhaseUsage {
        PhaseUsage {
            processes: usages.len(),
            cpu_s: usages.iter().map(|u| u.cpu_s).sum(),
            max_rss_kib: usages.iter().map(|u| u.max_rss_kib).max().unwrap_or(0),
        }
    }
}

/// A folder the engine takes provider `choudoufu/<type_name>` from, where this program stands in
/// for it and records what the real one spends.
pub struct ProviderMeter {
    dir: tempfile::TempDir,
    real: PathBuf,
}

impl ProviderMeter {
    /// Meters provider `choudoufu/<type_name>`, whose real binary is `real` (the release
    /// build's, the same bytes `init` installs from the mirror).
    pub fn new(type_name: &str, real: &Path) -> Result<ProviderMeter, String> {
        ProviderMeter::of_source(&format!("{}/{type_name}", provider_mirror::NAMESPACE), real)
    }

    /// Meters the provider of short address `source` (`namespace/type`: each engine reads it
    /// under its own default registry host), whose real binary is `real`.
    pub fn of_source(source: &str, real: &Path) -> Result<ProviderMeter, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("a folder for the meter: {e}"))?;
        let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
        let type_name = source.rsplit('/').next().unwrap_or(source);
        let stand_in = dir.path().join(format!("terraform-provider-{type_name}"));
        symlink(&me, &stand_in).map_err(|e| format!("{}: {e}", stand_in.display()))?;
        let config = format!(
            "provider_installation {{\n  dev_overrides {{\n    \"{source}\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
            dir.path().display()
        );
        let config_path = dir.path().join("terraformrc");
        fs::write(&config_path, config).map_err(|e| format!("{}: {e}", config_path.display()))?;
        Ok(ProviderMeter {
            dir,
            real: real.to_path_buf(),
        })
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("usage.log")
    }

    /// `engine` taking the provider from the meter's folder (a later `TF_CLI_CONFIG_FILE` wins).
    pub fn wrap(&self, engine: Engine) -> Engine {
        engine
            .env(
                "TF_CLI_CONFIG_FILE",
                &self.dir.path().join("terraformrc").to_string_lossy(),
            )
            .env(REAL_ENV, &self.real.to_string_lossy())
            .env(LOG_ENV, &self.log().to_string_lossy())
    }

    /// What the provider processes that ended since the last call spent; clears the record.
    pub fn take(&self) -> Result<PhaseUsage, String> {
        let log = self.log();
        let text = match fs::read_to_string(&log) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("{}: {e}", log.display())),
        };
        let _ = fs::remove_file(&log);
        let usages = text
            .lines()
            .map(|line| {
                let mut fields = line.split_whitespace().map(str::parse::<f64>);
                match (fields.next(), fields.next()) {
                    (Some(Ok(cpu_s)), Some(Ok(rss))) => Ok(Usage {
                        cpu_s,
                        max_rss_kib: rss as u64,
                    }),
                    _ => Err(format!("{}: bad line {line:?}", log.display())),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PhaseUsage::of(&usages))
    }
}

/// When this program was started by the engine as a metered provider ([`REAL_ENV`] set): runs
/// the real provider to its end, records its usage and exits with its status. Otherwise returns
/// at once. Call it first thing in `main` of a program that uses a [`ProviderMeter`].
pub fn run_if_provider() {
    let (Some(real), Some(log)) = (std::env::var_os(REAL_ENV), std::env::var_os(LOG_ENV)) else {
        return;
    };
    std::process::exit(match meter(&real, &log) {
        Ok(code) => code,
        Err(e) => {
            // Stderr is the engine's plugin log: the message shows in its error.
            eprintln!("provider meter: {e}");
            1
        }
    });
}

/// Runs `real`, appends `<cpu seconds> <max rss KiB>` to `log`; the exit code to pass on.
fn meter(real: &OsString, log: &OsString) -> Result<i32, String> {
    let child = Command::new(real)
        .args(std::env::args_os().skip(1))
        .env_remove(REAL_ENV)
        .env_remove(LOG_ENV)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", Path::new(real).display()))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it and `status` for our own child `pid`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: as above; the pointers are valid for the call.
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waiting for the provider: {error}"));
        }
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let line = format!(
        "{:.6} {}\n",
        seconds(usage.ru_utime) + seconds(usage.ru_stime),
        usage.ru_maxrss
    );
    // One short append: lines of concurrent providers never interleave.
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .map_err(|e| format!("{}: {e}", Path::new(log).display()))?;
    Ok(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_sums_cpu_and_keeps_the_largest_peak() {
        let phase = PhaseUsage::of(&[
            Usage {
                cpu_s: 0.25,
                max_rss_kib: 9000,
            },
            Usage {
                cpu_s: 1.5,
                max_rss_kib: 30000,
            },
        ]);
        assert_eq!(phase.processes, 2);
        assert!((phase.cpu_s - 1.75).abs() < 1e-9);
        assert_eq!(phase.max_rss_kib, 30000);
    }
}
