//! terraform-provider-records: estate outputs recorded as Secrets, and the data source
//! `terraform_estate_outputs` that reads them.

mod estate_outputs;
mod grants;
mod outputs_resource;
mod provider;
mod record;
mod refusal;
mod store;

#[cfg(test)]
mod server_tests;

fn main() {
    plugin_runtime::serve(provider::RecordsProvider::default())
}
