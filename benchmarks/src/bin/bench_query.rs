//! `terraform query` benchmark for provider-live (not a test): on the cluster of `KUBECONFIG`,
//! else a fresh in-memory test server, creates N unlabelled ConfigMaps in one namespace with
//! kubectl (N = 1000 by default), lists them with `unlabelled = true`, and counts the API
//! requests the query made (from the API server's `/metrics`, before and after, on either
//! server). The goal: one LIST per 500 objects. Prints `objects | listed | LISTs | requests |
//! wall s`, plus the requests by verb.
//!
//! Run: `cargo run --release -p benchmarks --bin bench_query` (add `-- 100 2000` for other sizes).

use std::fs;
use std::time::Instant;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote};
use acceptance::{Cluster, Feature, skip_without};

const DEFAULT_SIZES: [usize; 1] = [1000];

/// Lists `n` unlabelled ConfigMaps once; the table row of what it took.
fn measure(cluster: &Cluster, n: usize) -> Result<String, String> {
    let ns = ScratchNamespace::create(cluster, "bench-query");
    // Labelled `bench=query` and no estate.
    benchmarks::bench::create_config_maps(cluster, &ns.name, n, &[("bench", "query")])?;
    let work = LiveDir::new("bench-query", cluster.kubeconfig());
    fs::write(
        work.path().join("bench.tfquery.hcl"),
        format!(
            "list \"kubernetes_config_map_v1\" \"found\" {{\n  provider = kubernetes\n  limit    = {}\n  \
             config {{\n    namespace      = {}\n    label_selector = \"bench=query\"\n    \
             unlabelled     = true\n  }}\n}}\n",
            n + 1,
            quote(&ns.name)
        ),
    )
    .map_err(|e| e.to_string())?;
    let ((query, wall_s), counted) = cluster.count_requests(|| {
        let start = Instant::now();
        let query = work.run(&["query", "-no-color"]);
        (query, start.elapsed().as_secs_f64())
    });
    if !query.success() {
        return Err(format!("query of {n} ConfigMaps failed:\n{query}"));
    }
    let listed = query
        .stdout
        .lines()
        .filter(|l| l.starts_with("list.kubernetes_config_map_v1.found"))
        .count();
    let lists = counted.get("LIST", "configmaps");
    let by_verb = counted.by_verb();
    let total = by_verb.values().sum::<u64>();
    let verbs = benchmarks::bench::verbs(&by_verb);
    Ok(format!(
        "{n:>7} | {listed:>6} | {lists:>5} | {total:>8} | {wall_s:>7.2} | {verbs}"
    ))
}

fn main() {
    let sizes = benchmarks::bench::sizes("bench_query", &DEFAULT_SIZES);
    if skip_without(Feature::Query) {
        return;
    }
    let cluster = Cluster::start();
    let (rows, failures) =
        benchmarks::bench::each_size(&sizes, |n| measure(&cluster, n).map(|row| vec![row]));
    println!(
        "{:>7} | {:>6} | {:>5} | {:>8} | {:>7} | requests by verb",
        "objects", "listed", "LISTs", "requests", "wall s"
    );
    println!("{}", "-".repeat(72));
    for row in &rows {
        println!("{row}");
    }
    benchmarks::bench::exit_on_failures(&failures);
}
