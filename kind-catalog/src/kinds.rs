//! Every GA kind the API server lets a client create (`reference/discovery.tsv`, its discovery),
//! accounted for: a type of hashicorp's (`types.tsv`), a type beyond 3.4.0 (`new_types.tsv`), or
//! a `kind` row of `beyond.tsv` saying why it has none. A kind the server serves that none of
//! them names, or a name that matches no kind the server serves, stops `make catalog`: the list
//! follows the server, never memory.

use crate::beyond::{Rules, rows};
use crate::inputs::{Error, TypeRow, read, reference, types};
use crate::{NEW_TYPES, REFERENCE, TYPES};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const DISCOVERY: &str = "reference/discovery.tsv";

/// What a GA kind is in `choudoufu/live`.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// A type of hashicorp/kubernetes 3.4.0.
    Hashicorp(String),
    /// A type beyond 3.4.0.
    New(String),
    /// No type, with why.
    LeftOut(String),
}

/// One GA kind the server creates: `api_version/Kind` and what it is here.
pub(crate) struct Kind {
    pub(crate) name: String,
    pub(crate) outcome: Outcome,
}

/// Every GA kind the server creates, in discovery order.
pub(crate) fn kinds(root: &Path, rules: &Rules) -> Result<Vec<Kind>, Error> {
    let discovery = read(root, DISCOVERY)?;
    let typed = |file: &'static str| -> Result<Vec<TypeRow>, Error> { types(file, &read(root, file)?) };
    let own: BTreeSet<String> = reference(&read(root, REFERENCE)?, "resource")
        .into_keys()
        .collect();
    account(
        &discovery,
        (&typed(TYPES)?, &own),
        &typed(NEW_TYPES)?,
        &rules.kinds,
    )
}

