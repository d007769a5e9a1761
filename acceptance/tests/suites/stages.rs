//! The scenario's 13 stages (`shared/reference/scenario.md`), run in order against one cluster and
//! one pair of working folders, as the two teams would live through them. Each stage asserts on
//! the cluster (kubectl), on the engine's saved plan (`show -json`) and on exit codes, and prints
//! `stage N <name>: ok|FAILED`.
//!
//! `BREAK_STAGE=N` breaks stage N's own setup or expectation on purpose and ends the run after
//! it: that stage must then fail (`scripts/break-check.sh` checks all 13).

#[path = "stages/changes.rs"]
mod changes;
#[path = "stages/failures.rs"]
mod failures;
#[path = "stages/first_applies.rs"]
mod first_applies;
#[path = "stages/migration.rs"]
mod migration;
#[path = "stages/steps.rs"]
mod steps;

use acceptance::scenario::{Check, Estates};
use std::io::Write as _;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use changes::{change_count, create_before_destroy, drift, remove_a_block, rename};
use failures::{crash_mid_apply, lost_state, plan_review_apply};
use first_applies::{greenfield, no_op, read_fence};
use migration::{migrate, teardown};
use steps::break_stage;

type Stage = fn(&Estates) -> Check;

const STAGES: [(&str, Stage); 13] = [
    ("greenfield apply", greenfield),
    ("no-op", no_op),
    ("cross-estate read fence", read_fence),
    ("drift", drift),
    ("rename", rename),
    ("remove a block", remove_a_block),
    ("change count", change_count),
    ("create_before_destroy", create_before_destroy),
    ("crash mid-apply", crash_mid_apply),
    ("plan, review, apply", plan_review_apply),
    ("lost state", lost_state),
    ("migrate", migrate),
    ("teardown", teardown),
];

#[test]
fn reference_estates_stage_by_stage() {
    let started = Instant::now();
    let stop_after = break_stage();
    let estates = Estates::start().unwrap_or_else(|e| panic!("setting up the estates failed: {e}"));
    let mut failed = Vec::new();
    for (n, (name, stage)) in (1..).zip(STAGES) {
        let stage_started = Instant::now();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| stage(&estates)))
            .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_text(&*panic))));
        let took = stage_started.elapsed().as_secs_f64();
        match result {
            Ok(()) => say(&format!("stage {n} {name}: ok ({took:.1} s)")),
            Err(why) => {
                say(&format!(
                    "stage {n} {name}: FAILED ({took:.1} s)\n    {}",
                    why.replace('\n', "\n    ")
                ));
                failed.push(n);
            }
        }
        // Everything after the greenfield apply builds on it; a broken stage ends the run.
        if (n == 1 && !failed.is_empty()) || stop_after == Some(n) {
            break;
        }
    }
    if !failed.is_empty() || stop_after.is_some() {
        clean_up(&estates);
    }
    say(&format!(
        "stages: {} failed, wall time {:.0} s",
        failed.len(),
        started.elapsed().as_secs_f64()
    ));
    if failed.is_empty() {
        return;
    }
    let kept = estates.keep();
    panic!(
        "stages {failed:?} failed; working folders kept in {}",
        kept.display()
    );
}

/// A line on the terminal even while the test harness captures output.
fn say(line: &str) {
    let mut stderr = std::io::stderr();
    // The terminal going away must not fail the test.
    let _ = writeln!(stderr, "{line}");
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Best effort after a failed or broken run, so a real cluster is left as it was found.
fn clean_up(estates: &Estates) {
    for engine in [&estates.app, &estates.network] {
        // Errors are expected here (state already gone, a stage left a foreign object): ignore.
        let _ = engine.run(&["destroy", "-auto-approve"]);
    }
    let _ = estates.cluster.kubectl(&[
        "delete",
        "namespaces,clusterroles,clusterrolebindings",
        "shop",
        "platform",
        "tofu-records-app",
        "tofu-records-network",
        "app-planner",
        "--ignore-not-found",
        "--wait=false",
    ]);
}
