//! provider-records: estate outputs recorded as Secrets, the data source
//! `terraform_estate_outputs` that reads them, and `records_seen`, which notices when they
//! changed since the reader's last apply.
//!
//! A library beside the binary so that tools (the value fuzzer) can drive the provider's
//! resources in-process; the binary only serves [`RecordsProvider`].

mod estate_outputs;
mod grants;
mod head;
mod outputs_resource;
mod provider;
mod rbac_refusal;
mod record;
mod seen_resource;
mod store;

#[cfg(test)]
mod server_tests;

pub use provider::RecordsProvider;
