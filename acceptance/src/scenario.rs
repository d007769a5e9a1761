//! The reference estate pair (`examples/network`, `examples/app`) copied into a scratch folder and
//! driven against a cluster, with the checks the scenario's stages share: objects read back with
//! kubectl, plans read change by change, files edited the way a user edits them, and an engine
//! killed mid-apply.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use crate::records_fixtures::{ESTATE_LABEL, records_namespace};
use crate::{Cluster, Engine, EngineOutput, PlanSummary, paths};

/// What a stage's check returns: `Err` says which expectation failed and what was seen instead.
pub type Check = Result<(), String>;

/// Returns `Err(message)` from the enclosing check when `cond` does not hold.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

/// The reference estates (`examples/network`, `examples/app`): folder and estate name alike.
const ESTATES: [&str; 2] = ["network", "app"];

/// Every kind the estates create, as kubectl names them (group-qualified, so no short-name lookup).
pub const KINDS: &str = "namespaces,configmaps,secrets,services,serviceaccounts,deployments.apps,\
                         horizontalpodautoscalers.autoscaling,networkpolicies.networking.k8s.io";

/// How long one engine run may take before it counts as hung.
const ENGINE_TIMEOUT: Duration = Duration::from_secs(180);

/// The two estates' working folders (copies of the examples) and the cluster they manage.
pub struct Estates {
    pub cluster: Cluster,
    dir: tempfile::TempDir,
    pub network: Engine,
    pub app: Engine,
}

impl Estates {
    /// Starts (or connects to) the cluster, copies both examples into a scratch folder and runs
    /// `init` in each, installing the providers from the project's mirror.
    pub fn start() -> Result<Estates, String> {
        let cluster = Cluster::start();
        let dir = tempfile::Builder::new()
            .prefix("estates-")
            .tempdir()
            .map_err(|e| format!("scratch folder: {e}"))?;
        let examples = paths::workspace_root().join("examples");
        for estate in ESTATES {
            copy_module(&examples.join(estate), &dir.path().join(estate))?;
        }
        let network = engine_for(&dir.path().join("network"), cluster.kubeconfig());
        let app = engine_for(&dir.path().join("app"), cluster.kubeconfig());
        for (name, engine) in [("network", &network), ("app", &app)] {
            let init = engine.init();
            ensure!(init.success(), "init of {name} failed:\n{init}");
        }
        Ok(Estates {
            cluster,
            dir,
            network,
            app,
        })
    }

    /// The working folder of `estate` ("network" or "app").
    pub fn module_dir(&self, estate: &str) -> PathBuf {
        self.dir.path().join(estate)
    }

    /// The scratch folder holding both working folders (for files a stage writes beside them).
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// The engine in `estate`'s working folder, talking to the cluster as the identity of `kubeconfig`.
    pub fn engine_as(&self, estate: &str, kubeconfig: &Path) -> Engine {
        engine_for(&self.module_dir(estate), kubeconfig)
    }

    /// Keeps the scratch folder on disk (for a look after a failure) and says where it is.
    pub fn keep(self) -> PathBuf {
        self.dir.keep()
    }

    /// kubectl as the cluster's admin; a failing command is an error carrying its output.
    pub fn kubectl(&self, args: &[&str]) -> Result<EngineOutput, String> {
        let out = self.cluster.kubectl(args);
        ensure!(out.success(), "kubectl {} failed:\n{out}", args.join(" "));
        Ok(out)
    }

