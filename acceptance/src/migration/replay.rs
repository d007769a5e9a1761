//! Replaying one recording of [`super::record`] (`fixtures/hashicorp-3.2.1/corpus/<type>/`):
//! its objects created as hashicorp's apply created them, under a tag of this run; its state,
//! given their uids and resource versions; the move ([`Route`]); a first plan that only stamps
//! the estate label; one apply; every object labelled; an empty plan.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::record::PLACEHOLDER;
use super::{
    create_as, first_plan, fixtures, made_by_cluster, node_ports, on_this_engine, try_move_in, with_live_uids,
};
use crate::hcl::{LiveDir, unique_name};
use crate::objects::{Target, described, kubectl_delete_quietly, kubectl_get, target_of, targets_of};
use crate::{Cluster, corpus, stand_in};

/// The recordings: the folders of `fixtures/hashicorp-3.2.1/corpus/` (one corpus type each)
/// and of `moves/` (one file of `acceptance/corpus-moves/` each), in name order.
pub fn recorded() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ["corpus", "moves"]
        .iter()
        .flat_map(|set| {
            let dir = fixtures().join(set);
            fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.expect("a directory entry").path())
        })
        .filter(|p| p.join("terraform.tfstate").is_file())
        .collect();
    found.sort_by_key(|p| p.file_name().map(|n| n.to_os_string()));
    found
}

/// How a state moves from hashicorp/kubernetes to choudoufu/live.
#[derive(Clone, Copy, Debug)]
pub enum Route {
    /// The whole state at once: `terraform state replace-provider`.
    ReplaceProvider,
    /// One resource at a time, both providers declared: each resource of the state (hashicorp's)
    /// `moved` to one of choudoufu/live's (`provider = live`).
    Moved,
}

/// One recording, read under a run's tag.
struct Recording {
    /// The recorded type, the folder's name.
    name: String,
    /// The objects, in [`creation_order`].
    objects: Vec<Value>,
    state: Value,
    body: String,
}

/// Namespaces first, then service accounts (the token controller deletes a token Secret whose
/// account it cannot find), then the rest.
fn creation_order(object: &Value) -> u8 {
    match object["kind"].as_str() {
        Some("Namespace") => 0,
        Some("ServiceAccount") => 1,
        _ => 2,
    }
}

impl Recording {
    /// The recording in `dir` under the tag `run`, its node ports made `cluster`'s.
    fn read(cluster: &Cluster, dir: &Path, run: &str) -> Recording {
        let read = |name: &str| {
            fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
                .replace(PLACEHOLDER, run)
        };
        let mut objects: Vec<Value> = serde_json::from_str(&read("objects.json")).expect("objects.json");
        objects.sort_by_key(creation_order);
        let mut state = serde_json::from_str(&on_this_engine(&read("terraform.tfstate"))).expect("the state");
        let mut body = read("main.tf");
        node_ports::rehome(cluster, &mut body, &mut objects, &mut state);
        Recording {
            name: dir.file_name().expect("a type").to_string_lossy().into_owned(),
            objects,
            state,
            body,
        }
    }
}

/// Moves the recording in `dir` in on `cluster` by `route`; says what went wrong otherwise.
pub fn replay(cluster: &Cluster, dir: &Path, route: Route) -> Result<(), String> {
    let recording = Recording::read(cluster, dir, &unique_name("r").replace('-', ""));
    let estate = unique_name("est");
    let work = match route {
        Route::ReplaceProvider => {
            let work = LiveDir::new(&estate, cluster.kubeconfig());
            work.write(&recording.body);
            work
        }
        Route::Moved => moved_to_live(cluster, &estate, &recording.body, &recording.state),
    };
    move_in(
        cluster,
        &work,
        &estate,
        route,
        &recording.objects,
        &recording.state,
    )
}

