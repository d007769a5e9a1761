//! `kubernetes_config_map`: a ConfigMap's `data`, `binary_data` and `immutable`.

use plugin_runtime::{Attribute, Block, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use super::{read_string_map, write_string_map};
use crate::kind::{Behaviour, Kind, KindInfo, MetadataShape};

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_config_map",
    aliases: &["kubernetes_config_map_v1"],
    api_version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    namespaced: true,
    description: "The resource provides mechanisms to inject containers with configuration data while \
                  keeping containers agnostic of Kubernetes. The config map carries the estate label \
                  `tofu-estate`.",
    metadata: MetadataShape::block(true),
};

pub struct ConfigMap;

impl Kind for ConfigMap {
    fn info(&self) -> &'static KindInfo {
        &INFO
    }

    fn block(&self) -> Block {
        Block::new(INFO.description)
            .attribute(Attribute::optional(
                "data",
                Type::map(Type::String),
                "Data contains the configuration data. Each key must consist of alphanumeric characters, \
                 '-', '_' or '.'.",
            ))
            .attribute(Attribute::optional(
                "binary_data",
                Type::map(Type::String),
                "BinaryData contains the binary data, each value base64-encoded.",
            ))
            .attribute(Attribute::optional(
                "immutable",
                Type::Bool,
                "Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated.",
            ))
    }

    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut out = Map::new();
        if let Some(data) = write_string_map(value.get("data")) {
            out.insert("data".into(), data);
        }
        if let Some(binary) = write_string_map(value.get("binary_data")) {
            out.insert("binaryData".into(), binary);
        }
        if let Some(immutable) = value.get("immutable").as_bool() {
            out.insert("immutable".into(), Json::Bool(immutable));
        }
        Ok(out)
    }

    fn from_object(&self, object: &Json, prior: &Value) -> Value {
        Value::object([
            ("data", read_string_map(object.get("data"), prior, "data")),
            (
                "binary_data",
                read_string_map(object.get("binaryData"), prior, "binary_data"),
            ),
            (
                "immutable",
                Value::from(object.get("immutable").and_then(Json::as_bool)),
            ),
        ])
    }
}

impl Behaviour for ConfigMap {
    fn replaced_after(&self, prior: &Value) -> Vec<plugin_runtime::AttributePath> {
        super::immutable_contents(prior)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_keeps_what_the_user_wrote() {
        let value = Value::object([
            ("data", Value::string_map([("k", "v")])),
            ("binary_data", Value::Null),
            ("immutable", Value::Null),
        ]);
        let object = ConfigMap.to_object(&value).unwrap();
        assert_eq!(Json::Object(object.clone()), json!({"data": {"k": "v"}}));
        assert_eq!(ConfigMap.from_object(&Json::Object(object), &value), value);
    }
}
