//! Restarts: an apply of 300 objects of 5 kinds (20 Deployments whose rollouts it waits for
//! among them), parallelism 10, `api_retry_timeout = "90s"`, while a part of the control plane
//! restarts at a moment 1-4 s into it; up to 4 applies until one succeeds, then a plan and a
//! destroy. [`many`] is that apply, for other scenarios too.

use std::path::Path;
use std::time::Duration;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, quote, unique_name};

use crate::plane::Plane;
use crate::{Scenario, TRIES, Tally, moment};

/// Objects per kind: 300 in all.
const KINDS: [(&str, usize); 5] = [
    ("config_map", 100),
    ("secret", 80),
    ("service_account", 60),
    ("service", 40),
    ("deployment", 20),
];
const RETRY_TIMEOUT: &str = "90s";

pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "restarts: kube-apiserver SIGTERM, 15 s down",
            run: |c, p, t| restarted(c, p, t, "kube-apiserver", false, 15),
            apiserver_args: "",
        },
        Scenario {
            name: "restarts: kube-apiserver SIGKILL, 15 s down",
            run: |c, p, t| restarted(c, p, t, "kube-apiserver", true, 15),
            apiserver_args: "",
        },
        Scenario {
            name: "restarts: etcd SIGTERM, 5 s down",
            run: |c, p, t| restarted(c, p, t, "etcd", false, 5),
            apiserver_args: "",
        },
    ]
}

fn restarted(cluster: &Cluster, plane: &Plane, tally: &mut Tally, part: &str, kill: bool, down: u32) {
    let at = moment(Duration::from_secs(1), Duration::from_secs(3));
    let settings = format!("  api_retry_timeout = {}", quote(RETRY_TIMEOUT));
    many(cluster, cluster.kubeconfig(), &settings, tally, || {
        std::thread::sleep(at);
        let _ = plane.restart(part, kill, down).wait();
    });
}

fn configuration(ns: &str) -> String {
    let ns = quote(ns);
    let mut body =
        format!("resource \"kubernetes_namespace_v1\" \"ns\" {{\n  metadata {{ name = {ns} }}\n}}\n");
    for (kind, count) in KINDS {
        let extra = match kind {
            "config_map" | "secret" => "  data = { index = count.index }\n",
            "service" => "  spec {\n    selector = { app = \"x\" }\n    port { port = 80 }\n  }\n",
            "deployment" => {
                "  spec {\n    replicas = 1\n    selector { match_labels = { app = \"d${count.index}\" } }\n    \
                template {\n      metadata { labels = { app = \"d${count.index}\" } }\n      spec {\n        \
                container {\n          name  = \"c\"\n          image = \"nginx\"\n        }\n      }\n    }\n  }\n"
            }
            _ => "",
        };
        let name = kind.replace('_', "-");
        body += &format!(
            "resource \"kubernetes_{kind}_v1\" \"many\" {{\n  count = {count}\n  metadata {{\n    \
             name      = \"{name}-${{count.index}}\"\n    namespace = kubernetes_namespace_v1.ns.metadata[0].name\n  }}\n{extra}}}\n"
        );
    }
    body
}

fn labelled(cluster: &Cluster, ns: &str, estate: &str) -> usize {
    let selector = format!("tofu-estate={estate}");
    let out = cluster.kubectl(&[
        "get",
        "configmaps,secrets,serviceaccounts,services,deployments",
        "-n",
        ns,
        "-l",
        &selector,
        "-o",
        "name",
    ]);
    out.stdout.lines().filter(|l| !l.trim().is_empty()).count()
}

fn apply(work: &LiveDir) -> acceptance::EngineOutput {
    work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
}

/// The 300 objects applied through `kubeconfig` with the provider `settings`, `during` running
/// beside the first apply; then re-runs, a plan and a destroy, counted in `tally`.
pub fn many(cluster: &Cluster, kubeconfig: &Path, settings: &str, tally: &mut Tally, during: impl FnOnce()) {
    let estate = unique_name("living");
    let ns = unique_name("living");
    let work = LiveDir::with_settings(&estate, kubeconfig, settings);
    work.write(&configuration(&ns));
    tally.converge(&work, || apply(&work), during);
    let expected: usize = KINDS.iter().map(|(_, n)| n).sum();
    tally.duplicates += labelled(cluster, &ns, &estate).saturating_sub(expected);
    work.write("");
    let _ = (0..TRIES).any(|_| apply(&work).success());
    tally.left += labelled(cluster, &ns, &estate);
}
