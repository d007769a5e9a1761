//! A configuration hashicorp/kubernetes takes although a container holds an env name and a port
//! twice (issue 36): kube-apiserver stores such an object when created or updated, while
//! server-side apply refuses it. Applied here, the object holds both entries as written, the
//! next plan is empty, a changed value of a duplicate updates it, and removing the duplicate
//! leaves one entry, each time with an empty plan after.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, unique_name};
use serde_json::{Value, json};

/// A Deployment whose container sets each `env` (name, value) and `port` (container port) given.
fn deployment(ns: &str, env: &[(&str, &str)], ports: &[u16]) -> String {
    let env: String = env
        .iter()
        .map(|(name, value)| format!("          env {{\n            name  = \"{name}\"\n            value = \"{value}\"\n          }}\n"))
        .collect();
    let ports: String = ports
        .iter()
        .map(|port| format!("          port {{\n            container_port = {port}\n          }}\n"))
        .collect();
    format!(
        r#"resource "kubernetes_deployment_v1" "dup" {{
{metadata}  spec {{
    selector {{
      match_labels = {{ app = "dup" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "dup" }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "nginx:1.27"
{env}{ports}        }}
      }}
    }}
  }}
}}
"#,
        metadata = metadata("dup", ns),
    )
}

/// Applies `config`, then checks the live container's env and ports and that the plan after is
/// empty.
fn apply_and_check(
    cluster: &Cluster,
    work: &LiveDir,
    ns: &str,
    config: &str,
    what: &str,
    env: Value,
    ports: Value,
) {
    work.write(config);
    let out = work.apply_ok(what);
    assert!(!out.combined().contains("unavailable"), "{what}:\n{out}");
    let live = cluster.get_json(&["deployment", "dup", "-n", ns]);
    let container = &live["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["env"], env, "{what}: the live env");
    let live_ports: Vec<&Value> = container["ports"]
        .as_array()
        .map(|p| p.iter().map(|p| &p["containerPort"]).collect())
        .unwrap_or_default();
    assert_eq!(json!(live_ports), ports, "{what}: the live ports");
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "{what}: the plan after is not empty:\n{plan}");
}

#[test]
fn a_container_holding_an_env_name_and_a_port_twice_applies_updates_and_converges() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "dup");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();

    let config = deployment(ns, &[("A", "1"), ("B", "b"), ("A", "2")], &[80, 80]);
    let env = json!([{"name": "A", "value": "1"}, {"name": "B", "value": "b"}, {"name": "A", "value": "2"}]);
    apply_and_check(&cluster, &work, ns, &config, "create", env, json!([80, 80]));

    let config = deployment(ns, &[("A", "1"), ("B", "b"), ("A", "3")], &[80, 80]);
    let env = json!([{"name": "A", "value": "1"}, {"name": "B", "value": "b"}, {"name": "A", "value": "3"}]);
    apply_and_check(
        &cluster,
        &work,
        ns,
        &config,
        "update a duplicate",
        env,
        json!([80, 80]),
    );

    let config = deployment(ns, &[("A", "3"), ("B", "b")], &[80]);
    let env = json!([{"name": "A", "value": "3"}, {"name": "B", "value": "b"}]);
    apply_and_check(
        &cluster,
        &work,
        ns,
        &config,
        "remove the duplicates",
        env,
        json!([80]),
    );
}
