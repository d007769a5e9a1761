//! `moved` from the kubectl providers' `kubectl_manifest` (gavinbunney/kubectl and alekc/kubectl)
//! to `kubernetes_manifest`, with both providers declared as during a migration: the manifest
//! comes from the source state's `yaml_body` (in `override_namespace` where set), the first plan
//! changes nothing but the estate stamp, one apply stamps the objects, and the next plan is
//! empty. A stand-in ([`acceptance::stand_in`]) serves as the kubectl providers.

use std::fs;

use acceptance::hcl::{ScratchNamespace, quote, unique_name};
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
