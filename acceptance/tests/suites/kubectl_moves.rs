//! `moved` from the kubectl providers' `kubectl_manifest` (gavinbunney/kubectl and alekc/kubectl)
//! to `kubernetes_manifest`, with both providers declared as during a migration: the manifest
//! comes from the source state's `yaml_body` (in `override_namespace` where set), the first plan
//! changes nothing but the estate stamp, one apply stamps the objects, and the next plan is
//! empty. A stand-in ([`acceptance::stand_in`]) serves as the kubectl providers.
//!
//! And the states the kubectl providers' own binaries wrote (`acceptance/fixtures/kubectl/
//! <owner>-<version>/`: gavinbunney v1.19.0, alekc v2.4.1 and v3.0.0-beta3, each the
//! configuration it applied, its state and the objects as it left them, every name under the
//! tag `__RUN__`) move to `choudoufu/kubectl` as its users move: the objects created again as
//! that apply wrote them (field manager and operation as recorded), the state given their uids,
//! `terraform state replace-provider <their address> choudoufu/kubectl`, a first plan whose only
//! change is the estate stamp (`estate` from null to the estate, nothing else, no replace), one
//! apply that labels every object, and an empty plan.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::migration::{objects_file, replay};
use acceptance::objects::{Target, kubectl_delete_quietly, kubectl_get, object_key};
use acceptance::{Cluster, Engine, engine_info, stand_in};
use serde_json::{Value, json};

/// The kubectl providers whose states move, with the schema version each writes.
const SOURCES: [(&str, i64); 2] = [("gavinbunney/kubectl", 1), ("alekc/kubectl", 2)];

/// A `kubectl_manifest` instance as the kubectl providers store it (the attributes the move
/// reads, beside some it leaves behind).
fn kubectl_state(name: &str, source: &str, version: i64, yaml: &str, override_ns: Option<&str>) -> Value {
    json!({
        "mode": "managed", "type": "kubectl_manifest", "name": name,
        "provider": format!("provider[\"{}/{source}\"]", engine_info().registry_host()),
        "instances": [{"schema_version": version, "sensitive_attributes": [], "attributes": {
            "id": format!("/api/v1/namespaces/x/configmaps/{name}"), "api_version": "v1",
            "kind": "ConfigMap", "name": name, "yaml_body": yaml, "yaml_body_parsed": yaml,
            "override_namespace": override_ns, "server_side_apply": false, "wait_for_rollout": true,
            "uid": "recorded", "live_uid": "recorded", "force_new": false, "apply_only": false,
        }}],
    })
}

#[test]
fn kubectl_manifests_move_to_kubernetes_manifest_with_one_stamp() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kubectl");
    let ns = ns.name.as_str();
    let estate = unique_name("est");
    let dir = tempfile::tempdir().expect("a working folder");
    let sources: Vec<&str> = SOURCES.iter().map(|(source, _)| *source).collect();
    let config = stand_in::cli_config(dir.path(), &sources);
    let engine = Engine::new(dir.path()).env("TF_CLI_CONFIG_FILE", &config.to_string_lossy());

    let manifest = |name: &str| {
        format!(
            "resource \"kubernetes_manifest\" {name:?} {{\n  manifest = {{\n    apiVersion = \"v1\"\n    \
             kind       = \"ConfigMap\"\n    metadata   = {{ name = {name:?}, namespace = {} }}\n    \
             data       = {{ mode = \"on\", size = \"2\" }}\n  }}\n}}\n\nmoved {{\n  from = kubectl_manifest.{name}\n  \
             to   = kubernetes_manifest.{name}\n}}\n",
            quote(ns)
        )
    };
    let main = format!(
        "terraform {{\n  required_providers {{\n    kubernetes = {{ source = \"choudoufu/live\" }}\n  }}\n}}\n\n\
         provider \"kubernetes\" {{\n  estate      = {}\n  config_path = {}\n}}\n\n{}\n{}",
        quote(&estate),
        quote(&cluster.kubeconfig().to_string_lossy()),
        manifest("from-gavinbunney"),
        manifest("from-alekc"),
    );
    fs::write(dir.path().join("main.tf"), main).expect("main.tf");
    // What the kubectl providers applied, and their state of it: gavinbunney's YAML names
    // another namespace that `override_namespace` replaced.
    let yaml = |name: &str, namespace: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\n\
             data:\n  mode: \"on\"\n  size: \"2\"\n"
        )
    };
    for name in ["from-gavinbunney", "from-alekc"] {
        cluster.kubectl_ok(&[
            "create",
            "configmap",
            name,
            "-n",
            ns,
            "--from-literal=mode=on",
            "--from-literal=size=2",
        ]);
    }
    let ((gavinbunney, v1), (alekc, v2)) = (SOURCES[0], SOURCES[1]);
    let state = json!({
        "version": 4, "terraform_version": "1.15.5", "serial": 3,
        "lineage": "0b6f6a8e-6c4d-4c1e-9a53-6f4f8e1b2c3d", "outputs": {},
        "resources": [
            kubectl_state("from-gavinbunney", gavinbunney, v1, &yaml("from-gavinbunney", "elsewhere"), Some(ns)),
            kubectl_state("from-alekc", alekc, v2, &yaml("from-alekc", ns), None),
        ],
    });
    fs::write(dir.path().join("terraform.tfstate"), state.to_string()).expect("terraform.tfstate");
    // After the state: `init` installs the providers it names, as in a user's migration.
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");

    let (plan, summary) = engine.plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let summary = summary.expect("a plan");
    assert_eq!(summary.count("update"), 2, "{plan}");
    assert_eq!(summary.count("create") + summary.count("delete"), 0, "{plan}");
    for change in summary.raw["resource_changes"].as_array().expect("changes") {
        assert_eq!(
            change["change"]["before"]["manifest"], change["change"]["after"]["manifest"],
            "the move changed the manifest:\n{plan}"
        );
        assert!(
            change["previous_address"]
                .as_str()
                .is_some_and(|a| a.starts_with("kubectl_manifest."))
        );
    }
    assert!(
        plan.flat().contains("The next apply stamps the estate label"),
        "{plan}"
    );

    let out = engine.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "apply failed:\n{out}");
    for name in ["from-gavinbunney", "from-alekc"] {
        let live = cluster.get_json(&["configmap", name, "-n", ns]);
        assert_eq!(
            live["metadata"]["labels"]["tofu-estate"],
            estate.as_str(),
            "{live}"
        );
    }
    let again = engine.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "the plan after the stamp is not empty:\n{again}");
}

