//! The provider mirror as the tests use it: [`provider_mirror`]'s packing over a fresh release
//! build, once per process.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use provider_mirror::*;

/// Builds the release providers (a quick no-op when they are current) and packs them, once per
/// process: tests always run the providers built from the current sources, as a user installs them.
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
    Ok(paths::cli_config())
}
