//! Moving an estate that hashicorp/kubernetes wrote in (issue 37): its objects created as its
//! typed clients create them (field manager `HashiCorp`, no estate label), its state given the
//! uids and resource versions of this cluster's objects, `terraform state replace-provider`, and
//! the first plan, which may change nothing the user wrote, only stamp the estate label.
//!
//! [`record`] writes such states with hashicorp's own binary for the corpus; [`replay`] moves
//! each recorded one in.

pub mod node_ports;
pub mod record;
pub mod replay;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::hcl::LiveDir;
use crate::objects::{Target, kubectl_get, kubectl_kind, kubectl_target, metadata_of, object_key};
use crate::{Cluster, engine_info};

/// hashicorp/kubernetes as a state the engine of this run wrote names it: an OpenTofu user's
/// state says `registry.opentofu.org/hashicorp/kubernetes`, a Terraform user's
/// `registry.terraform.io/hashicorp/kubernetes`.
pub fn hashicorp() -> String {
    format!("{}/hashicorp/kubernetes", engine_info().registry_host())
}

/// choudoufu/live as the engine of this run names it.
pub fn live() -> String {
    engine_info().provider_address("live")
}

/// `state` (hashicorp's, as recorded under Terraform) as the engine of this run would have
/// written it: its provider addresses on the engine's registry host.
pub fn on_this_engine(state: &str) -> String {
    state.replace("registry.terraform.io/hashicorp/kubernetes", &hashicorp())
}

/// `acceptance/fixtures/hashicorp-3.2.1`: what hashicorp/kubernetes v3.2.1 wrote.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hashicorp-3.2.1")
}

/// The fixture `name` with `__NAMESPACE__` replaced by `ns`, as the engine of this run would
/// have written it ([`on_this_engine`]).
pub fn fixture(name: &str, ns: &str) -> String {
    let path = fixtures().join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    on_this_engine(&text.replace("__NAMESPACE__", ns))
}

/// `objects` written to `objects.yaml` in `dir` for `kubectl ... -f` (one YAML document each;
/// JSON is YAML).
pub fn objects_file(dir: &Path, objects: &[Value]) -> PathBuf {
    let documents: Vec<String> = objects.iter().map(Value::to_string).collect();
    let manifest = dir.join("objects.yaml");
    fs::write(&manifest, documents.join("\n---\n")).expect("objects.yaml");
    manifest
}

