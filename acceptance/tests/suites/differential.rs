//! The differential run (issue 38): the acceptance corpus through its whole life with our
//! provider and with hashicorp/kubernetes's own binary, compared plan by plan and state by
//! state (`acceptance::differential`). Needs the binary: `HASHICORP_PROVIDER=/path/to/
//! terraform-provider-kubernetes`; without it the test says so and passes, so CI stays green.
//! `DIFFERENTIAL_TYPES=a,b` runs only those corpus files. Every distinct difference is written
//! to `target/differential/report.tsv`; the test fails on any that `known.tsv` does not list.

use std::io::Write;
use std::path::PathBuf;

use acceptance::Cluster;
use acceptance::corpus;
use acceptance::differential::{self, Provider};
use acceptance::paths::target_dir;

#[test]
fn the_corpus_plans_applies_imports_and_destroys_as_hashicorps_provider_does() {
    let binary = match std::env::var_os("HASHICORP_PROVIDER") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            skipped("HASHICORP_PROVIDER does not name hashicorp's terraform-provider-kubernetes");
            return;
        }
    };
    if !binary.is_file() {
        skipped(&format!("HASHICORP_PROVIDER={} is not a file", binary.display()));
        return;
    }
    let only: Vec<String> = std::env::var("DIFFERENTIAL_TYPES")
        .unwrap_or_default()
        .split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    let modules_of = |tag: &str| {
        corpus::modules(tag)
            .into_iter()
            .filter(|m| only.is_empty() || only.contains(&m.type_name))
            .collect()
    };
    let cluster = Cluster::start();
    let report = differential::run(
        &cluster,
        &Provider::Ours,
        &Provider::Hashicorp(binary),
        &modules_of,
    );
    report.print();
    let tsv = target_dir().join("differential/report.tsv");
    report.write_tsv(&tsv);
    let new = report.undocumented();
    assert!(
        new.is_empty(),
        "{} differences not in acceptance/differential/known.tsv (all in {}):\n{}",
        new.len(),
        tsv.display(),
        report.summary()
    );
}

/// Says why the test did nothing, past the harness's capture, so `make test`'s summary shows it.
fn skipped(reason: &str) {
    let _ = writeln!(std::io::stdout().lock(), "differential: skipped: {reason}");
}
