//! choudoufu/live beside hashicorp/kubernetes (issue 38; not a test): the same configuration of
//! N objects of mixed kinds (ConfigMaps, Secrets, Services, Roles and RoleBindings, a fifth
//! each) under the same engine on the same cluster (`KUBECONFIG`, else a fresh test server),
//! each provider in a namespace of its own, one after the other. For each phase, `apply` from
//! empty, `plan` with nothing to change, a refresh (`apply -refresh-only`) and `destroy`, it
//! prints the wall time, the API requests (from the API server's `/metrics`, control-plane
//! clients left out), the provider processes' CPU time and peak RSS (`wait4`, through
//! [`benchmarks::provider_meter`]) of each, and ours over hashicorp's.
//!
//! hashicorp's binary is never part of this repository: `HASHICORP_PROVIDER` names one built by
//! hand; without it the benchmark says so and exits 0.
//!
//! Run: `HASHICORP_PROVIDER=/path/to/terraform-provider-kubernetes cargo run --release -p
//! benchmarks --bin bench_beside -- 1000 5000` (1,000 objects when no count is given).

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use acceptance::hcl::{ScratchNamespace, quote};
use acceptance::{Cluster, Engine, build};
use benchmarks::bench::{self, mib, step, timed};
use benchmarks::provider_meter::{self, PhaseUsage, ProviderMeter};

const DEFAULT_SIZES: [usize; 1] = [1000];

/// The phases, in the order they run, with the engine's arguments.
const PHASES: [(&str, &[&str]); 4] = [
    ("apply", &["apply", "-auto-approve", "-input=false"]),
    ("plan", &["plan", "-input=false", "-detailed-exitcode"]),
    (
        "refresh",
        &["apply", "-refresh-only", "-auto-approve", "-input=false"],
    ),
    ("destroy", &["destroy", "-auto-approve", "-input=false"]),
];

/// One provider under measurement.
struct Side {
    name: &'static str,
    source: &'static str,
    /// Provider block settings beyond the cluster's kubeconfig.
    settings: &'static str,
    meter: ProviderMeter,
}

/// One phase of one side: what it cost.
#[derive(Clone, Copy, Default)]
struct Measure {
    wall_s: f64,
    requests: u64,
    usage: PhaseUsage,
}

/// `n` objects of five kinds in namespace `ns`, as hashicorp/kubernetes's configurations
/// write them (each provider reads the same file).
fn body(n: usize, ns: &str) -> String {
    let each = n / 5;
    let ns = quote(ns);
    format!(
        r#"resource "kubernetes_config_map_v1" "c" {{
  count = {each}
  metadata {{
    name      = "c-${{count.index}}"
    namespace = {ns}
  }}
  data = {{ index = count.index }}
}}

resource "kubernetes_secret_v1" "s" {{
  count = {each}
  metadata {{
    name      = "s-${{count.index}}"
    namespace = {ns}
  }}
  data = {{ token = "t-${{count.index}}" }}
}}

resource "kubernetes_service_v1" "svc" {{
  count = {each}
  metadata {{
    name      = "svc-${{count.index}}"
    namespace = {ns}
  }}
  spec {{
    selector = {{ app = "a-${{count.index}}" }}
    port {{
      port        = 80
      target_port = 8080
    }}
  }}
}}

resource "kubernetes_role_v1" "r" {{
  count = {each}
  metadata {{
    name      = "r-${{count.index}}"
    namespace = {ns}
  }}
  rule {{
    api_groups = [""]
    resources  = ["configmaps"]
    verbs      = ["get"]
  }}
}}

resource "kubernetes_role_binding_v1" "rb" {{
  count = {each}
  metadata {{
    name      = "rb-${{count.index}}"
    namespace = {ns}
  }}
  role_ref {{
    api_group = "rbac.authorization.k8s.io"
    kind      = "Role"
    name      = "r-${{count.index}}"
  }}
  subject {{
    kind      = "User"
    name      = "u-${{count.index}}"
    api_group = "rbac.authorization.k8s.io"
  }}
}}
"#
    )
}

