//! Restarts during waits and records: an apply whose Job runs 20 s (the apply waits for its
//! completion), that records 20 outputs taken from the Job once it is done and reads another
//! estate's outputs, while kube-apiserver is stopped for 15 s at a moment 1-25 s into it: the
//! read, the Job's wait or the records' write. Up to 4 applies, a plan, a destroy.

use std::time::Duration;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, quote, unique_name};

use crate::plane::Plane;
use crate::{Scenario, TRIES, Tally, moment};

const OUTPUTS: usize = 20;

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        name: "restarts: kube-apiserver SIGTERM, 15 s down, during a Job's wait, a records write and read",
        run: restarted,
        apiserver_args: "",
    }]
}

fn configuration(ns: &str, upstream: &str) -> String {
    let ns = quote(ns);
    let upstream = quote(upstream);
    format!(
        r#"resource "kubernetes_namespace_v1" "ns" {{
  metadata {{ name = {ns} }}
}}

resource "kubernetes_job_v1" "once" {{
  metadata {{
    name      = "once"
    namespace = kubernetes_namespace_v1.ns.metadata[0].name
  }}
  spec {{
    template {{
      metadata {{
        annotations = {{ "realk8s.local/exit-code" = "0", "realk8s.local/run-seconds" = "20" }}
      }}
      spec {{
        restart_policy = "Never"
        container {{
          name  = "main"
          image = "busybox:1.36"
        }}
      }}
    }}
  }}
  wait_for_completion = true
  timeouts {{
    create = "3m"
  }}
}}

data "terraform_estate_outputs" "upstream" {{
  provider = records
  estate   = {upstream}
}}

resource "records_outputs" "this" {{
  values = {{ for i in range({OUTPUTS}) : "o${{i}}" => "${{kubernetes_job_v1.once.metadata[0].uid}}/${{data.terraform_estate_outputs.upstream.values.host}}" }}
}}
"#
    )
}

fn apply(work: &LiveDir) -> acceptance::EngineOutput {
    work.run(&["apply", "-auto-approve", "-input=false"])
}

fn count(cluster: &Cluster, kind: &str, ns: &str, estate: &str) -> usize {
    let selector = format!("tofu-estate={estate}");
    let out = cluster.kubectl(&["get", kind, "-n", ns, "-l", &selector, "-o", "name"]);
    out.stdout.lines().filter(|l| !l.trim().is_empty()).count()
}

fn restarted(cluster: &Cluster, plane: &Plane, tally: &mut Tally) {
    let upstream = unique_name("up");
    let producer = LiveDir::with_records(&upstream, cluster.kubeconfig());
    producer.write("resource \"records_outputs\" \"this\" {\n  values = { host = \"db.internal\" }\n}\n");
    producer.apply_ok("the upstream's outputs");
    let estate = unique_name("waits");
    let ns = unique_name("waits");
    let work = LiveDir::with_records(&estate, cluster.kubeconfig());
    let settings = "  api_retry_timeout = \"90s\"";
    let provider = work.path().join("main.tf");
    work.write(&configuration(&ns, &upstream));
    // Both providers get the retry budget (the records provider block follows the live one).
    let text = std::fs::read_to_string(&provider).expect("main.tf");
    std::fs::write(
        &provider,
        text.replace("  config_path = ", &format!("{settings}\n  config_path = ")),
    )
    .expect("main.tf");
    let at = moment(Duration::from_secs(1), Duration::from_secs(24));
    tally.converge(
        &work,
        || apply(&work),
        || {
            std::thread::sleep(at);
            let _ = plane.restart("kube-apiserver", false, 15).wait();
        },
    );
    let records = format!("tofu-records-{estate}");
    tally.duplicates += count(cluster, "jobs", &ns, &estate).saturating_sub(1);
    // The outputs, and the head.
    tally.lost += (OUTPUTS + 1).saturating_sub(count(cluster, "secrets", &records, &estate));
    let _ = (0..TRIES).any(|_| work.run(&["destroy", "-auto-approve", "-input=false"]).success());
    tally.left += count(cluster, "jobs", &ns, &estate) + count(cluster, "secrets", &records, &estate);
    producer.run(&["destroy", "-auto-approve", "-input=false"]);
}
