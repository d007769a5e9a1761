//! terraform-provider-records: serves [`provider_records::RecordsProvider`] over the plugin
//! protocol.

fn main() {
    plugin_runtime::serve(provider_records::RecordsProvider::default())
}
