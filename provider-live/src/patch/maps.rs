//! The patch-style types that claim keys of string maps: `kubernetes_labels`,
//! `kubernetes_annotations` (also on a workload's pod template), `kubernetes_config_map_v1_data`
//! and `kubernetes_secret_v1_data` (plain text in configuration and state, base64 in the
//! Secret, sensitive). Each is a table of [`MapAttribute`]s.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use plugin_runtime::{Attribute, AttributePath, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use super::{
    FixedKind, MetaShape, PatchInfo, PatchKind, TargetKind, forbid_estate_label, insert_at, json_at,
    pod_template,
};

/// Where a map lives in the object.
#[derive(Clone, Copy)]
pub enum Place {
    /// At this path of the object.
    Object(&'static [&'static str]),
    /// At this path of the pod template of the target's workload kind.
    Template(&'static [&'static str]),
}

/// One map attribute and the object map it claims keys of.
pub struct MapAttribute {
    pub name: &'static str,
    pub place: Place,
    pub required: bool,
    /// Plain text here, base64 in the object (a Secret's `data`); also sensitive.
    pub base64: bool,
    pub doc: &'static str,
}

/// A patch-style type made of map attributes.
pub struct MapPatch {
    pub info: PatchInfo,
    pub maps: &'static [MapAttribute],
}

pub static LABELS: MapPatch = MapPatch {
    info: PatchInfo {
        type_name: "kubernetes_labels",
        aliases: &[],
        description: "Labels on an existing object that this configuration does not own (never the estate \
                      label). Only the labels set here are claimed, under their own field manager.",
        target: TargetKind::Configured,
        metadata: MetaShape::NameNamespace,
        manager_attributes: true,
        manages: "labels",
        identity: false,
    },
    maps: &[MapAttribute {
        name: "labels",
        place: Place::Object(&["metadata", "labels"]),
        required: true,
        base64: false,
        doc: "A map of labels to apply to the object.",
    }],
};

pub static ANNOTATIONS: MapPatch = MapPatch {
    info: PatchInfo {
        type_name: "kubernetes_annotations",
        aliases: &[],
        description: "Annotations on an existing object that this configuration does not own, or on its pod \
                      template. Only the annotations set here are claimed, under their own field manager.",
        target: TargetKind::Configured,
        metadata: MetaShape::NameNamespace,
        manager_attributes: true,
        manages: "annotations",
        identity: false,
    },
    maps: &[
        MapAttribute {
            name: "annotations",
            place: Place::Object(&["metadata", "annotations"]),
            required: false,
            base64: false,
            doc: "A map of annotations to apply to the object.",
        },
        MapAttribute {
            name: "template_annotations",
            place: Place::Template(&["metadata", "annotations"]),
            required: false,
            base64: false,
            doc: "A map of annotations to apply to the pod template of a workload (Deployment, CronJob, ...).",
        },
    ],
};

pub static CONFIG_MAP_DATA: MapPatch = MapPatch {
    info: PatchInfo {
        type_name: "kubernetes_config_map_v1_data",
        aliases: &[],
        description: "Keys of the data of an existing ConfigMap that this configuration does not own. Only the \
                      keys set here are claimed, under their own field manager.",
        target: TargetKind::Fixed(FixedKind {
            api_version: "v1",
            kind: "ConfigMap",
            plural: "configmaps",
            namespaced: true,
        }),
        metadata: MetaShape::NameDefaultNamespace,
        manager_attributes: true,
        manages: "config-map-data",
        identity: false,
    },
    maps: &[MapAttribute {
        name: "data",
        place: Place::Object(&["data"]),
        required: true,
        base64: false,
        doc: "The data to set in the ConfigMap.",
    }],
};

pub static SECRET_DATA: MapPatch = MapPatch {
    info: PatchInfo {
        type_name: "kubernetes_secret_v1_data",
        aliases: &[],
        description: "Keys of the data of an existing Secret that this configuration does not own. Only the keys \
                      set here are claimed, under their own field manager.",
        target: TargetKind::Fixed(FixedKind {
            api_version: "v1",
            kind: "Secret",
            plural: "secrets",
            namespaced: true,
        }),
        metadata: MetaShape::NameDefaultNamespace,
        manager_attributes: true,
        manages: "secret-data",
        identity: false,
    },
    maps: &[MapAttribute {
        name: "data",
        place: Place::Object(&["data"]),
        required: true,
        base64: true,
        doc: "The data to set in the Secret, as plain text (stored base64-encoded).",
    }],
};

impl MapPatch {
    /// The object path of a map, for a resource value (whose `kind` names the workload for
    /// pod-template maps). An error names the attribute when the kind has no pod template.
    fn path(&self, map: &MapAttribute, value: &Value) -> Result<Vec<&'static str>, Diagnostic> {
        match map.place {
            Place::Object(path) => Ok(path.to_vec()),
            Place::Template(path) => {
                let kind = value.get("kind").as_str().unwrap_or_default();
                let template = pod_template(kind).ok_or_else(|| {
                    Diagnostic::error(
                        "No pod template",
                        format!(
                            "Kind {kind:?} has no pod template: {} applies to workloads only.",
                            map.name
                        ),
                    )
                    .at(AttributePath::root(map.name))
                })?;
                Ok(template.iter().chain(path).copied().collect())
            }
        }
    }
}

