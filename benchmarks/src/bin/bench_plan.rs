//! Plan and apply benchmark for provider-live against the engine's floor (not a test): on the
//! cluster of `KUBECONFIG`, else a fresh in-memory test server, for N ConfigMaps (N = 100,
//! 1,000, 10,000) it times `apply` (create) and `plan` (refresh, no changes) of choudoufu/live
//! and, side by side in the same run, of the floor: the same number of the engine's built-in
//! `terraform_data` resources, which start no provider process, so the floor is the engine's own
//! cost. Beside them runs a plugin with a minimal schema and state: as many `echo_message`
//! resources of the runtime's `echo_provider` example, whose every plan and apply is the same
//! gRPC round trip any provider makes, so the engine's cost of a plugin as such shows apart from
//! what live's larger schema and state add. Runs alternate (live, floor, plugin, then plugin,
//! floor, live, ...) and the medians of a few rounds are compared (1 round from 10,000 objects
//! up: such an apply takes minutes).
//!
//! For the live runs it also prints the API requests by verb (from the API server's `/metrics`,
//! on either server) and what the provider processes themselves spent, CPU time (user + system)
//! and peak RSS, per phase and per object, measured by [`benchmarks::provider_meter`], and the
//! engine's own CPU time beside the floor's (its children's rusage less the providers'). Then it
//! measures the plan of the reference estates in `examples/` (network, then app).
//!
//! Between apply rounds the live objects go with their namespace (and the floor's state file is
//! removed): a `destroy` is not what is measured and would take longer than the applies.
//!
//! The engine rewrites its whole state file after each resource an apply completes, so an
//! apply's cost grows with the square of N, on both sides: 1,000 objects take under a minute,
//! 10,000 over an hour each (2026-12-03, kube-apiserver: the state file held about 1,000 of them
//! after 90 s, and each later one costs more). So above [`MAX_APPLY`] objects no apply is run:
//! kubectl creates the ConfigMaps, labelled as the estate's, and the phase measured is `adopt`,
//! a plan of N creates that each adopt an existing object, read through the same paged, cached
//! LIST as a refresh (the floor plans N creates too). That is where the request count and the
//! provider's memory at 10,000 objects show.
//!
//! Run: `cargo run --release -p benchmarks --bin bench_plan` (100 and 1,000 objects; name the
//! sizes for others, e.g. `-- 100 1000 10000`).

use std::fs;
use std::path::Path;
use std::time::Instant;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote};
use acceptance::records_fixtures::ESTATE_LABEL;
use acceptance::requests::RequestCounts;
use acceptance::{Cluster, Engine, paths, scenario};
use benchmarks::bench::{self, median, mib, step, timed, verbs};
use benchmarks::provider_meter::{self, PhaseUsage, ProviderMeter};

const DEFAULT_SIZES: [usize; 2] = [100, 1000];

/// The largest count whose apply is measured (see the module's documentation).
const MAX_APPLY: usize = 2_000;

/// The live configuration's estate, and so the label the adopted objects carry.
const ESTATE: &str = "bench";

/// Rounds per size: medians of 3, but one round of the applies that take minutes.
fn rounds(objects: usize) -> usize {
    if objects >= 10_000 { 1 } else { 3 }
}

/// The medians of one phase (apply, plan or adopt) of one size.
struct Row {
    objects: usize,
    phase: &'static str,
    live_s: f64,
    floor_s: f64,
    /// The `echo_provider` plugin's run.
    plugin_s: f64,
    /// The engine's own CPU time: of the live runs without their providers', of the floor's.
    live_engine_cpu_s: f64,
    floor_engine_cpu_s: f64,
    /// Of the last live run (every round makes the same requests).
    requests: RequestCounts,
    /// The median round's by provider CPU; the largest peak RSS of any round.
    provider: PhaseUsage,
}

/// The measurements of one phase's rounds.
#[derive(Default)]
struct Rounds {
    live_s: Vec<f64>,
    floor_s: Vec<f64>,
    plugin_s: Vec<f64>,
    live_engine_cpu_s: Vec<f64>,
    floor_engine_cpu_s: Vec<f64>,
    provider: Vec<PhaseUsage>,
    requests: RequestCounts,
}

