//! What a `kubernetes_manifest` leaves alone (hashicorp/terraform-provider-kubernetes#1378,
//! #2410, #2681 report that hashicorp's does not): annotations and labels another tool adds,
//! which `ignore_annotations` / `ignore_labels` name, plan no change and stay on the object; and
//! `lifecycle.ignore_changes` on a path of `manifest` keeps a configuration change there out of
//! the plan, as it does for any attribute.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};

fn config_map(ns: &str, value: &str, ignore: &str) -> String {
    format!(
        r#"
resource "kubernetes_manifest" "settings" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {{
      name        = "settings"
      namespace   = {ns}
      annotations = {{ "team.example.com/owner" = "web" }}
    }}
    data = {{ mode = {value} }}
  }}
{ignore}}}
"#,
        ns = quote(ns),
        value = quote(value),
    )
}

#[test]
fn others_annotations_and_ignored_changes_plan_nothing() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mignore");
    let work = LiveDir::with_settings(
        &unique_name("mignore"),
        cluster.kubeconfig(),
        "  ignore_annotations = [\"^mesh\\\\.example\\\\.com/\"]\n  ignore_labels      = [\"^mesh\\\\.example\\\\.com/\"]\n",
    );
    work.write(&config_map(&ns.name, "blue", ""));
    work.apply_ok("the ConfigMap");

    // Another tool (a mesh injector, a policy controller) adds its own keys.
    cluster.kubectl_ok(&[
        "annotate",
        "configmap",
        "settings",
        "-n",
        &ns.name,
        "mesh.example.com/injected=true",
    ]);
    cluster.kubectl_ok(&[
        "label",
        "configmap",
        "settings",
        "-n",
        &ns.name,
        "mesh.example.com/tier=gold",
    ]);
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "another tool's keys plan a change:\n{plan}");

    // A change of our own annotation's value is a change; the other tool's keys stay.
    work.write(&config_map(&ns.name, "blue", "").replace("\"web\"", "\"api\""));
    work.apply_ok("our annotation");
    let live = cluster.get_json(&["configmap", "settings", "-n", &ns.name]);
    assert_eq!(
        live["metadata"]["annotations"]["team.example.com/owner"], "api",
        "{live}"
    );
    assert_eq!(
        live["metadata"]["annotations"]["mesh.example.com/injected"], "true",
        "{live}"
    );
    assert_eq!(
        live["metadata"]["labels"]["mesh.example.com/tier"], "gold",
        "{live}"
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "{plan}");

    // ignore_changes on a path inside `manifest`: the configured change is not planned.
    let ignoring = "  lifecycle {\n    ignore_changes = [manifest.data]\n  }\n";
    work.write(&config_map(&ns.name, "green", ignoring).replace("\"web\"", "\"api\""));
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "an ignored change is planned:\n{plan}");
    work.apply_ok("with the change ignored");
    let live = cluster.get_json(&["configmap", "settings", "-n", &ns.name]);
    assert_eq!(live["data"]["mode"], "blue", "{live}");

    work.write("");
    work.apply_ok("destroy");
}
