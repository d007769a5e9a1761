//! Fuzzes the value codec and the providers' configuration validators (not a test:
//! `tests/fuzz.rs` runs the first 20,000 inputs of the same run): a million generated,
//! mutated and random inputs by default, then a table of inputs per target, the rate, and
//! every failure with the command that replays it. Exits 1 on any failure.
//!
//! Usage: `cargo run --release --bin fuzz -- [INPUTS [SEED [FIRST]]]`
//! (`make fuzz`). Input `i` depends only on SEED and `i`: `-- 1 SEED i` replays it alone.

use std::process::ExitCode;
use std::time::Instant;

use tools::fuzz::{DEFAULT_SEED, Fuzzer};

const DEFAULT_INPUTS: u64 = 1_000_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| -> Result<u64, String> {
        match args.get(i) {
            None => Ok(default),
            Some(text) => parse(text).ok_or_else(|| format!("not a number: {text:?}")),
        }
    };
    let (count, seed, first) = match (number(0, DEFAULT_INPUTS), number(1, DEFAULT_SEED), number(2, 0)) {
        (Ok(count), Ok(seed), Ok(first)) => (count, seed, first),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            eprintln!("fuzz: {e}\nusage: fuzz [INPUTS [SEED [FIRST]]]");
            return ExitCode::FAILURE;
        }
    };

    let fuzzer = Fuzzer::default();
    let started = Instant::now();
    let report = fuzzer.run(seed, first, count);
    let seconds = started.elapsed().as_secs_f64();

    println!("{:<40} {:>10} {:>10}", "target", "inputs", "accepted");
    for (target, counts) in &report.by_target {
        println!(
            "{:<40} {:>10} {:>10}",
            target.name(),
            counts.inputs,
            counts.accepted
        );
    }
    let total = report.total();
    println!(
        "{total} inputs (seed {seed:#x}, from {first}) in {seconds:.1} s: {:.0} inputs/s, {} failed",
        total as f64 / seconds.max(f64::EPSILON),
        report.failed
    );
    for failure in &report.failures {
        println!(
            "\nFAILED input {} ({}): {}\n  replay: cargo run --release --bin fuzz -- 1 {seed:#x} {}",
            failure.index,
            failure.target.name(),
            failure.problem,
            failure.index
        );
    }
    if report.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A decimal or `0x` hexadecimal number.
fn parse(text: &str) -> Option<u64> {
    let text = text.replace('_', "");
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}
