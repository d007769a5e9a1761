//! A living control plane under a long apply (issue 47; not a test): on a kube-apiserver 1.36 of
//! its own (`../shared/realk8s`, started on ports of its own and stopped at the end), applies 300
//! objects of 5 kinds (parallelism 10) while a part of the control plane restarts at a random
//! moment, `RUNS` times per scenario (3 by default): the API server stopped with SIGTERM and with
//! SIGKILL, 15 s down each, and etcd 5 s down. The provider block sets
//! `api_retry_timeout = "90s"`, longer than each outage. Up to 4 applies until one succeeds,
//! then a plan and a destroy. Prints per scenario: first-run successes, runs converged after a
//! re-run, never converged, duplicates, objects left over, and the first line of each error.
//!
//! Run: `cargo run --release -p estate-bench --bin bench_living` (add `-- 5` for 5 runs each,
//! `-- 5 20s` for another `api_retry_timeout`).
//! Without `../shared/realk8s` it says so and exits.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, quote, unique_name};
use provider_mirror::paths::workspace_root;

/// Objects per kind: 300 in all.
const KINDS: [(&str, usize); 5] = [
    ("config_map", 100),
    ("secret", 80),
    ("service_account", 60),
    ("service", 40),
    ("deployment", 20),
];
const TRIES: usize = 4;

/// A part of the control plane, how it is stopped, and for how long.
struct Scenario {
    name: &'static str,
    part: &'static str,
    kill: bool,
    down: u32,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        name: "kube-apiserver SIGTERM, 15 s down",
        part: "kube-apiserver",
        kill: false,
        down: 15,
    },
    Scenario {
        name: "kube-apiserver SIGKILL, 15 s down",
        part: "kube-apiserver",
        kill: true,
        down: 15,
    },
    Scenario {
        name: "etcd SIGTERM, 5 s down",
        part: "etcd",
        kill: false,
        down: 5,
    },
];

/// The control plane of this run.
struct Plane {
    script_dir: PathBuf,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Plane {
    fn env(command: &mut Command) -> &mut Command {
        command
            .env("REALK8S_PORT", "17443")
            .env("REALK8S_ETCD_PORT", "17379")
    }

    fn start(script_dir: PathBuf) -> Plane {
        let dir = tempfile::tempdir().expect("a folder for the control plane");
        let out = Self::env(&mut Command::new(script_dir.join("start")))
            .arg(dir.path())
            .output()
            .expect("realk8s start");
        assert!(
            out.status.success(),
            "realk8s start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kubeconfig = dir.path().join("admin.kubeconfig");
        Plane {
            script_dir,
            dir,
            kubeconfig,
        }
    }

    fn restart(&self, scenario: &Scenario) -> std::process::Child {
        Self::env(&mut Command::new(self.script_dir.join("restart")))
            .env("REALK8S_KILL", if scenario.kill { "1" } else { "0" })
            .args([
                &self.dir.path().to_string_lossy(),
                scenario.part,
                &scenario.down.to_string(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("realk8s restart")
    }
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = Command::new(self.script_dir.join("stop"))
            .arg(self.dir.path())
            .output();
    }
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

#[derive(Default)]
struct Tally {
    first: usize,
    rerun: usize,
    never: usize,
    duplicates: usize,
    left: usize,
    errors: Vec<String>,
    seconds: Vec<f64>,
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

fn run_once(cluster: &Cluster, plane: &Plane, scenario: &Scenario, retry_timeout: &str, tally: &mut Tally) {
    let estate = unique_name("living");
    let ns = unique_name("living");
    let setting = format!("  api_retry_timeout = {}", quote(retry_timeout));
    let work = LiveDir::with_settings(&estate, cluster.kubeconfig(), &setting);
    work.write(&configuration(&ns));
    let started = Instant::now();
    // A moment 1-4 s into the apply, drawn from the clock.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let restart_at = Duration::from_millis(1000 + u64::from(nanos % 3000));
    let mut restart = None;
    let apply = std::thread::scope(|scope| {
        let applying =
            scope.spawn(|| work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"]));
        std::thread::sleep(restart_at);
        restart = Some(plane.restart(scenario));
        applying.join().expect("the apply")
    });
    if let Some(mut child) = restart {
        let _ = child.wait();
    }
    tally.seconds.push(started.elapsed().as_secs_f64());
    let mut converged = apply.success();
    if converged {
        tally.first += 1;
    } else {
        if let Some(line) = apply.stderr.lines().find(|l| l.contains("Error:")) {
            tally.errors.push(line.trim().to_string());
        }
        for _ in 1..TRIES {
            if work
                .run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
                .success()
            {
                converged = true;
                tally.rerun += 1;
                break;
            }
        }
    }
    if !converged || work.plan_exit().code != 0 {
        tally.never += 1;
    }
    let expected: usize = KINDS.iter().map(|(_, n)| n).sum();
    tally.duplicates += labelled(cluster, &ns, &estate).saturating_sub(expected);
    work.write("");
    for _ in 0..TRIES {
        if work
            .run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
            .success()
        {
            break;
        }
    }
    tally.left += labelled(cluster, &ns, &estate);
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let retry_timeout = std::env::args().nth(2).unwrap_or_else(|| "90s".to_string());
    let script_dir = workspace_root().join("../shared/realk8s");
    if !script_dir.join("start").is_file() {
        println!("bench_living: skipped: no ../shared/realk8s beside this checkout");
        return;
    }
    let plane = Plane::start(script_dir);
    let cluster = Cluster::at(&plane.kubeconfig);
    println!(
        "bench_living: {runs} runs per scenario, 300 objects, parallelism 10, api_retry_timeout {retry_timeout}"
    );
    println!(
        "| scenario | first-run successes | converged after a re-run | never converged | duplicates | left over | apply seconds | errors' first lines |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for scenario in &SCENARIOS {
        let mut tally = Tally::default();
        for _ in 0..runs {
            run_once(&cluster, &plane, scenario, &retry_timeout, &mut tally);
        }
        let seconds = tally
            .seconds
            .iter()
            .map(|s| format!("{s:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let errors = if tally.errors.is_empty() {
            "none".to_string()
        } else {
            tally.errors.join("; ")
        };
        println!(
            "| {} | {}/{runs} | {} | {} | {} | {} | {seconds} | {errors} |",
            scenario.name, tally.first, tally.rerun, tally.never, tally.duplicates, tally.left
        );
    }
}
