//! Neighbours: two estates apply into one namespace at the same time, some objects under the
//! same names and some named by the server (`generate_name`). Neither adopts, updates or
//! deletes the other's objects: a name both want goes to whichever created it first, and the
//! other's apply refuses it naming the owner. Both converge once the loser lets go of the name.
//! Requests wait up to 300 ms in a proxy, as on a remote control plane, so both estates look at
//! a name before either has created it.

use std::collections::BTreeSet;
use std::time::Duration;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use fault_proxy::{FaultPlan, FaultProxy};
use serde_json::Value;

/// Names both estates want, names only one wants, and creates the server names, each.
const SHARED: usize = 40;
const OWN: usize = 40;
const GENERATED: usize = 20;

/// An estate's ConfigMaps in `ns`: `shared` (a set of `shared-<i>` names), `own-<estate>-<i>`
/// and `gen-<estate>-…`, each recording in `data.estate` which estate wrote it.
fn config(estate: &str, ns: &str, shared: &BTreeSet<String>) -> String {
    let shared: Vec<String> = shared.iter().map(|n| quote(n)).collect();
    format!(
        r#"locals {{
  ns     = {ns}
  estate = {estate}
}}

resource "kubernetes_config_map_v1" "shared" {{
  for_each = toset([{shared}])
  metadata {{
    name      = each.key
    namespace = local.ns
  }}
  data = {{ estate = local.estate }}
}}

resource "kubernetes_config_map_v1" "own" {{
  count = {OWN}
  metadata {{
    name      = "own-${{local.estate}}-${{count.index}}"
    namespace = local.ns
  }}
  data = {{ estate = local.estate }}
}}

resource "kubernetes_config_map_v1" "generated" {{
  count = {GENERATED}
  metadata {{
    generate_name = "gen-${{local.estate}}-"
    namespace     = local.ns
  }}
  data = {{ estate = local.estate }}
}}
"#,
        ns = quote(ns),
        estate = quote(estate),
        shared = shared.join(", "),
    )
}

/// The ConfigMaps of `ns` by name: (estate label, `data.estate`).
fn config_maps(cluster: &Cluster, ns: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let list = cluster.get_json(&["configmaps", "-n", ns]);
    let text = |v: &Value| v.as_str().map(str::to_string);
    list["items"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|o| {
            (
                text(&o["metadata"]["name"]).unwrap_or_default(),
                text(&o["metadata"]["labels"]["tofu-estate"]),
                text(&o["data"]["estate"]),
            )
        })
        .filter(|(name, _, _)| name != "kube-root-ca.crt")
        .collect()
}

#[test]
fn two_estates_in_one_namespace_never_touch_each_others_objects() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "nbr");
    let ns = ns.name.as_str();
    let shared: BTreeSet<String> = (0..SHARED).map(|i| format!("shared-{i}")).collect();
    let estates = [unique_name("east"), unique_name("west")];
    let slow = FaultPlan {
        latency: Duration::from_millis(300),
        ..FaultPlan::none(4)
    };
    let proxy = FaultProxy::start(cluster.kubeconfig(), slow);
    let folder = tempfile::tempdir().expect("a folder");
    let kubeconfig = folder.path().join("proxy.kubeconfig");
    proxy.write_kubeconfig(&kubeconfig);
    let dirs: Vec<LiveDir> = estates
        .iter()
        .map(|estate| {
            let dir = LiveDir::new(estate, &kubeconfig);
            dir.write(&config(estate, ns, &shared));
            dir
        })
        .collect();

    let applied: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = dirs
            .iter()
            .map(|dir| {
                s.spawn(|| {
                    dir.engine()
                        .run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("an apply")).collect()
    });

    let objects = config_maps(&cluster, ns);
    for (name, label, data) in &objects {
        let label = label
            .as_deref()
            .unwrap_or_else(|| panic!("{name} has no estate label"));
        assert_eq!(
            data.as_deref(),
            Some(label),
            "{name}, labelled for estate {label}, holds another estate's data"
        );
    }
    let mut won: Vec<BTreeSet<String>> = vec![BTreeSet::new(), BTreeSet::new()];
    for (i, estate) in estates.iter().enumerate() {
        let mine: Vec<&String> = objects
            .iter()
            .filter(|(_, label, _)| label.as_deref() == Some(estate.as_str()))
            .map(|(name, _, _)| name)
            .collect();
        let count = |prefix: &str| mine.iter().filter(|n| n.starts_with(prefix)).count();
        assert_eq!(
            count(&format!("own-{estate}-")),
            OWN,
            "estate {estate}'s own objects"
        );
        assert_eq!(
            count(&format!("gen-{estate}-")),
            GENERATED,
            "estate {estate}'s generated objects"
        );
        won[i] = mine
            .iter()
            .filter(|n| n.starts_with("shared-"))
            .map(|n| n.to_string())
            .collect();
    }
    assert_eq!(
        &won[0] | &won[1],
        shared,
        "each shared name goes to one estate:\n{}\n{}",
        applied[0],
        applied[1]
    );
    assert_eq!(objects.len(), 2 * (OWN + GENERATED) + SHARED, "no duplicate");

    // The loser of a name was refused it, naming the owner; nothing else failed.
    for (i, out) in applied.iter().enumerate() {
        let other = &estates[1 - i];
        let lost = won[1 - i].len();
        let text = format!("{}{}", out.stdout, out.stderr);
        if lost == 0 {
            assert!(out.success(), "estate {} lost no name, yet:\n{out}", estates[i]);
            continue;
        }
        assert!(
            !out.success(),
            "estate {} applied names estate {other} holds:\n{out}",
            estates[i]
        );
        let refusals = text
            .matches(&format!("carries the label tofu-estate={other}"))
            .count();
        assert_eq!(
            refusals, lost,
            "one refusal naming estate {other} per name lost:\n{out}"
        );
    }

    // Each lets go of the names it lost: both converge, and a destroy takes only its own.
    for (i, dir) in dirs.iter().enumerate() {
        dir.write(&config(&estates[i], ns, &won[i]));
        dir.apply_ok("after letting go of the names the neighbour holds");
        let plan = dir.plan_exit();
        assert_eq!(plan.code, 0, "estate {} did not converge:\n{plan}", estates[i]);
    }
    let destroyed = dirs[0].run(&["destroy", "-auto-approve", "-input=false", "-parallelism=10"]);
    assert!(destroyed.success(), "{destroyed}");
    let left = config_maps(&cluster, ns);
    assert!(
        left.iter()
            .all(|(_, label, _)| label.as_deref() == Some(estates[1].as_str())),
        "the destroy of estate {} left objects or took its neighbour's: {left:?}",
        estates[0]
    );
    assert_eq!(
        left.len(),
        OWN + GENERATED + won[1].len(),
        "estate {}'s objects",
        estates[1]
    );
    let destroyed = dirs[1].run(&["destroy", "-auto-approve", "-input=false", "-parallelism=10"]);
    assert!(destroyed.success(), "{destroyed}");
    assert_eq!(config_maps(&cluster, ns), Vec::new(), "left over");
}

