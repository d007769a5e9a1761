//! The recording tool for `acceptance/fixtures/hashicorp-3.2.1/corpus/` (issue 37): the corpus
//! files applied with hashicorp/kubernetes's own binary, and what it wrote kept as test data
//! (`acceptance::migration::record`). A tool, run by hand; needs the binary:
//!
//! ```sh
//! HASHICORP_PROVIDER=/path/to/terraform-provider-kubernetes KUBECONFIG=… RECORD_FIXTURES=1 \
//!   cargo test --release -p acceptance --test hashicorp_record -- --nocapture
//! ```
//!
//! `RECORD_TYPES=a,b` records those corpus files instead of the first batch;
//! `RECORD_CORPUS=moves` records every file of `acceptance/corpus-moves/` (shapes of
//! configurations whose states must move in) into `fixtures/hashicorp-3.2.1/moves/`. Without
//! `RECORD_FIXTURES=1` it writes under `target/hashicorp-3.2.1/` instead. Without
//! `HASHICORP_PROVIDER` it says so and passes.

use std::io::Write;
use std::path::PathBuf;

use acceptance::Cluster;
use acceptance::corpus::files;
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
    let moves = std::env::var("RECORD_CORPUS").is_ok_and(|c| c == "moves");
    let (folder, recorded_as) = if moves {
        ("corpus-moves", "moves")
    } else {
        ("corpus", "corpus")
    };
    let types: Vec<String> = match std::env::var("RECORD_TYPES") {
        Ok(list) if !list.is_empty() => list.split(',').map(str::to_string).collect(),
        _ if moves => files(folder).into_iter().map(|f| f.type_name).collect(),
        _ => record::FIRST_BATCH.iter().map(|t| t.to_string()).collect(),
    };
    let out = if std::env::var_os("RECORD_FIXTURES").is_some_and(|v| v == "1") {
        fixtures().join(recorded_as)
    } else {
        target_dir().join("hashicorp-3.2.1").join(recorded_as)
    };
    let cluster = Cluster::start();
    let outcomes = record::record(&cluster, &binary, folder, &types, &out);
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
