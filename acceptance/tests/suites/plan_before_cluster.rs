//! Planning before the cluster exists: the provider blocks take their connection from outputs
//! known only at apply, as a configuration that creates its cluster in the same run does
//! (`host = module.eks.cluster_endpoint`, an `exec` credential plugin fed by the same module).
//! Here `terraform_data` stands in for that module.
//!
//! From an empty state, one plan and one apply create everything (no `-target`), and the next
//! plan is empty. With state, a connection unknown again plans no change for what did not
//! change (warned: not refreshed), a create planned that way is refused at apply when another
//! estate's object appeared meanwhile, and a data source says how to wait for the connection.
//!
//! The kubectl providers' way, `lazy_load = true` (under `choudoufu/kubectl`): a kubeconfig that
//! does not exist yet plans without the cluster; once it exists, the saved plan applies.

use acceptance::cluster::Credentials;
use acceptance::hcl::{quote, required_providers, unique_name};
use acceptance::{Cluster, Engine};

/// The configuration: the two stand-ins, both provider blocks connecting through them, and
/// the estate's objects; `host_suffix` changes the cluster stand-in's output ("" or "/").
fn config(estate: &str, ns: &str, creds: &Credentials, host_suffix: &str, extra: &str) -> String {
    let server = quote(&format!("{}{host_suffix}", creds.server));
    let ca = quote(&creds.ca_pem);
    let token = quote(&creds.token);
    let estate = quote(estate);
    let ns = quote(ns);
    format!(
        r#"terraform {{
  required_providers {{
    kubernetes = {{ source = "choudoufu/live" }}
    records    = {{ source = "choudoufu/records" }}
  }}
}}

# Stand-ins for the module that creates the cluster: known only at apply.
resource "terraform_data" "cluster" {{
  input = {server}
}}

resource "terraform_data" "credentials" {{
  input = {token}
}}

provider "kubernetes" {{
  estate                 = {estate}
  host                   = terraform_data.cluster.output
  cluster_ca_certificate = {ca}
  exec {{
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "sh"
    args        = ["-c", "printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"%s\"}}}}' \"$0\"", terraform_data.credentials.output]
  }}
}}

provider "records" {{
  estate                 = {estate}
  host                   = terraform_data.cluster.output
  cluster_ca_certificate = {ca}
  token                  = terraform_data.credentials.output
}}

resource "kubernetes_namespace_v1" "app" {{
  metadata {{
    name = {ns}
  }}
}}

# No namespace: "default", as hashicorp plans it.
resource "kubernetes_config_map_v1" "settings" {{
  metadata {{
    name = "settings-${{kubernetes_namespace_v1.app.metadata[0].name}}"
  }}
  data = {{
    mode = "blue"
  }}
}}

resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = kubernetes_namespace_v1.app.metadata[0].name
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
          name  = "web"
          image = "nginx:1.27"
        }}
      }}
    }}
  }}
}}

resource "kubernetes_manifest" "quota" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ResourceQuota"
    metadata = {{
      name      = "quota"
      namespace = {ns}
    }}
    spec = {{
      hard = {{ pods = "10" }}
    }}
  }}
  depends_on = [kubernetes_namespace_v1.app]
}}

resource "records_outputs" "this" {{
  values = {{ namespace = {ns} }}
}}
{extra}"#
    )
}

/// The actions the saved plan `tfplan` has for every resource, by address.
fn actions(engine: &Engine, plan_file: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let show = engine.run(&["show", "-json", plan_file]);
    assert!(show.success(), "show -json:\n{show}");
    let plan: serde_json::Value = serde_json::from_str(&show.stdout).expect("a JSON plan");
    plan["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let actions = c["change"]["actions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect();
            (c["address"].as_str().unwrap_or_default().to_string(), actions)
        })
        .collect()
}

#[test]
fn a_cluster_created_in_the_same_run_plans_applies_and_guards_without_target() {
    let cluster = Cluster::start();
    let creds = cluster.credentials();
    let estate = unique_name("before");
    let other = unique_name("other");
    let ns = unique_name("before");
    let dir = tempfile::tempdir().expect("a working folder");
    let engine = Engine::new(dir.path());
    let write = |suffix: &str, extra: &str| {
        std::fs::write(
            dir.path().join("main.tf"),
            config(&estate, &ns, &creds, suffix, extra),
        )
        .expect("main.tf")
    };
    write("", "");
    let init = engine.init();
    assert!(init.success(), "init:\n{init}");

    // From an empty state: one plan, one apply, no -target.
    let plan = engine.run(&["plan", "-input=false", "-out=first.tfplan"]);
    assert!(plan.success(), "the plan before the cluster exists:\n{plan}");
    let text = plan.flat();
    assert!(
        text.contains("Plan: 7 to add, 0 to change, 0 to destroy"),
        "{plan}"
    );
    assert!(
        text.contains("Manifest planned without the cluster") && text.contains("known only at apply"),
        "the manifest's warning:\n{plan}"
    );
    let apply = engine.run(&["apply", "-input=false", "first.tfplan"]);
    assert!(
        apply.success(),
        "apply of the plan made without the cluster:\n{apply}"
    );
    let again = engine.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "the plan after apply is not empty:\n{again}");
    let settings = cluster.get_json(&["configmap", &format!("settings-{ns}"), "-n", "default"]);
    assert_eq!(settings["metadata"]["labels"]["tofu-estate"], estate.as_str());

    // With state, the connection unknown again: nothing unchanged moves, and a new object is
    // planned as a create.
    let late = r#"
