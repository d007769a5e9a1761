//! The recording tool for `acceptance/fixtures/hashicorp-3.2.1/corpus/` (issue 37): the corpus
//! files applied with hashicorp/kubernetes's own binary, and what it wrote kept as test data
//! (`acceptance::migration::record`). A tool, run by hand; needs the binary:
//!
//! ```sh
//! HASHICORP_PROVIDER=/path/to/terraform-provider-kubernetes KUBECONFIG=… RECORD_FIXTURES=1 \
//!   cargo test --release -p acceptance --test hashicorp_record -- --nocapture
//! ```
//!
//! `RECORD_TYPES=a,b` records those corpus files instead of the first batch. Without
//! `RECORD_FIXTURES=1` it writes to `target/hashicorp-3.2.1/corpus/` instead. Without
//! `HASHICORP_PROVIDER` it says so and passes.

use std::io::Write;
use std::path::PathBuf;

use acceptance::Cluster;
use acceptance::migration::{fixtures, record};
use acceptance::paths::target_dir;

#[test]
fn record_the_states_hashicorps_binary_writes_for_the_corpus() {
    let binary = match std::env::var_os("HASHICORP_PROVIDER") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => {
            say("skipped: HASHICORP_PROVIDER does not name hashicorp's terraform-provider-kubernetes");
            return;
        }
    };
    if !binary.is_file() {
        say(&format!(
            "skipped: HASHICORP_PROVIDER={} is not a file",
            binary.display()
        ));
        return;
    }
    let types: Vec<String> = match std::env::var("RECORD_TYPES") {
        Ok(list) if !list.is_empty() => list.split(',').map(str::to_string).collect(),
        _ => record::FIRST_BATCH.iter().map(|t| t.to_string()).collect(),
    };
    let out = if std::env::var_os("RECORD_FIXTURES").is_some_and(|v| v == "1") {
        fixtures().join("corpus")
    } else {
        target_dir().join("hashicorp-3.2.1/corpus")
    };
    let cluster = Cluster::start();
    let outcomes = record::record(&cluster, &binary, &types, &out);
    let recorded = outcomes.iter().filter(|(_, o)| o.is_ok()).count();
    for (type_name, outcome) in &outcomes {
        match outcome {
            Ok(n) => say(&format!("{type_name}: {n} resources recorded")),
            Err(e) => say(&format!("{type_name}: not recorded: {e}")),
        }
    }
    say(&format!(
        "{recorded} of {} types recorded in {}",
        outcomes.len(),
        out.display()
    ));
    assert!(recorded > 0, "nothing recorded");
}

/// Prints past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "hashicorp_record: {line}");
}
