//! What the registry answers, from the files `make release` wrote: the provider registry
//! protocol v1 (service discovery, `versions`, `download`) and the provider network mirror
//! protocol (`index.json`, `<version>.json`). The signed `SHA256SUMS` is the list of what is
//! published: a platform is offered only when its archive is in it, with the checksum it has
//! there (an archive changed after signing is served as it is, and the engine refuses it).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::openpgp;
use crate::release;
use provider_mirror as mirror;

/// Where the registry serves the protocols, relative to its base URL.
pub const PROVIDERS_PATH: &str = "/v1/providers/";
pub const MIRROR_PATH: &str = "/mirror/";
const FILES_PATH: &str = "/files/";

/// An answer to one GET request.
#[derive(Debug, PartialEq)]
pub enum Answer {
    Json(Value),
    File(PathBuf),
    NotFound,
}

/// The release folder served under one namespace, with the registry's base URL (for the
/// absolute download URLs the registry protocol returns).
pub struct Catalog<'a> {
    pub dir: &'a Path,
    pub namespace: &'a str,
    pub base_url: &'a str,
}

/// One published platform of one version: its archive's name and signed SHA-256.
struct Published {
    platform: String,
    archive: String,
    sha256: String,
}

impl Catalog<'_> {
    /// The answer to `GET path` (without the query string).
    pub fn answer(&self, path: &str) -> Answer {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let ours = |namespace: &str| namespace == self.namespace;
        let found = match segments.as_slice() {
            [".well-known", "terraform.json"] => {
                Some(Answer::Json(json!({ "providers.v1": PROVIDERS_PATH })))
            }
            ["v1", "providers", ns, type_name, "versions"] if ours(ns) => self.versions(type_name),
            ["v1", "providers", ns, type_name, version, "download", os, arch] if ours(ns) => {
                self.download(type_name, version, &format!("{os}_{arch}"))
            }
            ["files", name] => self.file(name),
            ["mirror", _host, ns, type_name, "index.json"] if ours(ns) => self.mirror_index(type_name),
            ["mirror", _host, ns, type_name, file] if ours(ns) => match file.strip_suffix(".json") {
                Some(version) => self.mirror_version(type_name, version),
                None => self.file(file),
            },
            _ => None,
        };
        found.unwrap_or(Answer::NotFound)
    }

    /// `{"versions": [{"version", "protocols", "platforms": [{"os", "arch"}]}]}`.
    fn versions(&self, type_name: &str) -> Option<Answer> {
        let versions: Vec<Value> = self
            .versions_of(type_name)
            .into_iter()
            .map(|version| {
                let platforms: Vec<Value> = self
                    .published(type_name, &version)
                    .iter()
                    .filter_map(|p| p.platform.split_once('_'))
                    .map(|(os, arch)| json!({ "os": os, "arch": arch }))
                    .collect();
                json!({
                    "version": version,
                    "protocols": self.protocols(type_name, &version),
                    "platforms": platforms,
                })
            })
            .collect();
        (!versions.is_empty()).then(|| Answer::Json(json!({ "versions": versions })))
    }

    /// The download document: the archive's URL and checksum, the URLs of the checksums and
    /// their signature, and every public key in the folder.
    fn download(&self, type_name: &str, version: &str, platform: &str) -> Option<Answer> {
        let published = self.published(type_name, version);
        let package = published.iter().find(|p| p.platform == platform)?;
        let (os, arch) = platform.split_once('_')?;
        let url = |name: &str| format!("{}{FILES_PATH}{name}", self.base_url);
        Some(Answer::Json(json!({
            "protocols": self.protocols(type_name, version),
            "os": os,
            "arch": arch,
            "filename": package.archive,
            "download_url": url(&package.archive),
            "shasums_url": url(&release::sums_name(type_name, version)),
            "shasums_signature_url": url(&release::signature_name(type_name, version)),
            "shasum": package.sha256,
            "signing_keys": { "gpg_public_keys": self.public_keys() },
        })))
    }

    /// `{"versions": {"<version>": {}}}`.
    fn mirror_index(&self, type_name: &str) -> Option<Answer> {
        let versions: serde_json::Map<String, Value> = self
            .versions_of(type_name)
            .into_iter()
            .map(|v| (v, json!({})))
            .collect();
        (!versions.is_empty()).then(|| Answer::Json(json!({ "versions": versions })))
    }

    /// `{"archives": {"<os>_<arch>": {"url", "hashes": ["h1:..."]}}}`, URLs relative to this
    /// document (the archives are served beside it).
    fn mirror_version(&self, type_name: &str, version: &str) -> Option<Answer> {
        let mut archives = serde_json::Map::new();
        for package in self.published(type_name, version) {
            let path = self.dir.join(&package.archive);
            // An archive that cannot be read is left out, as if not published.
            if let Ok(h1) = mirror::archive_h1(&path) {
                archives.insert(
                    package.platform,
                    json!({ "url": package.archive, "hashes": [h1] }),
                );
            }
        }
        (!archives.is_empty()).then(|| Answer::Json(json!({ "archives": archives })))
    }

    /// A published file: an artifact of `make release` or a public key, by its plain name.
    fn file(&self, name: &str) -> Option<Answer> {
        let published = name.starts_with("terraform-provider-") || name.ends_with(".asc");
        let plain = !name.contains(['/', '\\']) && !name.starts_with('.');
        let path = self.dir.join(name);
        (published && plain && path.is_file()).then_some(Answer::File(path))
    }

    /// The versions of `type_name` with a SHA256SUMS file, oldest first.
    fn versions_of(&self, type_name: &str) -> Vec<String> {
        let prefix = format!("terraform-provider-{type_name}_");
        let mut versions: Vec<String> = self
            .names()
            .iter()
            .filter_map(|name| name.strip_prefix(&prefix)?.strip_suffix("_SHA256SUMS"))
            .map(str::to_string)
            .collect();
        versions.sort_by_key(|v| semver_key(v));
        versions
    }

    /// The archives the SHA256SUMS of this version lists.
    fn published(&self, type_name: &str, version: &str) -> Vec<Published> {
        let sums =
            fs::read_to_string(self.dir.join(release::sums_name(type_name, version))).unwrap_or_default();
        let prefix = format!("{}_", release::stem(type_name, version));
        sums.lines()
            .filter_map(|line| {
                let (sha256, name) = line.split_once("  ")?;
                let platform = name.strip_prefix(&prefix)?.strip_suffix(".zip")?;
                Some(Published {
                    platform: platform.to_string(),
                    archive: name.to_string(),
                    sha256: sha256.to_string(),
                })
            })
            .collect()
    }

    /// The protocol versions of the version's manifest (`["6.0"]`).
    fn protocols(&self, type_name: &str, version: &str) -> Value {
        let manifest = fs::read_to_string(self.dir.join(release::manifest_name(type_name, version)));
        let manifest: Value = manifest
            .ok()
            .and_then(|m| serde_json::from_str(&m).ok())
            .unwrap_or_default();
        match &manifest["metadata"]["protocol_versions"] {
            Value::Array(versions) => Value::Array(versions.clone()),
            _ => json!(["6.0"]),
        }
    }

    /// Every `*.asc` public key in the folder, with its key id.
    fn public_keys(&self) -> Vec<Value> {
        let mut keys = Vec::new();
        for name in self.names().iter().filter(|n| n.ends_with(".asc")) {
            let Ok(armor) = fs::read_to_string(self.dir.join(name)) else {
                continue;
            };
            let Ok(key_id) = openpgp::key_id(&armor) else {
                continue;
            };
            keys.push(json!({
                "key_id": key_id,
                "ascii_armor": armor,
                "trust_signature": "",
                "source": "",
                "source_url": null,
            }));
        }
        keys
    }

    fn names(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Orders `1.10.0` after `1.9.0`: numeric fields compare as numbers.
fn semver_key(version: &str) -> Vec<(u64, String)> {
    version
        .split(['.', '-', '+'])
        .map(|part| (part.parse().unwrap_or(u64::MAX), part.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog_in(dir: &Path) -> Catalog<'_> {
        Catalog {
            dir,
            namespace: "choudoufu",
            base_url: "https://127.0.0.1:1",
        }
    }

    fn write(dir: &Path, name: &str, text: &str) {
        fs::write(dir.join(name), text).expect("write a fixture");
    }

    #[test]
    fn versions_and_download_follow_the_signed_checksums() {
        let dir = tempfile::tempdir().expect("a folder");
        write(
            dir.path(),
            "terraform-provider-live_0.1.0_SHA256SUMS",
            "aa  terraform-provider-live_0.1.0_linux_amd64.zip\nbb  terraform-provider-live_0.1.0_manifest.json\n",
        );
        write(
            dir.path(),
            "terraform-provider-live_0.1.0_manifest.json",
            mirror::MANIFEST,
        );
        // Not in SHA256SUMS: not published.
        write(dir.path(), "terraform-provider-live_0.1.0_darwin_arm64.zip", "");
        let catalog = catalog_in(dir.path());

        let Answer::Json(versions) = catalog.answer("/v1/providers/choudoufu/live/versions") else {
            panic!("no versions")
        };
        assert_eq!(
            versions,
            json!({"versions": [{"version": "0.1.0", "protocols": ["6.0"],
                                 "platforms": [{"os": "linux", "arch": "amd64"}]}]})
        );
        let Answer::Json(download) =
            catalog.answer("/v1/providers/choudoufu/live/0.1.0/download/linux/amd64")
        else {
            panic!("no download")
        };
        assert_eq!(download["shasum"], "aa");
        assert_eq!(
            download["shasums_signature_url"],
            "https://127.0.0.1:1/files/terraform-provider-live_0.1.0_SHA256SUMS.sig"
        );
        for path in [
            "/v1/providers/choudoufu/live/0.1.0/download/darwin/arm64",
            "/v1/providers/other/live/versions",
            "/v1/providers/choudoufu/records/versions",
            "/files/..",
            "/files/secret.key",
        ] {
            assert_eq!(catalog.answer(path), Answer::NotFound, "{path}");
        }
    }

    /// Whatever addresses the release holds, `choudoufu/kubectl` among them, are served through
    /// both protocols.
    #[test]
    fn every_published_address_is_served() {
        let dir = tempfile::tempdir().expect("a folder");
        for type_name in mirror::PROVIDER_TYPES {
            let stem = release::stem(type_name, "0.1.0");
            write(
                dir.path(),
                &release::sums_name(type_name, "0.1.0"),
                &format!("aa  {stem}_linux_amd64.zip\n"),
            );
            write(
                dir.path(),
                &release::manifest_name(type_name, "0.1.0"),
                mirror::MANIFEST,
            );
        }
        let catalog = catalog_in(dir.path());
        for type_name in mirror::PROVIDER_TYPES {
            let versions = catalog.answer(&format!("/v1/providers/choudoufu/{type_name}/versions"));
            assert!(matches!(versions, Answer::Json(_)), "{type_name}: {versions:?}");
            let Answer::Json(download) = catalog.answer(&format!(
                "/v1/providers/choudoufu/{type_name}/0.1.0/download/linux/amd64"
            )) else {
                panic!("{type_name}: no download")
            };
            assert_eq!(
                download["filename"],
                format!("terraform-provider-{type_name}_0.1.0_linux_amd64.zip")
            );
            let index = catalog.answer(&format!(
                "/mirror/registry.terraform.io/choudoufu/{type_name}/index.json"
            ));
            assert!(matches!(index, Answer::Json(_)), "{type_name}: {index:?}");
        }
    }

    #[test]
    fn versions_sort_numerically() {
        let mut versions = vec!["0.10.0", "0.9.1", "0.9.0"];
        versions.sort_by_key(|v| semver_key(v));
        assert_eq!(versions, ["0.9.0", "0.9.1", "0.10.0"]);
    }
}
