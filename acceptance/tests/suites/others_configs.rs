//! Shapes that configurations written for hashicorp/kubernetes share, and that work there, with
//! the real engine on either cluster: `validate` without a kubeconfig, a namespace known only at
//! apply, null elements in maps (a module's variable left null), an equal quantity beside one,
//! the unversioned HorizontalPodAutoscaler's autoscaling/v1 fields (and its refusal of a
//! `scale_target_ref` without `api_version`, naming the attribute), and a manifest of a kind no
//! CustomResourceDefinition defines.

use std::fs;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, Engine};

/// `terraform validate` checks the configuration only: a provider block naming a kubeconfig,
/// a context and an exec plugin that this machine lacks validates, as hashicorp's does. A plan
/// then names the missing file.
#[test]
fn validate_reads_no_kubeconfig_and_calls_no_cluster() {
    let dir = tempfile::tempdir().expect("a working folder");
    let home = tempfile::tempdir().expect("an empty home");
    let config = r#"terraform {
  required_providers {
    kubernetes = { source = "choudoufu/live" }
  }
}

provider "kubernetes" {
  estate         = "ci"
  config_path    = "~/.kube/config"
  config_context = "no-such-context"
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "no-such-credential-plugin"
  }
}

resource "kubernetes_config_map_v1" "settings" {
  metadata {
    name      = "settings"
    namespace = "default"
  }
  data = { mode = "ci" }
}
"#;
    fs::write(dir.path().join("main.tf"), config).expect("main.tf");
    let home_path = home.path().to_string_lossy();
    // No kubeconfig anywhere: neither KUBECONFIG (the real lane sets it) nor ~/.kube/config.
    let engine = Engine::new(dir.path())
        .env("HOME", &home_path)
        .env("KUBECONFIG", "")
        .env("KUBE_CONFIG_PATH", "");
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    let out = engine.run(&["validate"]);
    assert!(out.success(), "validate read the machine:\n{out}");
    let plan = engine.run(&["plan", "-input=false"]);
    assert!(!plan.success(), "a plan without a kubeconfig succeeded:\n{plan}");
    let text = plan.flat();
    assert!(
        text.contains("Kubeconfig file not found") && text.contains("~/.kube/config"),
        "the plan does not name the missing kubeconfig:\n{plan}"
    );
}

/// A default service account whose namespace is created in the same apply under a generated
/// name: the namespace is unknown at plan and must stay so (a default replaces only a null
/// value, never an unknown one).
#[test]
fn a_namespace_known_only_at_apply_is_not_planned_as_default() {
    let cluster = Cluster::start();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(
        r#"resource "kubernetes_namespace_v1" "ns" {
  metadata { generate_name = "sa-" }
}

resource "kubernetes_default_service_account_v1" "default" {
  metadata { namespace = kubernetes_namespace_v1.ns.metadata[0].name }
  automount_service_account_token = false
}
"#,
    );
    let (plan, summary) = work.engine().plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    assert_eq!(summary.expect("a plan").count("create"), 2, "{plan}");
    work.apply_ok("namespace and its default service account");
    let ns = work.state_values("kubernetes_namespace_v1.ns")["metadata"][0]["name"]
        .as_str()
        .expect("a generated name")
        .to_string();
    let account = cluster.get_json(&["serviceaccount", "default", "-n", &ns]);
    assert_eq!(account["automountServiceAccountToken"], false, "{account}");
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "the plan after apply is not empty:\n{again}");
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy failed:\n{out}");
}

/// The variables of a module, one of them left null, as its map elements.
const NULL_VARIABLE: &str = "variable \"component\" {\n  type    = string\n  default = null\n}\n";

/// A null element of a map (labels, annotations, data, a node selector, resource limits) is
/// dropped, as hashicorp's SDKv2 drops it: the apply writes the other elements, the state and the
/// next plan agree.
#[test]
fn null_map_elements_are_dropped_as_hashicorp_drops_them() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "nulls");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = quote(&ns.name);
    work.write(&format!(
        r#"{NULL_VARIABLE}
resource "kubernetes_config_map_v1" "cfg" {{
  metadata {{
    name        = "cfg"
    namespace   = {ns}
    labels      = {{ app = "web", "app.kubernetes.io/component" = var.component }}
    annotations = {{ owner = var.component, team = "shop" }}
  }}
  data = {{ mode = "on", extra = var.component }}
}}

resource "kubernetes_secret_v1" "creds" {{
  metadata {{
    name      = "creds"
    namespace = {ns}
  }}
  data = {{ user = "admin", token = var.component }}
}}

resource "kubernetes_labels" "tagged" {{
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {{
    name      = "tagged"
    namespace = {ns}
  }}
  labels = {{ tier = "db", owner = var.component }}
}}
"#
    ));
    let ns = ns.trim_matches('"');
    // An object another tool made, which kubernetes_labels edits.
    cluster.kubectl_ok(&["create", "configmap", "tagged", "-n", ns]);
    work.apply_ok("maps with null elements");
    let tagged = cluster.get_json(&["configmap", "tagged", "-n", ns]);
    assert_eq!(
        tagged["metadata"]["labels"],
        serde_json::json!({"tier": "db"}),
        "{tagged}"
    );
    let cfg = cluster.get_json(&["configmap", "cfg", "-n", ns]);
    assert_eq!(cfg["metadata"]["labels"]["app"], "web", "{cfg}");
    assert!(
        cfg["metadata"]["labels"]
            .get("app.kubernetes.io/component")
            .is_none(),
        "a null label was written: {cfg}"
    );
    assert!(cfg["metadata"]["annotations"].get("owner").is_none(), "{cfg}");
    assert_eq!(cfg["data"], serde_json::json!({"mode": "on"}), "{cfg}");
    let secret = cluster.get_json(&["secret", "creds", "-n", ns]);
    let keys: Vec<&String> = secret["data"].as_object().expect("data").keys().collect();
    assert_eq!(keys, ["user"], "{secret}");
    let state = work.state_values("kubernetes_config_map_v1.cfg");
    assert_eq!(state["data"], serde_json::json!({"mode": "on"}), "{state}");
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "the plan after apply is not empty:\n{again}");
}

