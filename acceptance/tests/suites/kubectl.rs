//! `kubectl_manifest` under `choudoufu/kubectl` (the kubectl providers' resource, served by
//! provider-live's binary): its attributes, with this provider's guarantees. Objects carry the
//! estate label; a Secret's values and `sensitive_fields` never show in a plan; drift made out
//! of band plans an update that puts the manifest back; a stale saved plan is refused; another
//! estate's object is refused and an unlabelled one taken over and stamped, as `kubectl apply`
//! would; a lost state's objects are adopted; `wait_for` holds the apply on a condition and a
//! field; `force_new` replaces; `apply_only` objects outlive destroy; a CRD and its objects
//! apply in one run. With `server_side_apply`, `field_manager` owns the fields and another
//! manager's field conflicts unless `force_conflicts`; `ignore_fields`, `show_drift_values` and
//! the server drift engine shape `drift`; `wait` with `delete_cascade` waits for the delete.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::json;

/// A `kubectl_manifest` named `name` with `yaml` as its body and `extra` attribute lines.
fn manifest(name: &str, yaml: &str, extra: &str) -> String {
    format!("resource \"kubectl_manifest\" \"{name}\" {{\n  yaml_body = <<-YAML\n{yaml}  YAML\n{extra}}}\n")
}

fn indent(yaml: &str) -> String {
    yaml.lines().map(|l| format!("    {l}\n")).collect()
}

fn config_map(name: &str, ns: &str, value: &str) -> String {
    indent(&format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  a: \"{value}\"\n  b: plain\n"
    ))
}

fn estate_of(cluster: &Cluster, kind: &str, ns: &str, name: &str) -> serde_json::Value {
    cluster.get_json(&["-n", ns, kind, name])["metadata"]["labels"]["tofu-estate"].clone()
}

/// The configuration of the first test at `version` of the ConfigMap's value.
fn estate_config(ns: &str, value: &str, extra_cm: &str) -> String {
    let secret = indent(&format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: {ns}\nstringData:\n  password: s3cret-pw-{value}\n"
    ));
    let deploy = indent(&format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  replicas: 1\n  \
         selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    \
         spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n"
    ));
    let wait_for = "  wait_for {\n    condition {\n      type   = \"Available\"\n      status = \"True\"\n    }\n    \
                    field {\n      key   = \"status.readyReplicas\"\n      value = \"1\"\n    }\n    field {\n      \
                    key        = \"spec.template.spec.containers[0].image\"\n      value      = \"^nginx:\"\n      \
                    value_type = \"regex\"\n    }\n  }\n";
    // The ConfigMap names another namespace: override_namespace moves it.
    [
        manifest(
            "cm",
            &config_map("cm", "elsewhere", value),
            &format!(
                "  override_namespace = {}\n  sensitive_fields   = [\"data.a\"]\n{extra_cm}",
                quote(ns)
            ),
        ),
        manifest("creds", &secret, ""),
        manifest("web", &deploy, wait_for),
        manifest("kept", &config_map("kept", ns, "k"), "  apply_only = true\n"),
    ]
    .concat()
}

