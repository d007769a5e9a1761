//! The two corpora of configurations, one file per resource type (`acceptance/corpus/`, written
//! as hashicorp's documentation writes them, and `acceptance/corpus-minimal/`, every optional
//! attribute left out): their files, the reference they cover, and the root configuration that
//! calls each file as a module.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::paths::workspace_root;

/// The source of provider-live, the `kubernetes` of every module [`write_modules`] writes.
pub const LIVE: &str = "choudoufu/live";

/// A module's `versions.tf`: the provider from `source` as `kubernetes`.
pub fn versions(source: &str) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    kubernetes = {{\n      source = \"{source}\"\n    }}\n  }}\n}}\n"
    )
}

/// One corpus file, or a `_v1` file under its deprecated unversioned name.
pub struct CorpusFile {
    /// The resource type it configures, e.g. `kubernetes_stateful_set_v1`.
    pub type_name: String,
    pub text: String,
    /// Under an unversioned name: the `_v1` type whose file it is (hashicorp gives both one
    /// schema).
    pub v1: Option<String>,
}

/// `acceptance/<folder>`.
pub fn dir(folder: &str) -> PathBuf {
    workspace_root().join("acceptance").join(folder)
}

/// The rows of `reference/hashicorp-kubernetes-3.4.0.paths.tsv`, split into columns (kind,
/// type, path, ...).
pub fn reference_rows() -> Vec<Vec<String>> {
    let path = workspace_root().join("reference/hashicorp-kubernetes-3.4.0.paths.tsv");
    fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The `.tf` files of `acceptance/<folder>` in name order, each `_v1` one preceded by itself
/// under its deprecated unversioned name when the reference has that type and no file of its
/// own.
pub fn files(folder: &str) -> Vec<CorpusFile> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir(folder))
        .unwrap_or_else(|e| panic!("acceptance/{folder}: {e}"))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tf"))
        .collect();
    paths.sort();
    let stem = |p: &Path| p.file_stem().expect("a file name").to_string_lossy().into_owned();
    let written: BTreeSet<String> = paths.iter().map(|p| stem(p)).collect();
    let reference: BTreeSet<String> = reference_rows()
        .into_iter()
        .filter(|r| r[0] == "resource")
        .map(|r| r[1].clone())
        .collect();
    let mut out = Vec::new();
    for path in &paths {
        let type_name = stem(path);
        let text = fs::read_to_string(path).expect("a corpus file");
        if let Some(old) = type_name.strip_suffix("_v1")
            && reference.contains(old)
            && !written.contains(old)
        {
            out.push(CorpusFile {
                type_name: old.to_string(),
                text: text.clone(),
                v1: Some(type_name.clone()),
            });
        }
        out.push(CorpusFile {
            type_name,
            text,
            v1: None,
        });
    }
    out
}

/// Writes a module folder under `dir` for each `(type, configuration, arguments)` (its
/// `versions.tf` with `variables` after the `terraform` block, its `main.tf`), and returns the
/// root configuration calling them all, `arguments` being the lines of each `module` block.
pub fn write_modules(dir: &Path, variables: &str, modules: &[(&str, &str, String)]) -> String {
    write_modules_of(LIVE, dir, variables, modules)
}

/// [`write_modules`] with the provider from `source` as `kubernetes` (hashicorp's own, for the
/// differential harness).
pub fn write_modules_of(
    source: &str,
    dir: &Path,
    variables: &str,
    modules: &[(&str, &str, String)],
) -> String {
    let versions = versions(source);
    let mut main = String::new();
    for (type_name, body, arguments) in modules {
        let folder = dir.join(type_name);
        fs::create_dir_all(&folder).expect("a module folder");
        fs::write(folder.join("versions.tf"), format!("{versions}{variables}")).expect("versions.tf");
        fs::write(folder.join("main.tf"), body).expect("main.tf");
        main.push_str(&format!(
            "module \"{type_name}\" {{\n  source = \"./{type_name}\"\n{arguments}}}\n\n"
        ));
    }
    main
}

/// Whether the state of a resource of `type_name` outlives its object (`local_once_ready` in
/// provider-live's behaviour table, hashicorp's "logical resource"): a signing request is deleted
/// once signed, and a refresh that finds none keeps the state, so deleting it behind the engine's
/// back plans nothing.
pub fn state_outlives_object(type_name: &str) -> bool {
    provider_live::entries()
        .iter()
        .find(|e| e.info.type_name == type_name || e.info.aliases.contains(&type_name))
        .is_some_and(|e| provider_live::behaviour_of(&e.info).local_once_ready())
}

/// One corpus file as a module of the corpus configuration.
pub struct Module {
    /// The resource type the file shows, e.g. `kubernetes_stateful_set_v1`.
    pub type_name: String,
    /// The configuration, with its names made unique to this run.
    pub body: String,
}

/// The corpus, names made unique with `run` (`corpus-…` and `corpus.example.com`): every
/// file, and each `_v1` file's configuration under its deprecated unversioned name
/// ([`unversioned`]).
pub fn modules(run: &str) -> Vec<Module> {
    modules_in("corpus", run)
}

/// [`modules`] of `acceptance/<folder>` (`corpus-moves`: shapes a state hashicorp wrote holds).
pub fn modules_in(folder: &str, run: &str) -> Vec<Module> {
    files(folder)
        .into_iter()
        .map(|f| Module {
            body: match &f.v1 {
                Some(v1) => uniquely_named(&unversioned(&f.text, v1, &f.type_name), run),
                None => uniquely_named(&f.text, run),
            },
            type_name: f.type_name,
        })
        .collect()
}

/// `text` with its names made unique to `run`.
pub fn uniquely_named(text: &str, run: &str) -> String {
    text.replace("corpus-", &format!("corpus-{run}-"))
        .replace("corpus.example.com", &format!("{run}.corpus.example.com"))
}

/// A `_v1` file's configuration under the deprecated unversioned name `old`, which hashicorp
/// gives the same schema, with its own object names (`corpus-u-…`, `u.corpus.example.com`) so
/// that both run side by side. Its fixed node ports move up by one, as two Services cannot
/// hold the same one.
pub fn unversioned(text: &str, v1: &str, old: &str) -> String {
    let renamed = text
        .replace(&format!("\"{v1}\""), &format!("\"{old}\""))
        .replace(&format!("{v1}."), &format!("{old}."))
        .replace("\"corpus-", "\"corpus-u-")
        .replace("corpus.example.com", "u.corpus.example.com");
    renamed
        .lines()
        .map(|line| match line.split_once("node_port") {
            Some((indent, rest)) if rest.trim_start().starts_with('=') => {
                let port: u32 = rest.trim_start()[1..]
                    .trim()
                    .parse()
                    .expect("a literal node port");
                format!("{indent}node_port = {}", port + 1)
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signing_requests_outlive_their_objects_under_both_names() {
        assert!(state_outlives_object("kubernetes_certificate_signing_request_v1"));
        assert!(state_outlives_object("kubernetes_certificate_signing_request"));
        assert!(!state_outlives_object("kubernetes_config_map_v1"));
    }
}