/// `limits = { cpu = var.cpu, memory = "1.5Gi" }` with `cpu` null: the server reads the memory
/// back as 1536Mi, which equals 1.5Gi, so no plan shows it, whatever else the map holds.
#[test]
fn an_equal_quantity_beside_a_null_element_is_no_change() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "qty");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        r#"{NULL_VARIABLE}
resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {}
  }}
  spec {{
    replicas = 1
    selector {{ match_labels = {{ app = "web" }} }}
    template {{
      metadata {{ labels = {{ app = "web", tier = var.component }} }}
      spec {{
        node_selector = {{ "kubernetes.io/os" = "linux", pool = var.component }}
        container {{
          name  = "web"
          image = "nginx:1.27"
          resources {{
            limits   = {{ cpu = var.component, memory = "1.5Gi" }}
            requests = {{ memory = "0.5Gi" }}
          }}
        }}
      }}
    }}
  }}
}}
"#,
        quote(&ns.name)
    ));
    work.apply_ok("a deployment with a null limit");
    let live = cluster.get_json(&["deployment", "web", "-n", &ns.name]);
    let pod = &live["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["resources"]["limits"],
        serde_json::json!({"memory": "1536Mi"})
    );
    assert_eq!(
        pod["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "linux"})
    );
    for _ in 0..2 {
        let again = work.plan_exit();
        assert_eq!(
            again.code, 0,
            "an equal quantity is planned as a change:\n{again}"
        );
    }
}

/// kube-apiserver refuses an autoscaler whose `scale_target_ref` leaves out `api_version`
/// ("apiVersion must specify API group"), as it refuses hashicorp's: the error's summary names
/// the attribute to set, beside the API's field path.
#[test]
fn an_api_refusal_names_the_attribute_to_set() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hpa");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        r#"resource "kubernetes_horizontal_pod_autoscaler_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {}
  }}
  spec {{
    max_replicas = 3
    scale_target_ref {{
      kind = "Deployment"
      name = "web"
    }}
  }}
}}
"#,
        quote(&ns.name)
    ));
    let out = work.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(
        !out.success(),
        "an autoscaler without api_version was created:\n{out}"
    );
    let text = out.flat();
    assert!(
        text.contains("spec.scaleTargetRef.apiVersion")
            && text.contains("(at spec[0].scale_target_ref[0].api_version)"),
        "the refusal does not name the attribute:\n{out}"
    );
}

/// A manifest whose kind no CustomResourceDefinition defines fails at once, naming the kind
/// and saying the definition comes first, instead of waiting out `timeouts.create`.
#[test]
fn a_manifest_of_a_kind_nothing_defines_fails_at_once() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "nokind");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        r#"resource "kubernetes_manifest" "widget" {{
  manifest = {{
    apiVersion = "absent.example.com/v1"
    kind       = "Widget"
    metadata   = {{ name = "w", namespace = {} }}
    spec       = {{ size = 1 }}
  }}
  timeouts {{ create = "10m" }}
}}
"#,
        quote(&ns.name)
    ));
    let out = work.apply();
    assert!(!out.success(), "a manifest of an undefined kind applied:\n{out}");
    let text = out.flat();
    assert!(
        text.contains("Kind Widget of absent.example.com/v1 is not served by the cluster")
            && text.contains("must be installed first"),
        "the failure does not name the kind and its missing definition:\n{out}"
    );
    assert!(!text.contains("waited"), "the apply waited for the kind:\n{out}");
}

/// hashicorp's unversioned HorizontalPodAutoscaler takes autoscaling/v1's
/// `target_cpu_utilization_percentage`: written as the cpu metric autoscaling/v2 spells it, read
/// back as the percentage; a change of it is an update, and the plan after each apply is empty.
/// (`scale_target_ref.api_version` is set: without it hashicorp sends "" and kube-apiserver
/// refuses it, "apiVersion must specify API group".)
#[test]
fn the_unversioned_autoscaler_takes_a_cpu_percentage() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "hpa");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let hpa = |percent: u32| {
        format!(
            r#"resource "kubernetes_horizontal_pod_autoscaler" "web" {{
  metadata {{
    name      = "web"
    namespace = {}
  }}
  spec {{
    min_replicas                      = 1
    max_replicas                      = 3
    target_cpu_utilization_percentage = {percent}
    scale_target_ref {{
      api_version = "apps/v1"
      kind        = "Deployment"
      name        = "web"
    }}
  }}
}}
"#,
            quote(&ns.name)
        )
    };
    for percent in [50, 70] {
        work.write(&hpa(percent));
        work.apply_ok(&format!("an autoscaler at {percent}% cpu"));
        let live = cluster.get_json(&["horizontalpodautoscalers.v2.autoscaling", "web", "-n", &ns.name]);
        assert_eq!(
            live["spec"]["metrics"],
            serde_json::json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": percent}}}]),
            "{live}"
        );
        let state = work.state_values("kubernetes_horizontal_pod_autoscaler.web");
        assert_eq!(
            state["spec"][0]["target_cpu_utilization_percentage"], percent,
            "{state}"
        );
        assert_eq!(state["spec"][0]["metric"], serde_json::json!([]), "{state}");
        let again = work.plan_exit();
        assert_eq!(again.code, 0, "the plan after apply is not empty:\n{again}");
    }
}
