//! `make release`: the files a provider registry publishes for each provider, signed.
//!
//! Per provider type and version, in one folder: `terraform-provider-<type>_<version>_<os>_<arch>.zip`
//! (the binary inside named `terraform-provider-<type>_v<version>`), `..._manifest.json`,
//! `..._SHA256SUMS` over both and its detached signature `..._SHA256SUMS.sig`; beside them the
//! signing key's public half, [`PUBLIC_KEY_FILE`]. The zip layout is the filesystem mirror's
//! ([`provider_mirror`]), so both install the same bytes; a binary published under several
//! addresses is released under each (`terraform-provider-kubectl_...` holds provider-live).

pub mod platforms;
pub mod signing;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use platforms::Platform;
use provider_mirror::{self as mirror, MirrorError, VERSION};
use signing::{Signer, SigningError};

/// The ASCII-armored public key that verifies the signatures.
pub const PUBLIC_KEY_FILE: &str = "signing-key.asc";
/// Present only when the artifacts were signed with a throwaway key.
pub const TEST_ONLY_NOTICE: &str = "TEST-ONLY-SIGNATURES.txt";

/// Environment: the path of an armored (or binary) secret key file ...
pub const KEY_FILE_ENV: &str = "RELEASE_SIGNING_KEY";
/// ... or the key itself (a CI secret), and its passphrase if it has one.
pub const KEY_TEXT_ENV: &str = "RELEASE_SIGNING_KEY_ARMOR";
pub const PASSPHRASE_ENV: &str = "RELEASE_SIGNING_PASSPHRASE";