/// What stands for a run's tag in the recordings.
const PLACEHOLDER: &str = "__RUN__";

/// A recording's objects, each as the recorded apply wrote it.
struct Written {
    /// The field manager that wrote it (`HashiCorp`: the kubectl library's client-side apply
    /// under the providers' user agent; `kubectl` or `field_manager` under server-side apply).
    manager: String,
    /// `Update` (a create) or `Apply` (a server-side apply).
    operation: String,
    object: Value,
}

/// One recording of `acceptance/fixtures/kubectl/<folder>/` under the tag `run`.
struct Recording {
    body: String,
    state: Value,
    objects: Vec<Written>,
}

impl Recording {
    fn read(folder: &str, run: &str) -> Recording {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/kubectl")
            .join(folder);
        let read = |name: &str| {
            fs::read_to_string(dir.join(name))
                .unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
                .replace(PLACEHOLDER, run)
        };
        // The configuration applied: what every recording shares, what alekc's share, and the
        // folder's own.
        let shared: Vec<&str> = if folder.starts_with("alekc-") {
            vec!["../common.tf", "../alekc.tf", "main.tf"]
        } else {
            vec!["../common.tf", "main.tf"]
        };
        let body: String = shared.into_iter().map(read).collect::<Vec<_>>().join("\n");
        // As the engine of this run would have written it: an OpenTofu user's state names
        // the provider on registry.opentofu.org.
        let state = read("terraform.tfstate").replace(
            "\"registry.terraform.io/",
            &format!("\"{}/", engine_info().registry_host()),
        );
        let objects: Vec<Value> = serde_json::from_str(&read("objects.json")).expect("objects.json");
        let objects = objects
            .into_iter()
            .map(|w| Written {
                manager: w["manager"].as_str().expect("a manager").to_string(),
                operation: w["operation"].as_str().expect("an operation").to_string(),
                object: w["object"].clone(),
            })
            .collect();
        Recording {
            body,
            state: serde_json::from_str(&state).expect("the state"),
            objects,
        }
    }

    /// The state's `kubectl_manifest` instances: `(address, attributes)`.
    fn manifests(&self) -> Vec<(String, &Value)> {
        let mut out = Vec::new();
        for resource in self.state["resources"].as_array().expect("resources") {
            if resource["mode"] != "managed" || resource["type"] != "kubectl_manifest" {
                continue;
            }
            for instance in resource["instances"].as_array().expect("instances") {
                let key = match &instance["index_key"] {
                    Value::Null => String::new(),
                    key => format!("[{key}]"),
                };
                out.push((
                    format!(
                        "kubectl_manifest.{}{key}",
                        resource["name"].as_str().unwrap_or_default()
                    ),
                    &instance["attributes"],
                ));
            }
        }
        out
    }
}

