//! Which `moved` blocks across resource types a typed resource takes: from another name of the
//! same type (`kubernetes_config_map` and `kubernetes_config_map_v1`, twins in
//! `catalog/types.tsv`), of this provider or of hashicorp/kubernetes, whose states this
//! provider reads as its own (the same schemas and versions); and which providers' states are
//! the kubectl providers'.

use plugin_runtime::MoveSource;

/// The providers whose states of these types are ours to read, as `namespace/type` (any
/// registry host: a mirror or private registry may serve them under its own).
const PROVIDERS: [&str; 3] = ["choudoufu/live", "choudoufu/kubectl", "hashicorp/kubernetes"];

/// The providers whose `kubectl_manifest` states have the kubectl providers' shape
/// (gavinbunney/kubectl, its successor alekc/kubectl, and this binary as choudoufu/kubectl), as
/// the `namespace/type` end of their registry addresses, any host.
const KUBECTL_PROVIDERS: [&str; 3] = ["gavinbunney/kubectl", "alekc/kubectl", "choudoufu/kubectl"];

/// Whether `source` is of a kubectl provider, whose `kubectl_manifest` states
/// `choudoufu/kubectl`'s reads as its own and `kubernetes_manifest` translates.
pub fn from_kubectl(source: &MoveSource<'_>) -> bool {
    KUBECTL_PROVIDERS
        .iter()
        .any(|p| source.provider_address.ends_with(&format!("/{p}")))
}

/// Whether a resource named `type_name` (also known as `aliases`) takes `source`'s state.
pub fn accepts(source: &MoveSource<'_>, type_name: &str, aliases: &[&str]) -> bool {
    let provider = source
        .provider_address
        .rsplitn(3, '/')
        .take(2)
        .collect::<Vec<_>>();
    let known = PROVIDERS
        .iter()
        .any(|p| p.split_once('/').is_some_and(|(ns, ty)| provider == [ty, ns]));
    known && (source.type_name == type_name || aliases.contains(&source.type_name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(provider_address: &str, type_name: &str) -> bool {
        let source = MoveSource {
            provider_address,
            type_name,
            schema_version: 0,
        };
        accepts(&source, "kubernetes_config_map_v1", &["kubernetes_config_map"])
    }

    #[test]
    fn twins_of_this_provider_and_hashicorps_are_taken() {
        assert!(from(
            "registry.terraform.io/choudoufu/live",
            "kubernetes_config_map"
        ));
        assert!(from(
            "registry.terraform.io/choudoufu/live",
            "kubernetes_config_map_v1"
        ));
        assert!(from(
            "registry.terraform.io/hashicorp/kubernetes",
            "kubernetes_config_map"
        ));
        assert!(from(
            "registry.example.com/choudoufu/live",
            "kubernetes_config_map"
        ));
        assert!(!from(
            "registry.terraform.io/choudoufu/live",
            "kubernetes_secret_v1"
        ));
        assert!(!from(
            "registry.terraform.io/gavinbunney/kubectl",
            "kubernetes_config_map"
        ));
        assert!(!from("kubernetes", "kubernetes_config_map"));
    }
}
