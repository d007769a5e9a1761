//! The same providers in the mirror's "unpacked" layout
//! (`HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/terraform-provider-TYPE_vVERSION`), each file a hard
//! link to its release binary, with a CLI configuration of its own (`dist/terraformrc-unpacked`).
//!
//! The acceptance tests install from it. From a packed mirror, every `init` inflates each
//! 20-odd MB binary and writes it into the working directory; from an unpacked one the engine
//! links the package folder instead (both Terraform and OpenTofu do), which halves the CPU of an
//! `init`, and the tests run a few hundred of them. The bytes, the `h1:` hash in the lock file
//! and the protocol are the same. Installing from the archives, as users do, is what
//! `dist/terraformrc` and its tests cover.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{HOSTS, MirrorError, NAMESPACE, PROVIDERS, VERSION, cli_config, io_err, platform};

/// The folder of the unpacked layout, beside `dist/mirror`.
pub(crate) fn dir(dist: &Path) -> PathBuf {
    dist.join("unpacked")
}

/// Its CLI configuration.
pub(crate) fn config_path(dist: &Path) -> PathBuf {
    dist.join("terraformrc-unpacked")
}

/// Where provider `type_name`'s executable goes under `host`.
pub(crate) fn executable_path(dist: &Path, host: &str, type_name: &str) -> Result<PathBuf, MirrorError> {
    Ok(dir(dist)
        .join(host)
        .join(NAMESPACE)
        .join(type_name)
        .join(VERSION)
        .join(platform()?)
        .join(format!("terraform-provider-{type_name}_v{VERSION}")))
}

/// Every file [`lay_out`] writes.
pub(crate) fn outputs(dist: &Path) -> Result<Vec<PathBuf>, MirrorError> {
    let mut outputs = vec![config_path(dist)];
    for address in PROVIDERS {
        for host in HOSTS {
            outputs.push(executable_path(dist, host, address.type_name)?);
        }
    }
    Ok(outputs)
}

/// Links every address's binary from `release_dir` into the unpacked layout and writes its CLI
/// configuration. Each file is replaced by a rename, so a reader sees the old file or the new.
pub(crate) fn lay_out(release_dir: &Path, dist: &Path) -> Result<(), MirrorError> {
    for address in PROVIDERS {
        let binary = release_dir.join(address.binary_file());
        for host in HOSTS {
            let path = executable_path(dist, host, address.type_name)?;
            let folder = path.parent().unwrap_or(dist);
            fs::create_dir_all(folder).map_err(io_err(folder))?;
            // Beside the package folders, never in one: the engine hashes every file of a
            // package folder into its `h1:`.
            let tmp = dir(dist).join(format!(
                ".{}-{host}-{}.tmp",
                std::process::id(),
                address.type_name
            ));
            let _ = fs::remove_file(&tmp);
            // A hard link costs nothing; a copy where links cannot be made (another device).
            if fs::hard_link(&binary, &tmp).is_err() {
                fs::copy(&binary, &tmp).map_err(io_err(&binary))?;
            }
            fs::rename(&tmp, &path).map_err(io_err(&path))?;
            // Renaming a link onto a link to the same file does nothing and leaves the source.
            let _ = fs::remove_file(&tmp);
        }
    }
    crate::write_atomic(&config_path(dist), cli_config(&dir(dist)).as_bytes())
}
