//! The one release build of the workspace's binaries: `cargo build-all` (an alias in
//! `.cargo/config.toml`, also what `make build` runs), once per test process.
//!
//! Every consumer (the mirror the engine installs from, the handshake tests, the benchmarks,
//! `make demo`) uses these release binaries, and `make test` runs `cargo test --release`, so a
//! fresh clone compiles the dependencies once. The alias selects binaries from the whole
//! workspace rather than packages (`-p`), so Cargo unifies features as `cargo test --workspace`
//! does: a narrower selection would build the shared dependencies a second time with other
//! features, and each build would overwrite the other's provider binaries.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::paths;

/// Why the build could not run or failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum BuildError {
    #[error("cannot run cargo: {0}")]
    Spawn(String),
    #[error("`cargo build-all` failed:\n{0}")]
    Failed(String),
}

/// Builds (a quick no-op when current) and returns the release folder, `target/release`.
pub fn release_dir() -> Result<PathBuf, BuildError> {
    static BUILT: OnceLock<Result<PathBuf, BuildError>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

/// The path of the release binary `name`: a `[[bin]]` or an example (`echo_provider`).
pub fn binary(name: &str) -> Result<PathBuf, BuildError> {
    let release = release_dir()?;
    let example = release.join("examples").join(name);
    Ok(if example.exists() {
        example
    } else {
        release.join(name)
    })
}

/// Set by `scripts/test.sh` once it has run `cargo build-all` for the whole run, so that each
/// of its test processes does not ask cargo again.
const BUILT_ENV: &str = "RELEASE_BINARIES_BUILT";

fn build() -> Result<PathBuf, BuildError> {
    if std::env::var_os(BUILT_ENV).is_some() {
        return Ok(paths::target_dir().join("release"));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build-all", "--quiet"])
        .current_dir(paths::workspace_root())
        .output()
        .map_err(|e| BuildError::Spawn(e.to_string()))?;
    if !output.status.success() {
        return Err(BuildError::Failed(
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
    }
    Ok(paths::target_dir().join("release"))
}
