//! `kubernetes_manifest` and what the server writes beside it (issue 40, hashicorp #2796,
//! #2894, #2547, #2185, #2722):
//! - its field manager owns exactly the paths the manifest names, and the estate label, after
//!   create and after an update that drops some and adds others (`managedFields`); the fields
//!   the server defaults stay the server's;
//! - a custom resource whose definition has structural defaults, and a ConfigMap that a
//!   MutatingAdmissionPolicy labels at create, apply without "Provider produced inconsistent
//!   result" and leave the next plan empty.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use acceptance::hcl::{LiveDir, ScratchNamespace, gizmo, gizmo_crd, quote, unique_name};
use acceptance::{Cluster, EngineOutput};
use serde_json::Value;

/// A Deployment and a ConfigMap in `ns` as manifests: `image`, the ConfigMap's `data` entries and
/// the container's env names vary between the steps.
fn manifests(ns: &str, image: &str, data: &[&str], env: &[&str]) -> String {
    let data: Vec<String> = data.iter().map(|k| format!("{k} = \"{k}-value\"")).collect();
    let env: Vec<String> = env
        .iter()
        .map(|n| format!("{{ name = \"{n}\", value = \"1\" }}"))
        .collect();
    format!(
        r#"{settings}
resource "kubernetes_manifest" "web" {{
  manifest = {{
    apiVersion = "apps/v1"
    kind       = "Deployment"
    metadata   = {{ name = "web", namespace = {ns} }}
    spec = {{
      replicas = 1
      selector = {{ matchLabels = {{ app = "web" }} }}
      template = {{
        metadata = {{ labels = {{ app = "web" }} }}
        spec = {{
          containers = [{{
            name  = "web"
            image = "{image}"
            args  = ["--port", "8080"]
            env   = [{env}]
          }}]
        }}
      }}
    }}
  }}
}}
"#,
        settings = settings(ns, &data.join(", ")),
        ns = quote(ns),
        env = env.join(", "),
    )
}

/// The ConfigMap `settings` in `ns` as a manifest, labelled app=web, with `data` (HCL entries).
fn settings(ns: &str, data: &str) -> String {
    format!(
        r#"resource "kubernetes_manifest" "settings" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {{
      name      = "settings"
      namespace = {ns}
      labels    = {{ app = "web" }}
    }}
    data = {{ {data} }}
  }}
}}
"#,
        ns = quote(ns),
    )
}

/// The leaf paths a `fieldsV1` set names, each a list of its segments (`f:data`, `k:{"name":"web"}`).
fn owned(fields: &Value, prefix: &[String], out: &mut BTreeSet<Vec<String>>) {
    let Some(map) = fields.as_object() else { return };
    let children: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| k.as_str() != ".").collect();
    if children.is_empty() {
        out.insert(prefix.to_vec());
    }
    for (segment, inner) in children {
        let mut path = prefix.to_vec();
        path.push(segment.clone());
        owned(inner, &path, out);
    }
}

/// The leaf paths of a manifest as `fieldsV1` names them: lists of objects by their `name`
/// (the merge key of containers and env), lists of scalars whole (atomic), the object's
/// identity (apiVersion, kind, name, namespace) left out as the server leaves it out.
fn named(value: &Value, prefix: &[String], out: &mut BTreeSet<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let identity = prefix.is_empty() && matches!(key.as_str(), "apiVersion" | "kind")
                    || prefix == ["f:metadata"] && matches!(key.as_str(), "name" | "namespace");
                if !identity {
                    let mut path = prefix.to_vec();
                    path.push(format!("f:{key}"));
                    named(inner, &path, out);
                }
            }
        }
        Value::Array(items) if items.iter().all(Value::is_object) && !items.is_empty() => {
            for item in items {
                let mut path = prefix.to_vec();
                path.push(format!("k:{{\"name\":{}}}", item["name"]));
                named(item, &path, out);
            }
        }
        _ => {
            out.insert(prefix.to_vec());
        }
    }
}

