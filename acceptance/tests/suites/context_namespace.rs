//! The kubeconfig context's namespace, opt-in (`namespace_from_context`, beyond
//! hashicorp/kubernetes 3.4.0): a namespaced object whose configuration leaves
//! `metadata.namespace` out goes to the context's namespace and the plan says which; data
//! sources read there too. Without the setting such an object goes to `default`, as
//! hashicorp's provider has it, whatever the context says.

use std::path::{Path, PathBuf};

use acceptance::Cluster;
use acceptance::PlanSummary;
use acceptance::hcl::{LiveDir, ScratchNamespace, unique_name};

/// A copy of the admin kubeconfig whose current context names `namespace`, written in `dir`.
fn kubeconfig_in(cluster: &Cluster, namespace: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(cluster.kubeconfig()).expect("the admin kubeconfig");
    let mut config: serde_json::Value = serde_yaml::from_str(&text).expect("a kubeconfig");
    let current = config["current-context"].clone();
    let contexts = config["contexts"].as_array_mut().expect("contexts");
    let context = contexts
        .iter_mut()
        .find(|c| c["name"] == current)
        .expect("the current context");
    context["context"]["namespace"] = namespace.into();
    let path = dir.join("context.kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&config).expect("YAML")).expect("write the kubeconfig");
    path
}

/// The namespace the plan gives the resource at `address`.
fn planned_namespace(plan: &PlanSummary, address: &str) -> String {
    let change = plan.raw["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("{address} is not in the plan"));
    let namespace = &change["change"]["after"]["metadata"][0]["namespace"];
    namespace
        .as_str()
        .unwrap_or_else(|| panic!("{address}: namespace {namespace}"))
        .to_string()
}

const CONFIG_MAP: &str = r#"
resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name = "settings"
  }
  data = {
    mode = "blue"
  }
}
"#;

#[test]
fn opted_in_an_object_without_a_namespace_goes_to_the_contexts() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "ctx-ns");
    let folder = tempfile::tempdir().expect("a folder for the kubeconfig");
    let kubeconfig = kubeconfig_in(&cluster, &ns.name, folder.path());
    let work = LiveDir::with_settings(
        &unique_name("ctx"),
        &kubeconfig,
        "  namespace_from_context = true\n",
    );

    work.write(CONFIG_MAP);
    let (out, plan) = work.engine().plan_json(&[]);
    let plan = plan.unwrap_or_else(|| panic!("no plan:\n{out}"));
    assert_eq!(
        planned_namespace(&plan, "kubernetes_config_map_v1.settings"),
        ns.name
    );
    assert!(
        out.stdout
            .contains(&format!("namespace        = \"{}\"", ns.name)),
        "{out}"
    );

    work.apply_ok("the ConfigMap");
    let live = cluster.get_json(&["configmap", "settings", "-n", &ns.name]);
    assert_eq!(live["data"]["mode"], "blue");
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after apply is not empty:\n{next}");

    // A data source without a namespace reads from the same one.
    work.write(&format!(
        "{CONFIG_MAP}
data \"kubernetes_config_map_v1\" \"read\" {{
  metadata {{
    name = kubernetes_config_map_v1.settings.metadata[0].name
  }}
}}

output \"mode\" {{
  value = data.kubernetes_config_map_v1.read.data.mode
}}
"
    ));
    work.apply_ok("the data source");
    let output = work.run(&["output", "-raw", "mode"]);
    assert_eq!(output.stdout, "blue", "{output}");

    work.write("");
    work.apply_ok("destroy");
    let gone = cluster.kubectl(&["get", "configmap", "settings", "-n", &ns.name]);
    assert!(!gone.success(), "the ConfigMap is still there:\n{gone}");
}

#[test]
fn without_the_setting_the_context_namespace_is_not_used() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "ctx-off");
    let folder = tempfile::tempdir().expect("a folder for the kubeconfig");
    let kubeconfig = kubeconfig_in(&cluster, &ns.name, folder.path());
    for settings in ["", "  namespace_from_context = false\n"] {
        let work = LiveDir::with_settings(&unique_name("ctx"), &kubeconfig, settings);
        work.write(CONFIG_MAP);
        let (out, plan) = work.engine().plan_json(&[]);
        let plan = plan.unwrap_or_else(|| panic!("no plan:\n{out}"));
        assert_eq!(
            planned_namespace(&plan, "kubernetes_config_map_v1.settings"),
            "default",
            "with {settings:?}"
        );
    }
}
