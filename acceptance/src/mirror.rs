//! The provider mirror as the tests use it: [`provider_mirror`]'s packing over a fresh release
//! build, once per process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use provider_mirror::*;

/// Builds the release providers (a quick no-op when they are current) and packs them, once per
/// process: tests always run the providers built from the current sources. Returns the CLI
/// configuration the tests install them with: the unpacked layout, linked rather than inflated
/// at every `init` (`provider_mirror`'s `unpacked.rs`); [`archives`] is the packed one.
pub fn ensure() -> &'static Path {
    static DONE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let done = DONE.get_or_init(build_and_package);
    match done {
        Ok(path) => path,
        Err(e) => panic!("cannot prepare the provider mirror: {e}"),
    }
}

fn build_and_package() -> Result<PathBuf, String> {
    let release =
        crate::build::release_dir().map_err(|e| format!("the release build of the providers failed: {e}"))?;
    package(&release, &paths::dist_dir()).map_err(|e| e.to_string())?;
    Ok(paths::unpacked_cli_config())
}

/// [`ensure`]'s providers, and the CLI configuration that installs them from their archives
/// (`dist/terraformrc`), as users install them.
pub fn archives() -> PathBuf {
    ensure();
    paths::cli_config()
}
