//! One side of a differential run: the corpus applied with one provider binary through its whole
//! life (plan, apply, the next plan, import, destroy), and what each step left behind.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::Stage;
use crate::corpus::{self, Module};
use crate::hcl::{quote, state_instances};
use crate::objects::{Target, kubectl_get, kubectl_per_namespace, kubectl_target, target_of};
use crate::{Cluster, Engine, EngineOutput};

/// The provider binary a side runs.
#[derive(Debug, Clone)]
pub enum Provider {
    /// provider-live, installed from the project's mirror as a user installs it.
    Ours,
    /// hashicorp/kubernetes, the binary at this path, through `dev_overrides`.
    Hashicorp(PathBuf),
}

impl Provider {
    pub fn name(&self) -> &'static str {
        match self {
            Provider::Ours => "ours",
            Provider::Hashicorp(_) => "hashicorp",
        }
    }

    pub(crate) fn source(&self) -> &'static str {
        match self {
            Provider::Ours => corpus::LIVE,
            Provider::Hashicorp(_) => "hashicorp/kubernetes",
        }
    }

    /// The root module's `terraform` and `provider` blocks: ours requires `estate`, which
    /// hashicorp's schema would refuse.
    pub(crate) fn blocks(&self, estate: &str, kubeconfig: &Path) -> String {
        let estate = match self {
            Provider::Ours => format!("  estate      = {}\n", quote(estate)),
            Provider::Hashicorp(_) => String::new(),
        };
        format!(
            "{}\nprovider \"kubernetes\" {{\n{estate}  config_path = {}\n}}\n\n",
            corpus::versions(self.source()),
            quote(&kubeconfig.to_string_lossy())
        )
    }

    /// Installs the modules and providers: `init` for ours; only `get` (the modules) for
    /// hashicorp's, as `init` would still ask the registry for an overridden provider.
    pub(crate) fn install(&self, engine: &Engine) -> EngineOutput {
        match self {
            Provider::Ours => engine.init(),
            Provider::Hashicorp(_) => engine.run(&["get"]),
        }
    }

    /// The engine in `dir`: ours from the mirror, hashicorp's binary through a CLI configuration
    /// of its own whose `dev_overrides` point at the binary's folder (no registry needed).
    pub(crate) fn engine(&self, dir: &Path) -> Engine {
        let engine = Engine::new(dir).timeout(Duration::from_secs(1200));
        let Provider::Hashicorp(binary) = self else {
            return engine;
        };
        let folder = binary.parent().unwrap_or(Path::new("."));
        let rc = dir.join("hashicorp.tfrc");
        let text = format!(
            "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/kubernetes\" = {}\n  }}\n  direct {{}}\n}}\n",
            quote(&folder.to_string_lossy())
        );
        fs::write(&rc, text).expect("the CLI configuration for hashicorp's provider");
        engine.env("TF_CLI_CONFIG_FILE", &rc.to_string_lossy())
    }
}

/// One managed resource of a state: its type and attribute values.
pub type Resources = BTreeMap<String, (String, Value)>;

/// What one side's life left behind, names as written (with the side's run tag).
pub struct Life {
    /// The run tag its names carry (`corpus-<tag>-…`).
    pub tag: String,
    /// `show -json` of the plan from nothing.
    pub plan: Value,
    /// The state after apply.
    pub applied: Resources,
    /// `show -json` of the plan after apply.
    pub next_plan: Value,
    /// The state after forgetting every object and importing it again.
    pub imported: Resources,
    /// Errors by step and resource address (`""` when the engine names none).
    pub errors: Vec<(Stage, String, String)>,
    /// The objects of the state still on the cluster after destroy (`resource namespace/name`).
    pub remains: Vec<String>,
}

/// Parallelism for every run: the corpus's waits are mostly for the cluster, not the CPU.
const PARALLEL: &str = "-parallelism=8";

