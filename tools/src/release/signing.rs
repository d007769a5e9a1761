//! OpenPGP signing with stock GnuPG (`gpg`), each signer in its own temporary home: a throwaway
//! key generated for one run, or a key the user gives, imported for the run only. Private keys
//! never leave that home (or the user's own file), and the home is deleted when the signer is.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The user id of throwaway keys: says what they are to anyone who inspects the public key.
pub const THROWAWAY_UID: &str = "choudoufu providers TEST ONLY throwaway key <test-only@invalid>";

#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    #[error("cannot run gpg ({0}): install GnuPG (Debian: apt-get install gnupg)")]
    Missing(std::io::Error),
    #[error("a temporary GnuPG home: {0}")]
    Home(std::io::Error),
    #[error("`gpg {args}` failed: {stderr}")]
    Gpg { args: String, stderr: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the signing key holds no secret key that can sign")]
    NoSecretKey,
}

/// A secret key ready to sign, in a private temporary GnuPG home.
pub struct Signer {
    home: tempfile::TempDir,
    fingerprint: String,
    passphrase: String,
    throwaway: bool,
}

impl Signer {
    /// A new ed25519 key without passphrase, for this run only.
    pub fn throwaway() -> Result<Signer, SigningError> {
        let home = new_home()?;
        gpg(
            home.path(),
            &[
                "--passphrase",
                "",
                "--quick-gen-key",
                THROWAWAY_UID,
                "ed25519",
                "sign",
                "never",
            ],
            None,
        )?;
        Signer::in_home(home, String::new(), true)
    }

    /// The secret key in `key` (ASCII-armored or binary, as `gpg --export-secret-keys` writes it),
    /// unlocked with `passphrase` when it has one.
    pub fn import(key: &[u8], passphrase: Option<&str>) -> Result<Signer, SigningError> {
        let home = new_home()?;
        let passphrase = passphrase.unwrap_or_default().to_string();
        let file = home.path().join("import.key");
        std::fs::write(&file, key).map_err(|source| SigningError::Io {
            path: file.clone(),
            source,
        })?;
        let import = gpg(
            home.path(),
            &["--passphrase-fd", "0", "--import", &file.to_string_lossy()],
            Some(&passphrase),
        );
        // The key file is only needed for the import.
        let _ = std::fs::remove_file(&file);
        import?;
        Signer::in_home(home, passphrase, false)
    }

    fn in_home(home: tempfile::TempDir, passphrase: String, throwaway: bool) -> Result<Signer, SigningError> {
        let listing = gpg(home.path(), &["--with-colons", "--list-secret-keys"], None)?;
        let fingerprint = signing_fingerprint(&listing).ok_or(SigningError::NoSecretKey)?;
        Ok(Signer {
            home,
            fingerprint,
            passphrase,
            throwaway,
        })
    }

    /// True for a key made by [`Signer::throwaway`]: what it signs is for testing only.
    pub fn is_throwaway(&self) -> bool {
        self.throwaway
    }

    /// The key's 16-hex-digit id, as the engine prints it after a verified install.
    pub fn key_id(&self) -> &str {
        &self.fingerprint[self.fingerprint.len() - 16..]
    }

    /// The public key, ASCII-armored.
    pub fn public_key(&self) -> Result<String, SigningError> {
        gpg(
            self.home.path(),
            &["--armor", "--export", &self.fingerprint],
            None,
        )
    }

    /// Writes the detached binary signature of `document` to `signature` (what a registry's
    /// `shasums_signature_url` serves).
    pub fn sign(&self, document: &Path, signature: &Path) -> Result<(), SigningError> {
        let args = [
            "--yes",
            "--passphrase-fd",
            "0",
            "--local-user",
            &self.fingerprint,
            "--output",
            &signature.to_string_lossy(),
            "--detach-sign",
            &document.to_string_lossy(),
        ];
        gpg(self.home.path(), &args, Some(&self.passphrase)).map(drop)
    }
}

impl Drop for Signer {
    fn drop(&mut self) {
        // The agent gpg started for this home; its sockets go with the home.
        let _ = Command::new("gpgconf")
            .arg("--homedir")
            .arg(self.home.path())
            .args(["--kill", "gpg-agent"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// `gpg --verify` of `signature` over `document` with only the public key in `public_key`
/// known, in a fresh home: what a user does with the published files. Returns gpg's report.
pub fn verify(public_key: &Path, signature: &Path, document: &Path) -> Result<String, SigningError> {
    let home = new_home()?;
    gpg(home.path(), &["--import", &public_key.to_string_lossy()], None)?;
    let args = [
        "--verify",
        &signature.to_string_lossy(),
        &document.to_string_lossy(),
    ];
    let report = gpg(home.path(), &args, None);
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(home.path())
        .args(["--kill", "gpg-agent"])
        .status();
    report
}

fn new_home() -> Result<tempfile::TempDir, SigningError> {
    // Short paths: gpg-agent's socket path must fit in a sockaddr_un.
    tempfile::Builder::new()
        .prefix("gpg.")
        .tempdir_in("/tmp")
        .map_err(SigningError::Home)
}

/// Runs gpg in batch mode in `home`, with `stdin` fed to it; stdout on success (stderr for
/// `--verify`, whose report goes there), the error text otherwise.
fn gpg(home: &Path, args: &[&str], stdin: Option<&str>) -> Result<String, SigningError> {
    let mut command = Command::new("gpg");
    command
        .arg("--homedir")
        .arg(home)
        .args(["--batch", "--no-tty", "--pinentry-mode", "loopback"])
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(SigningError::Missing)?;
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // gpg reads one line from the passphrase fd.
        let _ = pipe.write_all(format!("{text}\n").as_bytes());
    }
    let output = child.wait_with_output().map_err(SigningError::Missing)?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(SigningError::Gpg {
            args: args.join(" "),
            stderr,
        });
    }
    Ok(if args.contains(&"--verify") {
        stderr
    } else {
        stdout
    })
}

/// The primary fingerprint of the first secret key that can sign, from `--with-colons
/// --list-secret-keys`: the `fpr` record after a `sec` record whose key capabilities (field 12,
/// upper case for the key as a whole, subkeys included) include `S`. gpg picks the signing
/// (sub)key itself; the engine names a key by its primary key id.
fn signing_fingerprint(listing: &str) -> Option<String> {
    let mut can_sign = false;
    for line in listing.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.first().copied() {
            Some("sec") => can_sign = fields.get(11).is_some_and(|c| c.contains('S')),
            Some("ssb") => can_sign = false,
            Some("fpr") if can_sign => return fields.get(9).map(|f| f.to_string()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signing_key_is_named_by_its_primary_fingerprint() {
        let certify_only = "sec:u:255:22:AAAAAAAAAAAAAAAA:1:::u:::cC:::+:::23::0:\n\
                            fpr:::::::::1111111111111111111111111111111111111111:\n";
        assert_eq!(signing_fingerprint(certify_only), None);
        let signing_subkey = "sec:u:255:22:AAAAAAAAAAAAAAAA:1:::u:::cSC:::+:::23::0:\n\
                              fpr:::::::::1111111111111111111111111111111111111111:\n\
                              ssb:u:255:22:BBBBBBBBBBBBBBBB:1::::::s:::+:::23:\n\
                              fpr:::::::::2222222222222222222222222222222222222222:\n";
        assert_eq!(
            signing_fingerprint(signing_subkey).as_deref(),
            Some("1111111111111111111111111111111111111111")
        );
    }
}