    /// One object, or None when it does not exist.
    pub fn object(
        &self,
        resource: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Value>, String> {
        let mut args = vec!["get", resource, name, "--ignore-not-found", "-o", "json"];
        if let Some(ns) = namespace {
            args.extend(["-n", ns]);
        }
        let out = self.kubectl(&args)?;
        if out.stdout.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(&out.stdout)
            .map(Some)
            .map_err(|e| format!("kubectl printed no JSON ({e}): {out}"))
    }

    /// One object that must exist.
    pub fn existing(&self, resource: &str, namespace: Option<&str>, name: &str) -> Result<Value, String> {
        self.object(resource, namespace, name)?.ok_or_else(|| {
            format!(
                "{resource} {}{name} does not exist",
                namespace.map(|n| format!("{n}/")).unwrap_or_default()
            )
        })
    }

    /// The objects of `resources` (comma-separated kubectl names) in all namespaces matching `selector`.
    pub fn list(&self, resources: &str, selector: Option<&str>) -> Result<Vec<Value>, String> {
        let mut args = vec!["get", resources, "-A", "-o", "json"];
        if let Some(selector) = selector {
            args.extend(["-l", selector]);
        }
        let out = self.kubectl(&args)?;
        let list: Value =
            serde_json::from_str(&out.stdout).map_err(|e| format!("kubectl printed no JSON ({e}): {out}"))?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// Every object of the estates' kinds carrying `tofu-estate=<estate>`, or either of the two
    /// estates' label when None. Never any estate's: other suites' estates live on a shared
    /// cluster at the same time (`make test-real` runs two suites at once).
    pub fn labelled(&self, estate: Option<&str>) -> Result<Vec<Value>, String> {
        self.list(KINDS, Some(&selector(estate)))
    }

    /// The output Secrets in `estate`'s records namespace `tofu-records-<estate>` (not its head).
    pub fn records(&self, estate: &str) -> Result<Vec<Value>, String> {
        let namespace = records_namespace(estate);
        let selector = "tofu-records/output=true";
        let out = self.kubectl(&["get", "secrets", "-n", &namespace, "-l", selector, "-o", "json"])?;
        let list: Value =
            serde_json::from_str(&out.stdout).map_err(|e| format!("kubectl printed no JSON ({e}): {out}"))?;
        Ok(list["items"].as_array().cloned().unwrap_or_default())
    }

    /// Waits (up to a minute: a real cluster finalizes namespaces) until no object carries
    /// `estate`'s label (any estate's when None).
    pub fn wait_unlabelled(&self, estate: Option<&str>) -> Check {
        let mut left = Vec::new();
        let clear = wait_until(Duration::from_secs(60), || {
            left = self.labelled(estate)?;
            Ok(left.is_empty())
        })?;
        ensure!(
            clear,
            "objects still carry {} a minute on: {:?}",
            selector(estate),
            snapshot(&left).keys()
        );
        Ok(())
    }

    /// Waits (up to a minute: a real cluster finalizes namespaces) until `resource` `name` is gone.
    pub fn wait_gone(&self, resource: &str, namespace: Option<&str>, name: &str) -> Check {
        let gone = wait_until(Duration::from_secs(60), || {
            Ok(self.object(resource, namespace, name)?.is_none())
        })?;
        ensure!(gone, "{resource} {name} still exists a minute after its delete");
        Ok(())
    }
}

/// The engine in a working folder, on the cluster of `kubeconfig`.
fn engine_for(workdir: &Path, kubeconfig: &Path) -> Engine {
    Engine::new(workdir)
        .env("TF_VAR_kubeconfig", &kubeconfig.to_string_lossy())
        .timeout(ENGINE_TIMEOUT)
}

/// Copies a root module's `.tf` files (not its `.terraform` folder or state) into `to`.
pub fn copy_module(from: &Path, to: &Path) -> Check {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", from.display()))?.path();
        if path.extension().is_some_and(|ext| ext == "tf") {
            let target = to.join(path.file_name().expect("a file in a folder listing has a name"));
            fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Writes a file in a working folder, as a user saves an edit.
pub fn write(path: &Path, text: &str) -> Check {
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads a file in a working folder.
pub fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Deletes a file if it exists.
pub fn remove(path: &Path) -> Check {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("{}: {e}", path.display())),
        _ => Ok(()),
    }
}

/// Replaces every `from` in `text` by `to`; `from` must occur, or the edit did not do what it says.
pub fn replace_all(text: &str, from: &str, to: &str) -> Result<String, String> {
    ensure!(
        text.contains(from),
        "the configuration has no `{from}` to replace"
    );
    Ok(text.replace(from, to))
}

/// Removes the block opening with `header` (e.g. `resource "kubernetes_service" "web" {`) up to
/// its matching closing brace, and the blank line after it.
pub fn remove_block(text: &str, header: &str) -> Result<String, String> {
    let start = text
        .find(header)
        .ok_or_else(|| format!("the configuration has no block `{header}`"))?;
    let mut depth = 0usize;
    for (offset, ch) in text[start..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let end = start + offset + 1;
                    let rest = text[end..].trim_start_matches('\n');
                    return Ok(format!("{}{}", &text[..start], rest));
                }
            }
            _ => {}
        }
    }
    Err(format!("block `{header}` is not closed"))
}

/// The plan's changes other than no-op and read, in plan order.
pub fn pending(plan: &PlanSummary) -> Vec<(String, Vec<String>)> {
    plan.changes
        .iter()
        .filter(|(_, actions)| actions.iter().any(|a| a != "no-op" && a != "read"))
        .cloned()
        .collect()
}

