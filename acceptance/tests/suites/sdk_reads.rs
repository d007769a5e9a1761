//! What hashicorp's SDKv2 provider reads and plans, as its own acceptance cases check it:
//!
//! - an `import` block by identity plans no update where the configuration sets a Terraform-only
//!   setting (`wait_for_rollout = false`, `wait_for_load_balancer = false`, ...) or an empty
//!   `data = {}`: the import leaves those unset, and such a difference alone is no change;
//! - a data source shows every label and annotation of the object, the keys Kubernetes writes
//!   and those `ignore_labels` / `ignore_annotations` match included (they apply to resources);
//! - a service-account token Secret's `data` holds what the token controller wrote, so a
//!   configuration reads `data["token"]`; and `replicas = ""` (a computed string, as SDKv2's
//!   schema.finalizeDiff reads it) keeps the current count instead of dropping it;
//! - `terraform import` of a ConfigMap or Secret without data reads `data = {}` (and a
//!   ConfigMap's `binary_data = {}`), as hashicorp's import does, so a configuration with
//!   `data = {}` reads back as it applied, and one without `data` plans no change.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};

/// A Deployment, a Secret and a Service in `ns` whose configuration sets what an import leaves
/// unset.
fn objects(ns: &str) -> String {
    let ns = quote(ns);
    format!(
        r#"
resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {ns}
  }}
  spec {{
    replicas = 1
    selector {{
      match_labels = {{ app = "web" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "web" }}
      }}
      spec {{
        container {{
          name    = "web"
          image   = "busybox"
          command = ["sleep", "300"]
        }}
        termination_grace_period_seconds = 1
      }}
    }}
  }}
  wait_for_rollout = false
}}

resource "kubernetes_deployment_v1" "defaults" {{
  metadata {{
    name      = "defaults"
    namespace = {ns}
  }}
  spec {{
    replicas = 0
    selector {{
      match_labels = {{ app = "defaults" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "defaults" }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "busybox"
        }}
      }}
    }}
  }}
}}

resource "kubernetes_secret_v1" "empty" {{
  metadata {{
    name      = "empty"
    namespace = {ns}
  }}
  data                           = {{}}
  wait_for_service_account_token = false
}}

resource "kubernetes_service_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {ns}
  }}
  spec {{
    selector = {{ app = "web" }}
    port {{
      port = 80
    }}
  }}
  wait_for_load_balancer = false
}}
"#
    )
}

/// An `import` block by identity for each resource of [`objects`].
fn imports(ns: &str) -> String {
    [
        ("kubernetes_deployment_v1.web", "apps/v1", "Deployment", "web"),
        ("kubernetes_deployment_v1.defaults", "apps/v1", "Deployment", "defaults"),
        ("kubernetes_secret_v1.empty", "v1", "Secret", "empty"),
        ("kubernetes_service_v1.web", "v1", "Service", "web"),
    ]
    .iter()
    .map(|(to, api_version, kind, name)| {
        format!(
            "import {{\n  to = {to}\n  identity = {{\n    api_version = \"{api_version}\"\n    kind        = \"{kind}\"\n    name        = \"{name}\"\n    namespace   = {}\n  }}\n}}\n",
            quote(ns)
        )
    })
    .collect()
}

#[test]
fn an_import_block_plans_no_update_for_settings_the_object_cannot_hold() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "sdk-import");
    let work = LiveDir::new(&unique_name("sdk-import"), cluster.kubeconfig());
    work.write(&objects(&ns.name));
    work.apply_ok("the objects");
    for address in [
        "kubernetes_deployment_v1.web",
        "kubernetes_deployment_v1.defaults",
        "kubernetes_secret_v1.empty",
        "kubernetes_service_v1.web",
    ] {
        let out = work.run(&["state", "rm", address]);
        assert!(out.success(), "state rm {address}:\n{out}");
    }

    work.write(&format!("{}{}", objects(&ns.name), imports(&ns.name)));
    let (out, plan) = work.engine().plan_json(&[]);
    let plan = plan.unwrap_or_else(|| panic!("no plan:\n{out}"));
    for change in plan.raw["resource_changes"].as_array().expect("changes") {
        assert_eq!(
            change["change"]["actions"],
            serde_json::json!(["no-op"]),
            "{} is planned as more than an import:\n{out}",
            change["address"]
        );
        assert!(change["change"]["importing"].is_object(), "{change}");
    }
    work.apply_ok("the imports");
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after the imports is not empty:\n{next}");

    // The next write of the object carries the configured settings into the state.
    work.write(&objects(&ns.name).replacen(
        "    name      = \"web\"\n",
        "    name      = \"web\"\n    labels    = { tier = \"a\" }\n",
        1,
    ));
    work.apply_ok("a label");
    let state = work.state_values("kubernetes_deployment_v1.web");
    assert_eq!(state["wait_for_rollout"], false, "{state}");
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "{next}");
    work.write("");
    work.apply_ok("destroy");
}

