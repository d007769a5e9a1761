//! The patch-style resources with the real engine: they edit objects the estate does not own
//! (another estate's Namespace, kubectl's ConfigMap, Secret, Deployment and Node, the
//! cluster's default ServiceAccount) and claim only their own fields under their own field
//! manager. Each is created, planned empty, updated and destroyed, and the target object is
//! checked after each step: the owner's fields and label stay, no estate label is stamped,
//! and a destroy takes only this resource's fields (and its `managedFields` entry) away.

use std::fs;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, string_map, unique_name};
use acceptance::{Cluster, EngineOutput};
use serde_json::{Value, json};

/// The object with its `managedFields` (`kubectl get` hides them by default).
fn object(cluster: &Cluster, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--show-managed-fields");
    cluster.get_json(&all)
}

/// The `managedFields` entries of `manager`.
fn entries_of(live: &Value, manager: &str) -> Vec<Value> {
    live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["manager"] == manager)
        .cloned()
        .collect()
}

fn destroy(work: &LiveDir, what: &str) -> EngineOutput {
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy ({what}) failed:\n{out}");
    out
}

fn assert_empty_plan(work: &LiveDir, what: &str) {
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "plan after {what} is not empty:\n{plan}");
}

/// `kubectl apply --server-side --field-manager=<manager>` of one JSON object.
fn apply_as(cluster: &Cluster, manager: &str, object: &Value) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("object.json");
    fs::write(&path, object.to_string()).expect("writing the manifest");
    let manager = format!("--field-manager={manager}");
    let file = path.to_string_lossy().to_string();
    cluster.kubectl_ok(&["apply", "--server-side", &manager, "-f", &file]);
}

/// `metadata` with a name and, when given, a namespace.
fn metadata(name: &str, namespace: Option<&str>) -> String {
    let namespace = namespace
        .map(|ns| format!("    namespace = {}\n", quote(ns)))
        .unwrap_or_default();
    format!("  metadata {{\n    name = {}\n{namespace}  }}\n", quote(name))
}

fn labels(address: &str, namespace: &str, labels: &[(&str, &str)], force: bool) -> String {
    format!(
        "resource \"kubernetes_labels\" {} {{\n  api_version = \"v1\"\n  kind        = \"Namespace\"\n{}  \
         labels      = {}\n  force       = {force}\n}}\n",
        quote(address),
        metadata(namespace, None),
        string_map(labels)
    )
}

