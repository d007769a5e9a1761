//! terraform-provider-live: serves [`provider_live::LiveProvider`] over the plugin protocol.

fn main() {
    plugin_runtime::serve(provider_live::LiveProvider::default())
}
