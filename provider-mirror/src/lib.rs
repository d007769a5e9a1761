//! The providers packed as the engine installs them: a filesystem mirror in the "packed" layout
//! (`HOST/NAMESPACE/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`) with SHA256SUMS and
//! manifest files beside each archive, and a CLI configuration that installs the project's
//! providers from that mirror and everything else directly. `terraform init` then checks and
//! records the archives' hashes in `.terraform.lock.hcl` like for any registry provider.
//!
//! The mirror holds the same archives under both engines' default registry hosts: a source
//! `choudoufu/live` means `registry.terraform.io/choudoufu/live` to Terraform and
//! `registry.opentofu.org/choudoufu/live` to OpenTofu, and neither engine can be told otherwise.
//!
//! One binary may be published under several addresses ([`PROVIDERS`]): `terraform-provider-live`
//! is also `choudoufu/kubectl`, so that configurations of the kubectl providers switch with one
//! `source` line (one source under two local names makes the engine warn).

mod lock;
mod packed_from;
pub mod paths;
mod unpacked;

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;

/// The registry host a short source address (`choudoufu/live`) means to Terraform.
pub const TERRAFORM_HOST: &str = "registry.terraform.io";
/// The registry host a short source address means to OpenTofu.
pub const OPENTOFU_HOST: &str = "registry.opentofu.org";
/// Every host the providers are published under, and the namespace there.
pub const HOSTS: [&str; 2] = [TERRAFORM_HOST, OPENTOFU_HOST];
pub const NAMESPACE: &str = "choudoufu";
/// One published provider address, `choudoufu/<type_name>`, and what it is packed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address {
    pub type_name: &'static str,
    /// The binary `terraform-provider-<binary>`, built by the package `provider-<binary>`.
    pub binary: &'static str,
    /// The local name configurations give it: its resource types' prefix (`kubernetes_...`).
    pub local_name: &'static str,
}

impl Address {
    /// The file name of its binary in a cargo target folder.
    pub fn binary_file(&self) -> String {
        format!("terraform-provider-{}", self.binary)
    }
}

/// Every address the project publishes, with the binary each comes from.
pub const PROVIDERS: [Address; 3] = [
    Address {
        type_name: "live",
        binary: "live",
        local_name: "kubernetes",
    },
    // The kubectl providers' configurations keep their local name `kubectl`.
    Address {
        type_name: "kubectl",
        binary: "live",
        local_name: "kubectl",
    },
    Address {
        type_name: "records",
        binary: "records",
        local_name: "records",
    },
];

/// The provider types of [`PROVIDERS`], in its order.
pub const PROVIDER_TYPES: [&str; PROVIDERS.len()] = {
    let mut types = [""; PROVIDERS.len()];
    let mut i = 0;
    while i < types.len() {
        types[i] = PROVIDERS[i].type_name;
        i += 1;
    }
    types
};
/// The providers' version: the workspace version, shared by every crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The lock file `make build` writes in `dist/` beside the mirror (`lock.rs`).
pub const LOCK_FILE: &str = "providers.lock.hcl";

/// The `_manifest.json` beside each archive: the plugin protocol versions the provider speaks.
pub const MANIFEST: &str = "{\"version\":1,\"metadata\":{\"protocol_versions\":[\"6.0\"]}}\n";

#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: {source}")]
    Zip {
        path: PathBuf,
        source: zip::result::ZipError,
    },
    #[error("provider binary {0} is missing: build it with `make build`")]
    MissingBinary(PathBuf),
    #[error("no provider platform name for this machine ({0})")]
    Platform(String),
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> MirrorError + '_ {
    move |source| MirrorError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The engine's platform name for this machine, e.g. `linux_amd64`.
pub fn platform() -> Result<String, MirrorError> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "arm" => "arm",
        other => return Err(MirrorError::Platform(other.to_string())),
    };
    Ok(format!("{}_{arch}", std::env::consts::OS))
}

/// The mirror folder holding the archives of provider `type_name` under registry `host`.
pub fn provider_dir(mirror: &Path, host: &str, type_name: &str) -> PathBuf {
    mirror.join(host).join(NAMESPACE).join(type_name)
}

