//! The fields beyond hashicorp/kubernetes 3.4.0 (`make catalog` generates them: their docs start
//! "Beyond hashicorp/kubernetes 3.4.0."): hashicorp's binary has no such attribute, so any
//! difference at one of them, or under one, is ours by design. Rows of the kind catalogs become
//! `allowed` rows of [`super::known`], with list indices where the catalog has blocks.

use std::collections::BTreeMap;

use super::known::Known;
use crate::beyond::{DATA_SOURCES, RESOURCES, catalog, field_rows};

/// The reason of every generated row.
pub const REASON: &str = "beyond hashicorp/kubernetes 3.4.0 (docs/beyond-3.4.0.md)";

/// An `allowed` row for every generated field of the catalogs, and one for what lies under it.
pub fn rows() -> Vec<Known> {
    [RESOURCES, DATA_SOURCES]
        .iter()
        .flat_map(|file| rows_of(&catalog(file)))
        .collect()
}

/// [`rows`] of one catalog's text.
fn rows_of(catalog: &str) -> Vec<Known> {
    let fields = field_rows(catalog);
    // (type, Terraform path) -> shape, to tell blocks (a list: an index follows) from the rest.
    let shapes: BTreeMap<(&str, &str), &str> = fields
        .iter()
        .map(|f| ((f.type_name.as_str(), f.path.as_str()), f.shape.as_str()))
        .collect();
    let beyond = fields
        .iter()
        .filter(|f| f.beyond)
        .map(|f| (f.type_name.as_str(), f.path.as_str()));
    // A type's aliases (`kubernetes_deployment` of `kubernetes_deployment_v1`) share its rows.
    let aliases: BTreeMap<&str, Vec<&str>> = catalog
        .lines()
        .filter(|l| l.starts_with("kind\t"))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Some((
                *cols.get(1)?,
                cols.get(2)?.split(',').filter(|a| *a != "-").collect(),
            ))
        })
        .collect();
    let mut out = Vec::new();
    for (ty, path) in beyond {
        let segments: Vec<&str> = path.split('.').collect();
        let mut pattern = String::new();
        for (i, segment) in segments.iter().enumerate() {
            pattern.push_str(segment);
            let prefix = segments[..=i].join(".");
            let listed = shapes.get(&(ty, prefix.as_str())).is_some_and(|s| {
                matches!(
                    *s,
                    "object" | "array" | "arrayset" | "array@attr" | "arrayset@attr"
                )
            });
            if i + 1 < segments.len() {
                pattern.push_str(if listed { ".*." } else { "." });
            }
        }
        let names = std::iter::once(ty).chain(aliases.get(ty).into_iter().flatten().copied());
        for (name, pattern) in names.flat_map(|n| [(n, pattern.clone()), (n, format!("{pattern}.**"))]) {
            out.push(Known {
                type_name: name.to_string(),
                stage: "*".to_string(),
                path: pattern,
                difference: "allowed".to_string(),
                reason: REASON.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_field_and_what_lies_under_it_are_allowed_and_nothing_else() {
        let catalog = "kind\tkubernetes_pod_v1\tkubernetes_pod\tv1\tPod\tpods\tnamespaced\n\
             field\tkubernetes_pod_v1\tspec\tspec\tobject\t-\trequired\t-\tPod spec.\n\
             field\tkubernetes_pod_v1\tspec.host_users\thostUsers\tone\tbool\tdefaulted\t-\tBeyond hashicorp/kubernetes 3.4.0. Use the host's user namespace.\n\
             field\tkubernetes_pod_v1\tspec.resize_policy\tresizePolicy\tarray\t-\toptional\t-\tBeyond hashicorp/kubernetes 3.4.0. Resize.\n\
             field\tkubernetes_pod_v1\tspec.container\tcontainers\tarray\t-\trequired\t-\tContainers.\n";
        let rows = rows_of(catalog);
        let covered = |path: &str| {
            rows.iter()
                .any(|r| r.covers("kubernetes_pod_v1", "plan", path, "ours 1; hashicorp 2"))
        };
        assert!(covered("spec.0.host_users"));
        assert!(covered("spec.0.resize_policy"));
        assert!(covered("spec.0.resize_policy.1.resource_name"));
        assert!(!covered("spec.0.container.0.name"));
        assert!(!covered("spec.0.host_users_x"));
        assert!(
            rows.iter()
                .any(|r| r.covers("kubernetes_pod", "state", "spec.0.host_users", "x"))
        );
    }
}
