//! `make build`'s last step: packs the release provider binaries into the filesystem mirror
//! `dist/mirror`, each under every address it is published as, and writes the CLI
//! configuration `dist/terraformrc`.

use std::process::ExitCode;

use provider_mirror::{self as mirror, paths};

fn main() -> ExitCode {
    let release = paths::target_dir().join("release");
    let dist = paths::dist_dir();
    match mirror::package(&release, &dist) {
        Ok(()) => {
            println!("mirror: {}", dist.join("mirror").display());
            for host in mirror::HOSTS {
                for address in mirror::PROVIDERS {
                    println!(
                        "  {host}/{}/{} {} ({})",
                        mirror::NAMESPACE,
                        address.type_name,
                        mirror::VERSION,
                        address.binary_file()
                    );
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