#[test]
fn kubectl_manifest_applies_with_the_estate_guarantees() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kctl");
    let estate = unique_name("kest");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    work.write(&estate_config(&ns.name, "1", ""));

    let plan = work.run(&["plan", "-input=false", "-no-color"]);
    assert!(plan.success(), "plan:\n{plan}");
    for secret in ["s3cret-pw-1", "a: \"1\"", "a: '1'"] {
        assert!(
            !plan.combined().contains(secret),
            "the plan shows {secret:?}:\n{plan}"
        );
    }
    assert!(
        plan.stdout.contains("(sensitive value)"),
        "masked fields:\n{plan}"
    );

    work.apply_ok("create");
    for (kind, name) in [("configmap", "cm"), ("secret", "creds"), ("deployment", "web")] {
        assert_eq!(
            estate_of(&cluster, kind, &ns.name, name),
            estate.as_str(),
            "{kind}/{name}"
        );
    }
    let cm = work.state_values("kubectl_manifest.cm");
    assert_eq!(cm["id"], format!("/api/v1/namespaces/{}/configmaps/cm", ns.name));
    assert_eq!(cm["namespace"], ns.name.as_str());
    assert_eq!(cm["uid"], cm["live_uid"]);
    assert_eq!(cm["drift"], "");
    assert_eq!(cm["estate"], estate.as_str());
    // gavinbunney's fingerprints: one SHA-256, the same for the write and the refresh.
    let print = cm["yaml_incluster"].as_str().unwrap_or_default().to_string();
    assert!(
        print.len() == 64 && print.bytes().all(|b| b.is_ascii_hexdigit()),
        "{cm}"
    );
    assert_eq!(cm["live_manifest_incluster"], print.as_str());
    let web = cluster.get_json(&["-n", &ns.name, "deployment", "web"]);
    assert_eq!(
        web["status"]["readyReplicas"], 1,
        "wait_for held the apply: {web}"
    );
    let out = work.plan_exit();
    assert_eq!(out.code, 0, "plan after create:\n{out}");

    // Drift out of band: the plan puts the manifest back, and shows no value of it.
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "cm",
        "-p",
        r#"{"data":{"b":"edited"}}"#,
    ]);
    let out = work.run(&["plan", "-input=false", "-detailed-exitcode", "-no-color"]);
    assert_eq!(out.code, 2, "drift plans an update:\n{out}");
    assert!(out.stdout.contains("drift"), "{out}");
    let refreshed = work.run(&[
        "apply",
        "-refresh-only",
        "-auto-approve",
        "-input=false",
        "-no-color",
    ]);
    assert!(refreshed.success(), "{refreshed}");
    let cm = work.state_values("kubectl_manifest.cm");
    assert_eq!(
        cm["yaml_incluster"],
        print.as_str(),
        "the write's fingerprint stays"
    );
    assert_ne!(
        cm["live_manifest_incluster"],
        print.as_str(),
        "the refresh's moved: {cm}"
    );
    work.apply_ok("drift");
    let live = cluster.get_json(&["-n", &ns.name, "configmap", "cm"]);
    assert_eq!(live["data"]["b"], "plain", "the manifest is back: {live}");
    let cm = work.state_values("kubectl_manifest.cm");
    assert_eq!(
        (&cm["yaml_incluster"], &cm["live_manifest_incluster"]),
        (&json!(print), &json!(print)),
        "both fingerprints back"
    );
    assert_eq!(work.plan_exit().code, 0);

    // A saved plan whose object moved since is refused.
    work.write(&estate_config(&ns.name, "2", ""));
    let saved = work.run(&["plan", "-input=false", "-out=saved.plan"]);
    assert!(saved.success(), "{saved}");
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "cm",
        "-p",
        r#"{"data":{"a":"moved"}}"#,
    ]);
    let stale = work.run(&["apply", "-input=false", "saved.plan"]);
    assert!(
        !stale.success() && stale.flat().contains("no longer matches"),
        "stale plan:\n{stale}"
    );
    work.apply_ok("update");

    // force_new: a change of the body replaces the object.
    work.write(&estate_config(&ns.name, "3", "  force_new = true\n"));
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    assert!(out.stdout.contains("must be replaced"), "force_new:\n{out}");
    work.apply_ok("force_new");

    // Another estate's object is refused; an unlabelled one is taken over and stamped.
    let foreign = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: foreign\n  namespace: {}\n  labels:\n    tofu-estate: other-estate\n",
        ns.name
    );
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "create",
        "configmap",
        "loose",
        "--from-literal=x=1",
    ]);
    let tmp = tempfile::NamedTempFile::new().expect("a file");
    std::fs::write(tmp.path(), &foreign).expect("writing");
    cluster.kubectl_ok(&["apply", "-f", &tmp.path().to_string_lossy()]);
    let base = estate_config(&ns.name, "3", "  force_new = true\n");
    let loose = manifest("loose", &config_map("loose", &ns.name, "taken"), "");
    work.write(&(base.clone() + &loose));
    let out = work.apply_ok("take over");
    assert!(
        out.flat().contains("Taking over an existing object"),
        "take-over warning:\n{out}"
    );
    assert_eq!(
        estate_of(&cluster, "configmap", &ns.name, "loose"),
        estate.as_str()
    );
    work.write(&(base.clone() + &loose + &manifest("foreign", &config_map("foreign", &ns.name, "mine"), "")));
    let out = work.apply();
    assert!(
        !out.success() && out.flat().contains("belongs to estate \"other-estate\""),
        "foreign:\n{out}"
    );
    assert_eq!(
        estate_of(&cluster, "configmap", &ns.name, "foreign"),
        "other-estate"
    );
    work.write(&(base + &loose));

    // A lost state: the estate's objects are adopted, not created twice.
    let rm = work.run(&["state", "rm", "kubectl_manifest.cm"]);
    assert!(rm.success(), "{rm}");
    let out = work.apply_ok("adopt");
    assert!(
        out.flat().contains("Adopting an existing object of this estate"),
        "{out}"
    );
    assert_eq!(work.plan_exit().code, 0, "plan after adoption");

    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
    let left = cluster.kubectl(&[
        "-n",
        &ns.name,
        "get",
        "configmap",
        "cm",
        "--ignore-not-found",
        "-o",
        "name",
    ]);
    assert!(left.stdout.trim().is_empty(), "cm left: {left}");
    let kept = cluster.get_json(&["-n", &ns.name, "configmap", "kept"]);
    assert_eq!(kept["metadata"]["name"], "kept", "apply_only keeps the object");
}

