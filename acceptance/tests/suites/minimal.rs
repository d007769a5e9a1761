//! The minimal corpus (`acceptance/corpus-minimal/`): for every hashicorp/kubernetes resource
//! type, a configuration that leaves every optional attribute out, namespaced kinds without
//! `metadata.namespace`. All of them, each as a module, go through one life with the real
//! engine: apply; the state holds what hashicorp's would (namespace `default` where the type
//! defaults it, the live object's `generation` where the schema has one, every default of
//! `provider-live/catalog/facts.tsv` wherever its block is present); an empty plan; an import of
//! every object into an empty state, equal to the state it replaces, with an empty plan after
//! it; destroy, after which no object is left. And a read of every data source naming an
//! object that does not exist: its attributes empty and no error, as hashicorp's.
//!
//! Each type prints one line (`minimal: <type>: config applied, defaults checked N, import
//! verified`) past the test harness's capture; `scripts/test.sh` sums them in its summary.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use acceptance::Cluster;
use acceptance::corpus::{self, reference_rows};
use acceptance::hcl::{LiveDir, quote, unique_name};
use acceptance::imports;
use acceptance::objects::{Target, described, kubectl_get, kubectl_target, object_key};
use serde_json::Value;

/// Engine runs apply this many resources at once (the module's pods, claims and rollouts wait
/// side by side).
const PARALLEL: [&str; 2] = ["-input=false", "-parallelism=16"];

fn corpus_dir() -> PathBuf {
    corpus::dir("corpus-minimal")
}

/// The exceptions the corpus records (`exceptions.tsv`): type to `(exception, source)`.
fn exceptions() -> BTreeMap<String, Vec<(String, String)>> {
    let text = fs::read_to_string(corpus_dir().join("exceptions.tsv")).expect("exceptions.tsv");
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() >= 3, "exceptions.tsv: {line:?} has no source");
        out.entry(cols[0].to_string())
            .or_default()
            .push((cols[1].to_string(), cols[2].to_string()));
    }
    out
}

fn excepted<'a>(
    all: &'a BTreeMap<String, Vec<(String, String)>>,
    type_name: &str,
    what: &str,
) -> Option<&'a str> {
    all.get(type_name)?
        .iter()
        .find(|(e, _)| e == what)
        .map(|(_, source)| source.as_str())
}

/// One corpus file as a module: its type, its configuration and the suffix its names take.
struct Module {
    type_name: String,
    body: String,
    suffix: String,
}

/// Every file of the corpus, and each `_v1` file's configuration under its deprecated
/// unversioned name, with names suffixed `<run>-u`.
fn modules(run: &str) -> Vec<Module> {
    corpus::files("corpus-minimal")
        .into_iter()
        .map(|f| match f.v1 {
            Some(v1) => Module {
                body: f
                    .text
                    .replace(&format!("\"{v1}\""), &format!("\"{}\"", f.type_name)),
                type_name: f.type_name,
                suffix: format!("{run}-u"),
            },
            None => Module {
                type_name: f.type_name,
                body: f.text,
                suffix: run.to_string(),
            },
        })
        .collect()
}

/// The variables every module takes: its names' suffix and the node it may pin pods to.
const VARIABLES: &str =
    "\nvariable \"suffix\" {\n  type = string\n}\n\nvariable \"node\" {\n  type = string\n}\n";

/// Writes each module's folder and returns the root configuration calling them all.
fn write_modules(dir: &Path, modules: &[Module], node: &str) -> String {
    let modules: Vec<(&str, &str, String)> = modules
        .iter()
        .map(|m| {
            let arguments = format!("  suffix = {}\n  node   = {}\n", quote(&m.suffix), quote(node));
            (m.type_name.as_str(), m.body.as_str(), arguments)
        })
        .collect();
    corpus::write_modules(dir, VARIABLES, &modules)
}

/// The module's own resource in the state: `module.<type>.<type>.min`.
fn address(m: &Module) -> String {
    format!("module.{0}.{0}.min", m.type_name)
}