/// Moves every recording of `dirs` in at once, each a module of one configuration with one
/// state (`replace-provider`): what a replay of each checks, with one engine run per step for
/// all of them.
pub fn replay_all(cluster: &Cluster, dirs: &[PathBuf]) -> Result<(), String> {
    let run = unique_name("r").replace('-', "");
    let recordings: Vec<Recording> = dirs.iter().map(|d| Recording::read(cluster, d, &run)).collect();
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let modules: Vec<(&str, &str, String)> = recordings
        .iter()
        .map(|r| (r.name.as_str(), r.body.as_str(), String::new()))
        .collect();
    work.write(&corpus::write_modules(work.path(), "", &modules));
    let init = work.engine().init();
    if !init.success() {
        return Err(format!("init with the modules failed:\n{init}"));
    }
    let first = &recordings.first().ok_or("no recordings")?.state;
    let resources: Vec<Value> = recordings
        .iter()
        .flat_map(|r| {
            let module = format!("module.{}", r.name);
            r.state["resources"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |mut resource| {
                    resource["module"] = Value::from(module.clone());
                    resource
                })
        })
        .collect();
    let state = serde_json::json!({
        "version": first["version"],
        "terraform_version": first["terraform_version"],
        "serial": 1,
        "lineage": first["lineage"],
        "outputs": {},
        "resources": resources,
        "check_results": null,
    });
    let mut objects: Vec<Value> = recordings.into_iter().flat_map(|r| r.objects).collect();
    objects.sort_by_key(creation_order);
    move_in(cluster, &work, &estate, Route::ReplaceProvider, &objects, &state)
}

/// The replay's steps in `work`: `objects` created as hashicorp's apply created them, `state`
/// given their uids, the move by `route`, the first plan, the stamp, every object labelled, an
/// empty plan.
fn move_in(
    cluster: &Cluster,
    work: &LiveDir,
    estate: &str,
    route: Route,
    objects: &[Value],
    state: &Value,
) -> Result<(), String> {
    let targets = targets_of(state["resources"].as_array().expect("resources"));
    let _cleanup = Cleanup(cluster, &targets);
    create_as(cluster, work.path(), objects, "HashiCorp")?;
    let state = with_live_uids(cluster, state);
    fs::write(work.path().join("terraform.tfstate"), state.to_string()).expect("terraform.tfstate");

    // What the stamp labels: the objects there are (hashicorp deletes a signing request once
    // signed, and its state alone keeps the certificate) but those the cluster made.
    let stamped: Vec<Target> = objects
        .iter()
        .filter(|o| !made_by_cluster(o))
        .map(target_of)
        .collect();
    match route {
        Route::ReplaceProvider => try_move_in(work, stamped.len())?,
        Route::Moved => first_plan(work, stamped.len())?,
    }
    stamp(cluster, work, &stamped, estate)
}

/// The last steps of a move in: one apply, which labels every object of `stamped` with
/// `estate`, then an empty plan.
pub fn stamp(cluster: &Cluster, work: &LiveDir, stamped: &[Target], estate: &str) -> Result<(), String> {
    let apply = work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"]);
    if !apply.success() {
        return Err(format!("the stamp's apply failed:\n{apply}"));
    }
    let unlabelled: Vec<String> = kubectl_get(cluster, stamped, false)
        .iter()
        .filter(|live| live["metadata"]["labels"]["tofu-estate"] != estate)
        .map(described)
        .collect();
    if !unlabelled.is_empty() {
        return Err(format!("not labelled after the stamp: {unlabelled:?}"));
    }
    let again = work.plan_exit();
    if again.code != 0 {
        return Err(format!("the plan after the stamp is not empty:\n{again}"));
    }
    Ok(())
}

/// A folder where each resource of `state` (hashicorp's, in the root module) is `moved` to a
/// resource of choudoufu/live: `body` with every resource renamed `<name>_live` and given
/// `provider = live`, and the references between them renamed too.
fn moved_to_live(cluster: &Cluster, estate: &str, body: &str, state: &Value) -> LiveDir {
    let work = stand_in::beside_hashicorp(estate, cluster.kubeconfig());
    let mut body = body.to_string();
    let mut moves = String::new();
    for resource in state["resources"].as_array().expect("resources") {
        let (type_name, name) = (
            resource["type"].as_str().unwrap_or_default(),
            resource["name"].as_str().unwrap_or_default(),
        );
        body = body
            .replace(
                &format!("resource \"{type_name}\" \"{name}\" {{\n"),
                &format!("resource \"{type_name}\" \"{name}_live\" {{\n  provider = live\n"),
            )
            .replace(
                &format!("{type_name}.{name}."),
                &format!("{type_name}.{name}_live."),
            );
        moves += &format!("moved {{\n  from = {type_name}.{name}\n  to   = {type_name}.{name}_live\n}}\n\n");
    }
    work.write(&format!("{body}\n{moves}"));
    work
}

/// Deletes the objects of a replay (without waiting), however it ends.
struct Cleanup<'a>(&'a Cluster, &'a [Target]);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        kubectl_delete_quietly(self.0, self.1);
    }
}
