//! A stand-in for another provider during a migration: the runtime's example provider,
//! installed from a filesystem mirror of its own under the other provider's addresses. The
//! engine needs the source provider of a cross-provider `moved` installed to read its state;
//! the move itself is answered by the target provider alone, so any provider serves.
//!
//! A mirror, not `dev_overrides`: OpenTofu's `init` still asks the registry for a provider a
//! development override names, and no registry is reachable here.

use std::fs;
use std::path::{Path, PathBuf};

use provider_mirror::{HOSTS, platform};

use crate::hcl::{LiveDir, quote};
use crate::{Engine, build, mirror};

/// The version the stand-in is installed as.
const VERSION: &str = "0.0.1";

/// Writes `dir/cli.tfrc`: the providers' mirror as usual, and the stand-in for each of
/// `sources` (`namespace/type`, e.g. `hashicorp/kubernetes`) under every registry host an
/// engine may name it by. Returns its path, for `TF_CLI_CONFIG_FILE`.
pub fn cli_config(dir: &Path, sources: &[&str]) -> PathBuf {
    let stand_in = dir.join("stand-in");
    let echo = build::binary("echo_provider").expect("the example provider");
    let platform = platform().expect("a provider platform for this machine");
    let mut addresses = Vec::new();
    for host in HOSTS {
        for source in sources {
            let type_name = source.rsplit('/').next().expect("namespace/type");
            let folder = stand_in.join(host).join(source).join(VERSION).join(&platform);
            fs::create_dir_all(&folder).expect("a folder for the stand-in");
            fs::copy(&echo, folder.join(format!("terraform-provider-{type_name}")))
                .expect("the stand-in provider");
            addresses.push(quote(&format!("{host}/{source}")));
        }
    }
    let addresses = addresses.join(", ");
    let usual = fs::read_to_string(mirror::ensure()).expect("the mirror's CLI configuration");
    let config = usual
        .replacen(
            "provider_installation {\n",
            &format!(
                "provider_installation {{\n  filesystem_mirror {{\n    path    = {}\n    include = [{addresses}]\n  }}\n",
                quote(&stand_in.to_string_lossy())
            ),
            1,
        )
        .replacen("exclude = [", &format!("exclude = [{addresses}, "), 1);
    let path = dir.join("cli.tfrc");
    fs::write(&path, config).expect("cli.tfrc");
    path
}

/// A folder where choudoufu/live (local name `live`) stands beside hashicorp/kubernetes
/// (`kubernetes`, the stand-in), as while resources move from one to the other with `moved`
/// blocks; `init` has run in it.
pub fn beside_hashicorp(estate: &str, kubeconfig: &Path) -> LiveDir {
    let dir = tempfile::tempdir().expect("a temporary working folder");
    let config = cli_config(dir.path(), &["hashicorp/kubernetes"]);
    let engine = Engine::new(dir.path()).env("TF_CLI_CONFIG_FILE", &config.to_string_lossy());
    let provider = format!(
        "terraform {{
  required_providers {{
    kubernetes = {{ source = \"hashicorp/kubernetes\" }}
    \
         live       = {{ source = \"choudoufu/live\" }}
  }}
}}

\
         provider \"live\" {{
  estate      = {}
  config_path = {}
}}
",
        quote(estate),
        quote(&kubeconfig.to_string_lossy())
    );
    LiveDir::init_in(dir, engine, provider)
}