/// The objects the editing types (`kubernetes_labels`, `_data`, `kubernetes_env`,
/// ...) edit, made with kubectl before the apply: `targets.json` with its names suffixed.
/// Dropping it deletes them and the run's taint, also when the test fails, and destroys what
/// the engine applied when the test failed half-way.
struct Fixtures<'a> {
    cluster: &'a Cluster,
    file: PathBuf,
    /// The node `kubernetes_node_taint` taints, and the taint's key.
    taint: (String, String),
    work: Option<(&'a LiveDir, String)>,
}

impl<'a> Fixtures<'a> {
    fn create(cluster: &'a Cluster, dir: &Path, suffix: &str, node: &str) -> Fixtures<'a> {
        let text = fs::read_to_string(corpus_dir().join("targets.json")).expect("targets.json");
        // One document after another (kubectl validates each kind, and `List` is none).
        let list: Value =
            serde_json::from_str(&text.replace("${suffix}", suffix)).expect("targets.json is JSON");
        let documents: String = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| format!("{o}\n"))
            .collect();
        let file = dir.join("targets.json");
        fs::write(&file, documents).expect("targets.json");
        let out = cluster.kubectl(&["create", "-f", &file.to_string_lossy()]);
        assert!(out.success(), "kubectl create the edited objects:\n{out}");
        Fixtures {
            cluster,
            file,
            taint: (node.to_string(), format!("minimal.example.com/{suffix}")),
            work: None,
        }
    }
}

impl Drop for Fixtures<'_> {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some((work, config)) = &self.work
        {
            let _ = fs::remove_file(work.path().join("imports.tf"));
            work.write(config);
            let _ = work.run(&[&["destroy", "-auto-approve"][..], &PARALLEL[..]].concat());
        }
        let _ = self.cluster.kubectl(&[
            "delete",
            "-f",
            &self.file.to_string_lossy(),
            "--wait=false",
            "--ignore-not-found",
        ]);
        // Gone after a destroy; after a failure the destroy may not have run.
        let (node, key) = &self.taint;
        let _ = self.cluster.kubectl(&["taint", "node", node, &format!("{key}-")]);
    }
}

/// The node `kubernetes_node_taint` taints: the cluster's first. A node of the test's own
/// would never run the DaemonSets' pods, and their rollouts would never finish; the taint,
/// `PreferNoSchedule` with the run's key, keeps no pod off it.
fn node_name(cluster: &Cluster) -> String {
    let nodes = cluster.get_json(&["nodes"]);
    let mut names: Vec<&str> = nodes["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    names.sort();
    names.first().expect("the cluster has a node").to_string()
}

/// Values at a dotted path of a state value: every element where a level is a block list;
/// `None` where a level above the last is absent (the default does not apply).
fn at_path<'v>(value: &'v Value, path: &[&str], out: &mut Vec<&'v Value>) {
    let Some((head, rest)) = path.split_first() else {
        out.push(value);
        return;
    };
    let next = &value[*head];
    if rest.is_empty() {
        out.push(next);
        return;
    }
    match next {
        Value::Array(items) => items.iter().for_each(|i| at_path(i, rest, out)),
        Value::Object(_) => at_path(next, rest, out),
        _ => {}
    }
}

/// The same value in JSON, numbers compared by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Checks every default fact of `type_name` whose block is present in `values`: returns how
/// many values it checked and the mismatches.
fn check_defaults(
    type_name: &str,
    values: &Value,
    facts: &[(String, String, String)],
) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (path, default, source) in facts {
        let expected: Value = serde_json::from_str(default)
            .unwrap_or_else(|e| panic!("facts.tsv: {type_name} {path}: {default} ({e})"));
        let segments: Vec<&str> = path.split('.').collect();
        let mut found = Vec::new();
        at_path(values, &segments, &mut found);
        for value in found {
            checked += 1;
            if !same(value, &expected) {
                wrong.push(format!(
                    "{type_name}.{path} = {value}, hashicorp holds {expected} ({source})"
                ));
            }
        }
    }
    (checked, wrong)
}

