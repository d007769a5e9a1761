//! The states hashicorp/kubernetes v3.2.1 wrote for the corpus (`acceptance/fixtures/
//! hashicorp-3.2.1/corpus/<type>/`, recorded by `tests/hashicorp_record.rs` with its binary on a
//! real kube-apiserver) move in, every one (`acceptance::migration::replay`): over the objects
//! as hashicorp left them, created under its field manager, `replace-provider`, a first plan
//! that creates, deletes and changes nothing the user wrote and says it will stamp the estate
//! label, one apply that stamps it on every object, and an empty plan after it. Needs neither Go
//! nor hashicorp's binary.

use std::io::Write;

use acceptance::Cluster;
use acceptance::migration::replay::{Route, recorded, replay};

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
    // A few at a time: each mostly waits on the engine and the cluster.
    let mut outcomes = Vec::new();
    for chunk in dirs.chunks(4) {
        let results: Vec<_> = std::thread::scope(|scope| {
            let running: Vec<_> = chunk
                .iter()
                .map(|dir| scope.spawn(|| replay(&cluster, dir, Route::ReplaceProvider)))
                .collect();
            running
                .into_iter()
                .map(|r| r.join().unwrap_or_else(|e| Err(panic_text(&e))))
                .collect()
        });
        for (dir, result) in chunk.iter().zip(results) {
            let name = dir.file_name().expect("a type").to_string_lossy().into_owned();
            outcomes.push((name, result));
        }
    }
    let mut failures = Vec::new();
    for (name, result) in &outcomes {
        match result {
            Ok(()) => say(&format!("{name}: moved in, planned empty")),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let passed = outcomes.iter().filter(|(_, r)| r.is_ok()).count();
    say(&format!(
        "{passed} of {} recorded states moved in and planned empty",
        outcomes.len()
    ));
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panicked".into())
}

/// Prints past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "hashicorp_corpus_states: {line}");
}
