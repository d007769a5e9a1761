//! `moved` from the kubectl providers' `kubectl_manifest` (gavinbunney/kubectl, and its
//! successor alekc/kubectl, and this binary as `choudoufu/kubectl`) to `kubernetes_manifest`. Both keep the manifest they apply as YAML
//! text in `yaml_body` (gavinbunney's kubernetes/resource_kubectl_manifest.go:378, alekc's
//! internal/framework/resource_kubectl_manifest.go:76), moved to another namespace by
//! `override_namespace` when set, read as they read it ([`crate::kubectl`]); the rest of their state (the live object's hashes, their
//! apply and wait settings) has no counterpart, and the next refresh reads the object.

use plugin_runtime::{Diagnostic, MoveSource};
use serde_json::Value as Json;

/// Whether `source` is a kubectl provider's `kubectl_manifest`.
pub(super) fn is_kubectl_manifest(source: &MoveSource<'_>) -> bool {
    source.type_name == "kubectl_manifest" && crate::moves::from_kubectl(source)
}

/// Why a `kubectl_manifest` state cannot become a `kubernetes_manifest`.
#[derive(Debug, thiserror::Error)]
pub(super) enum KubectlMoveError {
    #[error("the kubectl_manifest state has no yaml_body")]
    NoBody,
    #[error("its yaml_body is not one YAML object: {0}")]
    NotAnObject(String),
}

impl From<KubectlMoveError> for Diagnostic {
    fn from(e: KubectlMoveError) -> Diagnostic {
        Diagnostic::error(
            "Cannot move kubectl_manifest to kubernetes_manifest",
            format!(
                "{e}. Remove the moved block and take the object over with an import block \
                 (id \"apiVersion=<v>,kind=<k>,namespace=<ns>,name=<name>\") instead."
            ),
        )
    }
}

/// The manifest a `kubectl_manifest` state applied: its `yaml_body`, in `override_namespace`
/// when that is set.
pub(super) fn manifest_of(stored: &Json) -> Result<Json, KubectlMoveError> {
    if stored.get("yaml_body").and_then(Json::as_str).is_none() {
        return Err(KubectlMoveError::NoBody);
    }
    crate::kubectl::applied_manifest(stored).map_err(KubectlMoveError::NotAnObject)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_yaml_body_is_the_manifest_in_the_overriding_namespace() {
        let stored = json!({
            "yaml_body": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: \"1\"\n  count: 2\n",
            "override_namespace": "team",
            "uid": "u",
        });
        assert_eq!(
            manifest_of(&stored).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm", "namespace": "team"}, "data": {"a": "1", "count": 2}})
        );
        assert!(matches!(manifest_of(&json!({})), Err(KubectlMoveError::NoBody)));
        let list = json!({"yaml_body": "- a\n- b\n"});
        assert!(matches!(
            manifest_of(&list),
            Err(KubectlMoveError::NotAnObject(_))
        ));
    }

    #[test]
    fn only_the_kubectl_providers_manifests_are_theirs() {
        let source = |provider_address, type_name| MoveSource {
            provider_address,
            type_name,
            schema_version: 1,
        };
        assert!(is_kubectl_manifest(&source(
            "registry.terraform.io/gavinbunney/kubectl",
            "kubectl_manifest"
        )));
        assert!(is_kubectl_manifest(&source(
            "registry.opentofu.org/alekc/kubectl",
            "kubectl_manifest"
        )));
        assert!(!is_kubectl_manifest(&source(
            "registry.terraform.io/gavinbunney/kubectl",
            "kubectl_server_version"
        )));
        assert!(!is_kubectl_manifest(&source(
            "registry.terraform.io/someone/kubectl-fork",
            "kubectl_manifest"
        )));
    }
}