impl PatchKind for &'static MapPatch {
    fn info(&self) -> &'static PatchInfo {
        &self.info
    }

    fn block(&self) -> Block {
        let mut block = Block::new(self.info.description);
        if matches!(self.info.target, TargetKind::Configured) {
            block = block
                .attribute(Attribute::required(
                    "api_version",
                    Type::String,
                    "The apiVersion of the object.",
                ))
                .attribute(Attribute::required(
                    "kind",
                    Type::String,
                    "The kind of the object.",
                ));
        }
        for map in self.maps {
            let ty = Type::map(Type::String);
            let attribute = if map.required {
                Attribute::required(map.name, ty, map.doc)
            } else {
                Attribute::optional(map.name, ty, map.doc)
            };
            block = block.attribute(if map.base64 {
                attribute.sensitive()
            } else {
                attribute
            });
        }
        block
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = Diagnostics::new();
        if self
            .maps
            .iter()
            .all(|m| !m.required && config.get(m.name).is_null())
        {
            let names: Vec<&str> = self.maps.iter().map(|m| m.name).collect();
            out.push(Diagnostic::error(
                "Nothing to set",
                format!("Set at least one of {}.", names.join(", ")),
            ));
        }
        for map in self
            .maps
            .iter()
            .filter(|m| matches!(m.place, Place::Object(["metadata", "labels"])))
        {
            out.extend(forbid_estate_label(
                config.get(map.name),
                AttributePath::root(map.name),
            ));
        }
        out
    }

    fn intent(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut out = Map::new();
        for map in self.maps {
            let Some(entries) = value.get(map.name).entries().filter(|e| !e.is_empty()) else {
                continue;
            };
            let path = self.path(map, value).map_err(Diagnostics::from)?;
            let object: Map<String, Json> = entries
                .iter()
                .filter_map(|(k, v)| {
                    let text = v.as_str()?;
                    let text = if map.base64 {
                        STANDARD.encode(text)
                    } else {
                        text.to_string()
                    };
                    Some((k.clone(), Json::from(text)))
                })
                .collect();
            insert_at(&mut out, &path, Json::Object(object));
        }
        Ok(out)
    }

    fn read(&self, view: &Json, _live: &Json, prior: &Value) -> Value {
        let mut out = Value::object(Vec::<(String, Value)>::new());
        for map in self.maps {
            if prior.get(map.name).is_null() {
                out.set(map.name, Value::Null);
                continue;
            }
            let found = self
                .path(map, prior)
                .ok()
                .and_then(|path| json_at(view, &path).and_then(Json::as_object).cloned())
                .unwrap_or_default();
            let decode = |v: &Json| {
                let text = v.as_str()?;
                if map.base64 {
                    String::from_utf8(STANDARD.decode(text).ok()?).ok()
                } else {
                    Some(text.to_string())
                }
            };
            out.set(
                map.name,
                Value::string_map(found.iter().filter_map(|(k, v)| Some((k.clone(), decode(v)?)))),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_data_is_base64_in_the_object_and_plain_in_state() {
        let value = Value::object([("data", Value::string_map([("password", "s3cret")]))]);
        let intent = (&SECRET_DATA).intent(&value).unwrap();
        assert_eq!(Json::Object(intent), json!({"data": {"password": "czNjcmV0"}}));
        let view = json!({"data": {"password": "czNjcmV0"}});
        assert_eq!(
            (&SECRET_DATA).read(&view, &view, &value).get("data"),
            value.get("data")
        );
        assert!((&SECRET_DATA).block().find_attribute("data").unwrap().sensitive);
    }

    #[test]
    fn template_annotations_go_to_the_workloads_pod_template() {
        let value = Value::object([
            ("kind", Value::string("CronJob")),
            ("annotations", Value::Null),
            ("template_annotations", Value::string_map([("a", "1")])),
        ]);
        let intent = (&ANNOTATIONS).intent(&value).unwrap();
        assert_eq!(
            Json::Object(intent),
            json!({"spec": {"jobTemplate": {"spec": {"template": {"metadata": {"annotations": {"a": "1"}}}}}}})
        );
        let namespace = Value::object([
            ("kind", Value::string("Namespace")),
            ("template_annotations", Value::string_map([("a", "1")])),
        ]);
        let err = (&ANNOTATIONS).intent(&namespace).unwrap_err();
        assert_eq!(
            err.0[0].attribute.as_ref().unwrap().to_string(),
            "template_annotations"
        );
    }

    #[test]
    fn labels_refuse_the_estate_label_and_read_only_prior_keys() {
        let config = Value::object([("labels", Value::string_map([("tofu-estate", "b")]))]);
        let d = (&LABELS).validate(&config);
        assert_eq!(
            d.0[0].attribute.as_ref().unwrap().to_string(),
            "labels[\"tofu-estate\"]"
        );
        // The view holds only the prior's keys (see `field_set`); a key gone from it is gone.
        let prior = Value::object([("labels", Value::string_map([("team", "a"), ("gone", "x")]))]);
        let view = json!({"metadata": {"labels": {"team": "b"}}});
        assert_eq!(
            (&LABELS).read(&view, &view, &prior).get("labels"),
            &Value::string_map([("team", "b")])
        );
    }
}