/// The `default` facts of every type: type to `(path, JSON value, source)`, but for those the
/// provider does differently on purpose (`provider_live::DIFFERENCES`).
fn default_facts() -> BTreeMap<String, Vec<(String, String, String)>> {
    let path = acceptance::paths::workspace_root().join("provider-live/catalog/facts.tsv");
    let mut out: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    for line in fs::read_to_string(path).expect("facts.tsv").lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let different = provider_live::DIFFERENCES
            .iter()
            .any(|(path, fact, _)| cols.get(1) == Some(path) && cols.get(2) == Some(fact));
        if cols.len() >= 5 && cols[2] == "default" && !different {
            out.entry(cols[0].to_string()).or_default().push((
                cols[1].to_string(),
                cols[3].to_string(),
                cols[4].to_string(),
            ));
        }
    }
    out
}

/// The first element of a block list, or the object itself (framework types' attributes).
fn first(value: &Value) -> &Value {
    match value {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    }
}

/// The ID `terraform import` takes for a resource: its `id`, or for a `kubernetes_manifest`
/// (which has none) `apiVersion=…,kind=…,namespace=…,name=…` of its object.
fn import_id(values: &Value) -> String {
    if let Some(id) = values["id"].as_str() {
        return id.to_string();
    }
    let manifest = &values["manifest"]["value"];
    let text = |pointer: &str| {
        manifest
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut id = format!("apiVersion={},kind={}", text("/apiVersion"), text("/kind"));
    if !text("/metadata/namespace").is_empty() {
        id.push_str(&format!(",namespace={}", text("/metadata/namespace")));
    }
    id + &format!(",name={}", text("/metadata/name"))
}

/// Prints past the test harness's capture, so `scripts/test.sh` sees the line.
fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn every_type_applies_minimal_plans_empty_imports_and_destroys() {
    let cluster = Cluster::start();
    let run = unique_name("m").trim_start_matches("m-").to_string();
    let estate = format!("minimal-{run}");
    let modules = modules(&run);
    let exceptions = exceptions();
    let defaults = default_facts();
    let schema_paths: BTreeSet<(String, String)> = reference_rows()
        .into_iter()
        .filter(|r| r[0] == "resource")
        .map(|r| (r[1].clone(), r[2].clone()))
        .collect();

    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let node = node_name(&cluster);
    let mut fixtures = Fixtures::create(&cluster, work.path(), &run, &node);
    let config = write_modules(work.path(), &modules, &node);
    work.write(&config);
    let init = work.run(&["init", "-input=false"]);
    assert!(init.success(), "init failed:\n{init}");
    fixtures.work = Some((&work, config.clone()));

    let out = work.run(&[&["apply", "-auto-approve"][..], &PARALLEL[..]].concat());
    assert!(out.success(), "apply failed:\n{out}");
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &PARALLEL[..]].concat());
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");

    // The state holds what hashicorp's would.
    let state = work.state_instances();
    let values = |a: &str| -> Value {
        state
            .get(a)
            .unwrap_or_else(|| panic!("{a} is not in state"))
            .stored["attributes"]
            .clone()
    };
    let with_object: Vec<&Module> = modules
        .iter()
        .filter(|m| excepted(&exceptions, &m.type_name, "no_object").is_none())
        .collect();
    // Both default service account types edit the same object.
    let targets: Vec<Target> = with_object
        .iter()
        .map(|m| kubectl_target(&m.type_name, &values(&address(m))))
        .collect::<BTreeSet<Target>>()
        .into_iter()
        .collect();
    let live: BTreeMap<_, Value> = kubectl_get(&cluster, &targets, false)
        .into_iter()
        .map(|o| (object_key(&o), o))
        .collect();
    assert_eq!(live.len(), targets.len(), "every module's object exists");
    let mut problems = Vec::new();
    let mut checked_per_type = BTreeMap::new();
    for m in &modules {
        let v = values(&address(m));
        let meta = first(&v["metadata"]);
        let has = |path: &str| schema_paths.contains(&(m.type_name.clone(), path.to_string()));
        let (checked, wrong) = check_defaults(
            &m.type_name,
            &v,
            defaults.get(&m.type_name).map_or(&[][..], |f| f),
        );
        problems.extend(wrong);
        checked_per_type.insert(m.type_name.clone(), checked);
        if excepted(&exceptions, &m.type_name, "no_object").is_some() {
            continue;
        }
        let (_, namespace, name) = kubectl_target(&m.type_name, &v);
        let object = live
            .iter()
            .find(|((ns, n, _), _)| *ns == namespace && *n == name)
            .map(|(_, o)| o)
            .unwrap_or_else(|| panic!("{}: no live object {namespace:?}/{name}", m.type_name));
        if let Some(ns) = &namespace {
            assert_eq!(ns, "default", "{}: the object is not in `default`", m.type_name);
        }
        if has("metadata.generation") {
            let expected = object
                .pointer("/metadata/generation")
                .cloned()
                .unwrap_or(Value::from(0));
            if !same(&meta["generation"], &expected) {
                problems.push(format!(
                    "{}: metadata.generation = {}, the object's is {expected}",
                    m.type_name, meta["generation"]
                ));
            }
        }
        if excepted(&exceptions, &m.type_name, "not_owned").is_none() {
            assert!(
                object.pointer("/metadata/labels/tofu-estate") == Some(&Value::from(estate.as_str())),
                "{} carries the estate label",
                described(object)
            );
        }
    }
    assert!(
        problems.is_empty(),
        "{} values differ from hashicorp's state:\n{}",
        problems.len(),
        problems.join("\n")
    );

    // Import every importable resource into an empty state: the same state, an empty plan.
    let before: BTreeMap<String, Value> = state
        .iter()
        .filter(|(a, i)| i.managed && a.starts_with("module."))
        .filter(|(_, i)| {
            ["not_importable", "import_refused"]
                .iter()
                .all(|e| excepted(&exceptions, &i.type_name, e).is_none())
        })
        .map(|(a, i)| (a.clone(), i.stored["attributes"].clone()))
        .collect();
    let addresses: Vec<&str> = before.keys().map(String::as_str).collect();
    let rm = work.run(&[&["state", "rm"][..], &addresses[..]].concat());
    assert!(rm.success(), "state rm:\n{rm}");
    let imports: String = before
        .iter()
        .map(|(a, v)| format!("import {{\n  to = {a}\n  id = {}\n}}\n", quote(&import_id(v))))
        .collect();
    fs::write(work.path().join("imports.tf"), imports).expect("imports.tf");
    let out = work.run(&[&["apply", "-auto-approve"][..], &PARALLEL[..]].concat());
    assert!(out.success(), "import failed:\n{out}");
    assert!(
        out.stdout.contains(&format!(
            "Resources: {} imported, 0 added, 0 changed",
            before.len()
        )),
        "not a pure import of {} objects:\n{out}",
        before.len()
    );
    fs::remove_file(work.path().join("imports.tf")).expect("imports.tf");
    let after = work.state_instances();
    // Controllers move resourceVersion and status meanwhile (an Ingress gets its address).
    let differences: Vec<String> = before
        .iter()
        .filter_map(|(a, v)| {
            let imported = &after.get(a)?.stored["attributes"];
            (imports::comparable(v) != imports::comparable(imported))
                .then(|| format!("{a}:\n  applied  {v}\n  imported {imported}"))
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} imported states differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
    let plan = work.run(&[&["plan", "-detailed-exitcode"][..], &PARALLEL[..]].concat());
    assert_eq!(plan.code, 0, "the plan after import is not empty:\n{plan}");

    // Destroy: no object is left (a namespace's or a claim's may still be finishing).
    let out = work.run(&[&["destroy", "-auto-approve"][..], &PARALLEL[..]].concat());
    assert!(out.success(), "destroy failed:\n{out}");
    let owned: Vec<Target> = with_object
        .iter()
        .filter(|m| excepted(&exceptions, &m.type_name, "not_owned").is_none())
        .map(|m| kubectl_target(&m.type_name, &values(&address(m))))
        .collect();
    for left in kubectl_get(&cluster, &owned, true) {
        let going = left.pointer("/metadata/deletionTimestamp").is_some();
        assert!(going, "destroy left {} behind", described(&left));
    }

    for m in &modules {
        let import = match (
            excepted(&exceptions, &m.type_name, "not_importable"),
            excepted(&exceptions, &m.type_name, "import_refused"),
        ) {
            (Some(source), _) => format!("not importable, as hashicorp's ({source})"),
            (_, Some(source)) => format!("import refused, unlike hashicorp's ({source})"),
            _ => "import verified".to_string(),
        };
        report(&format!(
            "minimal: {}: config applied, defaults checked {}, {import}",
            m.type_name, checked_per_type[&m.type_name]
        ));
    }
}

