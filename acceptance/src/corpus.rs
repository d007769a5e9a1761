//! The two corpora of configurations, one file per resource type (`acceptance/corpus/`, written
//! as hashicorp's documentation writes them, and `acceptance/corpus-minimal/`, every optional
//! attribute left out): their files, the reference they cover, and the root configuration that
//! calls each file as a module.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::paths::workspace_root;

/// Every module's `versions.tf`: provider-live as `kubernetes`.
const VERSIONS: &str = "terraform {\n  required_providers {\n    kubernetes = {\n      source = \"choudoufu/live\"\n    }\n  }\n}\n";

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
    let mut main = String::new();
    for (type_name, body, arguments) in modules {
        let folder = dir.join(type_name);
        fs::create_dir_all(&folder).expect("a module folder");
        fs::write(folder.join("versions.tf"), format!("{VERSIONS}{variables}")).expect("versions.tf");
        fs::write(folder.join("main.tf"), body).expect("main.tf");
        main.push_str(&format!(
            "module \"{type_name}\" {{\n  source = \"./{type_name}\"\n{arguments}}}\n\n"
        ));
    }
    main
}