/// Packs the binaries in `release_dir` into `dist/mirror`, each under every address it is
/// published as, and writes `dist/terraformrc` and the lock file of the packages,
/// `dist/providers.lock.hcl` (`lock.rs`). Archives are byte-for-byte reproducible (fixed
/// timestamps), and every file is replaced atomically, so concurrent runs and readers never see
/// a half-written file. The same binaries are also laid out unpacked, for the tests
/// (`dist/unpacked`, `dist/terraformrc-unpacked`: `unpacked.rs`).
///
/// Packing the same binaries into the same `dist` again does nothing (`packed_from`).
pub fn package(release_dir: &Path, dist: &Path) -> Result<(), MirrorError> {
    let mirror = dist.join("mirror");
    let inputs = packed_from::inputs(release_dir, dist)?;
    let mut outputs = Vec::new();
    for address in PROVIDERS {
        for host in HOSTS {
            outputs.push(archive_path(&mirror, host, address.type_name)?);
        }
    }
    outputs.extend(unpacked::outputs(dist)?);
    if packed_from::is_current(dist, &inputs, &outputs) {
        return Ok(());
    }
    let mut locked = Vec::new();
    for address in PROVIDERS {
        let type_name = address.type_name;
        let binary = release_dir.join(address.binary_file());
        if !binary.is_file() {
            return Err(MirrorError::MissingBinary(binary));
        }
        let stem = format!("terraform-provider-{type_name}_{VERSION}");
        // The engine runs the package's file named `terraform-provider-<type>...`.
        let inner_name = format!("terraform-provider-{type_name}_v{VERSION}");
        let bytes = zip_one(&binary, &inner_name)?;
        for host in HOSTS {
            let dir = provider_dir(&mirror, host, type_name);
            fs::create_dir_all(&dir).map_err(io_err(&dir))?;
            let archive = archive_path(&mirror, host, type_name)?;
            let sums = format!("{:x}  {}\n", Sha256::digest(&bytes), file_name(&archive));
            write_atomic(&archive, &bytes)?;
            write_atomic(&dir.join(format!("{stem}_SHA256SUMS")), sums.as_bytes())?;
            write_atomic(&dir.join(format!("{stem}_manifest.json")), MANIFEST.as_bytes())?;
        }
        let archive = archive_path(&mirror, HOSTS[0], type_name)?;
        let zh = format!("zh:{:x}", Sha256::digest(&bytes));
        locked.push((type_name, vec![archive_h1(&archive)?, zh]));
    }
    unpacked::lay_out(release_dir, dist)?;
    write_atomic(&dist.join(LOCK_FILE), lock::lock_file(&locked).as_bytes())?;
    write_atomic(&dist.join("terraformrc"), cli_config(&mirror).as_bytes())?;
    write_atomic(&packed_from::record_path(dist), inputs.as_bytes())
}

/// The CLI configuration: the project's providers come only from `mirror` (packed or
/// unpacked), whichever engine reads it.
fn cli_config(mirror: &Path) -> String {
    let include = included();
    format!(
        "# Written by `make build`: install the project's providers from the local mirror.\n\
         provider_installation {{\n  \
           filesystem_mirror {{\n    path    = \"{}\"\n    include = [{include}]\n  }}\n  \
           direct {{\n    exclude = [{include}]\n  }}\n\
         }}\n",
        mirror.display()
    )
}

