//! Where the build's pieces live on disk: the workspace, the cargo target folder, the mirror
//! and CLI configuration `make build` lays out in `dist/`, and the engine the tests run.

use std::path::PathBuf;

/// The workspace root (the folder holding the root Cargo.toml and the Makefile).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .expect("the provider-mirror crate sits inside the workspace")
        .to_path_buf()
}

/// `dist`: the filesystem mirror (`dist/mirror`) and the CLI configuration (`dist/terraformrc`).
pub fn dist_dir() -> PathBuf {
    workspace_root().join("dist")
}

/// The engine's CLI configuration that installs the providers from the mirror.
pub fn cli_config() -> PathBuf {
    dist_dir().join("terraformrc")
}

/// The CLI configuration that installs the same providers from their unpacked layout, without
/// inflating them at every `init` (the acceptance tests' default: `unpacked.rs`).
pub fn unpacked_cli_config() -> PathBuf {
    crate::unpacked::config_path(&dist_dir())
}

/// The cargo target folder: `CARGO_TARGET_DIR` when set (relative to the root), else `target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace_root().join(dir),
        _ => workspace_root().join("target"),
    }
}

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

/// The engine every test and benchmark runs: `$ENGINE` (e.g. a `tofu`), else `$TF` (its older
/// name), else the Terraform `make setup` installed, else `terraform` on PATH. Empty values
/// count as unset: the Makefile exports both whether given or not.
pub fn engine() -> PathBuf {
    ["ENGINE", "TF"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|value| !value.is_empty())
        .map_or_else(|| tool("terraform"), PathBuf::from)
}
