//! The benchmarks (`src/bin/bench_*.rs`; figures in docs/benchmarks.md): the engine and the
//! providers against a cluster, driven through the acceptance harness, with what they share:
//! [`bench`](mod@bench) (sizes, medians, request counts) and [`provider_meter`] (the provider processes'
//! CPU time and peak RSS).

pub mod bench;
pub mod provider_meter;
