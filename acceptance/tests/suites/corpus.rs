//! The drop-in corpus (`acceptance/corpus/`): one configuration per hashicorp/kubernetes
//! resource type, written the way hashicorp's documentation writes it, with the nested blocks
//! real configurations use. All of them, each as a module, go through one life with the real
//! engine (two lives: the cluster-wide hooks apart, [`CLUSTER_WIDE`]): apply, an empty plan, an
//! import of every object whose state equals the state it replaces, an out-of-band delete of each file's own object that the next plan creates again,
//! an in-place update of each, and destroy, after which none is left. Every object carries the
//! estate label, and the label never shows in a plan.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use acceptance::Cluster;
use acceptance::corpus::{self, Module, modules, state_outlives_object};
use acceptance::hcl::{LiveDir, quote, unique_name};
use acceptance::imports;
use acceptance::objects::{Target, described, kubectl_get, kubectl_per_namespace, kubectl_target};
use serde_json::Value;

/// The main configuration: every module, each with provider-live as its `kubernetes`.
fn write_modules(dir: &Path, modules: &[Module]) -> String {
    let modules: Vec<(&str, &str, String)> = modules
        .iter()
        .map(|m| (m.type_name.as_str(), m.body.as_str(), String::new()))
        .collect();
    corpus::write_modules(dir, "", &modules)
}

/// Every managed resource of the modules in the state: address to `(type, values)`.
fn resources(work: &LiveDir) -> BTreeMap<String, (String, Value)> {
    work.state_instances()
        .into_iter()
        .filter(|(address, i)| i.managed && address.starts_with("module."))
        .map(|(address, mut i)| (address, (i.type_name, i.stored["attributes"].take())))
        .collect()
}

/// Destroys what the test applied when it fails half-way, with the configuration as first
/// applied, so a real cluster is left clean (an unavailable APIService left behind would stall
/// every namespace deletion there).
struct DestroyOnFailure<'a> {
    work: &'a LiveDir,
    config: String,
}

impl Drop for DestroyOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = fs::remove_file(self.work.path().join("imports.tf"));
            self.work.write(&self.config);
            let _ = self
                .work
                .run(&["destroy", "-auto-approve", "-input=false", "-parallelism=8"]);
        }
    }
}

/// The module's own resource: the first of the file's type in the file.
fn primary<'a>(all: &'a BTreeMap<String, (String, Value)>, module: &Module) -> (&'a String, &'a Value) {
    let header = format!("resource \"{}\" \"", module.type_name);
    let at = module.body.find(&header).expect("the file has its own type") + header.len();
    let label = module.body[at..].split('"').next().unwrap_or_default();
    let address = format!("module.{0}.{0}.{label}", module.type_name);
    all.get_key_value(&address)
        .map(|(a, (_, v))| (a, v))
        .unwrap_or_else(|| panic!("{address} is not in state"))
}

/// `body` with an annotation added to the `metadata` of the first resource of `type_name`: a
/// key in its `annotations` map where it has one, else the map.
fn annotated(body: &str, type_name: &str) -> String {
    let start = body
        .find(&format!("resource \"{type_name}\""))
        .unwrap_or_else(|| panic!("no {type_name} in its corpus file"));
    let meta = start
        + body[start..]
            .find("metadata")
            .unwrap_or_else(|| panic!("{type_name} has no metadata"));
    let open = meta + body[meta..].find('{').expect("metadata opens a block or object");
    let mut depth = 0;
    let close = body[open..]
        .char_indices()
        .find_map(|(i, c)| {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(open + i)
        })
        .expect("metadata closes");
    let (at, insert) = match body[open..close].find("annotations") {
        Some(found) => {
            let brace = open + found + body[open + found..].find('{').expect("an annotations map");
            (brace, "\n      \"corpus.example.com/revision\" = \"2\"\n")
        }
        None => (
            open,
            "\n    annotations = { \"corpus.example.com/revision\" = \"2\" }\n",
        ),
    };
    format!("{}{insert}{}", &body[..=at], &body[at + 1..])
}

/// `body` with the name of the first resource of `type_name` changed (`<name>-b`); `None`
/// when the name is not a literal (an endpoints object takes its service's name).
fn renamed(body: &str, type_name: &str) -> Option<String> {
    let start = body.find(&format!("resource \"{type_name}\""))?;
    let mut at = start;
    for line in body[start..].split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(value) = trimmed.strip_prefix("name").map(str::trim_start) {
            let value = value.strip_prefix('=')?.trim_start();
            let literal = value.strip_prefix('"')?;
            let end = literal.find('"')?;
            let close = at + (line.len() - value.len()) + 1 + end;
            return Some(format!("{}-b{}", &body[..close], &body[close..]));
        }
        at += line.len();
    }
    None
}

/// The types whose objects act on the whole cluster while they exist: an APIService no server
/// backs (namespace deletions wait on its discovery) and admission webhooks without a service.
/// On a shared cluster they go through their life alone (`scripts/test.sh`'s `TEST_ALONE`),
/// and the rest of the corpus beside the other suites.
const CLUSTER_WIDE: [&str; 3] = [
    "kubernetes_api_service",
    "kubernetes_mutating_webhook_configuration",
    "kubernetes_validating_webhook_configuration",
];