/// Runs the four phases of `side` for `n` objects; the measures in [`PHASES`]' order.
fn measure(cluster: &Cluster, side: &Side, n: usize, start: Instant) -> Result<Vec<Measure>, String> {
    let ns = ScratchNamespace::create(cluster, &format!("beside-{}", side.name));
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let main = format!(
        "terraform {{\n  required_providers {{\n    kubernetes = {{ source = {} }}\n  }}\n}}\n\n\
         provider \"kubernetes\" {{\n  config_path = {}\n{}}}\n\n{}",
        quote(side.source),
        quote(&cluster.kubeconfig().to_string_lossy()),
        side.settings,
        body(n, &ns.name)
    );
    fs::write(dir.path().join("main.tf"), main).map_err(|e| e.to_string())?;
    // The provider comes from the meter's dev override: no `init`.
    let engine = side
        .meter
        .wrap(Engine::new(dir.path()).timeout(Duration::from_secs(4 * 3600)));
    side.meter.take()?;
    let mut out = Vec::new();
    for (phase, args) in PHASES {
        step(start, &format!("{n} objects: {} {phase}", side.name));
        let before = cluster.request_counts();
        let timing = timed(&engine, args, &format!("{} {phase}", side.name))?;
        let requests = cluster.request_counts().since(&before).by_verb().values().sum();
        out.push(Measure {
            wall_s: timing.wall_s,
            requests,
            usage: side.meter.take()?,
        });
    }
    Ok(out)
}

/// Ours over hashicorp's: `0.38`, or `1/400` where ours is a small fraction.
fn ratio(ours: f64, theirs: f64) -> String {
    match ours / theirs {
        r if !r.is_finite() => "-".into(),
        r if r > 0.0 && r < 0.1 => format!("1/{:.0}", theirs / ours),
        r => format!("{r:.2}"),
    }
}

fn main() {
    provider_meter::run_if_provider();
    let hashicorp = match std::env::var_os("HASHICORP_PROVIDER").map(PathBuf::from) {
        Some(path) if path.is_file() => path,
        _ => {
            eprintln!(
                "bench_beside: skipped: HASHICORP_PROVIDER does not name hashicorp's terraform-provider-kubernetes"
            );
            return;
        }
    };
    let sizes = bench::sizes("bench_beside", &DEFAULT_SIZES);
    let start = Instant::now();
    let cluster = Cluster::start();
    let ours = build::binary("terraform-provider-live").map_err(|e| e.to_string());
    let sides = ours
        .and_then(|live| {
            Ok([
                Side {
                    name: "live",
                    source: "choudoufu/live",
                    settings: "  estate      = \"beside\"\n",
                    meter: ProviderMeter::of_source("choudoufu/live", &live)?,
                },
                Side {
                    name: "hashicorp",
                    source: "hashicorp/kubernetes",
                    settings: "",
                    meter: ProviderMeter::of_source("hashicorp/kubernetes", &hashicorp)?,
                },
            ])
        })
        .unwrap_or_else(|e| {
            eprintln!("bench_beside: {e}");
            std::process::exit(1);
        });
    let (rows, failures) = bench::each_size(&sizes, |n| {
        let ours = measure(&cluster, &sides[0], n, start)?;
        let theirs = measure(&cluster, &sides[1], n, start)?;
        Ok(PHASES
            .iter()
            .zip(ours.into_iter().zip(theirs))
            .map(|((phase, _), pair)| (n, *phase, pair))
            .collect())
    });
    println!(
        "\n| objects | phase | live s | hashicorp s | ratio | live requests | hashicorp requests | ratio | \
         live peak RSS MiB | hashicorp peak RSS MiB | ratio | live CPU s | hashicorp CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (n, phase, (ours, theirs)) in rows {
        println!(
            "| {n} | {phase} | {:.2} | {:.2} | {} | {} | {} | {} | {:.1} | {:.1} | {} | {:.2} | {:.2} |",
            ours.wall_s,
            theirs.wall_s,
            ratio(ours.wall_s, theirs.wall_s),
            ours.requests,
            theirs.requests,
            ratio(ours.requests as f64, theirs.requests as f64),
            mib(ours.usage.max_rss_kib),
            mib(theirs.usage.max_rss_kib),
            ratio(ours.usage.max_rss_kib as f64, theirs.usage.max_rss_kib as f64),
            ours.usage.cpu_s,
            theirs.usage.cpu_s,
        );
    }
    bench::exit_on_failures(&failures);
}
