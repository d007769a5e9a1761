//! Defaulting of CustomResourceDefinitions (`SetDefaults_CustomResourceDefinition`), and the
//! Go field order the apiserver writes a definition in.

use serde_json::{Map, Value, json};

/// Go field order of the definition's structs, as the apiserver writes them.
const SPEC_ORDER: &[&str] = &[
    "group",
    "names",
    "scope",
    "versions",
    "conversion",
    "preserveUnknownFields",
];
const NAMES_ORDER: &[&str] = &[
    "plural",
    "singular",
    "shortNames",
    "kind",
    "listKind",
    "categories",
];
const VERSION_ORDER: &[&str] = &[
    "name",
    "served",
    "storage",
    "deprecated",
    "deprecationWarning",
    "schema",
    "subresources",
    "additionalPrinterColumns",
    "selectableFields",
];
/// JSONSchemaProps' field order.
const SCHEMA_ORDER: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Puts the keys of `map` in `order` (unknown keys after, as they came).
pub(crate) fn order_keys(map: &mut Map<String, Value>, order: &[&str]) {
    let mut out = Map::new();
    for key in order {
        if let Some(v) = map.shift_remove(*key) {
            out.insert((*key).to_string(), v);
        }
    }
    out.extend(std::mem::take(map));
    *map = out;
}

/// A schema node in Go order, its property names sorted (a Go map).
fn order_schema(node: &mut Value) {
    let Some(map) = node.as_object_mut() else { return };
    order_keys(map, SCHEMA_ORDER);
    for key in ["properties", "patternProperties", "definitions"] {
        if let Some(props) = map.get_mut(key).and_then(Value::as_object_mut) {
            props.sort_keys();
            props.values_mut().for_each(order_schema);
        }
    }
    for key in ["items", "additionalProperties", "not", "additionalItems"] {
        if let Some(v) = map.get_mut(key) {
            order_schema(v);
        }
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for v in map
            .get_mut(key)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            order_schema(v);
        }
    }
}

/// `SetDefaults_CustomResourceDefinition`, and the Go field order of what is written.
pub fn default_definition(obj: &mut Map<String, Value>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if !spec.get("conversion").is_some_and(Value::is_object) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if !kind.is_empty()
            && names
                .get("listKind")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
        order_keys(names, NAMES_ORDER);
    }
    for version in spec
        .get_mut("versions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(v) = version.as_object_mut() {
            order_keys(v, VERSION_ORDER);
            if let Some(schema) = v.get_mut("schema").and_then(|s| s.get_mut("openAPIV3Schema")) {
                order_schema(schema);
            }
        }
    }
    order_keys(spec, SPEC_ORDER);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_name_the_list_kind_and_conversion() {
        let mut crd = json!({"metadata": {"name": "gadgets.h4probe.example.com"}, "spec": {"group": "h4probe.example.com",
            "names": {"plural": "gadgets", "kind": "Gadget"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        default_definition(crd.as_object_mut().unwrap());
        assert_eq!(
            crd["spec"]["names"],
            json!({"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"})
        );
        assert_eq!(crd["spec"]["conversion"], json!({"strategy": "None"}));
        let keys: Vec<&String> = crd["spec"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["group", "names", "scope", "versions", "conversion"]);
    }
}
