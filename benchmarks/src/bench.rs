//! What the benchmark binaries (`bench_plan`, `bench_query`, `bench_records`) share: their
//! command line, the run over every size, medians and how they print.

/// The object counts given as arguments, or `default` when none are; a usage line naming
/// `program` and exit 2 on anything else.
pub fn sizes(program: &str, default: &[usize]) -> Vec<usize> {
    match std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<Vec<usize>, _>>()
    {
        Ok(sizes) if sizes.is_empty() => default.to_vec(),
        Ok(sizes) => sizes,
        Err(e) => {
            eprintln!("usage: {program} [N ...] (object counts): {e}");
            std::process::exit(2);
        }
    }
}

/// `measure` run for every size in turn: the rows of those that worked, and what went wrong
/// with the others, so that one failing size does not hide the figures of the rest.
pub fn each_size<T>(
    sizes: &[usize],
    mut measure: impl FnMut(usize) -> Result<Vec<T>, String>,
) -> (Vec<T>, Vec<String>) {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for &n in sizes {
        match measure(n) {
            Ok(more) => rows.extend(more),
            Err(e) => failures.push(e),
        }
    }
    (rows, failures)
}

/// After the tables: each failure on stderr, and exit code 1 when there was any.
pub fn exit_on_failures(failures: &[String]) {
    for failure in failures {
        eprintln!("\n{failure}");
    }
    if !failures.is_empty() {
        std::process::exit(1);
    }
}

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Requests by verb as one line: `GET 2, LIST 1`.
pub fn verbs(by_verb: &std::collections::BTreeMap<String, u64>) -> String {
    by_verb
        .iter()
        .map(|(verb, n)| format!("{verb} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Creates ConfigMaps `c-0` .. `c-<n-1>` (data `index`, as the benchmarks' configurations
/// write them) carrying `labels` in namespace `ns`, with one kubectl call.
pub fn create_config_maps(
    cluster: &acceptance::Cluster,
    ns: &str,
    n: usize,
    labels: &[(&str, &str)],
) -> Result<(), String> {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    let items: Vec<_> = (0..n)
        .map(|i| {
            serde_json::json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": format!("c-{i}"), "namespace": ns, "labels": labels},
                "data": {"index": i.to_string()},
            })
        })
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("config-maps.json");
    std::fs::write(&file, list.to_string()).map_err(|e| e.to_string())?;
    let out = cluster.kubectl(&["create", "--validate=false", "-f", &file.to_string_lossy()]);
    if out.success() {
        Ok(())
    } else {
        Err(format!("creating {n} ConfigMaps failed:\n{out}"))
    }
}

/// Wall time and CPU time of one engine run.
#[derive(Clone, Copy)]
pub struct Timing {
    pub wall_s: f64,
    /// User + system CPU of the engine and every process it waited for (the providers).
    pub cpu_s: f64,
}

/// Runs `args` in `engine`'s folder, timed; an error unless it exits with 0 (for a plan with
/// `-detailed-exitcode`: nothing to change). The CPU time is what this program's children
/// spent meanwhile: the engine and, waited for by it, its provider processes.
pub fn timed(engine: &acceptance::Engine, args: &[&str], what: &str) -> Result<Timing, String> {
    let cpu_before = children_cpu_s();
    let start = std::time::Instant::now();
    let out = engine.run(args);
    let wall_s = start.elapsed().as_secs_f64();
    if out.code != 0 {
        return Err(format!("{what} failed:\n{out}"));
    }
    Ok(Timing {
        wall_s,
        cpu_s: children_cpu_s() - cpu_before,
    })
}

/// User + system CPU of every child process this program has waited for so far.
pub fn children_cpu_s() -> f64 {
    // SAFETY: rusage is plain data, which getrusage fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage for the call.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// KiB (as rusage reports peak RSS) in MiB.
pub fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A progress line on stderr, with the seconds since `start`.
pub fn step(start: std::time::Instant, what: &str) {
    eprintln!("[{:>7.1} s] {what}", start.elapsed().as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
