//! Where the project's pieces live on disk: the workspace, the tools `make setup` installs, the
//! cargo target folder and the provider mirror `make build` lays out.

use std::path::PathBuf;

pub use provider_mirror::paths::{cli_config, dist_dir, target_dir, workspace_root};

/// `.tools/bin`: the engine and kubectl installed by `make setup`.
pub fn tools_bin() -> PathBuf {
    workspace_root().join(".tools").join("bin")
}

/// The program `name` from `.tools/bin` when `make setup` installed it, else from PATH.
pub fn tool(name: &str) -> PathBuf {
    let local = tools_bin().join(name);
    if local.exists() {
        local
    } else {
        PathBuf::from(name)
    }
}