/// The `resource_changes` entry of `address` in a `show -json` plan.
pub fn resource_change<'a>(plan: &'a PlanSummary, address: &str) -> Option<&'a Value> {
    plan.raw["resource_changes"]
        .as_array()?
        .iter()
        .find(|c| c["address"] == address)
}

/// The paths (like `metadata[0].labels.team`) whose known planned value differs from the prior
/// one. Paths the plan leaves unknown (`after_unknown`) are skipped: they differ by definition.
pub fn known_differences(change: &Value) -> Vec<String> {
    let mut found = Vec::new();
    differences(
        &change["before"],
        &change["after"],
        &change["after_unknown"],
        "",
        &mut found,
    );
    found
}

fn differences(before: &Value, after: &Value, unknown: &Value, path: &str, found: &mut Vec<String>) {
    if unknown == &Value::Bool(true) {
        return;
    }
    let child = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for key in b.keys().chain(a.keys().filter(|k| !b.contains_key(*k))) {
                let null = Value::Null;
                let (bv, av) = (b.get(key).unwrap_or(&null), a.get(key).unwrap_or(&null));
                differences(bv, av, &unknown[key.as_str()], &child(key), found);
            }
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => {
            for (i, (bv, av)) in b.iter().zip(a).enumerate() {
                differences(bv, av, &unknown[i], &format!("{path}[{i}]"), found);
            }
        }
        _ if before != after => found.push(path.to_string()),
        _ => {}
    }
}

/// `(added, changed, destroyed)` from an apply's or destroy's closing line.
pub fn applied_counts(out: &EngineOutput) -> Option<(u64, u64, u64)> {
    let text = out.stdout.as_str();
    let number_before = |line: &str, word: &str| -> Option<u64> {
        let end = line.find(word)?;
        line[..end].trim_end().rsplit(' ').next()?.parse().ok()
    };
    if let Some(line) = text.lines().find(|l| l.contains("Apply complete! Resources:")) {
        return Some((
            number_before(line, " added")?,
            number_before(line, " changed")?,
            number_before(line, " destroyed")?,
        ));
    }
    let line = text
        .lines()
        .find(|l| l.contains("Destroy complete! Resources:"))?;
    Some((0, 0, number_before(line, " destroyed")?))
}

/// The estate label of an object, if it carries one.
pub fn estate_of(object: &Value) -> Option<&str> {
    object["metadata"]["labels"][ESTATE_LABEL].as_str()
}

/// `kind namespace/name` of an object, as a key for snapshots.
pub fn key_of(object: &Value) -> String {
    let meta = &object["metadata"];
    let kind = object["kind"].as_str().unwrap_or_default();
    match meta["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{}", meta["name"].as_str().unwrap_or_default()),
        None => format!("{kind} {}", meta["name"].as_str().unwrap_or_default()),
    }
}

/// An object as a snapshot keeps it: its identity, and what a writer other than a controller
/// reporting status could have changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectVersion {
    pub uid: String,
    /// For messages only: controllers move it too.
    pub resource_version: String,
    /// The object without `status`, `resourceVersion` and the status writers' `managedFields`
    /// entries, as JSON text. A real cluster's controllers keep writing status (an HPA's
    /// conditions a few seconds after it is created); any other change is somebody's write.
    content: String,
}

/// The label selector for `estate`'s objects, or both reference estates' when None.
fn selector(estate: Option<&str>) -> String {
    match estate {
        Some(estate) => format!("{ESTATE_LABEL}={estate}"),
        None => format!("{ESTATE_LABEL} in ({})", ESTATES.join(",")),
    }
}

/// Each object's [`ObjectVersion`], by `key_of`.
pub fn snapshot(objects: &[Value]) -> BTreeMap<String, ObjectVersion> {
    objects
        .iter()
        .map(|o| {
            let meta = &o["metadata"];
            let field = |f: &str| meta[f].as_str().unwrap_or_default().to_string();
            let mut content = o.clone();
            if let Some(object) = content.as_object_mut() {
                object.remove("status");
            }
            if let Some(meta) = content["metadata"].as_object_mut() {
                meta.remove("resourceVersion");
                if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
                    entries.retain(|e| e["subresource"] != "status");
                }
            }
            let version = ObjectVersion {
                uid: field("uid"),
                resource_version: field("resourceVersion"),
                content: content.to_string(),
            };
            (key_of(o), version)
        })
        .collect()
}