/// The kinds of `discovery`, each with its type: `hashicorp`'s of types.tsv, or one of its
/// schema the provider's own code serves (`type:` rows of `left`), or a `new` one, or why not.
fn account(
    discovery: &str,
    hashicorp: (&[TypeRow], &BTreeSet<String>),
    new: &[TypeRow],
    left: &BTreeMap<String, String>,
) -> Result<Vec<Kind>, Error> {
    let (hashicorp, own) = hashicorp;
    let first_type = |rows: &[TypeRow], name: &str| {
        rows.iter()
            .find(|t| format!("{}/{}", t.api_version, t.kind) == name)
            .map(|t| t.name.clone())
    };
    let mut out = Vec::new();
    let (mut unaccounted, mut unknown) = (Vec::new(), Vec::new());
    for (line, cols) in rows(discovery) {
        let [api_version, kind, _plural, _scope, verbs] = cols[..] else {
            return Err(Error::Input {
                file: DISCOVERY,
                line,
                message: format!("expected 5 tab-separated columns, found {}", cols.len()),
            });
        };
        let verbs: Vec<&str> = verbs.split(',').collect();
        if !verbs.contains(&"create") {
            continue;
        }
        let name = format!("{api_version}/{kind}");
        let outcome = if let Some(ty) = first_type(hashicorp, &name) {
            Outcome::Hashicorp(ty)
        } else if let Some(ty) = first_type(new, &name) {
            Outcome::New(ty)
        } else if let Some(why) = left.get(&name) {
            match why.strip_prefix("type:") {
                Some(ty) if own.contains(ty) => Outcome::Hashicorp(ty.to_string()),
                Some(ty) => {
                    unknown.push(ty.to_string());
                    continue;
                }
                None => Outcome::LeftOut(why.clone()),
            }
        } else if !verbs.contains(&"get") {
            Outcome::LeftOut("not stored: the server answers the create and keeps nothing".into())
        } else {
            unaccounted.push(name);
            continue;
        };
        out.push(Kind { name, outcome });
    }
    let stale: Vec<String> = left
        .keys()
        .filter(|k| !out.iter().any(|kind| &kind.name == *k))
        .cloned()
        .chain(unknown)
        .collect();
    if unaccounted.is_empty() && stale.is_empty() {
        return Ok(out);
    }
    Err(Error::Kinds { unaccounted, stale })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, api_version: &str, kind: &str) -> TypeRow {
        TypeRow {
            line: 1,
            name: name.into(),
            aliases: "-".into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: "-".into(),
            scope: "cluster".into(),
            schema: "-".into(),
        }
    }

    const DISCOVERY: &str = "v1\tPod\tpods\tnamespaced\tcreate,delete,get\n\
        apps/v1\tReplicaSet\treplicasets\tnamespaced\tcreate,get\n\
        storage.k8s.io/v1\tVolumeAttributesClass\tvolumeattributesclasses\tcluster\tcreate,get\n\
        authorization.k8s.io/v1\tSubjectAccessReview\tsubjectaccessreviews\tcluster\tcreate\n\
        v1\tComponentStatus\tcomponentstatuses\tcluster\tget,list\n";

    #[test]
    fn every_kind_the_server_creates_is_accounted_for() {
        let hashicorp = [row("kubernetes_pod_v1", "v1", "Pod")];
        let new = [row(
            "kubernetes_volume_attributes_class_v1",
            "storage.k8s.io/v1",
            "VolumeAttributesClass",
        )];
        let left = BTreeMap::from([("apps/v1/ReplicaSet".to_string(), "a Deployment's".to_string())]);
        let own = BTreeSet::new();
        let kinds = account(DISCOVERY, (&hashicorp, &own), &new, &left).expect("accounted");
        let outcomes: Vec<(&str, &Outcome)> = kinds.iter().map(|k| (k.name.as_str(), &k.outcome)).collect();
        assert_eq!(outcomes.len(), 4, "ComponentStatus is not created: {outcomes:?}");
        assert_eq!(
            outcomes[0],
            ("v1/Pod", &Outcome::Hashicorp("kubernetes_pod_v1".into()))
        );
        assert_eq!(
            outcomes[1],
            ("apps/v1/ReplicaSet", &Outcome::LeftOut("a Deployment's".into()))
        );
        assert!(matches!(outcomes[2].1, Outcome::New(_)));
        assert!(matches!(outcomes[3].1, Outcome::LeftOut(why) if why.starts_with("not stored")));
    }

    #[test]
    fn a_kind_without_a_type_or_a_reason_and_a_stale_reason_stop_the_catalog() {
        let (none, own) = (BTreeMap::new(), BTreeSet::from(["kubernetes_pod_v1".to_string()]));
        let err = account(DISCOVERY, (&[], &own), &[], &none)
            .err()
            .expect("unaccounted kinds");
        assert!(err.to_string().contains("v1/Pod"), "{err}");
        let stale = BTreeMap::from([("v1/Gone".to_string(), "x".to_string())]);
        let hashicorp = [
            row("kubernetes_pod_v1", "v1", "Pod"),
            row("a", "apps/v1", "ReplicaSet"),
            row("b", "storage.k8s.io/v1", "VolumeAttributesClass"),
        ];
        let err = account(DISCOVERY, (&hashicorp, &own), &[], &stale)
            .err()
            .expect("a stale row");
        assert!(err.to_string().contains("v1/Gone"), "{err}");
        let typed = BTreeMap::from([("v1/Pod".to_string(), "type:kubernetes_pod_v1".to_string())]);
        let kinds =
            account(DISCOVERY, (&hashicorp[1..], &own), &[], &typed).expect("the provider's own type");
        assert_eq!(kinds[0].outcome, Outcome::Hashicorp("kubernetes_pod_v1".into()));
        let typo = BTreeMap::from([("v1/Pod".to_string(), "type:kubernetes_pods".to_string())]);
        let err = account(DISCOVERY, (&hashicorp[1..], &own), &[], &typo)
            .err()
            .expect("no such type");
        assert!(err.to_string().contains("kubernetes_pods"), "{err}");
    }
}
