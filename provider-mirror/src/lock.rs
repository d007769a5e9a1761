//! The dependency lock file (`.terraform.lock.hcl`) of the mirror's providers, written beside it
//! as `dist/providers.lock.hcl`, for working folders to start from, as a team's committed lock file.
//!
//! Without one, `init` from a filesystem mirror can record only the `h1:` hash of the package it
//! unpacked, and warns "Incomplete lock file information for providers" (Terraform and OpenTofu
//! alike). With the archives' `zh:` hashes already locked, as `providers lock` against a registry
//! writes them, it verifies the package against them and warns no more. Every address is locked
//! under both registry hosts; each engine keeps its own host's entries and drops the others.

use std::fmt::Write as _;

use crate::{HOSTS, NAMESPACE, VERSION};

/// The lock file for `hashes`: per provider type, its hashes (`h1:...`, `zh:...`), locked at
/// [`VERSION`] under every host in [`HOSTS`].
pub fn lock_file(hashes: &[(&str, Vec<String>)]) -> String {
    let mut text =
        String::from("# Written by `make build` (provider-mirror): the hashes of dist/mirror's packages.\n");
    for host in HOSTS {
        for (type_name, hashes) in hashes {
            let mut sorted = hashes.clone();
            sorted.sort();
            sorted.dedup();
            let _ = write!(
                text,
                "\nprovider \"{host}/{NAMESPACE}/{type_name}\" {{\n  version = \"{VERSION}\"\n  hashes = [\n"
            );
            for hash in sorted {
                let _ = writeln!(text, "    \"{hash}\",");
            }
            text.push_str("  ]\n}\n");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_locked_under_every_host_with_sorted_hashes() {
        let text = lock_file(&[("live", vec!["zh:ab".into(), "h1:XY=".into(), "zh:ab".into()])]);
        for host in HOSTS {
            let block = format!(
                "provider \"{host}/{NAMESPACE}/live\" {{\n  version = \"{VERSION}\"\n  hashes = [\n    \
                 \"h1:XY=\",\n    \"zh:ab\",\n  ]\n}}\n"
            );
            assert!(text.contains(&block), "{text}");
        }
    }
}