/// `"<host>/choudoufu/*", ...` for every host in [`HOSTS`]: the `include` (or `exclude`) list of
/// a CLI configuration's installation method that takes exactly the project's providers.
pub fn included() -> String {
    let patterns: Vec<String> = HOSTS
        .iter()
        .map(|host| format!("\"{host}/{NAMESPACE}/*\""))
        .collect();
    patterns.join(", ")
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The path of provider `type_name`'s archive for this machine in `mirror` under `host`.
pub fn archive_path(mirror: &Path, host: &str, type_name: &str) -> Result<PathBuf, MirrorError> {
    let platform = platform()?;
    Ok(provider_dir(mirror, host, type_name)
        .join(format!("terraform-provider-{type_name}_{VERSION}_{platform}.zip")))
}

/// The engine's `h1:` package hash of an archive (Go's dirhash "Hash1" over the archive's files:
/// SHA-256 of the sorted lines `<sha256 hex>  <name>`), as `init` records it in the lock file.
pub fn archive_h1(archive: &Path) -> Result<String, MirrorError> {
    use base64::Engine as _;
    let zip_err = |source| MirrorError::Zip {
        path: archive.to_path_buf(),
        source,
    };
    let file = fs::File::open(archive).map_err(io_err(archive))?;
    let mut zip = zip::ZipArchive::new(file).map_err(zip_err)?;
    let mut lines = Vec::new();
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(zip_err)?;
        if entry.is_dir() {
            continue;
        }
        let name = entry.name().map_err(zip_err)?.into_owned();
        let mut hasher = Sha256::new();
        io::copy(&mut entry, &mut hasher).map_err(io_err(archive))?;
        lines.push(format!("{:x}  {name}\n", hasher.finalize()));
    }
    lines.sort_by(|a, b| {
        a.split_once("  ")
            .map(|x| x.1)
            .cmp(&b.split_once("  ").map(|x| x.1))
    });
    let digest = Sha256::digest(lines.concat().as_bytes());
    Ok(format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    ))
}

/// A zip archive holding the one executable `binary` under `inner_name`.
pub fn zip_one(binary: &Path, inner_name: &str) -> Result<Vec<u8>, MirrorError> {
    let content = fs::read(binary).map_err(io_err(binary))?;
    let zip_err = |source| MirrorError::Zip {
        path: binary.to_path_buf(),
        source,
    };
    let mut writer = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o755);
    writer.start_file(inner_name, options).map_err(zip_err)?;
    writer.write_all(&content).map_err(io_err(binary))?;
    Ok(writer.finish().map_err(zip_err)?.into_inner())
}

