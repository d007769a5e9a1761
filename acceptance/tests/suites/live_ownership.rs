//! provider-live on a busy cluster, with the real engine: other field managers write into our
//! objects (`kubectl rollout restart` into the pod template, `kubectl scale` into `replicas`)
//! and none of it becomes a diff or makes a saved plan stale, while a change to a field this
//! configuration manages still does; and a destroy never deletes an object that replaced ours.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::{Value, json};

/// A Deployment `web` without `replicas`, with an annotation of ours on its pod template and
/// env `REV` = `rev`; each apply waits for its rollout.
fn web(ns: &str, rev: &str) -> String {
    format!(
        r#"resource "kubernetes_deployment" "web" {{
  metadata {{
    name      = "web"
    namespace = {ns}
  }}
  spec {{
    selector {{
      match_labels = {{ app = "web" }}
    }}
    template {{
      metadata {{
        labels      = {{ app = "web" }}
        annotations = {{ "example.com/rev" = {rev} }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "registry.k8s.io/pause:3.10"
          env {{
            name  = "REV"
            value = {rev}
          }}
        }}
      }}
    }}
  }}
}}
"#,
        ns = quote(ns),
        rev = quote(rev)
    )
}

fn deployment(cluster: &Cluster, ns: &str) -> Value {
    cluster.get_json(&["deployment", "web", "-n", ns])
}

#[test]
fn kubectl_rollout_restart_makes_no_diff() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "restart");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&web(ns, "1"));
    work.apply_ok("create");

    // kubectl's strategic merge patch puts restartedAt into the pod template's annotations,
    // beside ours, under its own field manager (kube-golden 23).
    cluster.kubectl_ok(&["rollout", "restart", "deployment/web", "-n", ns]);
    let restarted = deployment(&cluster, ns)["spec"]["template"]["metadata"]["annotations"]
        ["kubectl.kubernetes.io/restartedAt"]
        .clone();
    assert!(restarted.is_string(), "kubectl did not restart the rollout");
    let plan = work.plan_exit();
    assert_eq!(
        plan.code, 0,
        "kubectl's restart annotation became a diff:\n{plan}"
    );

    // A change of ours to the same map leaves kubectl's key alone, and the plan after it is empty.
    work.write(&web(ns, "2"));
    let out = work.apply_ok("update");
    assert!(out.stdout.contains("0 added, 1 changed, 0 destroyed"), "{out}");
    let annotations = deployment(&cluster, ns)["spec"]["template"]["metadata"]["annotations"].clone();
    assert_eq!(annotations["example.com/rev"], "2");
    assert_eq!(annotations["kubectl.kubernetes.io/restartedAt"], restarted);
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "not settled after the update:\n{plan}");
}

#[test]
fn a_saved_plan_survives_kubectl_scale_but_not_a_change_to_a_managed_field() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "scale");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&web(ns, "1"));
    work.apply_ok("create");

    // Planned, then scaled by another manager before the apply: the plan still applies, and
    // the scaler's replicas stay.
    work.write(&web(ns, "2"));
    let plan = work.run(&["plan", "-input=false", "-out=scaled.tfplan"]);
    assert!(plan.success(), "plan failed:\n{plan}");
    cluster.kubectl_ok(&["scale", "deployment/web", "-n", ns, "--replicas=3"]);
    let out = work.run(&["apply", "-input=false", "scaled.tfplan"]);
    assert!(out.success(), "kubectl scale made the saved plan stale:\n{out}");
    let live = deployment(&cluster, ns);
    assert_eq!(
        live["spec"]["replicas"], 3,
        "the apply reset the scaler's replicas"
    );
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
        "2"
    );
    let settled = work.plan_exit();
    assert_eq!(settled.code, 0, "{settled}");

    // A field this configuration manages changed between plan and apply: refused, untouched.
    work.write(&web(ns, "3"));
    let plan = work.run(&["plan", "-input=false", "-out=edited.tfplan"]);
    assert!(plan.success(), "plan failed:\n{plan}");
    cluster.kubectl_ok(&["set", "env", "deployment/web", "-n", ns, "REV=by-hand"]);
    let moved = deployment(&cluster, ns);
    let out = work.run(&["apply", "-input=false", "edited.tfplan"]);
    assert!(!out.success(), "a stale plan was applied:\n{out}");
    assert!(
        out.flat()
            .contains("The approved plan no longer matches the live system"),
        "not refused as stale:\n{out}"
    );
    let after = deployment(&cluster, ns);
    assert_eq!(
        after["spec"]["template"], moved["spec"]["template"],
        "the refused apply wrote the template"
    );
}

#[test]
fn destroy_refuses_an_object_that_replaced_ours() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "replaced");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&format!(
        "resource \"kubernetes_config_map\" \"cfg\" {{\n  metadata {{\n    name      = \"cfg\"\n    \
         namespace = {}\n  }}\n  data = {{ k = \"ours\" }}\n}}\n",
        quote(ns)
    ));
    work.apply_ok("create");
    let ours = cluster.get_json(&["configmap", "cfg", "-n", ns]);

    let plan = work.run(&["plan", "-destroy", "-input=false", "-out=destroy.tfplan"]);
    assert!(plan.success(), "plan -destroy failed:\n{plan}");
    // Between plan and apply, the object is deleted and another of the same name (even with
    // this estate's label) takes its place.
    cluster.kubectl_ok(&["delete", "configmap", "cfg", "-n", ns]);
    cluster.kubectl_ok(&[
        "create",
        "configmap",
        "cfg",
        "-n",
        ns,
        "--from-literal=k=someone-elses",
    ]);
    let label = format!("tofu-estate={estate}");
    cluster.kubectl_ok(&["label", "configmap", "cfg", "-n", ns, &label]);
    let replacement = cluster.get_json(&["configmap", "cfg", "-n", ns]);
    assert_ne!(replacement["metadata"]["uid"], ours["metadata"]["uid"]);

    let out = work.run(&["apply", "-input=false", "destroy.tfplan"]);
    assert!(!out.success(), "the replacement was deleted:\n{out}");
    assert!(
        out.flat().contains(&format!(
            "ConfigMap \"{ns}/cfg\" was replaced by another object of the same name"
        )),
        "not refused as replaced:\n{out}"
    );
    let still = cluster.get_json(&["configmap", "cfg", "-n", ns]);
    assert_eq!(still["metadata"]["uid"], replacement["metadata"]["uid"]);
    assert_eq!(still["data"], json!({"k": "someone-elses"}));
}
