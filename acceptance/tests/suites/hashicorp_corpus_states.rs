//! The states hashicorp/kubernetes v3.2.1 wrote for the corpus (`acceptance/fixtures/
//! hashicorp-3.2.1/corpus/<type>/`, recorded by `tests/hashicorp_record.rs` with its binary on a
//! real kube-apiserver) move in, every one, all at once (`acceptance::migration::replay::
//! replay_all`): over the objects as hashicorp left them, created under its field manager,
//! `replace-provider`, a first plan that creates, deletes and changes nothing the user wrote and
//! says it will stamp the estate label, one apply that stamps it on every object, and an empty
//! plan after it. Needs neither Go nor hashicorp's binary.

use std::io::Write;

use acceptance::Cluster;
use acceptance::migration::replay::{recorded, replay_all};

#[test]
fn every_state_hashicorps_binary_wrote_for_the_corpus_moves_in_and_plans_empty() {
    let cluster = Cluster::start();
    // `HASHICORP_STATES=a,b`: only those types.
    let only = std::env::var("HASHICORP_STATES").unwrap_or_default();
    let dirs: Vec<_> = recorded()
        .into_iter()
        .filter(|d| only.is_empty() || only.split(',').any(|t| d.ends_with(t)))
        .collect();
    assert!(!dirs.is_empty(), "no recorded states");
    if let Err(e) = replay_all(&cluster, &dirs) {
        panic!("the recorded states did not move in:\n{e}");
    }
    for dir in &dirs {
        let name = dir.file_name().expect("a type").to_string_lossy();
        say(&format!("{name}: moved in, planned empty"));
    }
    say(&format!(
        "{} of {} recorded states moved in and planned empty",
        dirs.len(),
        dirs.len()
    ));
}

/// Prints past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "hashicorp_corpus_states: {line}");
}
