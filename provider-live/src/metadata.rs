//! The hashicorp `metadata` block: its schema, the object metadata written from it (always
//! stamped with the estate label), and the block read back from a live object.
//!
//! State keeps only the labels and annotations the user manages: on refresh, the keys the
//! prior state holds (so a changed or removed configured key shows as drift) and nothing
//! else; on import, every key except the estate label, keys matching the provider's
//! `ignore_labels` / `ignore_annotations`, and keys in Kubernetes' own domains.

use plugin_runtime::{Attribute, AttributePath, Block, NestedBlock, Nesting, Type, Value};
use regex::Regex;
use serde_json::{Map, Value as Json};

use crate::kind::KindInfo;

const ESTATE_LABEL: &str = kube_estate::ESTATE_LABEL;

/// Label and annotation keys the provider never shows (`ignore_labels`, `ignore_annotations`).
#[derive(Clone, Debug, Default)]
pub struct Ignore {
    pub labels: Vec<Regex>,
    pub annotations: Vec<Regex>,
}

/// The `metadata` block, shaped as the type has it ([`MetadataShape`]): a block of exactly
/// one (most types) or a nested attribute, with `namespace` where the type has one.
pub fn add_to(block: &mut Block, info: &KindInfo) {
    let shape = info.metadata;
    let what = info.kind.to_lowercase();
    let server = |name: &str, ty: Type, doc: &str| {
        if shape.server_fields_optional {
            Attribute::optional_computed(name, ty, doc)
        } else {
            Attribute::computed(name, ty, doc)
        }
    };
    let mut attributes = vec![
        Attribute::optional(
            "annotations",
            Type::map(Type::String),
            &format!(
                "An unstructured key value map stored with the {what} that may be used to store arbitrary metadata."
            ),
        ),
        Attribute::optional(
            "generate_name",
            Type::String,
            "Prefix, used by the server, to generate a unique name ONLY IF the `name` field has not been provided.",
        ),
        Attribute::optional(
            "labels",
            Type::map(Type::String),
            &format!(
                "Map of string keys and values that can be used to organize and categorize the {what}. \
                 The estate label `tofu-estate` is added by the provider and never shown here."
            ),
        ),
        Attribute::optional_computed(
            "name",
            Type::String,
            &format!("Name of the {what}, must be unique. Cannot be updated."),
        ),
        server(
            "generation",
            Type::Number,
            "A sequence number representing a specific generation of the desired state.",
        ),
        server(
            "resource_version",
            Type::String,
            &format!("An opaque value that represents the internal version of this {what}."),
        ),
        server(
            "uid",
            Type::String,
            &format!("The unique in time and space value for this {what}."),
        ),
    ];
    if shape.namespace {
        attributes.push(Attribute::optional_computed(
            "namespace",
            Type::String,
            &format!("Namespace defines the space within which name of the {what} must be unique. Default `default`."),
        ));
    }
    let description = format!("Standard {what}'s metadata.");
    if shape.attribute {
        let attribute = if shape.required {
            Attribute::required("metadata", Type::Dynamic, &description)
        } else {
            Attribute::optional("metadata", Type::Dynamic, &description)
        };
        block
            .attributes
            .insert(0, attribute.nested(Nesting::Single, attributes));
    } else {
        let inner = attributes
            .into_iter()
            .fold(Block::new(description), Block::attribute);
        let nested = if shape.required {
            NestedBlock::exactly_one("metadata", inner)
        } else {
            NestedBlock::at_most_one("metadata", inner)
        };
        block.blocks.insert(0, nested);
    }
}

/// The metadata element of a resource value: the single element of a `metadata` block, or
/// the `metadata` attribute (`Null` when absent).
pub fn of(resource: &Value) -> &Value {
    match resource.get("metadata") {
        v @ Value::Object(_) => v,
        v => v.elements().first().unwrap_or(&Value::Null),
    }
}

/// The metadata element of a resource value, to change it.
pub fn of_mut(resource: &mut Value) -> Option<&mut Value> {
    match resource.get_mut("metadata")? {
        Value::List(items) => items.first_mut(),
        v @ Value::Object(_) => Some(v),
        _ => None,
    }
}

/// A metadata element as the resource holds it.
pub fn wrap(info: &KindInfo, meta: Value) -> Value {
    if info.metadata.attribute {
        meta
    } else {
        Value::List(vec![meta])
    }
}