#[test]
fn a_data_source_shows_every_label_and_annotation() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "sdk-data");
    cluster.kubectl_ok(&["annotate", "namespace", &ns.name, "example.com/owner=team"]);
    cluster.kubectl_ok(&["label", "namespace", &ns.name, "example.com/tier=gold"]);
    let work = LiveDir::with_settings(
        &unique_name("sdk-data"),
        cluster.kubeconfig(),
        "  ignore_annotations = [\"^example\\\\.com/\"]\n  ignore_labels      = [\"^example\\\\.com/\"]\n",
    );
    work.write(&format!(
        r#"
data "kubernetes_namespace_v1" "this" {{
  metadata {{
    name = {}
  }}
}}

output "labels" {{
  value = data.kubernetes_namespace_v1.this.metadata[0].labels
}}

output "annotations" {{
  value = data.kubernetes_namespace_v1.this.metadata[0].annotations
}}
"#,
        quote(&ns.name)
    ));
    work.apply_ok("the data source");
    let output = |name: &str| -> serde_json::Value {
        let out = work.run(&["output", "-json", name]);
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("output {name}: {e}\n{out}"))
    };
    let labels = output("labels");
    assert_eq!(labels["example.com/tier"], "gold", "{labels}");
    assert_eq!(
        labels["kubernetes.io/metadata.name"],
        ns.name.as_str(),
        "{labels}"
    );
    let annotations = output("annotations");
    assert_eq!(annotations["example.com/owner"], "team", "{annotations}");
}

/// [`objects`] with the `web` Deployment's `replicas` written as the string `replicas` (as
/// hashicorp types it), and a ServiceAccount with its token Secret, the token a sensitive output.
fn token_and_replicas(ns: &str, replicas: &str) -> String {
    let objects = objects(ns).replacen(
        "    replicas = 1\n",
        &format!("    replicas = {}\n", quote(replicas)),
        1,
    );
    let ns = quote(ns);
    format!(
        r#"{objects}
resource "kubernetes_service_account_v1" "ci" {{
  metadata {{
    name      = "ci"
    namespace = {ns}
  }}
}}

resource "kubernetes_secret_v1" "ci_token" {{
  metadata {{
    name        = "ci-token"
    namespace   = {ns}
    annotations = {{ "kubernetes.io/service-account.name" = kubernetes_service_account_v1.ci.metadata[0].name }}
  }}
  type = "kubernetes.io/service-account-token"
}}

output "token" {{
  value     = kubernetes_secret_v1.ci_token.data["token"]
  sensitive = true
}}
"#
    )
}

#[test]
fn a_token_secret_shows_its_token_and_an_empty_replicas_keeps_the_count() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "sdk-token");
    let work = LiveDir::new(&unique_name("sdk-token"), cluster.kubeconfig());
    work.write(&token_and_replicas(&ns.name, "2"));
    work.apply_ok("the objects and the token Secret");

    // The token the controller wrote, in the state and through the output.
    let secret = cluster.get_json(&["secret", "ci-token", "-n", &ns.name]);
    let encoded = secret["data"]["token"]
        .as_str()
        .expect("the controller wrote a token");
    use base64::Engine;
    let live = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map(|b| String::from_utf8(b).expect("a text token"))
        .expect("base64");
    let out = work.run(&["output", "-raw", "token"]);
    assert!(out.success(), "{out}");
    assert!(
        out.stdout == live,
        "data[\"token\"] is not the controller's token"
    );
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after the apply is not empty:\n{next}");

    // `replicas = ""` is no value: the plan keeps 2, and so does the Deployment.
    work.write(&token_and_replicas(&ns.name, ""));
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "an empty replicas plans a change:\n{next}");
    work.apply_ok("an empty replicas");
    let live = cluster.get_json(&["deployment", "web", "-n", &ns.name]);
    assert_eq!(live["spec"]["replicas"], 2, "{live}");
    assert_eq!(
        work.state_values("kubernetes_deployment_v1.web")["spec"][0]["replicas"],
        "2"
    );
    work.write("");
    work.apply_ok("destroy");
}

/// ConfigMaps and a Secret whose configuration writes `data = {}` or leaves it out.
fn empty_maps(ns: &str) -> String {
    let ns = quote(ns);
    ["empty", "none"]
        .iter()
        .flat_map(|name| {
            let data = if *name == "empty" { "\n  data = {}" } else { "" };
            ["kubernetes_config_map_v1", "kubernetes_secret_v1"].map(|t| {
                format!(
                    "resource \"{t}\" \"{name}\" {{\n  metadata {{\n    name      = \"{name}\"\n    namespace = {ns}\n  }}{data}\n}}\n"
                )
            })
        })
        .collect()
}

#[test]
fn an_import_reads_an_absent_data_map_as_empty() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "sdk-empty");
    let work = LiveDir::new(&unique_name("sdk-empty"), cluster.kubeconfig());
    work.write(&empty_maps(&ns.name));
    work.apply_ok("the ConfigMaps and Secrets");
    let data = |address: &str| work.state_values(address)["data"].clone();
    assert_eq!(data("kubernetes_config_map_v1.empty"), serde_json::json!({}));
    assert_eq!(data("kubernetes_config_map_v1.none"), serde_json::Value::Null);

    for t in ["kubernetes_config_map_v1", "kubernetes_secret_v1"] {
        for name in ["empty", "none"] {
            let address = format!("{t}.{name}");
            let out = work.run(&["state", "rm", &address]);
            assert!(out.success(), "state rm {address}:\n{out}");
            let id = format!("{}/{name}", ns.name);
            let out = work.run(&["import", "-input=false", &address, &id]);
            assert!(out.success(), "import {address}:\n{out}");
            assert_eq!(
                data(&address),
                serde_json::json!({}),
                "{address} after its import"
            );
        }
    }
    let binary = work.state_values("kubernetes_config_map_v1.none")["binary_data"].clone();
    assert_eq!(
        binary,
        serde_json::json!({}),
        "a ConfigMap's binary_data after its import"
    );
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after the imports is not empty:\n{next}");
    work.write("");
    work.apply_ok("destroy");
}