#[test]
fn a_crd_and_its_objects_apply_in_one_run_from_yaml() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kcrd");
    let estate = unique_name("kcrd");
    let group = format!("{}.kubectl.example.com", unique_name("g"));
    let crd = indent(&format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.{group}\n\
         spec:\n  group: {group}\n  scope: Namespaced\n  names:\n    kind: Widget\n    plural: widgets\n    singular: widget\n\
         \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        \
         type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              \
         size: {{type: integer}}\n"
    ));
    let widget = |name: &str, spec: &str, extra: &str| {
        manifest(
            name,
            &indent(&format!(
                "apiVersion: {group}/v1\nkind: Widget\nmetadata:\n  name: {name}\n  namespace: {}\nspec:\n{spec}",
                ns.name
            )),
            &format!("  depends_on = [kubectl_manifest.crd]\n{extra}"),
        )
    };
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let crd = manifest("crd", &crd, "");
    let ssa = "  server_side_apply = true\n";
    work.write(
        &[
            crd.clone(),
            widget("small", "  size: 1\n", ""),
            widget("large", "  size: 9\n", ssa),
        ]
        .concat(),
    );
    work.apply_ok("a CRD and its objects");
    let get = |name: &str| cluster.get_json(&["-n", &ns.name, &format!("widgets.{group}"), name]);
    let large = get("large");
    assert_eq!(large["spec"]["size"], 9);
    assert_eq!(large["metadata"]["labels"]["tofu-estate"], estate.as_str());
    assert_eq!(work.plan_exit().code, 0, "plan after the apply");

    // A field the schema does not declare: left out with a warning, as client-side apply's
    // server drops it; server-side apply refuses it.
    let undeclared = "  size: 2\n  legacy: x\n  older: y\n";
    work.write(
        &[
            crd.clone(),
            widget("small", undeclared, ""),
            widget("large", "  size: 9\n", ssa),
        ]
        .concat(),
    );
    let out = work.apply_ok("an undeclared field");
    assert!(
        out.flat().contains("unknown fields left out")
            && out.flat().contains("\"spec.legacy\", \"spec.older\""),
        "the warning names the field:\n{out}"
    );
    let small = get("small");
    assert_eq!(
        (&small["spec"]["size"], &small["spec"]["legacy"]),
        (&json!(2), &json!(null)),
        "{small}"
    );
    work.write(
        &[
            crd,
            widget("small", undeclared, ""),
            widget("large", undeclared, ssa),
        ]
        .concat(),
    );
    let out = work.run(&["apply", "-auto-approve", "-input=false", "-no-color"]);
    // kube-apiserver names one of the two, in its map's order.
    let refused = [".spec.legacy", ".spec.older"]
        .iter()
        .any(|f| out.flat().contains(&format!("{f}: field not declared in schema")));
    assert!(!out.success() && refused, "server-side apply refuses it:\n{out}");
    assert_eq!(get("large")["spec"]["size"], 9);
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
}