/// Creates `objects` on `cluster` in one `kubectl create` as `manager` ([`objects_file`] in
/// `dir`). A namespace's `default` service account is the cluster's own: it is updated to the
/// recorded one (`kubectl replace`, as hashicorp's patch updates it) once the cluster made it.
pub fn create_as(cluster: &Cluster, dir: &Path, objects: &[Value], manager: &str) -> Result<(), String> {
    let (made_by_cluster, created): (Vec<Value>, Vec<Value>) =
        objects.iter().cloned().partition(made_by_cluster);
    let field_manager = format!("--field-manager={manager}");
    if !created.is_empty() {
        let manifest = objects_file(dir, &created);
        let out = cluster.kubectl(&["create", &field_manager, "-f", &manifest.to_string_lossy()]);
        if !out.success() {
            return Err(format!("kubectl create as {manager} failed:\n{out}"));
        }
    }
    for account in &made_by_cluster {
        let namespace = account["metadata"]["namespace"].as_str().unwrap_or("default");
        let made = (0..100).any(|_| {
            let found = cluster
                .kubectl(&["get", "serviceaccount", "default", "-n", namespace])
                .success();
            if !found {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            found
        });
        if !made {
            return Err(format!("no default service account in {namespace} after 10 s"));
        }
        let manifest = objects_file(dir, std::slice::from_ref(account));
        let out = cluster.kubectl(&["replace", &field_manager, "-f", &manifest.to_string_lossy()]);
        if !out.success() {
            return Err(format!("kubectl replace as {manager} failed:\n{out}"));
        }
    }
    Ok(())
}

/// A namespace's `default` service account: the cluster makes it, and
/// `kubernetes_default_service_account` only edits it (never labels it).
pub fn made_by_cluster(object: &Value) -> bool {
    object["kind"] == "ServiceAccount" && object["metadata"]["name"] == "default"
}

/// The recorded `state` given this cluster's objects: each resource's recorded uid, wherever it
/// appears (a Job's selector holds it too), becomes its object's, and its resource version and a
/// Service's allocated node ports the object's.
pub fn with_live_uids(cluster: &Cluster, state: &Value) -> Value {
    // Every object in one kubectl call per namespace; an object hashicorp deleted itself (a
    // signing request once signed) is not there.
    let mut instances = Vec::new();
    for (r, resource) in state["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .enumerate()
    {
        assert_eq!(resource["provider"], format!("provider[\"{}\"]", hashicorp()));
        let type_name = resource["type"].as_str().expect("a type");
        for (i, instance) in resource["instances"].as_array().into_iter().flatten().enumerate() {
            let attributes = &instance["attributes"];
            let target = kubectl_target(type_name, attributes);
            let key = (
                target.1.clone(),
                target.2.clone(),
                kubectl_kind(type_name, attributes),
            );
            instances.push((r, i, target, key));
        }
    }
    let targets: Vec<Target> = instances.iter().map(|(_, _, t, _)| t.clone()).collect();
    let live: BTreeMap<_, Value> = kubectl_get(cluster, &targets, true)
        .into_iter()
        .map(|o| (object_key(&o), o))
        .collect();
    let mut text = state.to_string();
    let mut versions = Vec::new();
    for (r, i, _, key) in &instances {
        let Some(object) = live.get(key) else { continue };
        let attributes = &state["resources"][*r]["instances"][*i]["attributes"];
        let old = metadata_of(attributes)["uid"].as_str().unwrap_or_default();
        if let Some(new) = object["metadata"]["uid"].as_str()
            && !old.is_empty()
        {
            text = text.replace(old, new);
        }
        versions.push((*r, *i, object));
    }
    let mut state: Value = serde_json::from_str(&text).expect("the state is still JSON");
    for (r, i, object) in versions {
        let attributes = &mut state["resources"][r]["instances"][i]["attributes"];
        if object["kind"] == "Service" {
            node_ports::live_ports(attributes, object);
        }
        if let Some(meta) = metadata_mut(attributes) {
            meta["resource_version"] = object["metadata"]["resourceVersion"].clone();
        }
    }
    state
}

/// What hashicorp's binary never sends although its schema takes it: the first plan writes
/// what the configuration says, `(type, path, source)`.
pub const NEVER_WRITTEN: &[(&str, &str, &str)] = &[(
    "kubernetes_validating_admission_policy_v1",
    "spec.validations.reason",
    "internal/framework/provider/admissionregistrationv1/validating_admission_policy_helpers.go:112",
)];

/// [`metadata_of`], to change.
fn metadata_mut(attributes: &mut Value) -> Option<&mut Value> {
    match attributes.get_mut("metadata")? {
        Value::Array(blocks) => blocks.first_mut(),
        other => Some(other),
    }
}

/// What the stamp may change: the estate, and what the server's write renews.
pub const STAMP: &[&str] = &[
    "estate",
    "metadata.resource_version",
    "metadata.generation",
    // A manifest's `object` is what the server answers, refreshed by the write.
    "object",
];

/// The dotted paths (list indices left out) where `after` differs from `before`, leaving out
/// what `unknown` marks as known only after apply.
fn differ(at: &str, before: &Value, after: &Value, unknown: &Value, out: &mut Vec<String>) {
    if unknown == &Value::Bool(true) {
        if !STAMP.contains(&at) {
            out.push(format!("{at} (unknown)"));
        }
        return;
    }
    let join = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for key in b.keys().chain(a.keys().filter(|k| !b.contains_key(*k))) {
                let none = Value::Null;
                let (bv, av) = (b.get(key).unwrap_or(&none), a.get(key).unwrap_or(&none));
                differ(&join(key), bv, av, unknown.get(key).unwrap_or(&none), out);
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                differ(at, bv, av, unknown.get(i).unwrap_or(&Value::Null), out);
            }
        }
        (b, a) if b != a => out.push(at.to_string()),
        _ => {}
    }
}

/// `state replace-provider`, then [`first_plan`].
pub fn try_move_in(work: &LiveDir, updates: usize) -> Result<(), String> {
    let out = work.run(&[
        "state",
        "replace-provider",
        "-auto-approve",
        &hashicorp(),
        &live(),
    ]);
    if !out.success() {
        return Err(format!("replace-provider failed:\n{out}"));
    }
    first_plan(work, updates)
}

/// The first plan after the state moved in: `updates` in-place updates whose only change is the
/// stamp, and the warning saying so. Says what is wrong otherwise.
pub fn first_plan(work: &LiveDir, updates: usize) -> Result<(), String> {
    let (plan, summary) = work.engine().plan_json(&[]);
    let summary = match summary {
        Some(summary) if plan.success() => summary,
        _ => return Err(format!("the first plan failed:\n{plan}")),
    };
    let mut problems = Vec::new();
    if summary.count("update") != updates {
        problems.push(format!("{} updates, not {updates}", summary.count("update")));
    }
    if summary.count("create") + summary.count("delete") != 0 {
        problems.push("creates or deletes".to_string());
    }
    if updates > 0 && !plan.flat().contains("The next apply stamps the estate label") {
        problems.push("no warning that the label will be stamped".to_string());
    }
    for change in summary.raw["resource_changes"].as_array().expect("changes") {
        let (before, after) = (&change["change"]["before"], &change["change"]["after"]);
        let mut differences = Vec::new();
        differ(
            "",
            before,
            after,
            &change["change"]["after_unknown"],
            &mut differences,
        );
        let type_name = change["type"].as_str().unwrap_or_default();
        differences.retain(|path| {
            !STAMP.contains(&path.as_str())
                && !NEVER_WRITTEN.iter().any(|(t, p, _)| *t == type_name && p == path)
        });
        if !differences.is_empty() {
            problems.push(format!(
                "{}: changes what the user wrote: {differences:?}",
                change["address"]
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("the first plan: {}\n{plan}", problems.join("; ")))
    }
}

/// [`try_move_in`], which must succeed.
pub fn move_in(work: &LiveDir, updates: usize) {
    if let Err(e) = try_move_in(work, updates) {
        panic!("{e}");
    }
}