resource "kubernetes_config_map_v1" "late" {
  metadata {
    name      = "late"
    namespace = kubernetes_namespace_v1.app.metadata[0].name
  }
  data = { a = "b" }
}
"#;
    write("/", late);
    let plan = engine.run(&["plan", "-input=false", "-out=second.tfplan"]);
    assert!(
        plan.success(),
        "the plan with state and an unknown connection:\n{plan}"
    );
    assert!(
        plan.flat()
            .contains("Not refreshed: the connection is known only at apply"),
        "the refresh's warning:\n{plan}"
    );
    let planned = actions(&engine, "second.tfplan");
    for (address, expected) in [
        ("kubernetes_namespace_v1.app", "no-op"),
        ("kubernetes_config_map_v1.settings", "no-op"),
        ("kubernetes_deployment_v1.web", "no-op"),
        ("kubernetes_manifest.quota", "no-op"),
        ("records_outputs.this", "no-op"),
        ("kubernetes_config_map_v1.late", "create"),
    ] {
        assert_eq!(planned[address], [expected], "{address} in:\n{planned:#?}");
    }

    // Meanwhile another estate creates the object that plan would create: refused at apply.
    let foreign = cluster.kubectl(&["create", "configmap", "late", "-n", &ns]);
    assert!(foreign.success(), "kubectl create configmap late:\n{foreign}");
    let label = cluster.kubectl(&[
        "label",
        "configmap",
        "late",
        "-n",
        &ns,
        &format!("tofu-estate={other}"),
    ]);
    assert!(label.success(), "kubectl label:\n{label}");
    let apply = engine.run(&["apply", "-input=false", "second.tfplan"]);
    assert!(
        !apply.success(),
        "the saved plan overwrote another estate's object:\n{apply}"
    );
    assert!(
        apply
            .flat()
            .contains(&format!("ConfigMap \"{ns}/late\" belongs to estate \"{other}\"")),
        "the refusal names the object and its estate:\n{apply}"
    );
    let kept = cluster.get_json(&["configmap", "late", "-n", &ns]);
    assert_eq!(
        kept["metadata"]["labels"]["tofu-estate"],
        other.as_str(),
        "left untouched"
    );
    let delete = cluster.kubectl(&["delete", "configmap", "late", "-n", &ns]);
    assert!(delete.success(), "kubectl delete:\n{delete}");

    // A data source cannot wait by itself: it says how, and with depends_on the engine reads
    // it at apply.
    let read = |depends: &str| {
        format!(
            "\ndata \"kubernetes_namespace_v1\" \"app\" {{\n  metadata {{\n    name = {}\n  }}\n  {depends}\n}}\n",
            quote(&ns)
        )
    };
    write("", &read(""));
    let plan = engine.run(&["plan", "-input=false"]);
    assert!(
        !plan.success(),
        "a data source read without a connection:\n{plan}"
    );
    let text = plan.flat();
    assert!(
        text.contains("Cannot connect to Kubernetes yet") && text.contains("depends_on"),
        "the data source's error:\n{plan}"
    );
    write("", &read("depends_on = [terraform_data.cluster]"));
    let plan = engine.run(&["plan", "-input=false"]);
    assert!(plan.success(), "a data source with depends_on:\n{plan}");

    // Destroy in one go.
    write("", "");
    let destroy = engine.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(destroy.success(), "destroy:\n{destroy}");
    let _ = cluster.kubectl(&[
        "delete",
        "namespace",
        &format!("tofu-records-{estate}"),
        "--wait=false",
    ]);
}

/// `lazy_load = true` and a `config_path` whose file the cluster's creation writes later: the
/// plan is made without the cluster (with `lazy_load = false` it fails naming the file), and
/// applies once the file is there.
#[test]
fn lazy_load_plans_before_the_kubeconfig_exists() {
    let cluster = Cluster::start();
    let estate = unique_name("lazy");
    let dir = tempfile::tempdir().expect("a working folder");
    let kubeconfig = dir.path().join("created-later").join("kubeconfig");
    let write = |lazy: bool| {
        let main = format!(
            "{}\nprovider \"kubectl\" {{\n  estate      = {}\n  lazy_load   = {lazy}\n  \
             config_path = {}\n}}\n\nresource \"kubernetes_config_map_v1\" \"lazy\" {{\n  \
             provider = kubectl\n  metadata {{\n    name      = {}\n    namespace = \"default\"\n  }}\n}}\n",
            required_providers(""),
            quote(&estate),
            quote(&kubeconfig.to_string_lossy()),
            quote(&estate),
        );
        std::fs::write(dir.path().join("main.tf"), main).expect("main.tf")
    };
    let engine = Engine::new(dir.path());
    write(false);
    let init = engine.init();
    assert!(init.success(), "init:\n{init}");
    let strict = engine.run(&["plan", "-input=false"]);
    assert!(!strict.success(), "planned without a kubeconfig:\n{strict}");
    assert!(strict.flat().contains("Kubeconfig file not found"), "{strict}");

    write(true);
    let plan = engine.run(&["plan", "-input=false", "-out=lazy.tfplan"]);
    assert!(plan.success(), "the plan before the kubeconfig exists:\n{plan}");
    assert!(
        plan.flat().contains("Plan: 1 to add, 0 to change, 0 to destroy"),
        "{plan}"
    );

    std::fs::create_dir_all(kubeconfig.parent().expect("a folder")).expect("create its folder");
    std::fs::copy(cluster.kubeconfig(), &kubeconfig).expect("write the kubeconfig");
    let apply = engine.run(&["apply", "-input=false", "lazy.tfplan"]);
    assert!(apply.success(), "apply once the kubeconfig exists:\n{apply}");
    let object = cluster.get_json(&["configmap", &estate, "-n", "default"]);
    assert_eq!(object["metadata"]["labels"]["tofu-estate"], estate.as_str());
}