fn cluster_wide(module: &Module) -> bool {
    CLUSTER_WIDE.contains(&module.type_name.trim_end_matches("_v1"))
}

#[test]
fn the_corpus_applies_plans_empty_imports_recreates_updates_and_destroys() {
    one_life(|m| !cluster_wide(m));
}

#[test]
fn the_cluster_wide_hooks_apply_plan_empty_import_recreate_update_and_destroy() {
    one_life(cluster_wide);
}

/// The corpus's modules that `chosen` keeps, through the life the file's header tells.
fn one_life(chosen: fn(&Module) -> bool) {
    let cluster = Cluster::start();
    let run = unique_name("r").trim_start_matches("r-").to_string();
    let estate = format!("corpus-{run}");
    let modules: Vec<Module> = modules(&run).into_iter().filter(chosen).collect();
    assert!(!modules.is_empty(), "no module of the corpus chosen");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let config = write_modules(work.path(), &modules);
    work.write(&config);
    let init = work.run(&["init", "-input=false"]);
    assert!(init.success(), "init failed:\n{init}");
    let parallel = ["-input=false", "-parallelism=8"];
    let _cleanup = DestroyOnFailure {
        work: &work,
        config: config.clone(),
    };

    // Apply all, then nothing to do.
    let out = work.run(&[&["apply", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "apply failed:\n{out}");
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &parallel[..]].concat());
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");
    // Controllers keep writing after the apply (the scheduler's node for the pod, a claim's
    // volume): a refresh takes their Optional+Computed values into state without a diff, and
    // the import below must find the same.
    let out = work.run(&[&["apply", "-refresh-only", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "refresh failed:\n{out}");
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &parallel[..]].concat());
    assert_eq!(plan.code, 0, "the plan after the refresh is not empty:\n{plan}");

    let before = resources(&work);
    let types: BTreeSet<&str> = before.values().map(|(t, _)| t.as_str()).collect();
    eprintln!(
        "corpus: {} configurations, {} resources of {} types applied with an empty plan",
        modules.len(),
        before.len(),
        types.len()
    );

    // The estate label is on every object and in no state value.
    let targets: Vec<Target> = modules
        .iter()
        .map(|m| {
            let (address, values) = primary(&before, m);
            assert!(
                !values.to_string().contains("tofu-estate\""),
                "{address}: the estate label is in state: {values}"
            );
            kubectl_target(&m.type_name, values)
        })
        .collect();
    let objects = kubectl_get(&cluster, &targets, false);
    assert_eq!(objects.len(), targets.len(), "every module's object exists");
    for object in &objects {
        assert_eq!(
            object.pointer("/metadata/labels/tofu-estate"),
            Some(&Value::from(estate.as_str())),
            "{} carries the estate label",
            described(object)
        );
    }

    // Import every object: forget all of them, import them with import blocks, and compare.
    let importable: Vec<(&String, &String, &Value)> = before
        .iter()
        .filter(|(_, (_, v))| v["id"].is_string())
        .map(|(a, (t, v))| (a, t, v))
        .collect();
    let addresses: Vec<&str> = importable.iter().map(|(a, _, _)| a.as_str()).collect();
    let rm = work.run(&[&["state", "rm"][..], &addresses[..]].concat());
    assert!(rm.success(), "state rm:\n{rm}");
    let imports: String = importable
        .iter()
        .map(|(a, _, v)| {
            format!(
                "import {{\n  to = {a}\n  id = {}\n}}\n",
                quote(v["id"].as_str().unwrap_or_default())
            )
        })
        .collect();
    fs::write(work.path().join("imports.tf"), imports).expect("imports.tf");
    let out = work.run(&[&["apply", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "import failed:\n{out}");
    assert!(
        out.stdout
            .contains(&format!("Resources: {} imported, 0 added", importable.len())),
        "not a pure import of {} objects:\n{out}",
        importable.len()
    );
    fs::remove_file(work.path().join("imports.tf")).expect("imports.tf");
    let after = resources(&work);
    let mut differences = Vec::new();
    for (address, (_, values)) in &before {
        let (_, imported) = &after[address];
        // Controllers move resourceVersion and status meanwhile; compare what the user wrote.
        if imports::comparable(values) != imports::comparable(imported) {
            differences.push(format!("{address}:\n  before {values}\n  after  {imported}"));
        }
    }
    assert!(
        differences.is_empty(),
        "{} imported states differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &parallel[..]].concat());
    assert_eq!(plan.code, 0, "the plan after import is not empty:\n{plan}");

    // Delete each file's own object behind the engine's back: the plan creates exactly those.
    let deleted: Vec<&Module> = modules
        .iter()
        .filter(|m| !m.type_name.starts_with("kubernetes_namespace"))
        .filter(|m| !state_outlives_object(&m.type_name))
        .collect();
    let mut targets: Vec<Target> = deleted
        .iter()
        .map(|m| kubectl_target(&m.type_name, primary(&after, m).1))
        .collect();
    // A volume bound to a claim stays until the claim goes (the pv-protection controller's
    // finalizer): its claim goes with it, and the plan creates that too.
    let claims: Vec<Target> = kubectl_get(&cluster, &targets, false)
        .iter()
        .filter(|o| o["kind"] == "PersistentVolume")
        .filter_map(|pv| {
            let claim = pv.pointer("/spec/claimRef")?;
            Some((
                "persistentvolumeclaims".to_string(),
                Some(claim["namespace"].as_str()?.to_string()),
                claim["name"].as_str()?.to_string(),
            ))
        })
        .collect();
    targets.extend(claims);
    // All deletes first, then the wait: a volume goes only after its claim, which another
    // kubectl call deletes.
    kubectl_per_namespace(&cluster, "delete", &targets, &["--wait=false"]);
    kubectl_per_namespace(&cluster, "wait", &targets, &["--for=delete", "--timeout=110s"]);
    let (plan, summary) = work.engine().plan_json(&["-parallelism=8"]);
    let summary = summary.unwrap_or_else(|| panic!("no plan written:\n{plan}"));
    for m in &deleted {
        let (address, _) = primary(&after, m);
        assert_eq!(
            summary.actions(address),
            Some(&["create".to_string()][..]),
            "plan after deleting {address}:\n{plan}"
        );
    }
    let out = work.run(&[&["apply", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "re-create failed:\n{out}");

    // Update each file's own object in place (an annotation), then nothing to do.
    let updated: Vec<Module> = modules
        .iter()
        .map(|m| Module {
            type_name: m.type_name.clone(),
            body: annotated(&m.body, &m.type_name),
        })
        .collect();
    work.write(&write_modules(work.path(), &updated));
    let out = work.run(&[&["apply", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "update failed:\n{out}");
    assert!(
        out.stdout
            .contains(&format!("0 added, {} changed, 0 destroyed", updated.len())),
        "not {} in-place updates:\n{out}",
        updated.len()
    );
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &parallel[..]].concat());
    assert_eq!(plan.code, 0, "the plan after the update is not empty:\n{plan}");

    // A new name replaces each file's own object where the name is written out (an
    // APIService's name is its group and version; an endpoints object takes its service's).
    // Not a namespace: deleting one waits for discovery of every API group, which the
    // corpus's deliberately unavailable APIService stalls (the namespace lifecycle test in
    // live_resources.rs replaces one).
    let renames: Vec<(Module, bool)> = updated
        .iter()
        .map(|m| {
            let fixed = matches!(
                m.type_name.trim_end_matches("_v1"),
                "kubernetes_api_service" | "kubernetes_namespace"
            );
            let new = (!fixed).then(|| renamed(&m.body, &m.type_name)).flatten();
            let replaced = new.is_some();
            let module = Module {
                type_name: m.type_name.clone(),
                body: new.unwrap_or_else(|| m.body.clone()),
            };
            (module, replaced)
        })
        .collect();
    let modules_renamed: Vec<Module> = renames
        .iter()
        .map(|(m, _)| Module {
            type_name: m.type_name.clone(),
            body: m.body.clone(),
        })
        .collect();
    work.write(&write_modules(work.path(), &modules_renamed));
    let (plan, summary) = work.engine().plan_json(&["-parallelism=8"]);
    let summary = summary.unwrap_or_else(|| panic!("no plan written:\n{plan}"));
    let current = resources(&work);
    let replaced: Vec<&Module> = renames.iter().filter(|(_, r)| *r).map(|(m, _)| m).collect();
    for m in &replaced {
        let (address, _) = primary(&current, m);
        let actions = summary.actions(address).unwrap_or_default();
        assert!(
            actions.contains(&"delete".to_string()) && actions.contains(&"create".to_string()),
            "a new name does not replace {address}: {actions:?}\n{plan}"
        );
    }
    let out = work.run(&[&["apply", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "replace failed:\n{out}");
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &parallel[..]].concat());
    assert_eq!(
        plan.code, 0,
        "the plan after the replacements is not empty:\n{plan}"
    );
    eprintln!(
        "corpus: {} objects imported, {} deleted out of band and re-created, {} updated in place, {} replaced",
        importable.len(),
        deleted.len(),
        updated.len(),
        replaced.len()
    );

    // Destroy: nothing is left.
    let last = resources(&work);
    let out = work.run(&[&["destroy", "-auto-approve"][..], &parallel[..]].concat());
    assert!(out.success(), "destroy failed:\n{out}");
    let targets: Vec<Target> = modules
        .iter()
        .map(|m| kubectl_target(&m.type_name, primary(&last, m).1))
        .collect();
    for left in kubectl_get(&cluster, &targets, true) {
        assert!(
            left.pointer("/metadata/deletionTimestamp").is_some(),
            "destroy left {} behind",
            described(&left)
        );
    }
}