#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error(transparent)]
    Mirror(#[from] MirrorError),
    #[error(transparent)]
    Signing(#[from] SigningError),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the signature just made does not verify with the exported public key: {0}")]
    SelfCheck(SigningError),
    #[error("no binaries to release")]
    Nothing,
    #[error("{0} is not a platform of the release (those are: {list})", list = platforms::PLATFORMS.map(|p| p.name).join(", "))]
    UnknownPlatform(String),
    #[error("the {platform} build {} is missing: `make release` builds it", path.display())]
    MissingBinary { platform: String, path: PathBuf },
}

/// One provider binary for one platform.
#[derive(Debug, Clone)]
pub struct Binary {
    /// The provider type, e.g. `live`.
    pub type_name: String,
    /// The engine's platform name, e.g. `linux_amd64`.
    pub platform: String,
    pub path: PathBuf,
}

impl Binary {
    /// The release binaries built for the platforms `names` ([`platforms::PLATFORMS`]), one per
    /// published address ([`mirror::PROVIDERS`]) and platform: `choudoufu/kubectl` on this
    /// machine is `target/release/terraform-provider-live`, on Windows
    /// `target/cross/x86_64-pc-windows-gnu/release/terraform-provider-live.exe`.
    pub fn built_for(names: &[String]) -> Result<Vec<Binary>, ReleaseError> {
        let host = mirror::platform()?;
        let target = mirror::paths::target_dir();
        let mut binaries = Vec::new();
        for name in names {
            let platform =
                Platform::named(name).ok_or_else(|| ReleaseError::UnknownPlatform(name.clone()))?;
            for address in &mirror::PROVIDERS {
                let path = platform.binary(&target, &host, address);
                if !path.is_file() {
                    return Err(ReleaseError::MissingBinary {
                        platform: name.clone(),
                        path,
                    });
                }
                binaries.push(Binary {
                    type_name: address.type_name.to_string(),
                    platform: name.clone(),
                    path,
                });
            }
        }
        Ok(binaries)
    }
}

/// The file names of one provider version's artifacts.
pub fn stem(type_name: &str, version: &str) -> String {
    format!("terraform-provider-{type_name}_{version}")
}
pub fn archive_name(type_name: &str, version: &str, platform: &str) -> String {
    format!("{}_{platform}.zip", stem(type_name, version))
}
pub fn sums_name(type_name: &str, version: &str) -> String {
    format!("{}_SHA256SUMS", stem(type_name, version))
}
pub fn signature_name(type_name: &str, version: &str) -> String {
    format!("{}.sig", sums_name(type_name, version))
}
pub fn manifest_name(type_name: &str, version: &str) -> String {
    format!("{}_manifest.json", stem(type_name, version))
}

/// What [`release`] wrote.
#[derive(Debug)]
pub struct Released {
    pub files: Vec<PathBuf>,
    pub key_id: String,
    pub throwaway: bool,
}

/// The signing key from the environment ([`KEY_FILE_ENV`] or [`KEY_TEXT_ENV`], with
/// [`PASSPHRASE_ENV`]), or `key_file` when given; a throwaway key when there is none.
pub fn signer(key_file: Option<&Path>) -> Result<Signer, ReleaseError> {
    let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    let passphrase = env(PASSPHRASE_ENV);
    let key_file = key_file
        .map(Path::to_path_buf)
        .or_else(|| env(KEY_FILE_ENV).map(PathBuf::from));
    let key = match (key_file, env(KEY_TEXT_ENV)) {
        (Some(path), _) => fs::read(&path).map_err(|source| ReleaseError::Io { path, source })?,
        (None, Some(text)) => text.into_bytes(),
        (None, None) => return Ok(Signer::throwaway()?),
    };
    Ok(Signer::import(&key, passphrase.as_deref())?)
}

/// Packs, sums and signs `binaries` into `out`, replacing earlier artifacts of this version.
pub fn release(binaries: &[Binary], out: &Path, signer: &Signer) -> Result<Released, ReleaseError> {
    if binaries.is_empty() {
        return Err(ReleaseError::Nothing);
    }
    fs::create_dir_all(out).map_err(io_err(out))?;
    let public_key = out.join(PUBLIC_KEY_FILE);
    mirror::write_atomic(&public_key, signer.public_key()?.as_bytes())?;
    let notice = out.join(TEST_ONLY_NOTICE);
    if signer.is_throwaway() {
        let text = format!(
            "The artifacts in this folder are signed with a throwaway key made for one run of \
             `make release` (key id {}). They are for testing only: publish only artifacts \
             signed with the project's own key ({KEY_FILE_ENV}=<secret key file>).\n",
            signer.key_id()
        );
        mirror::write_atomic(&notice, text.as_bytes())?;
    } else if notice.exists() {
        fs::remove_file(&notice).map_err(io_err(&notice))?;
    }

    let mut files = vec![public_key.clone()];
    let mut types: Vec<&str> = binaries.iter().map(|b| b.type_name.as_str()).collect();
    types.sort_unstable();
    types.dedup();
    for type_name in types {
        remove_version(out, type_name)?;
        let mut sums = Vec::new();
        for binary in binaries.iter().filter(|b| b.type_name == type_name) {
            let archive = out.join(archive_name(type_name, VERSION, &binary.platform));
            let exe = Platform::named(&binary.platform).map_or("", |p| p.exe_suffix());
            let inner = format!("terraform-provider-{type_name}_v{VERSION}{exe}");
            let bytes = mirror::zip_one(&binary.path, &inner)?;
            mirror::write_atomic(&archive, &bytes)?;
            sums.push((sha256_hex(&bytes), archive.clone()));
        }
        let manifest = out.join(manifest_name(type_name, VERSION));
        mirror::write_atomic(&manifest, mirror::MANIFEST.as_bytes())?;
        sums.push((sha256_hex(mirror::MANIFEST.as_bytes()), manifest));
        sums.sort_by(|a, b| a.1.cmp(&b.1));

        let sums_file = out.join(sums_name(type_name, VERSION));
        let mut text = String::new();
        for (hash, path) in &sums {
            let _ = writeln!(text, "{hash}  {}", file_name(path));
        }
        mirror::write_atomic(&sums_file, text.as_bytes())?;
        let signature = out.join(signature_name(type_name, VERSION));
        signer.sign(&sums_file, &signature)?;
        // What users and the engine will do: verify with the published public key alone.
        signing::verify(&public_key, &signature, &sums_file).map_err(ReleaseError::SelfCheck)?;
        files.extend(sums.into_iter().map(|(_, path)| path));
        files.extend([sums_file, signature]);
    }
    Ok(Released {
        files,
        key_id: signer.key_id().to_string(),
        throwaway: signer.is_throwaway(),
    })
}

/// Removes every artifact of this version of `type_name` from `out`, so that no archive of an
/// earlier run sits there unsigned.
fn remove_version(out: &Path, type_name: &str) -> Result<(), ReleaseError> {
    let prefix = format!("{}_", stem(type_name, VERSION));
    for entry in fs::read_dir(out).map_err(io_err(out))? {
        let path = entry.map_err(io_err(out))?.path();
        if file_name(&path).starts_with(&prefix) {
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
    }
    Ok(())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReleaseError + '_ {
    move |source| ReleaseError::Io {
        path: path.to_path_buf(),
        source,
    }
}