/// The path of a metadata field in `resource` (`metadata[0].name` or `metadata.name`).
pub fn path_of(resource: &Value, field: &str) -> AttributePath {
    match resource.get("metadata") {
        Value::Object(_) => AttributePath::root("metadata").attribute(field),
        _ => AttributePath::root("metadata").index(0).attribute(field),
    }
}

/// The object metadata to write: name (or generateName), namespace, the user's labels plus
/// the estate label, the user's annotations. `metadata` must be wholly known.
pub fn to_json(metadata: &Value, estate: &str) -> Map<String, Json> {
    let mut out = Map::new();
    if let Some(name) = metadata.get("name").as_str() {
        out.insert("name".into(), Json::from(name));
    } else if let Some(prefix) = metadata.get("generate_name").as_str() {
        out.insert("generateName".into(), Json::from(prefix));
    }
    if let Some(ns) = metadata.get("namespace").as_str() {
        out.insert("namespace".into(), Json::from(ns));
    }
    let mut labels = string_map(metadata.get("labels"));
    labels.insert(ESTATE_LABEL.into(), Json::from(estate));
    out.insert("labels".into(), Json::Object(labels));
    let annotations = string_map(metadata.get("annotations"));
    if !annotations.is_empty() {
        out.insert("annotations".into(), Json::Object(annotations));
    }
    out
}

fn string_map(value: &Value) -> Map<String, Json> {
    value
        .entries()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), Json::from(s))))
        .collect()
}

/// The estate label's value on a live object, if any.
pub fn estate_of(object: &Json) -> Option<&str> {
    object.pointer("/metadata/labels")?.get(ESTATE_LABEL)?.as_str()
}

/// The `metadata` block element read back from a live object. `prior` is the prior element
/// (`Null` on import).
pub fn from_json(object: &Json, prior: &Value, namespaced: bool, ignore: &Ignore) -> Value {
    let meta = object.get("metadata").unwrap_or(&Json::Null);
    let text = |key: &str| Value::from(meta.get(key).and_then(Json::as_str).map(str::to_string));
    let mut out = Value::object([
        ("name", text("name")),
        (
            "generate_name",
            if prior.is_null() {
                text("generateName")
            } else {
                prior.get("generate_name").clone()
            },
        ),
        (
            "labels",
            kept(meta.get("labels"), prior, "labels", &ignore.labels),
        ),
        (
            "annotations",
            kept(meta.get("annotations"), prior, "annotations", &ignore.annotations),
        ),
        ("uid", text("uid")),
        ("resource_version", text("resourceVersion")),
        // Kinds without a generation (ConfigMaps, Secrets) read 0, as hashicorp's state has it.
        (
            "generation",
            Value::int(meta.get("generation").and_then(Json::as_i64).unwrap_or(0)),
        ),
    ]);
    if namespaced {
        out.set("namespace", text("namespace"));
    }
    out
}

/// The label or annotation map (`attribute`) state shows. On refresh (a prior metadata
/// element): the prior's keys with their live values, so a key gone from the object is gone
/// from state, and null stays null. On import (`prior` null): every key a user could have
/// written.
fn kept(live: Option<&Json>, prior: &Value, attribute: &str, ignore: &[Regex]) -> Value {
    let live = live.and_then(Json::as_object);
    let value_of = |k: &str| live.and_then(|m| m.get(k)).and_then(Json::as_str);
    match prior.get(attribute) {
        Value::Map(prior) => Value::string_map(
            prior
                .keys()
                .filter(|k| k.as_str() != ESTATE_LABEL)
                .filter_map(|k| value_of(k).map(|v| (k.clone(), v.to_string()))),
        ),
        _ if !prior.is_null() => Value::Null,
        _ if !live.is_some_and(|m| m.keys().any(|k| user_key(k, ignore))) => Value::Null,
        _ => Value::string_map(
            live.into_iter()
                .flatten()
                .filter(|(k, _)| user_key(k, ignore))
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))),
        ),
    }
}

