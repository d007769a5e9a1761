//! The catalog's hand-kept inputs, read and checked: hashicorp's schema rows (and their tree),
//! `types.tsv` / `data_types.tsv` and `overrides.tsv`, and the [`Error`] naming the line at fault.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub(crate) const OVERRIDES: &str = "provider-live/catalog/overrides.tsv";

/// Why the catalog cannot be generated.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: not JSON: {source}")]
    Json { path: String, source: serde_json::Error },
    #[error("{file}:{line}: {message}")]
    Input {
        file: &'static str,
        line: usize,
        message: String,
    },
    #[error(
        "reference/discovery.tsv: GA kinds with no type and no `kind` row in beyond.tsv: {unaccounted:?}; \
         `kind` rows naming no kind the server creates: {stale:?}"
    )]
    Kinds {
        unaccounted: Vec<String>,
        stale: Vec<String>,
    },
    #[error("{} attribute paths have no Kubernetes field:\n  {}", .0.len(), .0.join("\n  "))]
    Unmatched(Vec<String>),
}

pub(crate) fn read(root: &Path, path: &str) -> Result<String, Error> {
    std::fs::read_to_string(root.join(path)).map_err(|source| Error::Read {
        path: path.to_string(),
        source,
    })
}

/// One row of the hashicorp schema.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) path: String,
    pub(crate) shape: String,
    pub(crate) collection: String,
    pub(crate) element: String,
    pub(crate) flags: String,
}

impl Row {
    pub(crate) fn name(&self) -> &str {
        self.path.rsplit('.').next().unwrap_or(&self.path)
    }

    pub(crate) fn is_block(&self) -> bool {
        matches!(self.shape.as_str(), "block" | "block_or_attribute") || (self.shape == "nested_attribute")
    }

    /// The catalog's presence; an optional attribute hashicorp gives a default is planned by
    /// the provider, so it is computed too ("defaulted").
    pub(crate) fn presence_with(&self, defaulted: &BTreeSet<String>) -> &'static str {
        match self.presence() {
            "optional" if defaulted.contains(&self.path) => "defaulted",
            other => other,
        }
    }

    pub(crate) fn presence(&self) -> &'static str {
        match self.flags.as_str() {
            "required" => "required",
            "optional,computed" => "defaulted",
            f if f.starts_with("computed") => "computed",
            _ => "optional",
        }
    }
}

/// A type's rows as a tree.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) row: Row,
    pub(crate) children: Vec<Node>,
}

pub(crate) fn tree(rows: &[Row], prefix: &str) -> Vec<Node> {
    let mut out: Vec<Node> = rows
        .iter()
        .filter(|r| match r.path.rsplit_once('.') {
            Some((parent, _)) => parent == prefix,
            None => prefix.is_empty(),
        })
        .map(|r| Node {
            row: r.clone(),
            children: tree(rows, &r.path),
        })
        .collect();
    out.sort_by(|a, b| a.row.name().cmp(b.row.name()));
    out
}

/// A hand-made mapping for a path spelling cannot find (`overrides.tsv`).
#[derive(Clone, Debug)]
pub(crate) struct Override {
    pub(crate) json: String,
    pub(crate) scalar: Option<String>,
    pub(crate) doc: Option<String>,
}

/// `overrides.tsv`: `type-or-*  path  json  scalar-or--  doc-or--`; a json of `+field` is a
/// field of another version of the kind that the provider translates.
pub(crate) fn overrides(text: &str) -> Result<BTreeMap<(String, String), Override>, Error> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [ty, path, json, scalar, doc] = cols[..] else {
            return Err(Error::Input {
                file: OVERRIDES,
                line: i + 1,
                message: format!("expected 5 tab-separated columns, found {}", cols.len()),
            });
        };
        let opt = |s: &str| (s != "-").then(|| s.to_string());
        out.insert(
            (ty.to_string(), path.to_string()),
            Override {
                json: json.to_string(),
                scalar: opt(scalar),
                doc: opt(doc),
            },
        );
    }
    Ok(out)
}

/// One resource type of `types.tsv`.
pub(crate) struct TypeRow {
    /// Its line in its file, for errors.
    pub(crate) line: usize,
    pub(crate) name: String,
    pub(crate) aliases: String,
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    pub(crate) scope: String,
    pub(crate) schema: String,
}

/// The rows of `types.tsv` or `data_types.tsv` (`file`, for errors).
pub(crate) fn types(file: &'static str, text: &str) -> Result<Vec<TypeRow>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, aliases, api_version, kind, plural, scope, schema] = cols[..] else {
            return Err(Error::Input {
                file,
                line: i + 1,
                message: format!("expected 7 tab-separated columns, found {}", cols.len()),
            });
        };
        out.push(TypeRow {
            line: i + 1,
            name: name.into(),
            aliases: aliases.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
            scope: scope.into(),
            schema: schema.into(),
        });
    }
    Ok(out)
}

/// The hashicorp rows of every type of one kind of row (`resource`, `data`).
pub(crate) fn reference(text: &str, kind: &str) -> BTreeMap<String, Vec<Row>> {
    let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [k, ty, path, shape, collection, element, flags] = cols[..]
            && k == kind
        {
            out.entry(ty.to_string()).or_default().push(Row {
                path: path.into(),
                shape: shape.into(),
                collection: collection.into(),
                element: element.into(),
                flags: flags.into(),
            });
        }
    }
    out
}