/// Runs the life of `modules` with `provider` on `cluster`, names carrying `tag`.
pub fn live(provider: &Provider, cluster: &Cluster, modules: &[Module], tag: &str) -> Life {
    let dir = tempfile::tempdir().expect("a working folder");
    let engine = provider.engine(dir.path());
    let list: Vec<(&str, &str, String)> = modules
        .iter()
        .map(|m| (m.type_name.as_str(), m.body.as_str(), String::new()))
        .collect();
    let calls = corpus::write_modules_of(provider.source(), dir.path(), "", &list);
    let blocks = provider.blocks(&format!("diff-{tag}"), cluster.kubeconfig());
    fs::write(dir.path().join("main.tf"), blocks + &calls).expect("main.tf");
    let init = provider.install(&engine);
    assert!(init.success(), "{}: init failed:\n{init}", provider.name());
    let _cleanup = DestroyOnFailure(&engine);
    let name = provider.name();
    eprintln!(
        "differential: {name}: plan, apply, plan, import, destroy of {} configurations",
        modules.len()
    );

    let plan = show_plan(&engine, name);
    let mut errors = Vec::new();
    let apply = engine.run(&["apply", "-json", "-auto-approve", "-input=false", PARALLEL]);
    errors.extend(diagnostics(&apply, Stage::Apply, name));
    let applied = resources(&engine);
    let next_plan = show_plan(&engine, name);

    let imported = import(&engine, &applied, &mut errors, name);

    let targets: Vec<Target> = applied.values().map(|(t, v)| kubectl_target(t, v)).collect();
    let destroy = engine.run(&["destroy", "-json", "-auto-approve", "-input=false", PARALLEL]);
    errors.extend(diagnostics(&destroy, Stage::Destroy, name));
    let remains = remaining(cluster, &targets);
    // Whatever a side leaves would stall or collide with the other side (a fixed node port, an
    // unavailable APIService): it goes, once recorded.
    let left: Vec<Target> = kubectl_get(cluster, &targets, true)
        .iter()
        .map(target_of)
        .collect();
    if !left.is_empty() {
        kubectl_per_namespace(cluster, "delete", &left, &["--wait=false", "--ignore-not-found"]);
    }
    eprintln!(
        "differential: {name}: {} resources applied, {} imported, {} errors, {} objects remain",
        applied.len(),
        imported.len(),
        errors.len(),
        remains.len()
    );
    Life {
        tag: tag.to_string(),
        plan,
        applied,
        next_plan,
        imported,
        errors,
        remains,
    }
}