#[test]
fn two_estates_patch_one_namespace_without_fighting() {
    let cluster = Cluster::start();
    let (estate_a, estate_b) = (unique_name("esta"), unique_name("estb"));
    let ns = unique_name("shared");
    let owner = LiveDir::new(&estate_a, cluster.kubeconfig());
    owner.write(&format!(
        "resource \"kubernetes_namespace\" \"shared\" {{\n  metadata {{\n    name   = {}\n    labels = {}\n  }}\n}}\n",
        quote(&ns),
        string_map(&[("team", "a")])
    ));
    owner.apply_ok("estate A's namespace");
    let before = object(&cluster, &["namespace", &ns]);
    let owned_before = entries_of(&before, "tofu-live");
    assert_eq!(owned_before.len(), 1, "{before}");

    let patcher = LiveDir::new(&estate_b, cluster.kubeconfig());
    let body = |value: &str| {
        format!(
            "{}resource \"kubernetes_annotations\" \"note\" {{\n  api_version = \"v1\"\n  kind        = \"Namespace\"\n{}  \
             annotations = {}\n}}\n",
            labels("owner", &ns, &[("example.com/patched-by", value)], false),
            metadata(&ns, None),
            string_map(&[("example.com/note", value)])
        )
    };
    patcher.write(&body("b"));
    let out = patcher.apply_ok("estate B's label and annotation");
    assert!(out.stdout.contains("2 added, 0 changed, 0 destroyed"), "{out}");

    let manager_labels = format!("tofu-live-{estate_b}-labels");
    let manager_annotations = format!("tofu-live-{estate_b}-annotations");
    let check_patched = |value: &str| {
        let live = object(&cluster, &["namespace", &ns]);
        let live_labels = &live["metadata"]["labels"];
        assert_eq!(
            live_labels["tofu-estate"],
            estate_a.as_str(),
            "the estate label moved: {live}"
        );
        assert_eq!(live_labels["team"], "a", "{live}");
        assert_eq!(live_labels["example.com/patched-by"], value, "{live}");
        assert_eq!(
            live["metadata"]["annotations"]["example.com/note"], value,
            "{live}"
        );
        assert_eq!(
            entries_of(&live, "tofu-live"),
            owned_before,
            "estate A's fields changed hands"
        );
        assert_eq!(entries_of(&live, &manager_labels).len(), 1, "{live}");
        assert_eq!(entries_of(&live, &manager_annotations).len(), 1, "{live}");
    };
    check_patched("b");
    assert_empty_plan(&patcher, "estate B's create");
    assert_empty_plan(&owner, "estate B's create (estate A)");

    patcher.write(&body("b2"));
    let out = patcher.apply_ok("estate B's update");
    assert!(out.stdout.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    check_patched("b2");
    assert_empty_plan(&patcher, "estate B's update");
    assert_empty_plan(&owner, "estate B's update (estate A)");

    destroy(&patcher, "estate B");
    let live = object(&cluster, &["namespace", &ns]);
    let live_labels = &live["metadata"]["labels"];
    assert_eq!(live_labels["tofu-estate"], estate_a.as_str(), "{live}");
    assert_eq!(live_labels["team"], "a", "{live}");
    assert!(live_labels.get("example.com/patched-by").is_none(), "{live}");
    assert!(
        live["metadata"]["annotations"].get("example.com/note").is_none(),
        "{live}"
    );
    assert_eq!(
        live["metadata"]["uid"], before["metadata"]["uid"],
        "the namespace was replaced"
    );
    assert_eq!(entries_of(&live, "tofu-live"), owned_before);
    assert!(entries_of(&live, &manager_labels).is_empty(), "{live}");
    assert!(entries_of(&live, &manager_annotations).is_empty(), "{live}");
    assert_empty_plan(&owner, "estate B's destroy (estate A)");
    destroy(&owner, "estate A");
}

#[test]
fn a_label_another_manager_owns_is_a_conflict_until_forced() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "conflict");
    let ns = ns.name.as_str();
    apply_as(
        &cluster,
        "other",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": "other"}}}),
    );
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&labels("team", ns, &[("team", "ours")], false));
    let out = work.apply();
    assert!(
        !out.success(),
        "a label owned by another manager was overwritten:\n{out}"
    );
    assert!(
        out.flat().contains(&format!(
            "Field manager conflict on Namespace \"{ns}\": fields owned by \"other\""
        )),
        "the conflict does not name the other manager:\n{out}"
    );
    assert!(out.flat().contains("force = true"), "{out}");
    let live = object(&cluster, &["namespace", ns]);
    assert_eq!(live["metadata"]["labels"]["team"], "other");

    work.write(&labels("team", ns, &[("team", "ours")], true));
    work.apply_ok("forced");
    let live = object(&cluster, &["namespace", ns]);
    assert_eq!(live["metadata"]["labels"]["team"], "ours");
    assert!(
        entries_of(&live, "other").is_empty(),
        "the other manager still owns the label: {live}"
    );
    assert_empty_plan(&work, "the forced apply");

    // The label is this resource's now: a destroy takes it away.
    destroy(&work, "forced label");
    let live = object(&cluster, &["namespace", ns]);
    assert!(live["metadata"]["labels"].get("team").is_none(), "{live}");
}

// Secret values no generated name can contain (names are lowercase), so finding one in the
// output means it leaked.
const FIRST: &str = "Pass-Word-One";
const SECOND: &str = "Pass-Word-Two";