#[test]
fn server_version_and_alekcs_reads_of_one_object() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kread");
    let estate = unique_name("kread");
    let second = unique_name("ksecond");
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "create",
        "configmap",
        "settings",
        &format!("--from-literal=estate={second}"),
        "--from-literal=port=8080",
    ]);
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let kubeconfig = quote(&cluster.kubeconfig().to_string_lossy());
    let ns_q = quote(&ns.name);
    work.write(&format!(
        r#"resource "kubectl_server_version" "now" {{
  triggers = {{ round = "1" }}
}}

data "kubectl_server_version" "now" {{}}

data "kubectl_manifest" "settings" {{
  api_version = "v1"
  kind        = "ConfigMap"
  name        = "settings"
  namespace   = {ns_q}
  fields      = {{ port = "data.port", data = "data", first = "data[\"estate\"]" }}
  wait_for {{}}
}}

ephemeral "kubectl_manifest" "settings" {{
  api_version = "v1"
  kind        = "ConfigMap"
  name        = "settings"
  namespace   = {ns_q}
  fields      = {{ estate = "data.estate" }}
}}

provider "kubectl" {{
  alias       = "second"
  estate      = ephemeral.kubectl_manifest.settings.results.estate
  config_path = {kubeconfig}
}}

resource "kubectl_manifest" "via_second" {{
  provider  = kubectl.second
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: via-second
      namespace: {ns}
  YAML
}}

output "version" {{ value = kubectl_server_version.now.version }}
output "major" {{ value = data.kubectl_server_version.now.major }}
output "id" {{ value = data.kubectl_manifest.settings.id }}
output "port" {{ value = data.kubectl_manifest.settings.results.port }}
output "data" {{ value = data.kubectl_manifest.settings.results.data }}
output "first" {{ value = data.kubectl_manifest.settings.results.first }}
"#,
        ns = ns.name
    ));
    work.apply_ok("reads");
    let outputs = work.run(&["output", "-json"]);
    let outputs: serde_json::Value = serde_json::from_str(&outputs.stdout).expect("outputs");
    let value = |name: &str| outputs[name]["value"].as_str().unwrap_or_default().to_string();
    assert!(
        value("version").starts_with('v') && value("version").matches('.').count() == 2,
        "{outputs}"
    );
    assert_eq!(value("major"), "1");
    assert_eq!(value("id"), format!("v1/{}/ConfigMap/settings", ns.name));
    assert_eq!(value("port"), "8080");
    let data: serde_json::Value = serde_json::from_str(&value("data")).expect("a map as JSON");
    assert_eq!(data["port"], "8080", "{data}");
    assert_eq!(value("first"), second);
    // The ephemeral read configured the second provider: its object carries that estate, and
    // the state holds no ephemeral value.
    assert_eq!(
        estate_of(&cluster, "configmap", &ns.name, "via-second"),
        second.as_str()
    );
    let state = work.run(&["state", "pull"]);
    let state: serde_json::Value = serde_json::from_str(&state.stdout).expect("the state");
    let modes: Vec<&str> = state["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["mode"].as_str())
        .collect();
    assert!(!modes.contains(&"ephemeral") && !modes.is_empty(), "{state}");
    assert_eq!(work.plan_exit().code, 0, "plan after the apply");
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");

    // A missing object is an error naming it; a path that is not there too.
    for (name, fields, error) in [
        ("nope", "{}", "manifest not found"),
        ("settings", "{ l = \"metadata.labels\" }", "is not a path of"),
    ] {
        work.write(&format!(
            "data \"kubectl_manifest\" \"x\" {{\n  api_version = \"v1\"\n  kind = \"ConfigMap\"\n  name = \"{name}\"\n  \
             namespace = {ns_q}\n  fields = {fields}\n}}\n"
        ));
        let out = work.run(&["plan", "-input=false"]);
        assert!(!out.success() && out.flat().contains(error), "{out}");
    }
}

