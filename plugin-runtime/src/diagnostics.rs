//! Diagnostics: what the engine shows a user, with the attribute path it is about.
//!
//! Providers keep their own typed errors and turn them into [`Diagnostic`]s at one
//! boundary (a `From` impl); the runtime only carries them to the wire.

use std::fmt;

/// Whether a diagnostic ends the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The operation failed.
    Error,
    /// Shown to the user; the operation goes on.
    Warning,
}

/// One step of an attribute path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// An attribute or nested block by name (`.labels`).
    Attribute(String),
    /// A map element by key (`["app"]`).
    Key(String),
    /// A list element by position (`[0]`).
    Index(i64),
}

/// Where in a configuration or state a diagnostic points, e.g. `metadata[0].labels["app"]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributePath(pub Vec<PathStep>);

impl AttributePath {
    /// The path to a top-level attribute.
    pub fn root(name: &str) -> AttributePath {
        AttributePath(vec![PathStep::Attribute(name.to_string())])
    }

    /// One attribute deeper.
    pub fn attribute(mut self, name: &str) -> AttributePath {
        self.0.push(PathStep::Attribute(name.to_string()));
        self
    }

    /// One map element deeper.
    pub fn key(mut self, key: &str) -> AttributePath {
        self.0.push(PathStep::Key(key.to_string()));
        self
    }

    /// One list element deeper.
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

/// One message for the user, as the engine prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The one-line headline.
    pub summary: String,
    /// The explanation under it: what happened and what to do.
    pub detail: String,
    /// The attribute it is about, which the engine underlines in the configuration.
    pub attribute: Option<AttributePath>,
}

impl Diagnostic {
    /// An error, not yet pointing at an attribute.
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    /// A warning, not yet pointing at an attribute.
    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            summary: summary.into(),
            detail: detail.into(),
            attribute: None,
        }
    }

    /// The diagnostic, pointing at `path`.
    pub fn at(mut self, path: AttributePath) -> Diagnostic {
        self.attribute = Some(path);
        self
    }
}

/// An ordered list of diagnostics; it "has errors" when any is an error.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// No diagnostics: a call that went well.
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    /// Adds one at the end.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Adds all of `other` at the end, in order.
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// Whether any is an error, which fails the call.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }

    /// Whether there are none at all.
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