/// The state import gives each object of `applied` that has an id: every one forgotten, then
/// planned with import blocks, whose plan shows the imported state as each change's `before`.
/// Only planned, so nothing is written; the state is put back after. A type the provider cannot
/// import, or an object whose import fails, is an import error and left out of a next try.
fn import(
    engine: &Engine,
    applied: &Resources,
    errors: &mut Vec<(Stage, String, String)>,
    name: &str,
) -> Resources {
    let backup = engine.workdir().join("applied.tfstate");
    let pull = engine.run(&["state", "pull"]);
    assert!(pull.success(), "{name}: state pull:\n{pull}");
    fs::write(&backup, &pull.stdout).expect("the state's backup");
    let mut ids: BTreeMap<&String, &str> = applied
        .iter()
        .filter_map(|(address, (_, values))| Some((address, values["id"].as_str()?)))
        .collect();
    let addresses: Vec<&str> = ids.keys().map(|a| a.as_str()).collect();
    let rm = engine.run(&[&["state", "rm"][..], &addresses[..]].concat());
    assert!(rm.success(), "{name}: state rm:\n{rm}");
    let mut imported = Resources::new();
    for _ in 0..4 {
        let blocks: String = ids
            .iter()
            .map(|(address, id)| format!("import {{\n  to = {address}\n  id = {}\n}}\n", quote(id)))
            .collect();
        fs::write(engine.workdir().join("imports.tf"), blocks).expect("imports.tf");
        let (out, plan) = engine.plan_json(&["-json", PARALLEL]);
        // A failed plan may still write its plan file: only a successful one holds the imports.
        if let Some(plan) = plan.filter(|_| out.success()) {
            imported = plan.raw["resource_changes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["change"]["importing"].is_object())
                .map(|c| {
                    let text = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                    (text("address"), (text("type"), c["change"]["before"].clone()))
                })
                .collect();
            break;
        }
        let failed = diagnostics(&out, Stage::Import, name);
        let before = ids.len();
        for (_, address, message) in &failed {
            let unsupported = message
                .strip_prefix("Resource Import Not Implemented: ")
                .or_else(|| message.split("resource ").nth(1))
                .and_then(|rest| rest.split_whitespace().next())
                .filter(|_| message.contains("support import") || message.contains("Not Implemented"));
            ids.retain(|a, _| {
                // The type is the address's last but one part (the module is named after a type too).
                let of_type = unsupported.is_some_and(|t| a.rsplit('.').nth(1) == Some(t));
                if of_type {
                    errors.push((Stage::Import, (*a).clone(), message.clone()));
                }
                !of_type && *a != address
            });
        }
        errors.extend(failed.into_iter().filter(|(_, a, _)| !a.is_empty()));
        if ids.len() == before {
            errors.push((
                Stage::Import,
                String::new(),
                "import plan failed; nothing left to leave out".into(),
            ));
            break;
        }
    }
    fs::remove_file(engine.workdir().join("imports.tf")).expect("imports.tf");
    let push = engine.run(&["state", "push", "-force", &backup.to_string_lossy()]);
    assert!(push.success(), "{name}: state push of the applied state:\n{push}");
    fs::remove_file(&backup).expect("the state's backup");
    imported
}

/// `show -json` of a plan of the working folder (`Null` when none was written).
fn show_plan(engine: &Engine, name: &str) -> Value {
    let (out, summary) = engine.plan_json(&[PARALLEL]);
    match summary {
        Some(summary) => summary.raw,
        None => {
            eprintln!("differential: {name}: no plan written:\n{out}");
            Value::Null
        }
    }
}

/// The managed resources of the state, by address.
fn resources(engine: &Engine) -> Resources {
    state_instances(engine)
        .into_iter()
        .filter(|(_, i)| i.managed)
        .map(|(address, mut i)| (address, (i.type_name, i.stored["attributes"].take())))
        .collect()
}

/// The errors of a `-json` run, each with the address the engine names; printed whole, as the
/// report shows them cut short.
pub(crate) fn diagnostics(out: &EngineOutput, stage: Stage, name: &str) -> Vec<(Stage, String, String)> {
    let mut found: Vec<(Stage, String, String)> = out
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "diagnostic" && line["diagnostic"]["severity"] == "error")
        .map(|line| {
            let d = &line["diagnostic"];
            let text = format!(
                "{}: {}",
                d["summary"].as_str().unwrap_or_default(),
                d["detail"].as_str().unwrap_or_default()
            );
            let address = d["address"].as_str().unwrap_or_default().to_string();
            (stage, address, crate::engine::flat(&text))
        })
        .collect();
    if found.is_empty() && !out.success() {
        found.push((stage, String::new(), crate::engine::flat(&out.stderr)));
    }
    for (_, address, message) in &found {
        eprintln!(
            "differential: {name}: {} error at {address}: {message}",
            stage.name()
        );
    }
    found
}

/// The objects of `targets` still there after destroy, once deletions in progress (finalizers,
/// a namespace's content) have had a minute to end.
fn remaining(cluster: &Cluster, targets: &[Target]) -> Vec<String> {
    let mut left = Vec::new();
    for _ in 0..12 {
        left = kubectl_get(cluster, targets, true)
            .iter()
            .map(|o| {
                let meta = &o["metadata"];
                let namespace = meta["namespace"]
                    .as_str()
                    .map(|n| format!("{n}/"))
                    .unwrap_or_default();
                format!(
                    "{} {namespace}{}",
                    o["kind"].as_str().unwrap_or_default(),
                    meta["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_secs(5));
    }
    left
}

/// Destroys what a side applied when the harness fails half-way, so the cluster is left clean.
struct DestroyOnFailure<'a>(&'a Engine);

impl Drop for DestroyOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = fs::remove_file(self.0.workdir().join("imports.tf"));
            // Failed between the import's `state rm` and the state's return: back first.
            let backup = self.0.workdir().join("applied.tfstate");
            if backup.exists() {
                let _ = self
                    .0
                    .run(&["state", "push", "-force", &backup.to_string_lossy()]);
            }
            let _ = self
                .0
                .run(&["destroy", "-auto-approve", "-input=false", PARALLEL]);
        }
    }
}