impl Rounds {
    fn row(self, objects: usize, phase: &'static str) -> Row {
        let cpu: Vec<f64> = self.provider.iter().map(|p| p.cpu_s).collect();
        let processes = self.provider.iter().map(|p| p.processes).max().unwrap_or(0);
        Row {
            objects,
            phase,
            live_s: median(&self.live_s),
            floor_s: median(&self.floor_s),
            plugin_s: median(&self.plugin_s),
            live_engine_cpu_s: median(&self.live_engine_cpu_s),
            floor_engine_cpu_s: median(&self.floor_engine_cpu_s),
            requests: self.requests,
            provider: PhaseUsage {
                processes,
                cpu_s: median(&cpu),
                max_rss_kib: self.provider.iter().map(|p| p.max_rss_kib).max().unwrap_or(0),
            },
        }
    }
}

/// The ConfigMaps of the live estate, in namespace `ns`.
fn live_body(n: usize, ns: &str) -> String {
    format!(
        "resource \"kubernetes_config_map\" \"c\" {{\n  count = {n}\n  metadata {{\n    \
         name      = \"c-${{count.index}}\"\n    namespace = {}\n  }}\n  data = {{ index = tostring(count.index) }}\n}}\n",
        quote(ns)
    )
}

/// The floor: as many `terraform_data` resources holding the same values.
fn floor_body(n: usize) -> String {
    format!(
        "resource \"terraform_data\" \"c\" {{\n  count = {n}\n  \
         input = {{ name = \"c-${{count.index}}\", index = tostring(count.index) }}\n}}\n"
    )
}

/// The minimal plugin's configuration: as many `echo_message` resources.
fn plugin_body(n: usize) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    echo = {{\n      source = \"{}/echo\"\n    }}\n  }}\n}}\n\n\
         resource \"echo_message\" \"c\" {{\n  count = {n}\n  input = \"c-${{count.index}}\"\n}}\n",
        provider_mirror::NAMESPACE
    )
}

/// The three configurations a round runs.
#[derive(Clone, Copy)]
struct Engines<'a> {
    live: &'a Engine,
    floor: &'a Engine,
    plugin: &'a Engine,
}

/// Which of them.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Live,
    Floor,
    Plugin,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Live => "live",
            Side::Floor => "floor",
            Side::Plugin => "plugin",
        }
    }
}

const APPLY: [&str; 3] = ["apply", "-auto-approve", "-input=false"];
const PLAN: [&str; 3] = ["plan", "-input=false", "-detailed-exitcode"];
/// A plan that has changes to show (exit code 0).
const PLAN_CREATES: [&str; 2] = ["plan", "-input=false"];

/// One size: apply rounds, then plan rounds of the last applied estate.
struct Bench<'a> {
    cluster: &'a Cluster,
    meter: &'a ProviderMeter,
    /// Where the engine takes the `echo_provider` plugin from (its own usage is not reported).
    plugin: &'a ProviderMeter,
    start: Instant,
}