#[test]
fn a_wait_that_fails_names_what_is_missing_and_imports_take_kubectls_ids() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kwait");
    let estate = unique_name("kwait");
    cluster.kubectl_ok(&["-n", &ns.name, "create", "configmap", "imp", "--from-literal=a=1"]);
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let ready = |value: &str| {
        manifest(
            "ready",
            &config_map("ready", &ns.name, value),
            "  wait_for {\n    field {\n      key   = \"data.a\"\n      value = \"yes\"\n    }\n  }\n  \
             timeouts {\n    create = \"3s\"\n  }\n",
        )
    };
    let imported = format!(
        "import {{\n  to = kubectl_manifest.imp\n  id = \"v1//ConfigMap//imp//{}\"\n}}\n{}",
        ns.name,
        manifest(
            "imp",
            &indent(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: imp\n  namespace: {}\ndata:\n  a: \"1\"\n",
                ns.name
            )),
            "  wait = true\n",
        )
    );
    work.write(&(ready("no") + &imported));
    let out = work.apply();
    let text = out.flat();
    assert!(
        !out.success() && text.contains("data.a is \"no\", not \"yes\""),
        "wait failure:\n{out}"
    );
    assert!(
        text.contains("failed to wait for resource") && text.contains("Wait returned an error"),
        "the kubectl providers' words:\n{out}"
    );
    let imp = work.state_values("kubectl_manifest.imp");
    assert_eq!(
        imp["id"],
        format!("/api/v1/namespaces/{}/configmaps/imp", ns.name),
        "{imp}"
    );
    assert_eq!(imp["uid"], imp["live_uid"]);
    assert_eq!(
        estate_of(&cluster, "configmap", &ns.name, "imp"),
        estate.as_str(),
        "stamped at import's apply"
    );

    work.write(&(ready("yes") + &imported));
    work.apply_ok("the wait met");
    assert_eq!(work.plan_exit().code, 0, "plan after the apply");
    // An import of an object this provider wrote takes the fingerprints its write left.
    let written = work.state_values("kubectl_manifest.imp");
    let rm = work.run(&["state", "rm", "kubectl_manifest.imp"]);
    assert!(rm.success(), "{rm}");
    let id = format!("v1//ConfigMap//imp//{}", ns.name);
    let again = work.run(&["import", "-input=false", "-no-color", "kubectl_manifest.imp", &id]);
    assert!(again.success(), "{again}");
    let reimported = work.state_values("kubectl_manifest.imp");
    for print in ["yaml_incluster", "live_manifest_incluster"] {
        assert_eq!(reimported[print], written[print], "{print}");
    }
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
    let left = cluster.kubectl(&[
        "-n",
        &ns.name,
        "get",
        "configmap",
        "imp",
        "--ignore-not-found",
        "-o",
        "name",
    ]);
    assert!(
        left.stdout.trim().is_empty(),
        "wait = true: gone when destroy returns: {left}"
    );
}

#[test]
fn server_side_apply_conflicts_field_managers_and_how_drift_is_seen() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kssa");
    let estate = unique_name("kssa");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let cm = |value: &str, extra: &str| {
        manifest(
            "cm",
            &config_map("cm", &ns.name, value),
            &format!(
                "  server_side_apply = true\n  field_manager     = \"platform\"\n  ignore_fields     = [\"data.b\"]\n  \
                 show_drift_values = \"full\"\n  drift_engine      = \"server\"\n  delete_cascade    = \"Foreground\"\n  \
                 wait              = true\n{extra}"
            ),
        )
    };
    work.write(&cm("1", ""));
    work.apply_ok("create");
    let live = cluster.get_json(&["-n", &ns.name, "configmap", "cm", "--show-managed-fields"]);
    let managers: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"platform"), "field_manager: {managers:?}");

    // A change to an ignored field is no drift; a change to another is, shown in full.
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "cm",
        "-p",
        r#"{"data":{"b":"ignored"}}"#,
    ]);
    assert_eq!(work.plan_exit().code, 0, "ignore_fields");
    cluster.kubectl_ok(&[
        "-n",
        &ns.name,
        "patch",
        "configmap",
        "cm",
        "-p",
        r#"{"data":{"a":"theirs"}}"#,
    ]);
    let refreshed = work.run(&["apply", "-refresh-only", "-auto-approve", "-input=false"]);
    assert!(refreshed.success(), "{refreshed}");
    let drift = work.state_values("kubectl_manifest.cm")["drift"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        drift.contains("theirs") && drift.contains("a:"),
        "drift shown in full: {drift:?}"
    );

    // kubectl-patch owns data.a now: server-side apply conflicts, unless forced.
    work.write(&cm("2", ""));
    let out = work.apply();
    assert!(
        !out.success() && out.flat().to_lowercase().contains("conflict"),
        "conflict:\n{out}"
    );
    work.write(&cm("2", "  force_conflicts = true\n"));
    work.apply_ok("forced");
    let live = cluster.get_json(&["-n", &ns.name, "configmap", "cm"]);
    assert_eq!(live["data"]["a"], "2");
    assert_eq!(work.plan_exit().code, 0, "plan after the forced apply");
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
    let left = cluster.kubectl(&[
        "-n",
        &ns.name,
        "get",
        "configmap",
        "cm",
        "--ignore-not-found",
        "-o",
        "name",
    ]);
    assert!(left.stdout.trim().is_empty(), "gone when destroy returns: {left}");
}

