//! `make build`'s last step: packs the release provider binaries into the filesystem mirror
//! `dist/mirror` and writes the CLI configuration `dist/terraformrc`.

use std::process::ExitCode;

use provider_mirror::{self as mirror, paths};

fn main() -> ExitCode {
    let release = paths::target_dir().join("release");
    let dist = paths::dist_dir();
    match mirror::package(&release, &dist) {
        Ok(()) => {
            println!("mirror: {}", dist.join("mirror").display());
            for host in mirror::HOSTS {
                for type_name in mirror::PROVIDER_TYPES {
                    println!("  {host}/{}/{type_name} {}", mirror::NAMESPACE, mirror::VERSION);
                }
            }
            println!(
                "use it with: TF_CLI_CONFIG_FILE={} terraform init (or tofu init)",
                paths::cli_config().display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("package_mirror: {e}");
            ExitCode::FAILURE
        }
    }
}
