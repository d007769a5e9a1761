//! The estate a provider block names, and the label that stamps it on objects.
//!
//! An estate name is both a label value (`tofu-estate=<estate>`) and part of a namespace
//! name (`tofu-records-<estate>`), so it must satisfy both: a DNS-1123 label short enough
//! that the records namespace name still fits in 63 characters.

use std::fmt;

/// The label every object managed by an estate carries.
pub const ESTATE_LABEL: &str = "tofu-estate";

/// Prefix of the namespace an estate's recorded outputs live in.
pub const RECORDS_NAMESPACE_PREFIX: &str = "tofu-records-";

/// Longest name Kubernetes accepts for a label value or a namespace.
const MAX_NAME: usize = 63;

/// A valid estate name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estate(String);

/// Why a string is not an estate name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("estate {given:?} is not a valid Kubernetes label value: {reason}")]
pub struct EstateError {
    /// The name as the provider block gave it.
    pub given: String,
    /// Which rule it breaks.
    pub reason: String,
}

impl Estate {
    /// Parses an estate name: 1 to 50 characters of lowercase letters, digits and '-',
    /// starting and ending with a letter or digit.
    pub fn parse(s: &str) -> Result<Estate, EstateError> {
        let fail = |reason: String| EstateError {
            given: s.to_string(),
            reason,
        };
        let max = MAX_NAME - RECORDS_NAMESPACE_PREFIX.len();
        if s.is_empty() {
            return Err(fail("it must not be empty".into()));
        }
        if s.len() > max {
            return Err(fail(format!(
                "it is {} characters long, at most {max} are allowed (so that the namespace \
                 \"{RECORDS_NAMESPACE_PREFIX}<estate>\" fits in {MAX_NAME})",
                s.len()
            )));
        }
        if let Some(c) = s
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            return Err(fail(format!(
                "character {c:?} is not allowed: use lowercase letters, digits and '-' only"
            )));
        }
        if s.starts_with('-') || s.ends_with('-') {
            return Err(fail("it must start and end with a letter or digit".into()));
        }
        Ok(Estate(s.to_string()))
    }

    /// The name, as label selectors and namespace names use it.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Label selector matching this estate's objects: `tofu-estate=<estate>`.
    pub fn selector(&self) -> String {
        format!("{ESTATE_LABEL}={}", self.0)
    }

    /// Label selector matching every object that is not this estate's: unlabelled ones and
    /// other estates' (`tofu-estate!=<estate>` also matches objects without the label).
    pub fn others_selector(&self) -> String {
        format!("{ESTATE_LABEL}!={}", self.0)
    }

    /// The namespace this estate's outputs are recorded in: `tofu-records-<estate>`.
    pub fn records_namespace(&self) -> String {
        format!("{RECORDS_NAMESPACE_PREFIX}{}", self.0)
    }
}

impl fmt::Display for Estate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_dns_labels() {
        for ok in ["network", "app", "a", "app-2", "0abc", &"x".repeat(50)] {
            let e = Estate::parse(ok).unwrap();
            assert_eq!(e.as_str(), ok);
        }
        let e = Estate::parse("network").unwrap();
        assert_eq!(e.selector(), "tofu-estate=network");
        assert_eq!(e.records_namespace(), "tofu-records-network");
        assert_eq!(e.to_string(), "network");
    }

    #[test]
    fn rejects_bad_names_saying_why() {
        let cases = [
            ("", "must not be empty"),
            ("Bad_Estate!", "character 'B' is not allowed"),
            ("net_work", "character '_' is not allowed"),
            ("net.work", "character '.' is not allowed"),
            ("-net", "start and end"),
            ("net-", "start and end"),
        ];
        for (bad, why) in cases {
            let err = Estate::parse(bad).unwrap_err();
            let text = err.to_string();
            assert!(text.starts_with(&format!("estate {bad:?} is not a valid Kubernetes label value: ")));
            assert!(text.contains(why), "{text}");
        }
        let long = "x".repeat(51);
        let err = Estate::parse(&long).unwrap_err().to_string();
        assert!(err.contains("51 characters long, at most 50"), "{err}");
        assert!(Estate::parse(&"x".repeat(64)).is_err());
    }
}
