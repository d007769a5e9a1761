//! The project's tools, apart from the tests: release signing ([`release`], `make release`), the
//! provider registry that serves a release ([`registry`], `make registry`), the registry docs
//! generator ([`docs`], `make docs`), the fuzzer of the value codec and the validators ([`fuzz`],
//! `make fuzz`) and the benchmarks (`src/bin/bench_*.rs` with [`bench`] and
//! [`provider_meter`]; figures in docs/benchmarks.md). The benchmarks run the engine against a
//! cluster through the acceptance harness; the shipped tools need only the providers and
//! [`provider_mirror`]'s constants.

pub mod bench;
pub mod docs;
pub mod fuzz;
pub mod provider_meter;
pub mod registry;
pub mod release;