/// Keys Kubernetes and its tools write onto objects themselves (a `prefix/` matches every key
/// under it): on import they are not the user's. Other keys in Kubernetes' domains
/// (`app.kubernetes.io/name`, `kubernetes.io/service-name` on an endpoint slice) are written
/// by users and stay.
const SERVER_KEYS: &[&str] = &[
    "kubernetes.io/metadata.name",
    "kubernetes.io/service-account.uid",
    "kubectl.kubernetes.io/last-applied-configuration",
    "kubectl.kubernetes.io/restartedAt",
    "deployment.kubernetes.io/",
    "batch.kubernetes.io/",
    "statefulset.kubernetes.io/",
    "apps.kubernetes.io/",
    "pv.kubernetes.io/",
    "volume.kubernetes.io/",
    "volume.beta.kubernetes.io/",
    "control-plane.alpha.kubernetes.io/",
    "endpoints.kubernetes.io/",
    "autoscaling.alpha.kubernetes.io/",
    "controller-uid",
    "job-name",
    "pod-template-hash",
    "pod-template-generation",
    "controller-revision-hash",
    "deprecated.daemonset.template.generation",
];

/// A label or annotation key Kubernetes writes itself ([`SERVER_KEYS`]): an HPA's
/// `autoscaling.alpha.kubernetes.io/conditions`, a Deployment's revision.
pub fn server_key(key: &str) -> bool {
    SERVER_KEYS.iter().any(|k| match k.strip_suffix('/') {
        Some(prefix) => key.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/')),
        None => key == *k,
    })
}

/// Whether a key found on an object belongs to the user: not the estate label nor a create's
/// token ([`crate::create::TOKEN_LABEL`]), not ignored by the provider block, not one
/// Kubernetes writes itself ([`server_key`]).
pub fn user_key(key: &str, ignore: &[Regex]) -> bool {
    let server = server_key(key);
    key != ESTATE_LABEL
        && key != crate::create::TOKEN_LABEL
        && !server
        && !ignore.iter().any(|r| r.is_match(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live() -> Json {
        json!({"metadata": {
            "name": "app-config", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
            "labels": {"app": "web", "tofu-estate": "app", "kubernetes.io/metadata.name": "shop", "team": "x"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "now", "note": "hi"}
        }})
    }

    #[test]
    fn refresh_keeps_only_prior_keys_with_live_values() {
        let prior = Value::object([
            ("labels", Value::string_map([("app", "old"), ("gone", "x")])),
            ("annotations", Value::Null),
            ("generate_name", Value::Null),
        ]);
        let got = from_json(&live(), &prior, true, &Ignore::default());
        assert_eq!(got.get("labels"), &Value::string_map([("app", "web")]));
        assert_eq!(got.get("annotations"), &Value::Null);
        assert_eq!(got.get("namespace"), &Value::string("shop"));
        assert_eq!(got.get("resource_version"), &Value::string("7"));
        assert_eq!(
            got.get("generation"),
            &Value::int(0),
            "no generation reads 0, as hashicorp's"
        );
    }

    #[test]
    fn import_takes_user_keys_but_not_estate_server_or_ignored() {
        let ignore = Ignore {
            labels: vec![Regex::new("^team$").unwrap()],
            annotations: vec![],
        };
        let got = from_json(&live(), &Value::Null, false, &ignore);
        assert_eq!(got.get("labels"), &Value::string_map([("app", "web")]));
        assert_eq!(got.get("annotations"), &Value::string_map([("note", "hi")]));
        assert!(got.entries().unwrap().get("namespace").is_none());
    }

    #[test]
    fn import_without_user_keys_is_null() {
        let object = json!({"metadata": {"name": "n", "labels": {"tofu-estate": "app"}}});
        let got = from_json(&object, &Value::Null, false, &Ignore::default());
        assert_eq!(got.get("labels"), &Value::Null);
    }

    #[test]
    fn written_metadata_always_carries_the_estate_label() {
        let meta = Value::object([
            ("name", Value::string("a")),
            ("namespace", Value::string("shop")),
            ("labels", Value::string_map([("app", "web")])),
            ("annotations", Value::Null),
        ]);
        let got = Json::Object(to_json(&meta, "app"));
        assert_eq!(
            got,
            json!({"name": "a", "namespace": "shop", "labels": {"app": "web", "tofu-estate": "app"}})
        );
        assert_eq!(estate_of(&json!({"metadata": got})), Some("app"));
    }

    #[test]
    fn generate_name_is_used_only_without_a_name() {
        let meta = Value::object([("generate_name", Value::string("cfg-"))]);
        assert_eq!(to_json(&meta, "e").get("generateName"), Some(&json!("cfg-")));
    }
}
