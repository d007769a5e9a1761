//! Replaying one recording of [`super::record`] (`fixtures/hashicorp-3.2.1/corpus/<type>/`):
//! its objects created as hashicorp's apply created them, under a tag of this run; its state,
//! given their uids and resource versions; `replace-provider`; a first plan that only stamps
//! the estate label; one apply; every object labelled; an empty plan.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::record::PLACEHOLDER;
use super::{create_as, fixtures, try_move_in, with_live_uids};
use crate::Cluster;
use crate::hcl::{LiveDir, unique_name};
use crate::objects::{Target, kubectl_target};

/// The recorded types: the folders of `fixtures/hashicorp-3.2.1/corpus/`, in name order.
pub fn recorded() -> Vec<PathBuf> {
    let dir = fixtures().join("corpus");
    let mut found: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("terraform.tfstate").is_file())
        .collect();
    found.sort();
    found
}

/// Moves the recording in `dir` in on `cluster`; says what went wrong otherwise.
pub fn replay(cluster: &Cluster, dir: &Path) -> Result<(), String> {
    let run = unique_name("r").replace('-', "");
    let read = |name: &str| {
        fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
            .replace(PLACEHOLDER, &run)
    };
    let objects: Vec<Value> = serde_json::from_str(&read("objects.json")).expect("objects.json");
    let recorded: Value = serde_json::from_str(&read("terraform.tfstate")).expect("the state");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&read("main.tf"));

    let targets: Vec<Target> = recorded["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .flat_map(|r| {
            let type_name = r["type"].as_str().unwrap_or_default().to_string();
            r["instances"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |i| kubectl_target(&type_name, &i["attributes"]))
                .collect::<Vec<_>>()
        })
        .collect();
    let _cleanup = Cleanup(cluster, &targets);
    create_as(cluster, work.path(), &objects, "HashiCorp")?;
    let state = with_live_uids(cluster, &recorded);
    fs::write(work.path().join("terraform.tfstate"), state.to_string()).expect("terraform.tfstate");

    try_move_in(&work, targets.len())?;
    let apply = work.apply();
    if !apply.success() {
        return Err(format!("the stamp's apply failed:\n{apply}"));
    }
    let mut unlabelled = Vec::new();
    for (kind, ns, name) in &targets {
        let mut args = vec![kind.as_str(), name.as_str()];
        if let Some(ns) = ns {
            args.extend(["-n", ns.as_str()]);
        }
        let live = cluster.get_json(&args);
        if live["metadata"]["labels"]["tofu-estate"] != estate.as_str() {
            unlabelled.push(format!("{kind}/{name}"));
        }
    }
    if !unlabelled.is_empty() {
        return Err(format!("not labelled after the stamp: {unlabelled:?}"));
    }
    let again = work.plan_exit();
    if again.code != 0 {
        return Err(format!("the plan after the stamp is not empty:\n{again}"));
    }
    Ok(())
}

/// Deletes the objects of a replay (without waiting), however it ends.
struct Cleanup<'a>(&'a Cluster, &'a [Target]);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for (kind, ns, name) in self.1 {
            let mut args = vec![
                "delete",
                kind.as_str(),
                name.as_str(),
                "--wait=false",
                "--ignore-not-found",
            ];
            if let Some(ns) = ns {
                args.extend(["-n", ns.as_str()]);
            }
            let _ = self.0.kubectl(&args);
        }
    }
}