/// Where kubectl finds the object of a `kubectl_manifest` instance's `attributes`.
fn manifest_target(attributes: &Value) -> Target {
    let text = |name: &str| {
        attributes[name]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let kind = text("kind").expect("a kind");
    let resource = match text("api_version").expect("an apiVersion").rsplit_once('/') {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    };
    let namespace = text("override_namespace").or_else(|| text("namespace"));
    (resource, namespace, text("name").expect("a name"))
}

/// Creates `objects` as the recorded apply wrote them: namespaces first, then definitions
/// (established before their objects are made), then the rest; a create (`Update`) or a
/// server-side apply (`Apply`) under the recorded field manager.
fn create(cluster: &Cluster, dir: &Path, objects: &[Written]) -> Result<(), String> {
    let stage = |w: &Written| match w.object["kind"].as_str() {
        Some("Namespace") => 0,
        Some("CustomResourceDefinition") => 1,
        _ => 2,
    };
    for wanted in 0..3 {
        let mut groups: BTreeMap<(&str, &str), Vec<Value>> = BTreeMap::new();
        for w in objects.iter().filter(|w| stage(w) == wanted) {
            groups
                .entry((w.operation.as_str(), w.manager.as_str()))
                .or_default()
                .push(w.object.clone());
        }
        for ((operation, manager), group) in &groups {
            let file = objects_file(dir, group);
            let (file, manager) = (file.to_string_lossy(), format!("--field-manager={manager}"));
            let args: Vec<&str> = match *operation {
                "Apply" => vec!["apply", "--server-side", &manager, "-f", &file],
                _ => vec!["create", &manager, "-f", &file],
            };
            let out = cluster.kubectl(&args);
            if !out.success() {
                return Err(format!("kubectl {}:\n{out}", args.join(" ")));
            }
            if wanted == 1 {
                for crd in group {
                    established(cluster, crd["metadata"]["name"].as_str().unwrap_or_default())?;
                }
            }
        }
    }
    Ok(())
}

/// Waits up to 60 s for the definition `name` to be Established (`kubectl wait` fails at once
/// while the definition has no conditions yet).
fn established(cluster: &Cluster, name: &str) -> Result<(), String> {
    let crd = format!("crd/{name}");
    let query = "-o=jsonpath={.status.conditions[?(@.type==\"Established\")].status}";
    for _ in 0..300 {
        if cluster.kubectl(&["get", &crd, query]).stdout.trim() == "True" {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    Err(format!("{crd} was not Established after 60 s"))
}

/// `state` with each `kubectl_manifest`'s recorded uid, wherever it appears, made its live
/// object's on `cluster`.
fn with_live_uids(cluster: &Cluster, recording: &Recording) -> Result<Value, String> {
    let manifests = recording.manifests();
    let targets: Vec<Target> = manifests.iter().map(|(_, a)| manifest_target(a)).collect();
    let live: BTreeMap<_, Value> = kubectl_get(cluster, &targets, true)
        .into_iter()
        .map(|o| (object_key(&o), o))
        .collect();
    let mut text = recording.state.to_string();
    for ((address, attributes), (_, namespace, name)) in manifests.iter().zip(&targets) {
        let kind = attributes["kind"].as_str().unwrap_or_default().to_string();
        let object = live
            .get(&(namespace.clone(), name.clone(), kind))
            .ok_or_else(|| format!("{address}: no object {namespace:?}/{name} on the cluster"))?;
        let (old, new) = (attributes["uid"].as_str(), object["metadata"]["uid"].as_str());
        if let (Some(old), Some(new)) = (old, new) {
            text = text.replace(old, new);
        }
    }
    Ok(serde_json::from_str(&text).expect("the state is still JSON"))
}

/// The attributes (top level) where a planned change's `after` differs from its `before`,
/// those known only after apply marked so, with both values.
fn changed_attributes(change: &Value) -> Vec<String> {
    let (before, after, unknown) = (
        &change["change"]["before"],
        &change["change"]["after"],
        &change["change"]["after_unknown"],
    );
    let keys: std::collections::BTreeSet<&String> = [before, after, unknown]
        .iter()
        .filter_map(|v| v.as_object())
        .flat_map(|m| m.keys())
        .collect();
    let null = Value::Null;
    keys.into_iter()
        .filter_map(|key| {
            let (b, a) = (before.get(key).unwrap_or(&null), after.get(key).unwrap_or(&null));
            let is_unknown = unknown.get(key).is_some_and(|u| u == &Value::Bool(true));
            if is_unknown {
                Some(format!("{key}: {b} -> (known after apply)"))
            } else if b != a {
                Some(format!("{key}: {b} -> {a}"))
            } else {
                None
            }
        })
        .collect()
}

/// The first plan after `replace-provider`: every `kubectl_manifest` of `recording` an
/// in-place update whose only change is `estate` from null to `estate`; nothing else managed
/// changes. Says what is wrong otherwise, or what it planned: `(updates, data sources read)`.
fn only_the_stamp(work: &LiveDir, recording: &Recording, estate: &str) -> Result<(usize, usize), String> {
    let (plan, summary) = work.engine().plan_json(&[]);
    let summary = match summary {
        Some(summary) if plan.success() => summary,
        _ => return Err(format!("the first plan failed:\n{plan}")),
    };
    let manifests: Vec<String> = recording.manifests().into_iter().map(|(a, _)| a).collect();
    let stamp = format!("estate: null -> {}", json!(estate));
    let mut problems = Vec::new();
    for change in summary.raw["resource_changes"].as_array().into_iter().flatten() {
        let address = change["address"].as_str().unwrap_or_default();
        let actions: Vec<&str> = change["change"]["actions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if change["mode"] == "data" {
            continue;
        }
        let changed = changed_attributes(change);
        let expected: &[&str] = if manifests.iter().any(|m| m == address) {
            &["update"]
        } else {
            &["no-op"]
        };
        let wanted: Vec<String> = match expected {
            ["update"] => vec![stamp.clone()],
            _ => Vec::new(),
        };
        if actions != expected || changed != wanted {
            let replace = change["change"]["replace_paths"].clone();
            problems.push(format!(
                "{address}: {actions:?} (replace_paths {replace}), changes {changed:?}"
            ));
        }
    }
    let planned = summary.count("update");
    if planned != manifests.len() {
        problems.push(format!("{planned} updates planned, not {}", manifests.len()));
    }
    if problems.is_empty() {
        Ok((planned, summary.count("read")))
    } else {
        Err(format!(
            "the first plan changes more than the stamp:\n  {}\n{plan}",
            problems.join("\n  ")
        ))
    }
}

/// Moves the recording `folder` (a state naming `source`) to choudoufu/kubectl on `cluster`.
fn move_recorded(cluster: &Cluster, folder: &str, source: &str) -> Result<(), String> {
    let run = unique_name("r").replace('-', "");
    let recording = Recording::read(folder, &run);
    let estate = unique_name("est");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    work.write(&recording.body);
    let targets: Vec<Target> = recording
        .objects
        .iter()
        .map(|w| acceptance::objects::target_of(&w.object))
        .collect();
    let _cleanup = Cleanup(cluster, &targets);
    create(cluster, work.path(), &recording.objects)?;
    let state = with_live_uids(cluster, &recording)?;
    fs::write(work.path().join("terraform.tfstate"), state.to_string()).expect("terraform.tfstate");

    let from = format!("{}/{source}", engine_info().registry_host());
    let to = engine_info().provider_address("kubectl");
    let out = work.run(&["state", "replace-provider", "-auto-approve", &from, &to]);
    if !out.success() {
        return Err(format!("replace-provider failed:\n{out}"));
    }
    let (updates, reads) = only_the_stamp(&work, &recording, &estate)?;

    replay::stamp(cluster, &work, &targets, &estate)?;
    say(&format!(
        "{folder}: {} objects made again, replace-provider, first plan {updates} updates (estate only), \
         {reads} data sources read at apply; stamped; the next plan empty",
        targets.len()
    ));
    Ok(())
}

/// Prints past the harness's capture.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "kubectl_moves: {line}");
}

/// Deletes a recording's objects (without waiting), however the test ends.
struct Cleanup<'a>(&'a Cluster, &'a [Target]);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        kubectl_delete_quietly(self.0, self.1);
    }
}

#[test]
fn a_state_gavinbunney_v1_19_0_wrote_moves_to_choudoufu_kubectl_with_only_the_stamp() {
    let cluster = Cluster::start();
    if let Err(e) = move_recorded(&cluster, "gavinbunney-1.19.0", "gavinbunney/kubectl") {
        panic!("gavinbunney/kubectl v1.19.0's state:\n{e}");
    }
}

#[test]
fn a_state_alekc_v2_4_1_wrote_moves_to_choudoufu_kubectl_with_only_the_stamp() {
    let cluster = Cluster::start();
    if let Err(e) = move_recorded(&cluster, "alekc-2.4.1", "alekc/kubectl") {
        panic!("alekc/kubectl v2.4.1's state:\n{e}");
    }
}

#[test]
fn a_state_alekc_v3_0_0_beta3_wrote_moves_to_choudoufu_kubectl_with_only_the_stamp() {
    let cluster = Cluster::start();
    if let Err(e) = move_recorded(&cluster, "alekc-3.0.0-beta3", "alekc/kubectl") {
        panic!("alekc/kubectl v3.0.0-beta3's state:\n{e}");
    }
}
