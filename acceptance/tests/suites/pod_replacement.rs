//! A Pod replaced by a saved plan (issue 38): a change hashicorp's schema marks ForceNew (an
//! init container's command) plans a replacement; applying the saved plan deletes the Pod and
//! creates it again while the old one still terminates. The create, planned again at apply,
//! must take the terminating Pod for no object (it waits for it to go), not for one of ours to
//! adopt whose later disappearance makes the plan stale. On the real lane the kubelet also
//! writes the Pod's status between plan and apply: never our fields.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};

fn pod(ns: &str, init: &str) -> String {
    format!(
        r#"resource "kubernetes_pod_v1" "p" {{
  metadata {{
    name      = "replaced"
    namespace = {}
  }}
  spec {{
    init_container {{
      name    = "init"
      image   = "busybox:1.36"
      command = ["sh", "-c", {}]
    }}
    container {{
      name  = "app"
      image = "nginx:1.27"
    }}
  }}
}}
"#,
        quote(ns),
        quote(init)
    )
}

#[test]
fn a_saved_plan_replaces_a_pod() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "replace");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&pod(&ns.name, "echo one"));
    work.apply_ok("the pod");
    let before = cluster.get_json(&["pod", "replaced", "-n", &ns.name]);

    work.write(&pod(&ns.name, "echo two"));
    let plan = work.run(&["plan", "-input=false", "-out=replace.plan"]);
    assert!(plan.success(), "plan failed:\n{plan}");
    assert!(
        plan.flat().contains("1 to add, 0 to change, 1 to destroy"),
        "no replacement planned:\n{plan}"
    );
    // The kubelet's writes land meanwhile.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let apply = work.run(&["apply", "-input=false", "replace.plan"]);
    assert!(apply.success(), "the saved plan's replacement failed:\n{apply}");

    let after = cluster.get_json(&["pod", "replaced", "-n", &ns.name]);
    assert_ne!(
        after["metadata"]["uid"], before["metadata"]["uid"],
        "not replaced"
    );
    assert_eq!(
        after["spec"]["initContainers"][0]["command"][2], "echo two",
        "{after}"
    );
    let again = work.plan_exit();
    assert_eq!(
        again.code, 0,
        "the plan after the replacement is not empty:\n{again}"
    );
}
