//! The project's shipped tools: release signing ([`release`], `make release`), the provider
//! registry that serves a release ([`registry`], `make registry`), the registry docs generator
//! ([`docs`], `make docs`), the check of the macOS builds that cannot run here ([`macho`],
//! `make release-check`) and the fuzzer of the value codec and the validators ([`fuzz`],
//! `make fuzz`). They need only the providers and [`provider_mirror`]'s constants, never the test
//! harness: the benchmarks, which drive the engine through it, are the `benchmarks` crate
//! (`benchmarks/`), and only this crate's own tests that run the engine (`tests/registry_install.rs`,
//! `tests/docs.rs`) use it, as a dev-dependency.

pub mod docs;
pub mod fuzz;
pub mod macho;
pub mod registry;
pub mod release;
