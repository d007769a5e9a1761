//! A living control plane under long applies (issue 47; not a test): on a kube-apiserver 1.36 of
//! its own (`../shared/realk8s`, started on ports of its own and stopped at the end), each
//! scenario runs `RUNS` times (5 by default) and one table gives, per scenario: first-run
//! successes, runs converged after a re-run, never converged, duplicates, objects left over,
//! outputs lost, apply seconds and the first line of each error.
//!
//! - Restarts ([`restarts`]): 300 objects of 5 kinds (parallelism 10) while the API server
//!   (SIGTERM, SIGKILL; 15 s down) or etcd (5 s) restarts at a random moment, with
//!   `api_retry_timeout = "90s"`.
//! - Restarts during waits and records ([`waits`]): kube-apiserver 15 s down during a Job's
//!   20 s wait, a records write or a records read.
//! - Neighbours ([`neighbours`]): two estates apply 200 ConfigMaps each into one namespace at
//!   once (50 names both want, 50 server-named), then two states of one estate.
//! - Records ([`records`]): two writers of one estate's 20 outputs, 5 rounds, and a reader.
//! - Throttled ([`throttled`]): 300 objects against `--max-requests-inflight=5` with up to 4 s
//!   (2 s on average) of latency on every request.
//!
//! Run: `cargo run --release -p benchmarks --bin bench_living` (add `-- 5` for 5 runs each,
//! `-- 5 neighbours` for the scenarios whose name holds `neighbours`).
//! Without `../shared/realk8s` it says so and exits.

mod neighbours;
mod plane;
mod records;
mod restarts;
mod throttled;
mod waits;

use std::time::{Duration, Instant};

use acceptance::hcl::LiveDir;
use acceptance::{Cluster, EngineOutput};
use plane::Plane;
use provider_mirror::paths::workspace_root;

/// What the runs of one scenario came to.
#[derive(Default)]
struct Tally {
    runs: usize,
    first: usize,
    rerun: usize,
    never: usize,
    duplicates: usize,
    left: usize,
    lost: usize,
    errors: Vec<String>,
    seconds: Vec<f64>,
}

impl Tally {
    /// The first line of an engine's error, once per distinct line.
    fn error(&mut self, text: &str) {
        if let Some(line) = text.lines().find(|l| l.contains("Error:")) {
            let line = line.trim().trim_start_matches('│').trim().to_string();
            if !self.errors.contains(&line) {
                self.errors.push(line);
            }
        }
    }

    /// Runs `apply` with `during` beside it (timed), then again, up to 4 applies in all, until
    /// one succeeds, and a plan of `work` after it: counted as first-run, re-run or never.
    fn converge(&mut self, work: &LiveDir, apply: impl Fn() -> EngineOutput + Sync, during: impl FnOnce()) {
        let started = Instant::now();
        let first = std::thread::scope(|scope| {
            let applying = scope.spawn(&apply);
            during();
            applying.join().expect("the apply")
        });
        self.seconds.push(started.elapsed().as_secs_f64());
        let mut converged = first.success();
        if converged {
            self.first += 1;
        } else {
            self.error(&first.stderr);
            if (1..TRIES).any(|_| apply().success()) {
                converged = true;
                self.rerun += 1;
            }
        }
        if !converged || work.plan_exit().code != 0 {
            self.never += 1;
        }
    }

    fn row(&self, name: &str) -> String {
        let seconds = self
            .seconds
            .iter()
            .map(|s| format!("{s:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let errors = if self.errors.is_empty() {
            "none".to_string()
        } else {
            self.errors.join("; ")
        };
        format!(
            "| {name} | {}/{} | {} | {} | {} | {} | {} | {seconds} | {errors} |",
            self.first, self.runs, self.rerun, self.never, self.duplicates, self.left, self.lost
        )
    }
}

/// How many applies a run makes before it counts as never converged.
const TRIES: usize = 4;

/// A moment `from` plus up to `span` into a run, drawn from the clock.
fn moment(from: Duration, span: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let span = u64::try_from(span.as_millis()).unwrap_or(u64::MAX).max(1);
    from + Duration::from_millis(u64::from(nanos) % span)
}

/// One scenario: its name and how a run of it goes on `cluster`, restarted through `plane`.
struct Scenario {
    name: &'static str,
    run: fn(&Cluster, &Plane, &mut Tally),
    /// kube-apiserver flags the scenario's control plane runs with.
    apiserver_args: &'static str,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let filter = args.next().unwrap_or_default();
    let script_dir = workspace_root().join("../shared/realk8s");
    if !script_dir.join("start").is_file() {
        println!("bench_living: skipped: no ../shared/realk8s beside this checkout");
        return;
    }
    let scenarios: Vec<Scenario> = restarts::scenarios()
        .into_iter()
        .chain(waits::scenarios())
        .chain(neighbours::scenarios())
        .chain(records::scenarios())
        .chain(throttled::scenarios())
        .filter(|s| s.name.contains(&filter))
        .collect();
    println!("bench_living: {runs} runs per scenario");
    println!(
        "| scenario | first-run successes | converged after a re-run | never converged | duplicates | left over | outputs lost | apply seconds | errors' first lines |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut plane: Option<Plane> = None;
    for scenario in &scenarios {
        // A control plane per set of flags, started when a scenario needs another.
        if plane
            .as_ref()
            .is_none_or(|p| p.apiserver_args != scenario.apiserver_args)
        {
            drop(plane.take());
            plane = Some(Plane::start(script_dir.clone(), scenario.apiserver_args));
        }
        let plane = plane.as_ref().expect("a control plane");
        let cluster = Cluster::at(&plane.kubeconfig);
        let mut tally = Tally::default();
        for _ in 0..runs {
            tally.runs += 1;
            (scenario.run)(&cluster, plane, &mut tally);
        }
        println!("{}", tally.row(scenario.name));
    }
}
