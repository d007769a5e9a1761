//! Convergence under a flaky API server (not a test; issue 29's table): on the cluster of
//! `KUBECONFIG`, else a fresh in-memory test server, applies issue 29's estate of 37 objects
//! through the fault proxy at each of the fault mixes, `RUNS` times each (5 by default,
//! a new estate and seed each run): up to 4 applies until one succeeds, a plan, and up to 4
//! destroys. Prints per mix: applies that succeeded the first time, runs that needed re-runs,
//! runs that never converged, `generate_name` duplicates, empty plans, destroys that succeeded
//! the first time, objects a destroy left, and the faults injected and requests sent again.
//!
//! Run: `cargo run --release -p benchmarks --bin bench_flaky` (add `-- 2` for 2 runs each).

use std::time::{Duration, Instant};

use acceptance::Cluster;
use acceptance::flaky::{Flaky, GENERATED};
use fault_proxy::{Fault, FaultPlan, FaultReport, Scope};

/// Tries of apply (and of destroy) before a run counts as never converged.
const TRIES: usize = 4;

/// Issue 29's fault mixes.
fn mixes() -> Vec<(&'static str, FaultPlan)> {
    let plan = |rate: f64, faults: Vec<Fault>, scope: Scope| FaultPlan {
        rate,
        faults,
        scope,
        latency: Duration::from_millis(20),
        ..FaultPlan::none(0)
    };
    let all = vec![
        Fault::Throttle,
        Fault::ServerError,
        Fault::ResetBefore,
        Fault::ResetAfter,
        Fault::TimeoutAfter,
    ];
    vec![
        ("10 % 429", plan(0.1, vec![Fault::Throttle], Scope::Every)),
        ("10 % 5xx", plan(0.1, vec![Fault::ServerError], Scope::Every)),
        (
            "5 % reset before the answer",
            plan(0.05, vec![Fault::ResetBefore], Scope::Every),
        ),
        (
            "5 % reset after a forwarded write",
            plan(0.05, vec![Fault::ResetAfter], Scope::Every),
        ),
        ("20 % mixed", plan(0.2, all, Scope::Every)),
        (
            "50 % reset after a generate_name POST",
            plan(0.5, vec![Fault::ResetAfter], Scope::GeneratedNames),
        ),
        (
            "50 % 504 after a generate_name POST",
            plan(0.5, vec![Fault::TimeoutAfter], Scope::GeneratedNames),
        ),
    ]
}

/// What the runs of one mix came to.
#[derive(Default)]
struct Tally {
    first_time: usize,
    reruns: usize,
    never: usize,
    duplicates: usize,
    runs_with_duplicates: usize,
    empty_plans: usize,
    destroyed_first_time: usize,
    left: usize,
    faults: u64,
    repeated: u64,
    faulted: u64,
    seconds: f64,
}

impl Tally {
    fn add(&mut self, report: &FaultReport) {
        self.faults += report.total_faults();
        self.faulted += report.faulted;
        self.repeated += report.repeated;
    }
}

/// One run of `plan` (seeded with `seed`) on `cluster`.
fn run(cluster: &Cluster, plan: &FaultPlan, seed: u64, tally: &mut Tally) {
    let started = Instant::now();
    let flaky = Flaky::start(cluster, "bench", GENERATED, FaultPlan { seed, ..plan.clone() });
    let applies = (1..=TRIES).find(|_| {
        let ok = flaky.apply("apply").success();
        tally.add(&flaky.proxy.report());
        ok
    });
    match applies {
        Some(1) => tally.first_time += 1,
        Some(_) => tally.reruns += 1,
        None => tally.never += 1,
    }
    let duplicates = flaky.duplicates();
    tally.duplicates += duplicates;
    tally.runs_with_duplicates += usize::from(duplicates > 0);
    if applies.is_some() {
        let planned = flaky.plan("plan");
        tally.add(&flaky.proxy.report());
        tally.empty_plans += usize::from(planned.code == 0);
    }
    let destroys = (1..=TRIES).find(|_| {
        let ok = flaky.destroy().success();
        tally.add(&flaky.proxy.report());
        ok
    });
    tally.destroyed_first_time += usize::from(destroys == Some(1));
    tally.left += flaky.left().len();
    tally.seconds += started.elapsed().as_secs_f64();
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("the number of runs per mix"))
        .unwrap_or(5);
    let cluster = Cluster::start();
    let mut rows = Vec::new();
    for (i, (name, plan)) in mixes().into_iter().enumerate() {
        let mut tally = Tally::default();
        for r in 0..runs {
            run(&cluster, &plan, 29_000 + (i * 100 + r) as u64, &mut tally);
        }
        rows.push(format!(
            "| {name} | {}/{runs} | {} | {} | {} in {} runs | {}/{} | {}/{runs} | {} | {} faults into {} requests, {} sent again | {:.0} |",
            tally.first_time,
            tally.reruns,
            tally.never,
            tally.duplicates,
            tally.runs_with_duplicates,
            tally.empty_plans,
            runs - tally.never,
            tally.destroyed_first_time,
            tally.left,
            tally.faults,
            tally.faulted,
            tally.repeated,
            tally.seconds / runs as f64,
        ));
    }
    println!(
        "| faults injected per request | apply ok first time | needed re-runs | never converged ({TRIES} tries) | duplicates | empty plan after | destroy ok first time | objects left by destroy | faults (all runs) | s per run |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
}
