//! The differential harness: the acceptance corpus run through its whole life once with each of
//! two provider binaries (ours from the mirror, hashicorp's own through `dev_overrides`), under
//! the same engine on the same cluster, one after the other, each side's names carrying its own
//! run tag. It compares, configuration by configuration:
//!
//! - the plan from nothing: actions, planned values, which values are unknown;
//! - the state after apply, attribute by attribute;
//! - the next plan (what it would change, when it is not empty);
//! - the state after every object was forgotten and imported again (what import adds to the
//!   differences of apply);
//! - destroy: its errors, and which objects remain.
//!
//! A side's run tag and ours's estate are never compared. Differences listed in
//! `acceptance/differential/known.tsv` ([`known`]) are reported as documented, those marked
//! `volatile` (what a second apply of hashicorp's own would show too) or `allowed` (ours's
//! `estate`) not at all.

mod beyond;
pub mod compare;
pub mod known;
mod report;
pub(crate) mod side;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::Cluster;
use crate::corpus::Module;
use compare::{differences, flatten, planned, shown, untagged};
use known::Known;
pub use report::Report;
pub use side::{Life, Provider};

/// A step of the life that the two sides are compared at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Plan,
    Apply,
    State,
    NextPlan,
    Import,
    Destroy,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::Plan,
        Stage::Apply,
        Stage::State,
        Stage::NextPlan,
        Stage::Import,
        Stage::Destroy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Plan => "plan",
            Stage::Apply => "apply",
            Stage::State => "state",
            Stage::NextPlan => "next-plan",
            Stage::Import => "import",
            Stage::Destroy => "destroy",
        }
    }
}

/// One leaf where the two sides differ.
#[derive(Debug, Clone)]
pub struct Difference {
    pub stage: Stage,
    /// The configuration (corpus file) it belongs to: the module name.
    pub module: String,
    pub type_name: String,
    pub address: String,
    /// The attribute path (`spec.0.port.0.node_port`), or what else differs: `(resource)`,
    /// `(actions)`, `(error)`, `(object)`.
    pub path: String,
    pub ours: String,
    pub theirs: String,
    /// The `known.tsv` row that documents it.
    pub known: Option<Known>,
}

/// Runs `modules_of(tag)` (the corpus, names made unique with `tag`) with `theirs`, then with
/// `ours`, on `cluster`, and compares the two lives.
pub fn run(
    cluster: &Cluster,
    ours: &Provider,
    theirs: &Provider,
    modules_of: &dyn Fn(&str) -> Vec<Module>,
) -> Report {
    let tag = |side: &str| crate::hcl::unique_name(side).replace('-', "");
    let (their_tag, our_tag) = (tag("h"), tag("o"));
    let modules = modules_of(&their_tag);
    let theirs_life = side::live(theirs, cluster, &modules, &their_tag);
    let ours_life = side::live(ours, cluster, &modules_of(&our_tag), &our_tag);
    // The rows written in known.tsv, then those allowing the fields beyond hashicorp's schema.
    let mut known = known::load();
    known.extend(beyond::rows());
    let found = compare(&ours_life, &theirs_life);
    Report::new(
        (ours.name(), theirs.name()),
        modules.iter().map(|m| m.type_name.clone()).collect(),
        found,
        known,
    )
}