/// Writes `bytes` to a temporary file beside `path`, then renames it into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), MirrorError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io_err(dir))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    // Temporary files are private; the mirror is as readable as any build output.
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o644))
        .map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| MirrorError::Io {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A release folder holding both binaries, each `the <name> binary`.
    fn release_folder() -> tempfile::TempDir {
        let release = tempfile::tempdir().expect("a release folder");
        for binary in ["live", "records"] {
            fs::write(
                release.path().join(format!("terraform-provider-{binary}")),
                format!("the {binary} binary"),
            )
            .expect("write a binary");
        }
        release
    }

    /// Every address under both hosts, each archive holding its binary under the address's own
    /// name: `choudoufu/kubectl` is provider-live's bytes as `terraform-provider-kubectl_v...`.
    #[test]
    fn every_address_is_packed_from_its_binary_under_both_hosts() {
        let release = release_folder();
        let dist = tempfile::tempdir().expect("a dist folder");
        package(release.path(), dist.path()).expect("package");
        let mirror = dist.path().join("mirror");
        for host in HOSTS {
            for address in PROVIDERS {
                let archive = archive_path(&mirror, host, address.type_name).expect("a platform");
                let mut zip =
                    zip::ZipArchive::new(fs::File::open(&archive).expect("the archive")).expect("a zip");
                assert_eq!(zip.len(), 1);
                let mut entry = zip.by_index(0).expect("its one file");
                let inner = format!("terraform-provider-{}_v{VERSION}", address.type_name);
                assert_eq!(entry.name().expect("a file name"), inner);
                let mut content = String::new();
                io::Read::read_to_string(&mut entry, &mut content).expect("read the binary");
                assert_eq!(content, format!("the {} binary", address.binary));
            }
        }
        assert_eq!(PROVIDER_TYPES, ["live", "kubectl", "records"]);
        let config = fs::read_to_string(dist.path().join("terraformrc")).expect("the CLI configuration");
        assert!(config.contains(&included()), "{config}");
        let lock = fs::read_to_string(dist.path().join(LOCK_FILE)).expect("the lock file");
        for address in PROVIDERS {
            let archive = archive_path(&mirror, TERRAFORM_HOST, address.type_name).expect("a platform");
            let zh = format!(
                "zh:{:x}",
                Sha256::digest(fs::read(&archive).expect("the archive"))
            );
            assert!(lock.contains(&zh), "{zh} not in:\n{lock}");
            assert!(lock.contains(&archive_h1(&archive).expect("its h1")), "{lock}");
        }
        // The unpacked layout: each address's binary under its own name, for every host, and a
        // CLI configuration naming that folder.
        for host in HOSTS {
            for address in PROVIDERS {
                let path =
                    unpacked::executable_path(dist.path(), host, address.type_name).expect("a platform");
                let content = fs::read_to_string(&path).expect("the unpacked executable");
                assert_eq!(
                    content,
                    format!("the {} binary", address.binary),
                    "{}",
                    path.display()
                );
            }
        }
        let unpacked_config =
            fs::read_to_string(dist.path().join("terraformrc-unpacked")).expect("its CLI configuration");
        let folder = dist.path().join("unpacked");
        assert!(
            unpacked_config.contains(&format!("\"{}\"", folder.display())),
            "{unpacked_config}"
        );
        assert!(unpacked_config.contains(&included()), "{unpacked_config}");
    }

    /// Laying the unpacked layout out again over the same binaries (as test processes that
    /// repack at once do) leaves each package folder with its one executable: the engine hashes
    /// every file in it.
    #[test]
    fn the_unpacked_layout_laid_out_twice_holds_only_the_executables() {
        let release = release_folder();
        let dist = tempfile::tempdir().expect("a dist folder");
        unpacked::lay_out(release.path(), dist.path()).expect("lay out");
        unpacked::lay_out(release.path(), dist.path()).expect("lay out again");
        for host in HOSTS {
            for address in PROVIDERS {
                let path =
                    unpacked::executable_path(dist.path(), host, address.type_name).expect("a platform");
                let folder = path.parent().expect("its package folder");
                let files: Vec<_> = fs::read_dir(folder)
                    .expect("the package folder")
                    .map(|e| e.expect("an entry").file_name())
                    .collect();
                assert_eq!(
                    files,
                    [path.file_name().expect("a file name")],
                    "{}",
                    folder.display()
                );
            }
        }
        let left: Vec<_> = fs::read_dir(dist.path().join("unpacked"))
            .expect("the layout")
            .map(|e| e.expect("an entry").file_name())
            .filter(|name| name.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary links left: {left:?}");
    }

    /// The same binaries are not packed twice; a rebuilt one is.
    #[test]
    fn packing_again_is_skipped_until_a_binary_changes() {
        let release = tempfile::tempdir().expect("a release folder");
        let write = |binary: &str, content: &str| {
            fs::write(
                release.path().join(format!("terraform-provider-{binary}")),
                content,
            )
            .expect("write a binary")
        };
        write("live", "live 1");
        write("records", "records 1");
        let dist = tempfile::tempdir().expect("a dist folder");
        package(release.path(), dist.path()).expect("package");
        let archive = archive_path(&dist.path().join("mirror"), TERRAFORM_HOST, "live").expect("a platform");
        fs::write(&archive, "not a zip").expect("spoil the archive");
        package(release.path(), dist.path()).expect("package again");
        assert_eq!(
            fs::read(&archive).expect("the archive"),
            b"not a zip",
            "packed again"
        );

        write("live", "live, rebuilt");
        package(release.path(), dist.path()).expect("package the rebuilt binary");
        let mut zip = zip::ZipArchive::new(fs::File::open(&archive).expect("the archive")).expect("a zip");
        let mut content = String::new();
        io::Read::read_to_string(&mut zip.by_index(0).expect("its file"), &mut content).expect("read");
        assert_eq!(content, "live, rebuilt");
    }

    #[test]
    fn a_missing_binary_is_named() {
        let release = tempfile::tempdir().expect("a release folder");
        let dist = tempfile::tempdir().expect("a dist folder");
        let err = package(release.path(), dist.path()).expect_err("no binaries");
        assert!(err.to_string().contains("terraform-provider-live"), "{err}");
    }
}