impl Bench<'_> {
    fn config_maps(&self, live: &LiveDir, n: usize) -> Result<Vec<Row>, String> {
        let engine = self.meter.wrap(live.engine().clone());
        let floor_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        fs::write(floor_dir.path().join("main.tf"), floor_body(n)).map_err(|e| e.to_string())?;
        let floor = Engine::new(floor_dir.path()).timeout(std::time::Duration::from_secs(3600));
        let engine = engine.timeout(std::time::Duration::from_secs(3600));
        let init = floor.init();
        if !init.success() {
            return Err(format!("init of the floor failed:\n{init}"));
        }
        // A plugin from `dev_overrides` needs no init.
        let plugin_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        fs::write(plugin_dir.path().join("main.tf"), plugin_body(n)).map_err(|e| e.to_string())?;
        let plugin = self
            .plugin
            .wrap(Engine::new(plugin_dir.path()))
            .timeout(std::time::Duration::from_secs(3600));
        let engines = Engines {
            live: &engine,
            floor: &floor,
            plugin: &plugin,
        };
        if n > MAX_APPLY {
            return Ok(vec![self.adoption(live, engines, n)?]);
        }
        let rounds = rounds(n);
        // Deleted (without waiting) when dropped, also on an error.
        let mut namespace: Option<ScratchNamespace> = None;
        let mut apply = Rounds::default();
        for round in 0..rounds {
            if let Some(ns) = namespace.take() {
                self.reset(&[live.path(), floor_dir.path(), plugin_dir.path()], &ns.name)?;
            }
            let ns = namespace.insert(ScratchNamespace::create(self.cluster, "bench"));
            live.write(&live_body(n, &ns.name));
            self.round(&mut apply, engines, &APPLY, n, (round, rounds))?;
        }
        let mut plan = Rounds::default();
        for round in 0..rounds {
            self.round(&mut plan, engines, &PLAN, n, (round, rounds))?;
        }
        Ok(vec![apply.row(n, "apply"), plan.row(n, "plan")])
    }

    /// The plan of `n` creates that adopt existing objects, against the floor's `n` creates.
    fn adoption(&self, live: &LiveDir, engines: Engines<'_>, n: usize) -> Result<Row, String> {
        // Deleted (without waiting) when dropped, also on an error.
        let ns = ScratchNamespace::create(self.cluster, "bench");
        step(
            self.start,
            &format!("{n} ConfigMaps: creating them with kubectl, labelled {ESTATE_LABEL}={ESTATE}"),
        );
        bench::create_config_maps(self.cluster, &ns.name, n, &[(ESTATE_LABEL, ESTATE)])?;
        live.write(&live_body(n, &ns.name));
        let rounds = rounds(n);
        let mut plan = Rounds::default();
        for round in 0..rounds {
            self.round(&mut plan, engines, &PLAN_CREATES, n, (round, rounds))?;
        }
        Ok(plan.row(n, "adopt"))
    }

    /// One round of `args`: live, floor, plugin, or the other way round (by turns).
    fn round(
        &self,
        into: &mut Rounds,
        engines: Engines<'_>,
        args: &[&str],
        n: usize,
        (round, rounds): (usize, usize),
    ) -> Result<(), String> {
        let mut order = [Side::Live, Side::Floor, Side::Plugin];
        if round % 2 == 1 {
            order.reverse();
        }
        for side in order {
            let what = format!("{n} ConfigMaps: {}, {}", args[0], side.name());
            step(self.start, &format!("{what}, round {}/{rounds}", round + 1));
            if side == Side::Live {
                let live = engines.live;
                // Provider processes of an earlier, failed run are not this run's.
                self.meter.take()?;
                let (timing, counted) = self.cluster.count_requests(|| timed(live, args, &what));
                let timing = timing?;
                let provider = self.meter.take()?;
                into.live_s.push(timing.wall_s);
                into.live_engine_cpu_s.push(timing.cpu_s - provider.cpu_s);
                into.requests = counted;
                into.provider.push(provider);
            } else if side == Side::Floor {
                let timing = timed(engines.floor, args, &what)?;
                into.floor_s.push(timing.wall_s);
                into.floor_engine_cpu_s.push(timing.cpu_s);
            } else {
                into.plugin_s.push(timed(engines.plugin, args, &what)?.wall_s);
                self.plugin.take()?;
            }
        }
        Ok(())
    }

    /// Forgets an applied round: the live objects with their namespace, the state files in `dirs`.
    fn reset(&self, dirs: &[&Path], ns: &str) -> Result<(), String> {
        step(
            self.start,
            &format!("deleting namespace {ns} and the state files"),
        );
        self.delete_namespace(ns);
        for dir in dirs {
            for file in ["terraform.tfstate", "terraform.tfstate.backup"] {
                let path = dir.join(file);
                if path.exists() {
                    fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                }
            }
        }
        Ok(())
    }

    /// Deletes namespace `ns` and waits until it is gone, so its cleanup does not load the next
    /// round.
    fn delete_namespace(&self, ns: &str) {
        let out = self.cluster.kubectl(&[
            "delete",
            "namespace",
            ns,
            "--wait=true",
            "--ignore-not-found",
            "--timeout=110s",
        ]);
        if !out.success() {
            eprintln!("deleting namespace {ns}:\n{out}");
        }
    }
}

/// Copies `examples/<name>` into a fresh folder, applies it and measures its plan: `(objects,
/// requests, wall s, provider)`.
fn reference_estate(
    cluster: &Cluster,
    meter: &ProviderMeter,
    name: &str,
    keep: &mut Vec<(tempfile::TempDir, Engine)>,
) -> Result<(usize, RequestCounts, f64, PhaseUsage), String> {
    let source = paths::workspace_root().join("examples").join(name);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    scenario::copy_module(&source, dir.path())?;
    let engine = Engine::new(dir.path()).env("TF_VAR_kubeconfig", &cluster.kubeconfig().to_string_lossy());
    let init = engine.init();
    if !init.success() {
        return Err(format!("examples/{name}: init failed:\n{init}"));
    }
    let apply = engine.run(&APPLY);
    if !apply.success() {
        return Err(format!("examples/{name}: apply failed:\n{apply}"));
    }
    let list = engine.run(&["state", "list"]);
    let objects = list.stdout.lines().filter(|l| !l.starts_with("data.")).count();
    let metered = meter.wrap(engine.clone());
    meter.take()?;
    let (timing, counted) =
        cluster.count_requests(|| timed(&metered, &PLAN, &format!("examples/{name}: plan")));
    let wall_s = timing?.wall_s;
    let provider = meter.take()?;
    keep.push((dir, engine));
    Ok((objects, counted, wall_s, provider))
}

