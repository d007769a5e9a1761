//! The kubectl providers' data sources over YAML text, which read no cluster:
//! `kubectl_file_documents` (the documents of a string), `kubectl_path_documents` (of the files a
//! glob matches, each rendered as an HCL template first), `kubectl_filename_list` (the files a
//! glob matches) and `kubectl_kustomize_documents` (schema only: its read refuses, as no sound
//! kustomize exists in Rust). Documents keep their raw text; `manifests` maps each one's
//! selfLink-style path to its YAML re-written with sorted keys, and a path seen twice is an error.
//! Facts: reference/kubectl-providers.md §5.3 to §5.6.

mod file;
mod filename_list;
pub(super) mod glob;
mod kustomize;
mod path;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::fingerprint::sha256_hex;
use plugin_runtime::{AttributePath, DataSource, Diagnostic, Diagnostics, Value};

use super::template::TemplateError;
use super::yaml::{YamlError, parse_manifest, self_link, split_documents, to_yaml};

/// The four data sources.
pub fn all() -> Vec<Arc<dyn DataSource>> {
    vec![
        Arc::new(file::FileDocuments),
        Arc::new(path::PathDocuments),
        Arc::new(filename_list::FilenameList),
        Arc::new(kustomize::KustomizeDocuments),
    ]
}

/// Where documents come from: the attribute that names them, and how messages name them.
#[derive(Clone, Debug)]
struct Origin {
    attribute: &'static str,
    name: String,
}

impl Origin {
    fn content() -> Origin {
        Origin {
            attribute: "content",
            name: "content".into(),
        }
    }

    fn file(path: &str) -> Origin {
        Origin {
            attribute: "pattern",
            name: format!("file {path}"),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Why a documents data source read nothing.
#[derive(Debug, thiserror::Error)]
enum DocumentsError {
    #[error("invalid pattern {pattern:?}: {source}")]
    Pattern {
        pattern: String,
        source: glob::BadPattern,
    },
    #[error("cannot read file {file}: {reason}")]
    Read { file: String, reason: String },
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("{origin}: {source}")]
    Split { origin: Origin, source: YamlError },
    #[error("{origin}, document {index}: {source}")]
    Manifest {
        origin: Origin,
        index: usize,
        source: YamlError,
    },
    #[error("duplicate manifest found with id: {link}")]
    Duplicate {
        link: String,
        first: String,
        second: String,
        attribute: &'static str,
    },
    #[error("kubectl_kustomize_documents is not supported by this provider")]
    Kustomize,
    #[error("no kustomization in {target}: {reason}")]
    NoKustomization { target: String, reason: String },
}

impl From<DocumentsError> for Diagnostic {
    fn from(e: DocumentsError) -> Diagnostic {
        let message = e.to_string();
        let (summary, detail, attribute) = match e {
            DocumentsError::Pattern { .. } => (
                "Invalid pattern",
                format!(
                    "{message}. The pattern is a Go filepath.Glob pattern: `*`, `?`, `[a-z]`, `\\` escapes."
                ),
                "pattern",
            ),
            DocumentsError::Read { .. } => ("Cannot read a matched file", message, "pattern"),
            DocumentsError::Template(_) => (
                "Cannot render a template",
                format!("{message}. Set disable_template = true to read the files as they are."),
                "pattern",
            ),
            DocumentsError::Split { ref origin, .. } | DocumentsError::Manifest { ref origin, .. } => {
                ("Invalid YAML document", message, origin.attribute)
            }
            // The kubectl providers' words as the summary, which the engine never wraps.
            DocumentsError::Duplicate {
                attribute,
                ref first,
                ref second,
                ..
            } => {
                return Diagnostic::error(
                    message,
                    format!(
                        "{second} names it, as {first} does: `manifests` is keyed by that path, so each \
                         object may appear once."
                    ),
                )
                .at(AttributePath::root(attribute));
            }
            DocumentsError::Kustomize => (
                "kubectl_kustomize_documents is not supported",
                "Building a kustomization takes kustomize itself (its generators, transformers, patches and \
                 remote bases), and no sound, maintained implementation of it exists for this provider to \
                 use, so it does not build `target`. Build it outside the engine instead, with \
                 `kustomize build <target> > rendered.yaml` (or `kubectl kustomize`), and read the result \
                 with data \"kubectl_file_documents\" { content = file(\"rendered.yaml\") }; or write each \
                 object as a kubernetes_manifest."
                    .to_string(),
                "target",
            ),
            DocumentsError::NoKustomization { .. } => (
                "No kustomization at target",
                format!("{message}. target names a folder holding kustomization.yaml."),
                "target",
            ),
        };
        Diagnostic::error(summary, detail).at(AttributePath::root(attribute))
    }
}

fn diags(e: DocumentsError) -> Diagnostics {
    Diagnostics::from(Diagnostic::from(e))
}

/// The documents read so far, and each manifest's path with where it was first seen.
#[derive(Default)]
struct Collected {
    documents: Vec<String>,
    manifests: BTreeMap<String, String>,
    seen: BTreeMap<String, String>,
}

impl Collected {
    /// Adds the documents of `text`. `secrets` are values that must not show in a message: a
    /// duplicate's path is the one place a document's content would.
    fn add(&mut self, text: &str, origin: &Origin, secrets: &[String]) -> Result<(), DocumentsError> {
        let documents = split_documents(text).map_err(|source| DocumentsError::Split {
            origin: origin.clone(),
            source,
        })?;
        for (i, document) in documents.into_iter().enumerate() {
            let manifest = parse_manifest(&document).map_err(|source| DocumentsError::Manifest {
                origin: origin.clone(),
                index: i + 1,
                source,
            })?;
            let link = self_link(&manifest);
            let here = format!("{origin}, document {}", i + 1);
            if let Some(first) = self.seen.insert(link.clone(), here.clone()) {
                let link = secrets
                    .iter()
                    .filter(|s| !s.is_empty())
                    .fold(link, |l, s| l.replace(s.as_str(), "(sensitive)"));
                return Err(DocumentsError::Duplicate {
                    link,
                    first,
                    second: here,
                    attribute: origin.attribute,
                });
            }
            self.manifests.insert(link, to_yaml(&manifest));
            self.documents.push(document);
        }
        Ok(())
    }

    fn documents_value(&self) -> Value {
        Value::List(self.documents.iter().map(Value::string).collect())
    }

    fn manifests_value(&self) -> Value {
        Value::string_map(self.manifests.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }
}

/// The string of attribute `name` (empty when null).
fn text<'a>(config: &'a Value, name: &str) -> &'a str {
    config.get(name).as_str().unwrap_or_default()
}

/// The files `pattern` matches, sorted.
fn matches(pattern: &str) -> Result<Vec<String>, DocumentsError> {
    let mut found = glob::glob(pattern).map_err(|source| DocumentsError::Pattern {
        pattern: pattern.to_string(),
        source,
    })?;
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests;