/// Every difference between two lives, volatile ones included (the report leaves them out).
pub fn compare(ours: &Life, theirs: &Life) -> Vec<Difference> {
    let mut found = Vec::new();
    let plan = |life: &Life| -> BTreeMap<String, (String, Value)> {
        changes(&life.plan)
            .map(|c| {
                let values = planned(&untagged(&c["change"], &life.tag));
                let mut leaves: serde_json::Map<String, Value> = values.into_iter().collect();
                leaves.insert("(actions)".into(), c["change"]["actions"].clone());
                (address(c), (kind(c), Value::Object(leaves)))
            })
            .collect()
    };
    found.extend(leaves(Stage::Plan, &plan(ours), &plan(theirs)));
    found.extend(errors(Stage::Apply, ours, theirs));
    let state = |life: &Life, r: &side::Resources| -> BTreeMap<String, (String, Value)> {
        r.iter()
            .map(|(a, (t, v))| (a.clone(), (t.clone(), flat(&untagged(v, &life.tag)))))
            .collect()
    };
    let applied = leaves(
        Stage::State,
        &state(ours, &ours.applied),
        &state(theirs, &theirs.applied),
    );
    found.extend(leaves(Stage::NextPlan, &next(ours), &next(theirs)));
    found.extend(errors(Stage::Import, ours, theirs));
    // Import: only what it adds to the differences apply already showed.
    let seen: BTreeSet<(String, String, String, String)> = applied
        .iter()
        .map(|d| {
            (
                d.address.clone(),
                d.path.clone(),
                d.ours.clone(),
                d.theirs.clone(),
            )
        })
        .collect();
    let imported = leaves(
        Stage::Import,
        &state(ours, &ours.imported),
        &state(theirs, &theirs.imported),
    );
    found.extend(applied);
    found.extend(imported.into_iter().filter(|d| {
        !seen.contains(&(
            d.address.clone(),
            d.path.clone(),
            d.ours.clone(),
            d.theirs.clone(),
        ))
    }));
    found.extend(errors(Stage::Destroy, ours, theirs));
    let remains = |life: &Life| -> BTreeSet<String> {
        life.remains
            .iter()
            .map(|o| {
                untagged(&Value::from(o.as_str()), &life.tag)
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    let (ours_left, theirs_left) = (remains(ours), remains(theirs));
    for object in ours_left.symmetric_difference(&theirs_left) {
        let left = |set: &BTreeSet<String>| if set.contains(object) { "remains" } else { "gone" }.to_string();
        found.push(Difference {
            stage: Stage::Destroy,
            module: String::new(),
            type_name: object.split(' ').next().unwrap_or_default().to_string(),
            address: object.clone(),
            path: "(object)".into(),
            ours: left(&ours_left),
            theirs: left(&theirs_left),
            known: None,
        });
    }
    found
}

/// A plan's resource changes.
fn changes(plan: &Value) -> impl Iterator<Item = &Value> {
    plan["resource_changes"].as_array().into_iter().flatten()
}

fn address(change: &Value) -> String {
    change["address"].as_str().unwrap_or_default().to_string()
}

fn kind(change: &Value) -> String {
    change["type"].as_str().unwrap_or_default().to_string()
}

/// `value`'s leaves as one flat JSON object.
fn flat(value: &Value) -> Value {
    Value::Object(flatten(value).into_iter().collect())
}

/// What the next plan would change, by address: each changed leaf as `before -> after`, and
/// the actions.
fn next(life: &Life) -> BTreeMap<String, (String, Value)> {
    changes(&life.next_plan)
        .filter(|c| {
            let actions = c["change"]["actions"].as_array().cloned().unwrap_or_default();
            actions.iter().any(|a| a != "no-op" && a != "read")
        })
        .map(|c| {
            let change = untagged(&c["change"], &life.tag);
            let before = flatten(&change["before"]);
            let mut leaves: serde_json::Map<String, Value> = differences(&before, &planned(&change))
                .into_iter()
                .map(|(path, b, a)| (path, Value::from(format!("{} -> {}", shown(&b), shown(&a)))))
                .collect();
            leaves.insert("(actions)".into(), change["actions"].clone());
            (address(c), (kind(c), Value::Object(leaves)))
        })
        .collect()
}

/// The leaf differences of two sides' flat values by address (a missing address is one
/// `(resource)` difference).
fn leaves(
    stage: Stage,
    ours: &BTreeMap<String, (String, Value)>,
    theirs: &BTreeMap<String, (String, Value)>,
) -> Vec<Difference> {
    let addresses: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    let mut found = Vec::new();
    for address in addresses {
        let (o, t) = (ours.get(address), theirs.get(address));
        let type_name = o.or(t).map(|(t, _)| t.clone()).unwrap_or_default();
        let difference = |path: String, ours: String, theirs: String| Difference {
            stage,
            module: module_of(address),
            type_name: type_name.clone(),
            address: address.clone(),
            path,
            ours,
            theirs,
            known: None,
        };
        let leaves = |side: Option<&(String, Value)>| -> BTreeMap<String, Value> {
            side.and_then(|(_, v)| v.as_object())
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        };
        if o.is_none() || t.is_none() {
            let there =
                |s: Option<&(String, Value)>| if s.is_some() { "present" } else { "absent" }.to_string();
            found.push(difference("(resource)".into(), there(o), there(t)));
            continue;
        }
        for (path, a, b) in differences(&leaves(o), &leaves(t)) {
            found.push(difference(path, shown(&a), shown(&b)));
        }
    }
    found
}

/// The errors of `stage` that one side had for an address and the other did not.
fn errors(stage: Stage, ours: &Life, theirs: &Life) -> Vec<Difference> {
    let of = |life: &Life| -> BTreeMap<String, String> {
        let untag = |m: &str| {
            untagged(&Value::from(m), &life.tag)
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        life.errors
            .iter()
            .filter(|(s, _, _)| *s == stage)
            .map(|(_, a, m)| (a.clone(), untag(m)))
            .collect()
    };
    let (o, t) = (of(ours), of(theirs));
    let addresses: BTreeSet<&String> = o.keys().chain(t.keys()).collect();
    addresses
        .into_iter()
        .filter(|a| o.contains_key(*a) != t.contains_key(*a))
        .map(|a| {
            // Whole, not cut as values are: known.tsv tells errors apart by their words.
            let said = |m: &BTreeMap<String, String>| {
                m.get(a)
                    .map_or("ok".to_string(), |e| Value::from(e.as_str()).to_string())
            };
            let type_name = a.rsplit('.').nth(1).unwrap_or_default().to_string();
            Difference {
                stage,
                module: module_of(a),
                type_name,
                address: a.clone(),
                path: "(error)".into(),
                ours: said(&o),
                theirs: said(&t),
                known: None,
            }
        })
        .collect()
}

/// The module (corpus configuration) of `module.<name>.<type>.<label>`.
fn module_of(address: &str) -> String {
    address
        .strip_prefix("module.")
        .and_then(|rest| rest.split('.').next())
        .unwrap_or_default()
        .to_string()
}
