//! A Deployment's `strategy` switched from RollingUpdate to Recreate and back (issue 38): the
//! API server defaults `rollingUpdate` (25 % / 25 %) under a RollingUpdate strategy and refuses
//! it beside Recreate, so the switch must take the defaulted block away, as hashicorp's update
//! (which replaces the whole spec) does. Also with `rolling_update` written out first. (Leaving
//! `strategy` out keeps what the state has, as hashicorp's Optional+Computed block does.)

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::{Value, json};

/// A Deployment `web` with `strategy` (HCL of its block, or none), without waiting for its
/// rollout: the switch is about the write.
fn web(ns: &str, strategy: &str) -> String {
    format!(
        r#"resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {ns}
  }}
  wait_for_rollout = false
  spec {{
    selector {{
      match_labels = {{ app = "web" }}
    }}
    {strategy}
    template {{
      metadata {{
        labels = {{ app = "web" }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "registry.k8s.io/pause:3.10"
        }}
      }}
    }}
  }}
}}
"#,
        ns = quote(ns)
    )
}

const RECREATE: &str = r#"strategy { type = "Recreate" }"#;

fn strategy(cluster: &Cluster, ns: &str) -> Value {
    cluster.get_json(&["deployment", "web", "-n", ns])["spec"]["strategy"].clone()
}

/// Applies each `(strategy block, the server's strategy after it)` in turn: each apply
/// succeeds, leaves the strategy expected and plans empty after it.
fn switch(prefix: &str, steps: &[(&str, Value)]) {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, prefix);
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    for (i, (block, expected)) in steps.iter().enumerate() {
        work.write(&web(&ns.name, block));
        let out = work.apply();
        assert!(out.success(), "apply {i} ({block:?}) failed:\n{out}");
        assert_eq!(
            &strategy(&cluster, &ns.name),
            expected,
            "the strategy after apply {i} ({block:?})"
        );
        let plan = work.plan_exit();
        assert_eq!(
            plan.code, 0,
            "the plan after apply {i} ({block:?}) is not empty:\n{plan}"
        );
    }
}

fn defaulted() -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
}

#[test]
fn a_defaulted_rolling_update_goes_when_the_strategy_becomes_recreate_and_comes_back() {
    switch(
        "strategy",
        &[
            ("", defaulted()),
            (RECREATE, json!({"type": "Recreate"})),
            (r#"strategy { type = "RollingUpdate" }"#, defaulted()),
        ],
    );
}

#[test]
fn a_written_rolling_update_goes_when_the_strategy_becomes_recreate() {
    let written = r#"strategy {
      type = "RollingUpdate"
      rolling_update {
        max_surge       = "1"
        max_unavailable = "0"
      }
    }"#;
    switch(
        "strategy-w",
        &[
            (
                written,
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}),
            ),
            (RECREATE, json!({"type": "Recreate"})),
        ],
    );
}