/// True when `value` holds nothing: null, "", 0, false, or collections of such (a dynamic
/// value, stored as its `value` and `type`, by its value).
fn blank(value: &Value) -> bool {
    if let Some(map) = value.as_object()
        && map.len() == 2
        && map.contains_key("type")
        && let Some(inner) = map.get("value")
    {
        return blank(inner);
    }
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.iter().all(blank),
        Value::Object(map) => map.values().all(blank),
    }
}

/// The data sources that name no object: the cluster's namespaces and its version.
const NOTHING_TO_MISS: [&str; 2] = ["kubernetes_all_namespaces", "kubernetes_server_version"];

#[test]
fn every_data_source_reads_a_missing_object_as_empty() {
    let cluster = Cluster::start();
    let run = unique_name("m").trim_start_matches("m-").to_string();
    let work = LiveDir::new(&format!("minimal-{run}"), cluster.kubeconfig());
    let config = fs::read_to_string(corpus_dir().join("data-sources/not_found.tf")).expect("not_found.tf");
    let exceptions = exceptions();
    let (failing, reading): (Vec<&str>, Vec<&str>) = config.split("\n\n").partition(|block| {
        block
            .split('"')
            .nth(1)
            .is_some_and(|t| excepted(&exceptions, t, "data_not_found_fails").is_some())
    });
    let body = reading.join("\n\n").replace("${suffix}", &run);
    work.write(&body);
    let out = work.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "reading missing objects:\n{out}");

    // The arguments are what the configuration gave; every other attribute is empty.
    let arguments = [
        "id",
        "api_version",
        "kind",
        "label_selector",
        "field_selector",
        "limit",
        "namespace",
    ];
    let mut read = BTreeSet::new();
    let mut filled = Vec::new();
    for (address, instance) in work.state_instances() {
        read.insert(instance.type_name.clone());
        if NOTHING_TO_MISS.contains(&instance.type_name.as_str()) {
            continue;
        }
        let mut values = instance.stored["attributes"].clone();
        for a in arguments {
            values[a] = Value::Null;
        }
        match &mut values["metadata"] {
            Value::Array(items) => items.iter_mut().for_each(|m| {
                m["name"] = Value::Null;
                m["namespace"] = Value::Null;
                m["labels"] = Value::Null;
            }),
            _ => values["metadata"] = Value::Null,
        }
        if !blank(&values) {
            filled.push(format!("{address}: {values}"));
        }
    }
    assert!(
        filled.is_empty(),
        "missing objects read with values:\n{}",
        filled.join("\n")
    );

    // hashicorp's exceptions fail the read, naming the object.
    let mut failed = BTreeSet::new();
    for block in &failing {
        let type_name = block.split('"').nth(1).unwrap_or_default();
        work.write(&block.replace("${suffix}", &run));
        let out = work.run(&["plan", "-input=false"]);
        assert!(
            !out.success() && out.combined().contains("not found"),
            "{type_name}: a missing object does not fail as hashicorp's read does:\n{out}"
        );
        failed.insert(type_name.to_string());
    }
    let data_sources: BTreeSet<String> = reference_rows()
        .into_iter()
        .filter(|r| r[0] == "data")
        .map(|r| r[1].clone())
        .collect();
    let covered: BTreeSet<String> = read.union(&failed).cloned().collect();
    assert_eq!(covered, data_sources, "every data source is read");
    for t in &data_sources {
        let how = match excepted(&exceptions, t, "data_not_found_fails") {
            Some(source) => format!("not found fails as hashicorp's ({source})"),
            None if NOTHING_TO_MISS.contains(&t.as_str()) => "read (nothing to miss)".to_string(),
            None => "not found reads empty".to_string(),
        };
        report(&format!("minimal data: {t}: {how}"));
    }
}
