//! The differences already known (`acceptance/differential/known.tsv`), so that a run reports
//! them as documented rather than as failures. Columns: resource type, stage, attribute path
//! (globs: `*` within one path segment, `**` across segments; list indices are written `*`),
//! the difference (a glob over `ours X; hashicorp Y` as the report writes it), and its reason
//! or issue. A difference written `volatile` is one a second
//! apply of hashicorp's own would show too (uids, resource versions, allocated addresses), one
//! written `allowed` is ours by design (the `estate` attribute): neither counts as a difference.

use std::fs;
use std::path::PathBuf;

use super::compare::{generalised, matches};
use crate::paths::workspace_root;

/// One row of `known.tsv`.
#[derive(Debug, Clone)]
pub struct Known {
    pub type_name: String,
    pub stage: String,
    pub path: String,
    pub difference: String,
    pub reason: String,
}

impl Known {
    /// Not a difference between the providers: `volatile` (both would show it between two of
    /// their own applies) or `allowed` (ours by design).
    pub fn ignored(&self) -> bool {
        matches!(self.difference.as_str(), "volatile" | "allowed")
    }

    /// Whether it documents a difference at `path` of a `type_name` at `stage` that reads
    /// `difference` (`ours X; hashicorp Y`): the row's difference is a glob over that text,
    /// unless it is `volatile` or `allowed`, which take any.
    pub fn covers(&self, type_name: &str, stage: &str, path: &str, difference: &str) -> bool {
        matches(&self.type_name, type_name)
            && (self.stage == "*" || self.stage == stage)
            && matches(&self.path, &generalised(path))
            && (self.ignored() || matches(&self.difference, difference))
    }
}

/// `acceptance/differential/known.tsv`.
pub fn file() -> PathBuf {
    workspace_root().join("acceptance/differential/known.tsv")
}

/// The rows of [`file()`] (none when it is missing).
pub fn load() -> Vec<Known> {
    parse(&fs::read_to_string(file()).unwrap_or_default())
}

/// The rows of a `known.tsv` text (comments and blank lines left out).
pub fn parse(text: &str) -> Vec<Known> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let col = |i: usize| cols.get(i).map_or("", |c| c.trim()).to_string();
            Known {
                type_name: col(0),
                stage: col(1),
                path: col(2),
                difference: col(3),
                reason: col(4),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_by_type_stage_and_generalised_path() {
        let known = parse(
            "# comment\n*\t*\t**.uid\tvolatile\tnew on every create\n\
             kubernetes_service*\tstate\tspec.*.port.*.node_port\tvolatile\tallocated\n",
        );
        let any = "ours 1; hashicorp 2";
        assert!(known[0].covers("kubernetes_pod_v1", "plan", "metadata.0.uid", any) && known[0].ignored());
        assert!(known[1].covers("kubernetes_service_v1", "state", "spec.0.port.1.node_port", any));
        assert!(!known[1].covers("kubernetes_service_v1", "plan", "spec.0.port.1.node_port", any));
        let zero = parse("*\tplan\t**\tours \"\"; hashicorp null\tzero values\n");
        assert!(zero[0].covers(
            "kubernetes_pod_v1",
            "plan",
            "spec.0.x",
            "ours \"\"; hashicorp null"
        ));
        assert!(!zero[0].covers(
            "kubernetes_pod_v1",
            "plan",
            "spec.0.x",
            "ours \"a\"; hashicorp null"
        ));
    }
}
