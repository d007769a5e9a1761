//! What the kind catalogs hold beyond hashicorp/kubernetes 3.4.0, read from them (`make catalog`
//! writes them): the rows of every field, each marked when generated beyond 3.4.0 (its
//! documentation starts with [`MARK`]), and the types hashicorp has none of (`new_types.tsv`).

use std::fs;

use crate::paths::workspace_root;

/// How a generated row's documentation starts.
pub const MARK: &str = "Beyond hashicorp/kubernetes 3.4.0.";
/// The resource catalog, relative to the workspace.
pub const RESOURCES: &str = "provider-live/catalog/kinds.tsv";
/// The data-source catalog, relative to the workspace.
pub const DATA_SOURCES: &str = "provider-live/catalog/data_sources.tsv";
const NEW_TYPES: &str = "provider-live/catalog/new_types.tsv";

/// One `field` row of a catalog.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldRow {
    pub type_name: String,
    pub path: String,
    pub shape: String,
    pub presence: String,
    /// Generated beyond hashicorp/kubernetes 3.4.0.
    pub beyond: bool,
}

/// The text of the catalog `file` ([`RESOURCES`], [`DATA_SOURCES`]).
pub fn catalog(file: &str) -> String {
    let path = workspace_root().join(file);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `field` rows of a catalog's text.
pub fn field_rows(catalog: &str) -> Vec<FieldRow> {
    catalog
        .lines()
        .filter(|l| l.starts_with("field\t"))
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            Some(FieldRow {
                type_name: cols.get(1)?.to_string(),
                path: cols.get(2)?.to_string(),
                shape: cols.get(4)?.to_string(),
                presence: cols.get(6)?.to_string(),
                beyond: cols.get(8).is_some_and(|doc| doc.starts_with(MARK)),
            })
        })
        .collect()
}

/// The types beyond 3.4.0: hashicorp has no type for their kinds.
pub fn new_types() -> Vec<String> {
    catalog(NEW_TYPES)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect()
}