#[test]
fn config_map_and_secret_data_claim_only_their_keys() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "data");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let body = |config_map: &str, value: &str, secret: &str| {
        format!(
            "resource \"kubernetes_config_map_v1_data\" \"cfg\" {{\n{}  data = {}\n}}\n\n\
             resource \"kubernetes_secret_v1_data\" \"sec\" {{\n{}  data = {}\n}}\n",
            metadata(config_map, Some(ns)),
            string_map(&[("ours", value)]),
            metadata("sec", Some(ns)),
            string_map(&[("password", secret)])
        )
    };

    // The ConfigMap does not exist yet: a clear error naming it, nothing created.
    work.write(&body("missing", "a", FIRST));
    cluster.kubectl_ok(&[
        "create",
        "secret",
        "generic",
        "sec",
        "-n",
        ns,
        "--from-literal=theirs=t",
    ]);
    let out = work.apply();
    assert!(!out.success(), "{out}");
    assert!(
        out.flat()
            .contains(&format!("ConfigMap \"{ns}/missing\" does not exist")),
        "the missing ConfigMap is not named:\n{out}"
    );
    assert!(
        !cluster
            .kubectl(&["get", "configmap", "missing", "-n", ns])
            .success(),
        "a patch-style resource created its target"
    );

    cluster.kubectl_ok(&["create", "configmap", "cfg", "-n", ns, "--from-literal=theirs=t"]);
    work.write(&body("cfg", "a", FIRST));
    let out = work.apply_ok("create");
    assert!(
        !out.combined().contains(FIRST),
        "the secret value reached the output:\n{out}"
    );
    let check = |value: &str, secret: &str| {
        let cfg = object(&cluster, &["configmap", "cfg", "-n", ns]);
        assert_eq!(cfg["data"], json!({"theirs": "t", "ours": value}), "{cfg}");
        assert!(cfg["metadata"]["labels"].get("tofu-estate").is_none(), "{cfg}");
        let sec = object(&cluster, &["secret", "sec", "-n", ns]);
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        assert_eq!(
            sec["data"],
            json!({"theirs": b64("t"), "password": b64(secret)}),
            "{sec}"
        );
        assert!(sec["metadata"]["labels"].get("tofu-estate").is_none(), "{sec}");
    };
    check("a", FIRST);
    assert_empty_plan(&work, "create");

    // Another writer's key changes make no diff; ours removed by hand does, and apply restores it.
    cluster.kubectl_ok(&[
        "patch",
        "configmap",
        "cfg",
        "-n",
        ns,
        "-p",
        r#"{"data":{"theirs":"t2"}}"#,
    ]);
    assert_empty_plan(&work, "another writer's change");
    cluster.kubectl_ok(&[
        "patch",
        "configmap",
        "cfg",
        "-n",
        ns,
        "-p",
        r#"{"data":{"theirs":"t"}}"#,
    ]);
    cluster.kubectl_ok(&[
        "patch",
        "configmap",
        "cfg",
        "-n",
        ns,
        "-p",
        r#"{"data":{"ours":null}}"#,
    ]);
    let plan = work.plan_exit();
    assert_eq!(plan.code, 2, "a key of ours removed by hand is no diff:\n{plan}");
    work.apply_ok("restore");
    check("a", FIRST);

    work.write(&body("cfg", "b", SECOND));
    let out = work.apply_ok("update");
    assert!(out.stdout.contains("0 added, 2 changed, 0 destroyed"), "{out}");
    assert!(
        !out.combined().contains(SECOND),
        "the secret value reached the output:\n{out}"
    );
    check("b", SECOND);
    assert_empty_plan(&work, "update");

    destroy(&work, "data");
    let cfg = object(&cluster, &["configmap", "cfg", "-n", ns]);
    assert_eq!(cfg["data"], json!({"theirs": "t"}), "{cfg}");
    let sec = object(&cluster, &["secret", "sec", "-n", ns]);
    assert_eq!(sec["data"].as_object().map(|d| d.len()), Some(1), "{sec}");
    assert!(sec["data"].get("theirs").is_some(), "{sec}");
}

