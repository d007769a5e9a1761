//! A fuzzer for what the engine and users feed the providers: the value codec (msgpack and
//! cty JSON, generated, mutated and random, against random schema types) and the
//! configuration validators of both providers, `timeouts` durations included. Deterministic:
//! input `i` of a run depends only on the seed and `i`, so a failure replays alone.
//!
//! `src/bin/fuzz.rs` runs a million inputs (`make fuzz`); `tests/fuzz.rs` runs the first
//! twenty thousand of the same run on every `cargo test`.

mod mutate;
mod rng;
mod targets;
mod values;

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

pub use targets::{Target, Verdict};

/// The seed of the default run, shared by the binary and the test.
pub const DEFAULT_SEED: u64 = 0x7f0f_2026;

/// At most this many failures are kept with their details; all are counted.
const KEPT_FAILURES: usize = 20;

/// One input that panicked or broke a property.
#[derive(Debug)]
pub struct Failure {
    pub index: u64,
    pub target: Target,
    pub problem: String,
}

/// Inputs of one target.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub inputs: u64,
    /// Those taken without an error (the rest were refused, or failed).
    pub accepted: u64,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    pub by_target: BTreeMap<Target, Counts>,
    pub failed: u64,
    /// The first failures.
    pub failures: Vec<Failure>,
}

impl Report {
    pub fn total(&self) -> u64 {
        self.by_target.values().map(|c| c.inputs).sum()
    }
}

/// The validators of both providers, built once per run.
pub struct Fuzzer {
    validators: Vec<targets::Validator>,
}

impl Default for Fuzzer {
    fn default() -> Fuzzer {
        let mut validators = targets::validators(Arc::new(provider_live::LiveProvider::default()));
        validators.extend(targets::validators(Arc::new(
            provider_records::RecordsProvider::default(),
        )));
        Fuzzer { validators }
    }
}

impl Fuzzer {
    /// Runs inputs `first..first + count` of the run seeded with `seed`. A panic is caught
    /// and reported as a failure of its input (the panic hook still prints it).
    pub fn run(&self, seed: u64, first: u64, count: u64) -> Report {
        let mut report = Report::default();
        for index in first..first + count {
            let target = Target::of_input(index);
            let mut rng = rng::Rng::for_input(seed, index);
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                targets::check(target, &mut rng, &self.validators)
            }));
            let counts = report.by_target.entry(target).or_default();
            counts.inputs += 1;
            let problem = match outcome {
                Ok(Ok(Verdict::Accepted)) => {
                    counts.accepted += 1;
                    continue;
                }
                Ok(Ok(Verdict::Refused)) => continue,
                Ok(Err(problem)) => problem,
                Err(payload) => {
                    let message = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    format!("panic: {message}")
                }
            };
            report.failed += 1;
            if report.failures.len() < KEPT_FAILURES {
                report.failures.push(Failure {
                    index,
                    target,
                    problem,
                });
            }
        }
        report
    }
}
