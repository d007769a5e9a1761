//! A stand-in for another provider during a migration: the runtime's example provider,
//! installed by a dev override under the other provider's addresses. The engine needs the
//! source provider of a cross-provider `moved` installed to read its state; the move itself is
//! answered by the target provider alone, so any provider serves.

use std::fs;
use std::path::{Path, PathBuf};

use crate::hcl::quote;
use crate::{build, mirror};

/// Writes `dir/cli.tfrc`: the providers' mirror as usual, and the stand-in for each of
/// `sources` (`namespace/type`, e.g. `hashicorp/kubernetes`) under every registry host an
/// engine may name it by. Returns its path, for `TF_CLI_CONFIG_FILE`.
pub fn cli_config(dir: &Path, sources: &[&str]) -> PathBuf {
    let stand_in = dir.join("stand-in");
    fs::create_dir_all(&stand_in).expect("a folder for the stand-in");
    let echo = build::binary("echo_provider").expect("the example provider");
    for source in sources {
        let type_name = source.rsplit('/').next().expect("namespace/type");
        fs::copy(&echo, stand_in.join(format!("terraform-provider-{type_name}")))
            .expect("the stand-in provider");
    }
    let overrides: Vec<String> = ["registry.terraform.io", "registry.opentofu.org"]
        .iter()
        .flat_map(|host| sources.iter().map(move |source| format!("{host}/{source}")))
        .map(|address| {
            format!(
                "    {} = {}\n",
                quote(&address),
                quote(&stand_in.to_string_lossy())
            )
        })
        .collect();
    let usual = fs::read_to_string(mirror::ensure()).expect("the mirror's CLI configuration");
    let config = usual.replacen(
        "provider_installation {\n",
        &format!(
            "provider_installation {{\n  dev_overrides {{\n{}  }}\n",
            overrides.concat()
        ),
        1,
    );
    let path = dir.join("cli.tfrc");
    fs::write(&path, config).expect("cli.tfrc");
    path
}
