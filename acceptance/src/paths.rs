//! Where the project's pieces live on disk: the workspace, the tools `make setup` installs (and
//! the engine to run), the cargo target folder and the provider mirror `make build` lays out.

pub use provider_mirror::paths::{
    cli_config, dist_dir, engine, target_dir, tool, tools_bin, unpacked_cli_config, workspace_root,
};
