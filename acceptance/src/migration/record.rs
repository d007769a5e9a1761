//! Recording what hashicorp/kubernetes's own binary writes for the corpus: the chosen corpus
//! files applied in one configuration (one module each) with its binary through `dev_overrides`
//! ([`Provider::Hashicorp`]), then, for each module that applied without an error, in
//! `<out>/<type>/`:
//!
//! - `main.tf`: the corpus file as applied;
//! - `terraform.tfstate`: its resources of the state, as a root module's;
//! - `objects.json`: the objects as hashicorp left them, their metadata without what the server
//!   sets (uid, resource version, timestamps, managed fields, status), and without what a
//!   second `kubectl create` of them must leave to the server (a Service's cluster IPs, a Job's
//!   selector, a claim's volume, a volume's claim uid).
//!
//! The run's tag, in every name, is written [`PLACEHOLDER`]. Everything is destroyed after.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::Cluster;
use crate::corpus::{self, Module};
use crate::differential::Provider;
use crate::differential::Stage;
use crate::differential::side::diagnostics;
use crate::hcl::unique_name;
use crate::objects::{Target, kubectl_get, kubectl_per_namespace, target_of, targets_of};

/// What stands for the run's tag in recorded files (`corpus-__RUN__-configmap`).
pub const PLACEHOLDER: &str = "__RUN__";

/// The corpus files recorded unless told otherwise: the types most estates hold. Service
/// accounts are not among them (and neither are the files that hold one: the secret and the
/// role bindings), as on a control plane whose version reads as older than 1.24 hashicorp's
/// code waits for a legacy token Secret that never comes.
pub const FIRST_BATCH: &[&str] = &[
    "kubernetes_cluster_role_v1",
    "kubernetes_config_map_v1",
    "kubernetes_cron_job_v1",
    "kubernetes_daemon_set_v1",
    "kubernetes_deployment_v1",
    "kubernetes_horizontal_pod_autoscaler_v2",
    "kubernetes_ingress_v1",
    "kubernetes_job_v1",
    "kubernetes_limit_range_v1",
    "kubernetes_namespace_v1",
    "kubernetes_network_policy_v1",
    "kubernetes_persistent_volume_claim_v1",
    "kubernetes_pod_disruption_budget_v1",
    "kubernetes_priority_class_v1",
    "kubernetes_resource_quota_v1",
    "kubernetes_role_v1",
    "kubernetes_service_v1",
    "kubernetes_stateful_set_v1",
    "kubernetes_storage_class_v1",
];