#[test]
fn env_claims_variables_of_one_container() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "env");
    let ns = ns.name.as_str();
    cluster.kubectl_ok(&[
        "create",
        "deployment",
        "web",
        "-n",
        ns,
        "--image=registry.k8s.io/pause:3.10",
    ]);
    cluster.kubectl_ok(&["set", "env", "deployment/web", "-n", ns, "THEIRS=t"]);
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let body = |container: &str, log: &str| {
        format!(
            "resource \"kubernetes_env\" \"web\" {{\n  api_version = \"apps/v1\"\n  kind        = \"Deployment\"\n{}  \
             container   = {}\n  env {{\n    name  = \"LOG\"\n    value = {}\n  }}\n  env {{\n    name = \"POD\"\n    \
             value_from {{\n      field_ref {{\n        field_path = \"metadata.name\"\n      }}\n    }}\n  }}\n}}\n",
            metadata("web", Some(ns)),
            quote(container),
            quote(log)
        )
    };
    let containers = || {
        object(&cluster, &["deployment", "web", "-n", ns])["spec"]["template"]["spec"]["containers"].clone()
    };

    work.write(&body("nope", "debug"));
    let out = work.apply();
    assert!(!out.success(), "{out}");
    assert!(
        out.flat().contains("has no containers named \"nope\""),
        "the missing container is not named:\n{out}"
    );

    work.write(&body("pause", "debug"));
    work.apply_ok("create");
    let env = |log: &str| {
        json!([
            {"name": "THEIRS", "value": "t"},
            {"name": "LOG", "value": log},
            {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}
        ])
    };
    let live = containers();
    assert_eq!(live[0]["env"], env("debug"), "{live}");
    assert_eq!(live[0]["image"], "registry.k8s.io/pause:3.10");
    assert_empty_plan(&work, "create");

    work.write(&body("pause", "info"));
    let out = work.apply_ok("update");
    assert!(out.stdout.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    assert_eq!(containers()[0]["env"], env("info"));
    assert_empty_plan(&work, "update");

    destroy(&work, "env");
    let live = containers();
    assert_eq!(live.as_array().map(Vec::len), Some(1), "{live}");
    assert_eq!(live[0]["image"], "registry.k8s.io/pause:3.10", "{live}");
    assert_eq!(
        live[0]["env"],
        json!([{"name": "THEIRS", "value": "t"}]),
        "{live}"
    );
}

/// A Node created for one test, deleted when dropped.
struct ScratchNode<'a> {
    cluster: &'a Cluster,
    name: String,
}

impl Drop for ScratchNode<'_> {
    fn drop(&mut self) {
        let _ = self
            .cluster
            .kubectl(&["delete", "node", &self.name, "--wait=false", "--ignore-not-found"]);
    }
}

#[test]
fn node_taint_keeps_the_other_taints() {
    let cluster = Cluster::start();
    let node = ScratchNode {
        cluster: &cluster,
        name: unique_name("node"),
    };
    let name = node.name.as_str();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let manifest = dir.path().join("node.json");
    fs::write(
        &manifest,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}).to_string(),
    )
    .expect("writing the node");
    cluster.kubectl_ok(&["create", "-f", &manifest.to_string_lossy()]);
    cluster.kubectl_ok(&["taint", "node", name, "other=keep:NoSchedule"]);

    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let body = |value: &str| {
        format!(
            "resource \"kubernetes_node_taint\" \"dedicated\" {{\n{}  force = true\n  taint {{\n    key    = \
             \"example.com/dedicated\"\n    value  = {}\n    effect = \"NoSchedule\"\n  }}\n}}\n",
            metadata(name, None),
            quote(value)
        )
    };
    let taints = || {
        let live = object(&cluster, &["node", name]);
        let mut found: Vec<(String, String)> = live["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                (
                    t["key"].as_str().unwrap_or_default().to_string(),
                    t["value"].as_str().unwrap_or_default().to_string(),
                )
            })
            // The node lifecycle controller's own taints come and go on a real cluster.
            .filter(|(k, _)| !k.starts_with("node.kubernetes.io/"))
            .collect();
        found.sort();
        found
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());

    work.write(&body("a"));
    work.apply_ok("create");
    assert_eq!(
        taints(),
        vec![pair("example.com/dedicated", "a"), pair("other", "keep")]
    );
    assert_empty_plan(&work, "create");

    work.write(&body("b"));
    work.apply_ok("update");
    assert_eq!(
        taints(),
        vec![pair("example.com/dedicated", "b"), pair("other", "keep")]
    );
    assert_empty_plan(&work, "update");

    destroy(&work, "taint");
    assert_eq!(taints(), vec![pair("other", "keep")]);
}