fn print_rows(rows: &[Row]) {
    println!(
        "{:>7} | {:<5} | {:>7} | {:>7} | {:>5} | {:>8} | {:>5} | {:>15} | {:>12} | {:>9} | {:>8} | {:>5} | {:>8} | requests by verb",
        "objects",
        "phase",
        "live s",
        "floor s",
        "ratio",
        "plugin s",
        "ratio",
        "engine CPU s",
        "provider CPU",
        "ms/object",
        "peak RSS",
        "procs",
        "requests"
    );
    println!("{:>68}", "live / floor");
    println!("{}", "-".repeat(151));
    for row in rows {
        let by_verb = row.requests.by_verb();
        println!(
            "{:>7} | {:<5} | {:>7.2} | {:>7.2} | {:>5.2} | {:>8.2} | {:>5.2} | {:>7.2} / {:>5.2} | {:>10.2} s | {:>9.3} | {:>4.1} MiB | {:>5} | {:>8} | {}",
            row.objects,
            row.phase,
            row.live_s,
            row.floor_s,
            row.live_s / row.floor_s,
            row.plugin_s,
            row.plugin_s / row.floor_s,
            row.live_engine_cpu_s,
            row.floor_engine_cpu_s,
            row.provider.cpu_s,
            row.provider.cpu_s * 1000.0 / row.objects as f64,
            mib(row.provider.max_rss_kib),
            row.provider.processes,
            by_verb.values().sum::<u64>(),
            verbs(&by_verb)
        );
    }
}

fn main() {
    provider_meter::run_if_provider();
    let sizes = benchmarks::bench::sizes("bench_plan", &DEFAULT_SIZES);
    let start = Instant::now();
    let cluster = Cluster::start();
    step(start, "building and packing the providers, init");
    let live = LiveDir::new(ESTATE, cluster.kubeconfig());
    let metered = |type_name: &str, binary: &str| {
        acceptance::build::binary(binary)
            .map_err(|e| e.to_string())
            .and_then(|real| ProviderMeter::new(type_name, &real))
            .unwrap_or_else(|e| {
                eprintln!("bench_plan: {e}");
                std::process::exit(1);
            })
    };
    let meter = metered("live", "terraform-provider-live");
    let plugin = metered("echo", "echo_provider");
    let bench = Bench {
        cluster: &cluster,
        meter: &meter,
        plugin: &plugin,
        start,
    };
    let (rows, mut failures) = benchmarks::bench::each_size(&sizes, |n| {
        let measured = bench
            .config_maps(&live, n)
            .map_err(|e| format!("{n} ConfigMaps: {e}"));
        // Whatever the outcome, the next size starts from no state.
        for file in ["terraform.tfstate", "terraform.tfstate.backup"] {
            let _ = fs::remove_file(live.path().join(file));
        }
        measured
    });
    // The reference estates stay applied until both are measured: app reads network's outputs.
    let mut applied = Vec::new();
    let mut estates = Vec::new();
    for name in ["network", "app"] {
        if !paths::workspace_root().join("examples").join(name).is_dir() {
            continue;
        }
        step(start, &format!("examples/{name}: apply, then plan"));
        match reference_estate(&cluster, &meter, name, &mut applied) {
            Ok(measured) => estates.push((name, measured)),
            Err(e) => failures.push(e),
        }
    }
    for (_, engine) in applied.iter().rev() {
        let destroy = engine.run(&["destroy", "-auto-approve", "-input=false"]);
        if !destroy.success() {
            eprintln!("destroying {} failed:\n{destroy}", engine.workdir().display());
        }
    }
    step(start, "done");

    print_rows(&rows);
    println!();
    println!(
        "{:<18} | {:>7} | {:>8} | {:>7} | {:>12} | {:>8} | requests by verb",
        "plan of", "objects", "requests", "wall s", "provider CPU", "peak RSS"
    );
    println!("{}", "-".repeat(90));
    for (name, (objects, requests, wall_s, provider)) in &estates {
        let by_verb = requests.by_verb();
        println!(
            "{:<18} | {:>7} | {:>8} | {:>7.2} | {:>10.2} s | {:>4.1} MiB | {}",
            format!("examples/{name}"),
            objects,
            by_verb.values().sum::<u64>(),
            wall_s,
            provider.cpu_s,
            mib(provider.max_rss_kib),
            verbs(&by_verb)
        );
    }
    benchmarks::bench::exit_on_failures(&failures);
}