/// Applies the files `types` of `acceptance/<folder>` (`corpus`, `corpus-moves`) with
/// hashicorp's binary at `binary` on `cluster` and writes what each left under `out/<type>/`.
/// Returns each type's outcome: the number of resources recorded, or why none were.
pub fn record(
    cluster: &Cluster,
    binary: &Path,
    folder: &str,
    types: &[String],
    out: &Path,
) -> Vec<(String, Result<usize, String>)> {
    let tag = unique_name("h").replace('-', "");
    let modules: Vec<Module> = corpus::modules_in(folder, &tag)
        .into_iter()
        .filter(|m| types.contains(&m.type_name))
        .collect();
    let provider = Provider::Hashicorp(binary.to_path_buf());
    let dir = tempfile::tempdir().expect("a working folder");
    let engine = provider.engine(dir.path());
    let list: Vec<(&str, &str, String)> = modules
        .iter()
        .map(|m| (m.type_name.as_str(), m.body.as_str(), String::new()))
        .collect();
    let calls = corpus::write_modules_of(provider.source(), dir.path(), "", &list);
    let blocks = provider.blocks("", cluster.kubeconfig());
    fs::write(dir.path().join("main.tf"), blocks + &calls).expect("main.tf");
    let init = provider.install(&engine);
    assert!(init.success(), "hashicorp: get failed:\n{init}");

    let apply = engine.run(&[
        "apply",
        "-json",
        "-auto-approve",
        "-input=false",
        "-parallelism=8",
    ]);
    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (_, address, message) in diagnostics(&apply, Stage::Apply, "hashicorp") {
        let module = address
            .strip_prefix("module.")
            .and_then(|rest| rest.split('.').next())
            .unwrap_or_default()
            .to_string();
        errors.entry(module).or_default().push(message);
    }
    let pull = engine.run(&["state", "pull"]);
    assert!(pull.success(), "state pull:\n{pull}");
    let state: Value = serde_json::from_str(&pull.stdout).expect("a JSON state");

    let mut outcomes = Vec::new();
    let mut applied: Vec<Target> = Vec::new();
    for module in &modules {
        let name = &module.type_name;
        let resources: Vec<Value> = state["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["module"] == format!("module.{name}") && r["mode"] == "managed")
            .cloned()
            .collect();
        let targets = targets_of(&resources);
        applied.extend(targets.iter().cloned());
        if let Some(messages) = errors.get(name) {
            outcomes.push((name.clone(), Err(messages.join("\n"))));
            continue;
        }
        let outcome = write(
            cluster,
            &state,
            resources,
            &targets,
            module,
            &tag,
            &out.join(name),
        );
        outcomes.push((name.clone(), outcome));
    }

    let destroy = engine.run(&["destroy", "-auto-approve", "-input=false", "-parallelism=8"]);
    if !destroy.success() {
        eprintln!("record: hashicorp's destroy failed:\n{destroy}");
    }
    let left: Vec<Target> = kubectl_get(cluster, &applied, true)
        .iter()
        .map(target_of)
        .collect();
    if !left.is_empty() {
        kubectl_per_namespace(cluster, "delete", &left, &["--wait=false", "--ignore-not-found"]);
    }
    outcomes
}

/// Writes one module's recording into `dir`.
fn write(
    cluster: &Cluster,
    state: &Value,
    mut resources: Vec<Value>,
    targets: &[Target],
    module: &Module,
    tag: &str,
    dir: &Path,
) -> Result<usize, String> {
    if resources.is_empty() {
        return Err("nothing in the state".into());
    }
    for resource in &mut resources {
        resource.as_object_mut().expect("a resource").remove("module");
    }
    let count = resources.len();
    let recorded = json!({
        "version": state["version"],
        "terraform_version": state["terraform_version"],
        "serial": 1,
        "lineage": state["lineage"],
        "outputs": {},
        "resources": resources,
        "check_results": null,
    });
    // An object hashicorp deletes itself (a signing request once signed) is not there.
    let objects: Vec<Value> = kubectl_get(cluster, targets, true)
        .into_iter()
        .map(cleaned)
        .collect();
    let placeholders = |text: String| text.replace(tag, PLACEHOLDER);
    fs::create_dir_all(dir).expect("the recording's folder");
    let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("JSON") + "\n";
    fs::write(dir.join("main.tf"), placeholders(module.body.clone())).expect("main.tf");
    fs::write(dir.join("terraform.tfstate"), placeholders(pretty(&recorded))).expect("state");
    fs::write(
        dir.join("objects.json"),
        placeholders(pretty(&Value::Array(objects))),
    )
    .expect("objects");
    Ok(count)
}

/// `object` without what its server set, so that `kubectl create` makes it again as it was.
fn cleaned(mut object: Value) -> Value {
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let map = object.as_object_mut().expect("an object");
    map.remove("status");
    let meta = map
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("metadata");
    for key in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
        "generation",
        "selfLink",
    ] {
        meta.remove(key);
    }
    // A service account's token is the token controller's to fill in again, for the account
    // the replay creates (it deletes a token secret naming another account's uid).
    if kind == "Secret" && map.get("type") == Some(&json!("kubernetes.io/service-account-token")) {
        map.remove("data");
        if let Some(annotations) = map
            .get_mut("metadata")
            .and_then(|m| m.get_mut("annotations"))
            .and_then(Value::as_object_mut)
        {
            annotations.remove("kubernetes.io/service-account.uid");
        }
    }
    let spec = map.get_mut("spec").and_then(Value::as_object_mut);
    match (kind.as_str(), spec) {
        // A headless Service keeps its `None`.
        ("Service", Some(spec)) if spec.get("clusterIP") != Some(&json!("None")) => {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        // Bound to the claim made again, not to the recorded one.
        ("PersistentVolume", Some(spec)) => {
            if let Some(claim) = spec.get_mut("claimRef").and_then(Value::as_object_mut) {
                claim.remove("uid");
                claim.remove("resourceVersion");
            }
        }
        ("Job", Some(spec)) => {
            spec.remove("selector");
            if let Some(labels) = spec
                .get_mut("template")
                .and_then(|t| t.pointer_mut("/metadata/labels"))
                .and_then(Value::as_object_mut)
            {
                labels.remove("controller-uid");
                labels.remove("batch.kubernetes.io/controller-uid");
            }
        }
        ("PersistentVolumeClaim", Some(spec)) => {
            spec.remove("volumeName");
            let annotations = object
                .pointer_mut("/metadata/annotations")
                .and_then(Value::as_object_mut);
            if let Some(annotations) = annotations {
                annotations.retain(|k, _| !k.starts_with("pv.kubernetes.io/") && !k.starts_with("volume."));
                if annotations.is_empty() {
                    let meta: &mut Map<String, Value> = object["metadata"].as_object_mut().expect("metadata");
                    meta.remove("annotations");
                }
            }
        }
        _ => {}
    }
    object
}
