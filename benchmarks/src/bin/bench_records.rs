//! Records read benchmark (not a test): on the cluster of `KUBECONFIG` (then
//! `KUBECONFIG_RESTRICTED` names the restricted identity), else a fresh in-memory test server,
//! a producer estate records N outputs (N = 50 by default) granting the `restricted` identity
//! `get` on them, and a consumer estate connecting as `restricted` plans a read of all of them
//! by name. Prints, for N names and for 1 name (the engine's own cost), the API requests of one
//! plan (from the API server's `/metrics`) and the median wall time of 5 plans; the whole plan's
//! wall time bounds the provider's. The goal: at most N GETs, under 1 s.
//!
//! Run: `cargo run --release -p benchmarks --bin bench_records` (add `-- 10 200` for other sizes).

use std::time::Instant;

use acceptance::Cluster;
use acceptance::records_fixtures::{
    Cleanup, Workdir, outputs_resource, records_namespace, records_only, unique_tag,
};

const DEFAULT_SIZES: [usize; 1] = [50];

/// One measured plan of the consumer.
struct Measured {
    names: usize,
    gets: u64,
    lists: u64,
    requests: u64,
    wall_s: f64,
}

/// The consumer's configuration: reads `names` of `producer`'s outputs by name.
fn consumer_tf(estate: &str, producer: &str, names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    records_only(
        estate,
        &format!(
            "data \"terraform_estate_outputs\" \"p\" {{\n  provider = records\n  estate   = \"{producer}\"\n  \
             names    = [{}]\n}}\n\noutput \"count\" {{\n  value = length(data.terraform_estate_outputs.p.values)\n}}\n",
            quoted.join(", ")
        ),
    )
}

/// Plans measured per row; the median wall time is printed.
const RUNS: usize = 5;

/// Plans the consumer reading `names` [`RUNS`] times, counting the requests of the first.
fn measure(
    cluster: &Cluster,
    consumer: &Workdir,
    estate: &str,
    producer: &str,
    names: &[String],
) -> Result<Measured, String> {
    consumer.write(&consumer_tf(estate, producer, names));
    let engine = consumer.engine(&cluster.kubeconfig_for("restricted"));
    let plan = || {
        let start = Instant::now();
        let plan = engine.run(&["plan", "-input=false"]);
        if plan.success() {
            Ok(start.elapsed().as_secs_f64())
        } else {
            Err(format!(
                "the consumer's plan of {} names failed:\n{plan}",
                names.len()
            ))
        }
    };
    let (first, counted) = cluster.count_requests(plan);
    let mut walls = vec![first?];
    for _ in 1..RUNS {
        walls.push(plan()?);
    }
    Ok(Measured {
        names: names.len(),
        gets: counted.get("GET", "secrets"),
        lists: counted.get("LIST", "secrets"),
        requests: counted.by_verb().values().sum(),
        wall_s: benchmarks::bench::median(&walls),
    })
}

/// Records `n` outputs and measures reads of all of them and of one.
fn run(cluster: &Cluster, n: usize) -> Result<Vec<Measured>, String> {
    let tag = unique_tag();
    let (producer, consumer) = (format!("bench-{tag}-net"), format!("bench-{tag}-app"));
    let mut cleanup = Cleanup::new(cluster);
    cleanup.add("namespace", &records_namespace(&producer));

    let names: Vec<String> = (0..n).map(|i| format!("output_{i:03}")).collect();
    let values: Vec<(String, String)> = names
        .iter()
        .map(|name| (name.clone(), format!("value of {name}")))
        .collect();
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let net = Workdir::new();
    net.write(&records_only(
        &producer,
        &outputs_resource(
            &values,
            &["{ kind = \"User\", name = \"restricted\" }".to_string()],
            "",
        ),
    ));
    let tf = net.engine(cluster.kubeconfig());
    let out = tf.init();
    if !out.success() {
        return Err(format!("producer init:\n{out}"));
    }
    let out = tf.run(&["apply", "-auto-approve", "-input=false"]);
    if !out.success() {
        return Err(format!("producer apply:\n{out}"));
    }

    let app = Workdir::new();
    app.write(&consumer_tf(&consumer, &producer, &names));
    let init = app.engine(&cluster.kubeconfig_for("restricted")).init();
    if !init.success() {
        return Err(format!("consumer init:\n{init}"));
    }
    // A first plan warms the page cache; then the measured ones.
    measure(cluster, &app, &consumer, &producer, &names)?;
    let all = measure(cluster, &app, &consumer, &producer, &names)?;
    let one = measure(cluster, &app, &consumer, &producer, &names[..1])?;

    let out = tf.run(&["destroy", "-auto-approve", "-input=false"]);
    if !out.success() {
        return Err(format!("producer destroy:\n{out}"));
    }
    Ok(vec![all, one])
}

fn main() {
    let sizes = benchmarks::bench::sizes("bench_records", &DEFAULT_SIZES);
    let cluster = Cluster::start();
    let (rows, failures) = benchmarks::bench::each_size(&sizes, |n| run(&cluster, n));
    println!(
        "{:>5} | {:>11} | {:>12} | {:>8} | {:>6}",
        "names", "GET secrets", "LIST secrets", "requests", "wall s (median of 5 plans)"
    );
    println!("{}", "-".repeat(56));
    for m in &rows {
        println!(
            "{:>5} | {:>11} | {:>12} | {:>8} | {:>6.2}",
            m.names, m.gets, m.lists, m.requests, m.wall_s
        );
    }
    benchmarks::bench::exit_on_failures(&failures);
}
