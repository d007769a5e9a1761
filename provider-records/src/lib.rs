//! provider-records: estate outputs recorded as Secrets, and the data source
//! `terraform_estate_outputs` that reads them.
//!
//! A library beside the binary so that tools (the value fuzzer) can drive the provider's
//! resources in-process; the binary only serves [`RecordsProvider`].

mod estate_outputs;
mod grants;
mod outputs_resource;
mod provider;
mod record;
mod refusal;
mod store;

#[cfg(test)]
mod server_tests;

pub use provider::RecordsProvider;
