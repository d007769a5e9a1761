//! Validation of CustomResourceDefinitions: the basics of `ValidateCustomResourceDefinition`.

use serde_json::{Value, json};

use super::FieldError;

/// A version list as the validator prints it (Go field names; schemas and the other nested
/// parts left out to keep the message short).
fn printed_versions(versions: &Value) -> String {
    let items: Vec<String> = versions
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let flag = |k: &str| v[k].as_bool().unwrap_or(false);
            format!(
                "{{\"Name\":{},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{},\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null}}",
                json!(v["name"].as_str().unwrap_or_default()),
                flag("served"),
                flag("storage"),
                flag("deprecated"),
                v.get("deprecationWarning").cloned().unwrap_or(Value::Null)
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// The basics of `ValidateCustomResourceDefinition`.
pub(super) fn validate_definition(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = &obj["spec"];
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let plural = spec["names"]["plural"].as_str().unwrap_or_default();
    let group = spec["group"].as_str().unwrap_or_default();
    if name != format!("{plural}.{group}") {
        errors.push(FieldError::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    let scope = &spec["scope"];
    if !matches!(scope.as_str(), Some("Cluster" | "Namespaced")) {
        errors.push(FieldError::not_supported(
            "spec.scope",
            scope,
            &["Cluster", "Namespaced"],
        ));
    }
    let versions = spec["versions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let storage: Vec<&str> = versions
        .iter()
        .filter(|v| v["storage"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    if storage.len() != 1 {
        errors.push(FieldError::invalid_printed(
            "spec.versions",
            &printed_versions(&spec["versions"]),
            "must have exactly one version marked as storage version",
        ));
    }
    for (i, version) in versions.iter().enumerate() {
        if !version["schema"]["openAPIV3Schema"].is_object() {
            errors.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "",
            ));
        }
    }
    let stored = &obj["status"]["storedVersions"];
    match (stored.as_array().filter(|s| !s.is_empty()), storage.last()) {
        (None, _) => errors.push(FieldError::invalid(
            "status.storedVersions",
            stored,
            "must have at least one stored version",
        )),
        (Some(list), Some(v)) if !list.iter().any(|s| s == v) => errors.push(FieldError::invalid(
            "status.storedVersions",
            stored,
            &format!("must have the storage version {v}"),
        )),
        _ => {}
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(name: &str, scope: &str, storage: &[bool]) -> Value {
        let versions: Vec<Value> = storage
            .iter()
            .enumerate()
            .map(|(i, s)| {
                json!({"name": format!("v{}", i + 1), "served": true, "storage": s,
                "schema": {"openAPIV3Schema": {"type": "object"}}})
            })
            .collect();
        let mut crd = json!({"metadata": {"name": name}, "spec": {"group": "h4probe.example.com",
            "names": {"plural": "gadgets", "kind": "Gadget"}, "scope": scope, "versions": versions}});
        crate::crd::initial_status(&mut crd);
        crd
    }

    #[test]
    fn definitions_are_validated_like_the_apiserver() {
        assert!(
            validate_definition(&definition("gadgets.h4probe.example.com", "Namespaced", &[true])).is_empty()
        );
        let errors: Vec<String> =
            validate_definition(&definition("wrong.h4probe.example.com", "Namespaced", &[true]))
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(
            errors,
            [
                "metadata.name: Invalid value: \"wrong.h4probe.example.com\": must be spec.names.plural+\".\"+spec.group"
            ]
        );
        // Recorded: scope "Global" and two storage versions.
        let errors: Vec<String> = validate_definition(&definition(
            "gadgets.h4probe.example.com",
            "Global",
            &[true, true],
        ))
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            errors.join(", "),
            "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\", \
             spec.versions: Invalid value: [{\"Name\":\"v1\",\"Served\":true,\"Storage\":true,\"Deprecated\":false,\"DeprecationWarning\":null,\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null},{\"Name\":\"v2\",\"Served\":true,\"Storage\":true,\"Deprecated\":false,\"DeprecationWarning\":null,\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null}]: must have exactly one version marked as storage version, \
             status.storedVersions: Invalid value: [\"v1\"]: must have the storage version v2"
        );
        let errors: Vec<String> =
            validate_definition(&definition("gadgets.h4probe.example.com", "Cluster", &[false]))
                .iter()
                .map(ToString::to_string)
                .collect();
        assert_eq!(
            errors[1],
            "status.storedVersions: Invalid value: null: must have at least one stored version"
        );
    }
}
