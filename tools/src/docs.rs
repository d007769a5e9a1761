//! The providers' documentation in the registry's layout (`docs/index.md`,
//! `docs/resources/<type>.md`, `docs/data-sources/<type>.md`,
//! `docs/ephemeral-resources/<type>.md`, `docs/list-resources/<type>.md`,
//! `docs/actions/<type>.md`, `docs/functions/<function>.md`), generated from the
//! providers' schemas and function signatures so that every argument's text is the description
//! the engine shows, between hand-written parts: `templates/index.md.tmpl` and, per type or
//! function, `examples/<folder>/<name>/{resource.tf,import.sh,data-source.tf,
//! ephemeral-resource.tf,list-resource.tfquery.hcl,action.tf,function.tf}` (a list resource's example is
//! generated when its config needs no argument).
//! `make docs` writes the pages; the `docs` test fails when they are stale.

pub mod catalog;
mod pages;
mod reference;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub use pages::{EXAMPLES, INDEX_TEMPLATE, Page, list_example};

/// The folders of generated pages under `docs/`; any other file there is left alone.
fn generated_folders() -> impl Iterator<Item = &'static str> {
    let types = catalog::Kind::ALL.into_iter().map(catalog::Kind::folder);
    types.chain([catalog::FUNCTIONS_FOLDER])
}

#[derive(Debug, thiserror::Error)]
pub enum DocsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{type_name} has no hand-written {}: write it, then run `make docs`", .path.display())]
    MissingPart { type_name: String, path: PathBuf },
    #[error("{}: unknown placeholder {placeholder}", .path.display())]
    Placeholder { path: PathBuf, placeholder: String },
}

impl DocsError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> DocsError + '_ {
        move |source| DocsError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Every page, generated from the schemas and the hand-written parts under `root`.
pub fn generate(root: &Path) -> Result<Vec<Page>, DocsError> {
    let providers = catalog::providers();
    let mut pages = vec![pages::index_page(root, &providers)?];
    for provider in &providers {
        for (kind, doc) in provider.types() {
            pages.push(pages::type_page(root, provider, kind, doc)?);
        }
        for function in &provider.functions {
            pages.push(pages::function_page(root, provider, function)?);
        }
    }
    Ok(pages)
}

/// Writes `pages` into `docs` and removes generated pages of types that no longer exist.
pub fn write(docs: &Path, pages: &[Page]) -> Result<(), DocsError> {
    for path in stale(docs, pages)? {
        let target = docs.join(&path);
        match pages.iter().find(|p| p.path == path) {
            Some(page) => {
                let dir = target.parent().unwrap_or(docs);
                fs::create_dir_all(dir).map_err(DocsError::io(dir))?;
                fs::write(&target, &page.text).map_err(DocsError::io(&target))?;
            }
            None => fs::remove_file(&target).map_err(DocsError::io(&target))?,
        }
    }
    Ok(())
}

/// The pages (relative to `docs`) that differ from `pages`: missing, changed, or generated
/// pages of types that no longer exist.
pub fn stale(docs: &Path, pages: &[Page]) -> Result<Vec<PathBuf>, DocsError> {
    let mut out = Vec::new();
    for page in pages {
        let path = docs.join(&page.path);
        match fs::read_to_string(&path) {
            Ok(text) if text == page.text => {}
            Ok(_) => out.push(page.path.clone()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => out.push(page.path.clone()),
            Err(e) => return Err(DocsError::io(&path)(e)),
        }
    }
    for folder in generated_folders() {
        let dir = docs.join(folder);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(DocsError::io(&dir)(e)),
        };
        for entry in entries {
            let path = Path::new(folder).join(entry.map_err(DocsError::io(&dir))?.file_name());
            if !pages.iter().any(|p| p.path == path) {
                out.push(path);
            }
        }
    }
    Ok(out)
}