#[test]
fn default_service_account_is_edited_never_owned() {
    let cluster = Cluster::start();
    let ns = unique_name("dsa");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let namespace = format!(
        "resource \"kubernetes_namespace\" \"ns\" {{\n  metadata {{\n    name = {}\n  }}\n}}\n",
        quote(&ns)
    );
    let account = |team: &str| {
        format!(
            "{namespace}\nresource \"kubernetes_default_service_account_v1\" \"default\" {{\n  metadata {{\n    \
             namespace = kubernetes_namespace.ns.metadata[0].name\n    labels    = {}\n  }}\n  \
             automount_service_account_token = false\n  image_pull_secret {{\n    name = \"regcred\"\n  }}\n}}\n",
            string_map(&[("team", team)])
        )
    };
    let sa = || object(&cluster, &["serviceaccount", "default", "-n", &ns]);

    // The namespace and its default account's fields in one apply: the create waits for the
    // cluster to make the account.
    work.write(&account("a"));
    work.apply_ok("create");
    let created = sa();
    assert_eq!(created["automountServiceAccountToken"], false, "{created}");
    assert_eq!(
        created["imagePullSecrets"],
        json!([{"name": "regcred"}]),
        "{created}"
    );
    assert_eq!(created["metadata"]["labels"], json!({"team": "a"}), "{created}");
    assert_empty_plan(&work, "create");

    work.write(&account("b"));
    let out = work.apply_ok("update");
    assert!(out.stdout.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    assert_eq!(sa()["metadata"]["labels"], json!({"team": "b"}));
    assert_empty_plan(&work, "update");

    // hashicorp's type imports by `<namespace>/default`: a fresh state gets the account as the
    // configuration has it, and plans nothing.
    let fresh = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    fresh.write(
        &account("b")
            .replace(&namespace, "")
            .replace("kubernetes_namespace.ns.metadata[0].name", &quote(&ns)),
    );
    let address = "kubernetes_default_service_account_v1.default";
    let out = fresh.run(&["import", "-input=false", address, &format!("{ns}/default")]);
    assert!(out.success(), "import:\n{out}");
    let imported = &fresh.state_values(address);
    assert_eq!(
        imported["metadata"][0]["labels"],
        json!({"team": "b"}),
        "{imported}"
    );
    assert_eq!(
        imported["image_pull_secret"],
        json!([{"name": "regcred"}]),
        "{imported}"
    );
    let out = fresh.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(out.code, 0, "the plan after the import:\n{out}");

    // Out of the configuration: the account stays, without the fields this resource set.
    work.write(&namespace);
    let out = work.apply_ok("release");
    assert!(out.stdout.contains("0 added, 0 changed, 1 destroyed"), "{out}");
    let released = sa();
    assert_eq!(
        released["metadata"]["uid"], created["metadata"]["uid"],
        "the account was replaced"
    );
    for field in ["automountServiceAccountToken", "imagePullSecrets"] {
        assert!(released.get(field).is_none(), "{field} stayed: {released}");
    }
    assert!(
        released["metadata"]
            .get("labels")
            .is_none_or(|l| l.get("team").is_none()),
        "{released}"
    );
    destroy(&work, "namespace");
}
