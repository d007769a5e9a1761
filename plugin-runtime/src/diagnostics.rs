//! Diagnostics: what the engine shows a user, with the attribute path it is about.
//!
//! Providers keep their own typed errors and turn them into [`Diagnostic`]s at one
//! boundary (a `From` impl); the runtime only carries them to the wire.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One step of an attribute path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    Attribute(String),
    Key(String),
    Index(i64),
}

/// Where in a configuration or state a diagnostic points, e.g. `metadata[0].labels["app"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributePath(pub Vec<PathStep>);

impl AttributePath {
    pub fn root(name: &str) -> AttributePath {
        AttributePath(vec![PathStep::Attribute(name.to_string())])
    }

    pub fn attribute(mut self, name: &str) -> AttributePath {
        self.0.push(PathStep::Attribute(name.to_string()));
        self
    }

    pub fn key(mut self, key: &str) -> AttributePath {
        self.0.push(PathStep::Key(key.to_string()));
        self
    }

    pub fn index(mut self, index: i64) -> AttributePath {
        self.0.push(PathStep::Index(index));
        self
    }

    /// The path as SDKv2 writes it: `spec.0.selector`, `metadata.0.labels.app`.
    pub fn sdk(&self) -> String {
        let steps: Vec<String> = self
            .0
            .iter()
            .map(|step| match step {
                PathStep::Attribute(s) | PathStep::Key(s) => s.clone(),
                PathStep::Index(n) => n.to_string(),
            })
            .collect();
        steps.join(".")
    }
}

impl fmt::Display for AttributePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                PathStep::Attribute(a) if i == 0 => write!(f, "{a}")?,
                PathStep::Attribute(a) => write!(f, ".{a}")?,
                PathStep::Key(k) => write!(f, "[{k:?}]")?,
                PathStep::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub attribute: Option<AttributePath>,
}

impl Diagnostic {
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    pub fn at(mut self, path: AttributePath) -> Diagnostic {
        self.attribute = Some(path);
        self
    }
}

/// An ordered list of diagnostics; it "has errors" when any is an error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Diagnostics {
        Diagnostics(iter.into_iter().collect())
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}