/// The paths the manager `Terraform` owns on `object`, by its Apply entry.
fn ours(object: &Value) -> BTreeSet<Vec<String>> {
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut out = BTreeSet::new();
    for entry in entries
        .iter()
        .filter(|e| e["manager"] == "Terraform" && e["operation"] == "Apply")
    {
        owned(&entry["fieldsV1"], &[], &mut out);
    }
    out
}

/// Checks that `object`'s Apply entry of `Terraform` owns what `manifest` names, and the estate
/// label, and nothing else.
fn owns_exactly(what: &str, object: &Value, manifest: &Value) {
    let mut expected = BTreeSet::new();
    named(manifest, &[], &mut expected);
    expected.insert(
        ["f:metadata", "f:labels", "f:tofu-estate"]
            .map(str::to_string)
            .to_vec(),
    );
    let actual = ours(object);
    // An owned leaf over a subtree of the manifest is an atomic value (a label selector) owned
    // whole.
    let covers = |owned: &Vec<String>, named: &Vec<String>| named.starts_with(owned);
    let extra: Vec<String> = actual
        .iter()
        .filter(|o| !expected.iter().any(|n| covers(o, n)))
        .map(|p| p.join("."))
        .collect();
    let missing: Vec<String> = expected
        .iter()
        .filter(|n| !actual.iter().any(|o| covers(o, n)))
        .map(|p| p.join("."))
        .collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "{what}: the field manager owns {extra:?} beyond the manifest and lacks {missing:?}\n{}",
        object["metadata"]["managedFields"]
    );
}

/// The manifest of `address` as the state holds it (the configuration's, typed).
fn manifest_of(work: &LiveDir, address: &str) -> Value {
    let values = work.state_values(address);
    values["manifest"]["value"].clone()
}

#[test]
fn the_field_manager_owns_exactly_the_paths_the_manifest_names() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mown");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&manifests(&ns.name, "nginx:1.27", &["a", "b"], &["A"]));
    work.apply_ok("a ConfigMap and a Deployment as manifests");
    for (address, kind, name) in [
        ("kubernetes_manifest.settings", "configmap", "settings"),
        ("kubernetes_manifest.web", "deployment", "web"),
    ] {
        let object = cluster.get_json(&[kind, name, "-n", &ns.name, "--show-managed-fields"]);
        owns_exactly(
            &format!("{name} after create"),
            &object,
            &manifest_of(&work, address),
        );
    }

    // Drop some fields, add others: ownership follows, and what was dropped is gone.
    work.write(&manifests(&ns.name, "nginx:1.28", &["a", "c"], &["B"]));
    work.apply_ok("the manifests changed");
    let settings = cluster.get_json(&["configmap", "settings", "-n", &ns.name, "--show-managed-fields"]);
    owns_exactly(
        "settings after update",
        &settings,
        &manifest_of(&work, "kubernetes_manifest.settings"),
    );
    assert!(settings["data"].get("b").is_none(), "data.b stayed: {settings}");
    let web = cluster.get_json(&["deployment", "web", "-n", &ns.name, "--show-managed-fields"]);
    owns_exactly(
        "web after update",
        &web,
        &manifest_of(&work, "kubernetes_manifest.web"),
    );
    let env = &web["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env.as_array().map(Vec::len), Some(1), "{env}");
    assert_eq!(env[0]["name"], "B", "{env}");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after update is not empty:\n{plan}");
}

/// A Gizmo definition whose `spec` defaults `size`, `mode` and a nested `limits.cpu`.
fn defaulting_crd(group: &str) -> String {
    gizmo_crd(
        group,
        r#"
        color  = { type = "string" }
        size   = { type = "integer", default = 3 }
        mode   = { type = "string", default = "fast" }
        limits = {
          type    = "object"
          default = {}
          properties = { cpu = { type = "string", default = "500m" } }
        }
      "#,
    )
}

