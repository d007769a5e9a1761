//! The first 20,000 inputs of the fuzzer's default run (the `fuzz` binary runs a million):
//! the value codec and both providers' configuration validators take generated, mutated and
//! random input without a panic, and typed values survive msgpack and cty JSON exactly.

use tools::fuzz::{DEFAULT_SEED, Fuzzer, Target};

const INPUTS: u64 = 20_000;

#[test]
fn twenty_thousand_fuzzed_inputs_find_no_panic_and_no_broken_round_trip() {
    let report = Fuzzer::default().run(DEFAULT_SEED, 0, INPUTS);
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("input {} ({}): {}", f.index, f.target.name(), f.problem))
        .collect();
    assert_eq!(report.failed, 0, "failures:\n{}", failures.join("\n"));
    assert_eq!(report.total(), INPUTS);
    // Every target had its share, and broken input is not all refused at its first byte.
    for target in Target::ALL {
        let counts = report.by_target[&target];
        assert!(counts.inputs >= INPUTS / Target::ALL.len() as u64, "{target:?}");
        assert!(counts.accepted > 0, "{target:?}: nothing was accepted");
    }
}