/// What changed between two snapshots, one line per object; empty when nothing did.
pub fn snapshot_changes(
    before: &BTreeMap<String, ObjectVersion>,
    after: &BTreeMap<String, ObjectVersion>,
) -> Vec<String> {
    let mut changes = Vec::new();
    for (key, old) in before {
        match after.get(key) {
            None => changes.push(format!("{key}: gone")),
            Some(new) if new.uid != old.uid => {
                changes.push(format!("{key}: recreated (uid {} -> {})", old.uid, new.uid))
            }
            Some(new) if new.content != old.content => changes.push(format!(
                "{key}: modified (resourceVersion {} -> {})",
                old.resource_version, new.resource_version
            )),
            Some(_) => {}
        }
    }
    changes.extend(
        after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(|k| format!("{k}: new")),
    );
    changes
}

/// The decoded values of a Secret's `data`.
pub fn secret_values(secret: &Value) -> Vec<String> {
    let Some(data) = secret["data"].as_object() else {
        return Vec::new();
    };
    data.values()
        .filter_map(|v| v.as_str())
        .filter_map(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .collect()
}

/// Polls `done` every 100 ms until it says true or `timeout` passes; Ok(false) on timeout.
pub fn wait_until(timeout: Duration, mut done: impl FnMut() -> Result<bool, String>) -> Result<bool, String> {
    let deadline = Instant::now() + timeout;
    loop {
        if done()? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// SIGKILLs a process and all its descendants at once (the engine, the provider plugins it
/// started, anything its provisioners run), so nothing gets to finish its work.
pub fn kill_tree(root: u32) -> Check {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    let proc_dir = fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    for entry in proc_dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        // A process may end while we look: skip it.
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces and parentheses): state ppid ...
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
        else {
            continue;
        };
        if let Ok(ppid) = ppid.parse() {
            parents.push((pid, ppid));
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, ppid)| *ppid == parent)
                .map(|(pid, _)| *pid),
        );
        i += 1;
    }
    let mut kill = std::process::Command::new("kill");
    kill.arg("-KILL")
        .args(tree.iter().map(u32::to_string))
        .stderr(std::process::Stdio::null());
    // Its exit status is not an error: part of the tree may have exited between scan and kill.
    kill.status().map(drop).map_err(|e| format!("kill: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{snapshot, snapshot_changes};

    fn hpa(resource_version: &str, labels: serde_json::Value, status_managers: &[&str]) -> serde_json::Value {
        let mut managed = vec![json!({"manager": "tofu-live-app-hpa", "operation": "Apply", "time": "t1"})];
        managed.extend(
            status_managers
                .iter()
                .map(|m| json!({"manager": m, "operation": "Update", "subresource": "status", "time": "t2"})),
        );
        json!({
            "kind": "HorizontalPodAutoscaler",
            "metadata": {
                "name": "web", "namespace": "shop", "uid": "u1",
                "resourceVersion": resource_version, "labels": labels, "managedFields": managed,
            },
            "spec": {"maxReplicas": 3},
        })
    }

    #[test]
    fn a_controllers_status_write_is_no_change_and_any_other_write_is() {
        let labels = json!({"tofu-estate": "app"});
        let before = snapshot(&[hpa("687", labels.clone(), &[])]);

        let mut status_written = hpa("691", labels.clone(), &["kube-controller-manager"]);
        status_written["status"] = json!({"conditions": [{"type": "AbleToScale"}]});
        assert_eq!(
            snapshot_changes(&before, &snapshot(&[status_written])),
            Vec::<String>::new()
        );

        let relabelled = hpa("692", json!({"tofu-estate": "app", "x": "y"}), &[]);
        assert_eq!(
            snapshot_changes(&before, &snapshot(&[relabelled])),
            ["HorizontalPodAutoscaler shop/web: modified (resourceVersion 687 -> 692)"]
        );

        let mut reapplied = hpa("693", labels.clone(), &[]);
        reapplied["metadata"]["managedFields"][0]["time"] = json!("t3");
        assert_eq!(snapshot_changes(&before, &snapshot(&[reapplied])).len(), 1);

        let mut recreated = hpa("694", labels, &[]);
        recreated["metadata"]["uid"] = json!("u2");
        assert_eq!(
            snapshot_changes(&before, &snapshot(&[recreated])),
            ["HorizontalPodAutoscaler shop/web: recreated (uid u1 -> u2)"]
        );
    }
}
