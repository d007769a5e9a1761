//! Plan benchmark for provider-live (not a test): on the cluster of `KUBECONFIG`, else a fresh
//! in-memory test server, applies estates of N ConfigMaps (N = 10, 100, 1000) and the
//! reference estates in `examples/` (network, then app), then times one `terraform plan` of
//! each and counts the API requests it made (from the API server's `/metrics`, before and after
//! the plan, on either server). Prints a table `objects | requests | wall s`, plus the requests
//! by verb.
//!
//! Run: `cargo run -p acceptance --bin bench_plan` (add `-- 10 100` for other sizes).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Instant;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote};
use acceptance::{Cluster, Engine, paths};

const DEFAULT_SIZES: [usize; 3] = [10, 100, 1000];

/// One measured plan.
struct Row {
    label: String,
    objects: usize,
    /// Requests by verb.
    requests: BTreeMap<String, u64>,
    wall_s: f64,
}

/// Times one `plan` of the applied configuration in `engine`'s folder.
fn measure(cluster: &Cluster, engine: &Engine, label: String, objects: usize) -> Result<Row, String> {
    let ((plan, wall_s), counted) = cluster.count_requests(|| {
        let start = Instant::now();
        let plan = engine.run(&["plan", "-input=false", "-detailed-exitcode"]);
        (plan, start.elapsed().as_secs_f64())
    });
    if plan.code != 0 {
        return Err(format!("{label}: the plan after apply is not empty:\n{plan}"));
    }
    Ok(Row {
        label,
        objects,
        requests: counted.by_verb(),
        wall_s,
    })
}

/// An estate of `n` ConfigMaps, applied, then its plan measured.
fn config_maps(cluster: &Cluster, n: usize) -> Result<Row, String> {
    let ns = ScratchNamespace::create(cluster, "bench");
    let work = LiveDir::new(&format!("bench-{n}"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_config_map\" \"c\" {{\n  count = {n}\n  metadata {{\n    \
         name      = \"c-${{count.index}}\"\n    namespace = {}\n  }}\n  data = {{ index = tostring(count.index) }}\n}}\n",
        quote(&ns.name)
    ));
    let apply = work.apply();
    if !apply.success() {
        return Err(format!("applying {n} ConfigMaps failed:\n{apply}"));
    }
    let row = measure(cluster, work.engine(), format!("{n} ConfigMaps"), n);
    let destroy = work.run(&["destroy", "-auto-approve", "-input=false"]);
    if !destroy.success() {
        eprintln!("destroying {n} ConfigMaps failed:\n{destroy}");
    }
    row
}

/// Copies `examples/<name>` into a fresh folder, applies it and measures its plan.
fn reference_estate(
    cluster: &Cluster,
    name: &str,
    keep: &mut Vec<(tempfile::TempDir, Engine)>,
) -> Result<Row, String> {
    let source = paths::workspace_root().join("examples").join(name);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_tf_files(&source, dir.path())?;
    let engine = Engine::new(dir.path()).env("TF_VAR_kubeconfig", &cluster.kubeconfig().to_string_lossy());
    let init = engine.init();
    if !init.success() {
        return Err(format!("examples/{name}: init failed:\n{init}"));
    }
    let apply = engine.run(&["apply", "-auto-approve", "-input=false"]);
    if !apply.success() {
        return Err(format!("examples/{name}: apply failed:\n{apply}"));
    }
    let list = engine.run(&["state", "list"]);
    let objects = list.stdout.lines().filter(|l| !l.starts_with("data.")).count();
    let row = measure(cluster, &engine, format!("examples/{name}"), objects);
    keep.push((dir, engine));
    row
}

fn copy_tf_files(from: &Path, to: &Path) -> Result<(), String> {
    let entries = fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|x| x == "tf") {
            let target = to.join(path.file_name().expect("a file name"));
            fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

fn main() {
    let sizes = acceptance::bench::sizes("bench_plan", &DEFAULT_SIZES);
    let cluster = Cluster::start();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for n in sizes {
        match config_maps(&cluster, n) {
            Ok(row) => rows.push(row),
            Err(e) => failures.push(e),
        }
    }
    // The reference estates stay applied until both are measured: app reads network's outputs.
    let mut applied = Vec::new();
    for name in ["network", "app"] {
        if !paths::workspace_root().join("examples").join(name).is_dir() {
            continue;
        }
        match reference_estate(&cluster, name, &mut applied) {
            Ok(row) => rows.push(row),
            Err(e) => failures.push(e),
        }
    }
    for (_, engine) in applied.iter().rev() {
        let destroy = engine.run(&["destroy", "-auto-approve", "-input=false"]);
        if !destroy.success() {
            eprintln!("destroying {} failed:\n{destroy}", engine.workdir().display());
        }
    }

    println!(
        "{:<18} | {:>7} | {:>8} | {:>7} | requests by verb",
        "estate", "objects", "requests", "wall s"
    );
    println!("{}", "-".repeat(72));
    for row in &rows {
        let total = row.requests.values().sum::<u64>();
        let verbs = row
            .requests
            .iter()
            .map(|(verb, n)| format!("{verb} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        println!(
            "{:<18} | {:>7} | {:>8} | {:>7.2} | {verbs}",
            row.label, row.objects, total, row.wall_s
        );
    }
    for failure in &failures {
        eprintln!("\n{failure}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}