#[test]
fn a_kubectl_manifest_moves_into_a_kubernetes_manifest_of_the_other_address() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kmove");
    let estate = unique_name("kmove");
    let work = LiveDir::live_and_kubectl(&estate, cluster.kubeconfig());
    let yaml = config_map("settings", &ns.name, "on");
    work.write(&manifest("settings", &yaml, ""));
    work.apply_ok("as kubectl_manifest");
    let uid = cluster.get_json(&["-n", &ns.name, "configmap", "settings"])["metadata"]["uid"].clone();
    work.write(&format!(
        "moved {{\n  from = kubectl_manifest.settings\n  to   = kubernetes_manifest.settings\n}}\n\n\
         resource \"kubernetes_manifest\" \"settings\" {{\n  manifest = yamldecode(<<-YAML\n{yaml}  YAML\n  )\n}}\n"
    ));
    let out = work.run(&["plan", "-input=false", "-detailed-exitcode", "-no-color"]);
    assert!(out.code == 0 || out.code == 2, "plan of the move:\n{out}");
    assert!(
        out.stdout.contains("has moved to kubernetes_manifest.settings"),
        "{out}"
    );
    assert!(
        out.stdout.contains("0 to add, 0 to change, 0 to destroy"),
        "the move changes nothing:\n{out}"
    );
    work.apply_ok("the move");
    assert_eq!(work.plan_exit().code, 0, "plan after the move");
    let live = cluster.get_json(&["-n", &ns.name, "configmap", "settings"]);
    assert_eq!(live["metadata"]["uid"], uid, "the same object");
    assert_eq!(live["metadata"]["labels"]["tofu-estate"], estate.as_str());
}

#[test]
fn an_api_version_change_replaces_unless_upgrade_api_version() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kver");
    let estate = unique_name("kver");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let hpa = |version: &str, upgrade: bool| {
        let spec = if version == "autoscaling/v1" {
            "  targetCPUUtilizationPercentage: 80\n"
        } else {
            "  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      target: {type: Utilization, averageUtilization: 80}\n"
        };
        manifest(
            "hpa",
            &indent(&format!(
                "apiVersion: {version}\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  namespace: {}\nspec:\n  \
                 scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  minReplicas: 1\n  maxReplicas: 3\n{spec}",
                ns.name
            )),
            &format!("  upgrade_api_version = {upgrade}\n"),
        )
    };
    work.write(&hpa("autoscaling/v1", false));
    work.apply_ok("v1");
    let uid = work.state_values("kubectl_manifest.hpa")["uid"].clone();
    work.write(&hpa("autoscaling/v2", false));
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    assert!(
        out.stdout.contains("must be replaced"),
        "apiVersion replaces:\n{out}"
    );
    work.write(&hpa("autoscaling/v2", true));
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    assert!(
        out.success() && !out.stdout.contains("must be replaced"),
        "in place:\n{out}"
    );
    work.apply_ok("v2 in place");
    assert_eq!(
        work.state_values("kubectl_manifest.hpa")["uid"],
        uid,
        "the same object"
    );
    assert_eq!(work.plan_exit().code, 0, "plan after the upgrade");
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
}