/// Fails on the engine's "inconsistent result" as on any other failure.
fn applies_consistently(out: &EngineOutput, what: &str) {
    assert!(
        out.success() && !out.flat().contains("inconsistent result"),
        "{what}:\n{out}"
    );
}

#[test]
fn server_defaults_and_admission_labels_at_create_are_no_inconsistent_result() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mdef");
    let group = format!("{}.defaults.example.com", unique_name("d"));
    let id = unique_name("stamp");
    // A mutating policy that labels and annotates the ConfigMaps created in the namespace.
    let policy = format!(
        r#"resource "kubernetes_mutating_admission_policy_v1" "stamp" {{
  metadata {{
    name = "{id}"
  }}
  spec {{
    reinvocation_policy = "Never"
    match_constraints {{
      resource_rule {{
        api_groups   = [""]
        api_versions = ["v1"]
        operations   = ["CREATE"]
        resources    = ["configmaps"]
      }}
    }}
    mutation {{
      patch_type = "ApplyConfiguration"
      apply_configuration {{
        expression = "Object{{metadata: Object.metadata{{labels: {{\"stamped\": \"yes\"}}, annotations: {{\"stamped-at\": \"create\"}}}}}}"
      }}
    }}
  }}
}}

resource "kubernetes_mutating_admission_policy_binding_v1" "stamp" {{
  metadata {{
    name = "{id}"
  }}
  spec {{
    policy_name = kubernetes_mutating_admission_policy_v1.stamp.metadata[0].name
    match_resources {{
      namespace_selector {{
        match_labels = {{ "kubernetes.io/metadata.name" = {ns} }}
      }}
    }}
  }}
}}
"#,
        ns = quote(&ns.name),
    );
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!("{}{policy}", defaulting_crd(&group)));
    work.apply_ok("the definition and the policy");
    // The server loads a policy shortly after it is written: wait until it labels a probe.
    let deadline = Instant::now() + Duration::from_secs(60);
    for attempt in 0.. {
        let name = format!("probe-{attempt}");
        cluster.kubectl_ok(&["create", "configmap", &name, "-n", &ns.name]);
        let probe = cluster.get_json(&["configmap", &name, "-n", &ns.name]);
        if probe["metadata"]["labels"]["stamped"] == "yes" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the policy never labelled a ConfigMap: {probe}"
        );
        std::thread::sleep(Duration::from_secs(2));
    }

    let config_map = settings(&ns.name, "mode = \"fast\"");
    work.write(&format!(
        "{}{policy}{}{config_map}",
        defaulting_crd(&group),
        gizmo(&group, &ns.name, "{ color = \"blue\" }")
    ));
    let out = work.apply();
    applies_consistently(&out, "a defaulted custom resource and a labelled ConfigMap");

    let live = cluster.get_json(&[&format!("gizmos.{group}"), "g", "-n", &ns.name]);
    assert_eq!(live["spec"]["size"], 3, "{live}");
    assert_eq!(live["spec"]["limits"]["cpu"], "500m", "{live}");
    let settings = cluster.get_json(&["configmap", "settings", "-n", &ns.name]);
    assert_eq!(settings["metadata"]["labels"]["stamped"], "yes", "{settings}");
    assert_eq!(
        settings["metadata"]["annotations"]["stamped-at"], "create",
        "{settings}"
    );

    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");
    // An update keeps what the server wrote and still plans nothing after.
    work.write(
        &format!(
            "{}{policy}{}{config_map}",
            defaulting_crd(&group),
            gizmo(&group, &ns.name, "{ color = \"blue\" }")
        )
        .replace("color = \"blue\"", "color = \"green\"")
        .replace("mode = \"fast\"", "mode = \"slow\""),
    );
    let out = work.apply();
    applies_consistently(&out, "the custom resource and the ConfigMap updated");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after the update is not empty:\n{plan}");
    let _ = cluster.kubectl(&[
        "delete",
        "customresourcedefinition",
        &format!("gizmos.{group}"),
        "--wait=false",
    ]);
}