/// Names in `dir`'s state of the ConfigMaps it manages.
fn names_in_state(dir: &LiveDir) -> BTreeSet<String> {
    dir.state_instances()
        .values()
        .filter_map(|i| {
            i.stored["attributes"]["metadata"][0]["name"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// The same with two workspaces of one estate (a user's mistake): what one creates while the
/// other runs is refused by the other, saying two states claim one estate, and a destroy of
/// either never deletes what the other created.
#[test]
fn two_states_of_one_estate_are_told_so_and_never_delete_each_others_objects() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "twin");
    let ns = ns.name.as_str();
    let estate = unique_name("twin");
    let shared: BTreeSet<String> = (0..SHARED).map(|i| format!("shared-{i}")).collect();
    let slow = FaultPlan {
        latency: Duration::from_millis(300),
        ..FaultPlan::none(5)
    };
    let proxy = FaultProxy::start(cluster.kubeconfig(), slow);
    let folder = tempfile::tempdir().expect("a folder");
    let kubeconfig = folder.path().join("proxy.kubeconfig");
    proxy.write_kubeconfig(&kubeconfig);
    let dirs: Vec<LiveDir> = (0..2)
        .map(|_| {
            let dir = LiveDir::new(&estate, &kubeconfig);
            dir.write(&config(&estate, ns, &shared));
            dir
        })
        .collect();
    let applied: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = dirs
            .iter()
            .map(|dir| {
                s.spawn(|| {
                    dir.engine()
                        .run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("an apply")).collect()
    });

    let objects = config_maps(&cluster, ns);
    assert_eq!(
        objects.len(),
        SHARED + OWN + 2 * GENERATED,
        "each name once, and each workspace's generated objects"
    );
    let states: Vec<BTreeSet<String>> = dirs.iter().map(names_in_state).collect();
    let claimed_twice: BTreeSet<&String> = states[0].intersection(&states[1]).collect();
    let refusals: usize = applied
        .iter()
        .map(|out| {
            let text = format!("{}{}", out.stdout, out.stderr).replace('│', " ");
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let told = text.matches("Two states claim one estate").count();
            assert_eq!(
                told,
                text.matches(&format!("was created by another apply of estate \"{estate}\""))
                    .count(),
                "{out}"
            );
            told
        })
        .sum();
    assert!(
        refusals > 0,
        "neither apply noticed the other:\n{}\n{}",
        applied[0],
        applied[1]
    );
    // Both runs began before either created anything: no object is in both states.
    assert_eq!(claimed_twice, BTreeSet::new(), "adopted by both states");
    say(&format!(
        "two states of one estate: {refusals} objects refused as the other's, none in both states"
    ));

    // A destroy of the second leaves everything the first created in place.
    let destroyed = dirs[1].run(&["destroy", "-auto-approve", "-input=false", "-parallelism=10"]);
    assert!(destroyed.success(), "{destroyed}");
    let left: BTreeSet<String> = config_maps(&cluster, ns).into_iter().map(|(n, _, _)| n).collect();
    let lost: Vec<&String> = states[0].iter().filter(|n| !left.contains(*n)).collect();
    assert!(
        lost.is_empty(),
        "the second state's destroy deleted the first's objects: {lost:?}"
    );
    dirs[0].run(&["destroy", "-auto-approve", "-input=false", "-parallelism=10"]);
}

fn say(line: &str) {
    eprintln!("neighbours: {line}");
}
