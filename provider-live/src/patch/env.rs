//! `kubernetes_env`: environment variables of one container (or init container) of a
//! workload. The variables are list items keyed by name inside a list of containers keyed by
//! name, so server-side apply claims exactly these variables (and shares the container item
//! with its owner). The `env` block is the catalog's, as in `kubernetes_deployment`.

use std::sync::OnceLock;

use plugin_runtime::{Attribute, AttributePath, Block, Diagnostic, Diagnostics, Type, Value};
use serde_json::{Map, Value as Json};

use super::{MetaShape, PatchInfo, PatchKind, TargetKind, insert_at, json_at, pod_template};
use crate::catalog;
use crate::fields::{self, Field, Presence, Shape};

static INFO: PatchInfo = PatchInfo {
    type_name: "kubernetes_env",
    aliases: &[],
    description: "Environment variables of a container of an existing workload that this configuration does \
                  not own. Only the variables set here are claimed, under their own field manager.",
    target: TargetKind::Configured,
    metadata: MetaShape::NameNamespace,
    manager_attributes: true,
    manages: "env",
    identity: false,
};

/// The workload kinds whose containers this edits (hashicorp's list, plus Job), by the
/// lowercase name hashicorp also accepts.
const KINDS: [&str; 8] = [
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Job",
    "Pod",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
];

/// The `env` field: the catalog's container `env`, required here.
fn env_field() -> &'static [Field] {
    static FIELD: OnceLock<[Field; 1]> = OnceLock::new();
    FIELD.get_or_init(|| {
        let container_env = catalog::entry("kubernetes_deployment_v1")
            .and_then(|e| find(e.fields(), &["spec", "template", "spec", "container", "env"]))
            .expect("the catalog has kubernetes_deployment_v1's container env");
        [Field {
            presence: Presence::Required,
            doc: "List of environment variables to set in the container.",
            ..*container_env
        }]
    })
}

/// The field at a path of attribute names in a field table.
fn find<'a>(fields: &'a [Field], path: &[&str]) -> Option<&'a Field> {
    let (first, rest) = path.split_first()?;
    let field = fields.iter().find(|f| f.name == *first)?;
    if rest.is_empty() {
        return Some(field);
    }
    match field.shape {
        Shape::Object(sub) | Shape::Array(sub) | Shape::Single(sub) | Shape::ArraySet(sub) => find(sub, rest),
        _ => None,
    }
}

/// The kind as the API spells it (`deployment` is `Deployment`).
fn canonical_kind(kind: &str) -> Option<&'static str> {
    KINDS.iter().find(|k| k.eq_ignore_ascii_case(kind)).copied()
}

/// The container's list (`containers` or `initContainers`) and name.
fn container(value: &Value) -> Option<(&'static str, &str)> {
    match (
        value.get("container").as_str(),
        value.get("init_container").as_str(),
    ) {
        (Some(name), _) => Some(("containers", name)),
        (None, Some(name)) => Some(("initContainers", name)),
        _ => None,
    }
}

/// The path of the container list in the workload, and the container's name.
fn containers_path(value: &Value) -> Option<(Vec<&'static str>, &str)> {
    let kind = canonical_kind(value.get("kind").as_str()?)?;
    let (list, name) = container(value)?;
    let mut path = pod_template(kind)?.to_vec();
    path.extend(["spec", list]);
    Some((path, name))
}

pub struct Env;

impl PatchKind for Env {
    fn info(&self) -> &'static PatchInfo {
        &INFO
    }

    fn block(&self) -> Block {
        let mut block = fields::block(env_field(), INFO.description);
        let mut attributes = vec![
            Attribute::required("api_version", Type::String, "The apiVersion of the workload."),
            Attribute::required(
                "kind",
                Type::String,
                "The kind of the workload: Deployment, StatefulSet, DaemonSet, ReplicaSet, \
                 ReplicationController, Job, CronJob or Pod.",
            ),
            Attribute::optional(
                "container",
                Type::String,
                "The name of the container to set variables in.",
            ),
            Attribute::optional(
                "init_container",
                Type::String,
                "The name of the init container to set variables in.",
            ),
        ];
        attributes.append(&mut block.attributes);
        block.attributes = attributes;
        block
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = Diagnostics::new();
        if let Some(kind) = config.get("kind").as_str()
            && canonical_kind(kind).is_none()
        {
            out.push(
                Diagnostic::error(
                    "Not a workload kind",
                    format!(
                        "kind {kind:?} has no containers: use one of {}.",
                        KINDS.join(", ")
                    ),
                )
                .at(AttributePath::root("kind")),
            );
        }
        let (c, i) = (config.get("container"), config.get("init_container"));
        if !c.is_unknown() && !i.is_unknown() && c.is_null() == i.is_null() {
            out.push(
                Diagnostic::error(
                    "Name one container",
                    "Set exactly one of container and init_container.",
                )
                .at(AttributePath::root("container")),
            );
        }
        out
    }

    fn target_kind(&self, value: &Value) -> Option<(String, String)> {
        let kind = value.get("kind").as_str()?;
        Some((
            value.get("api_version").as_str()?.to_string(),
            canonical_kind(kind).unwrap_or(kind).to_string(),
        ))
    }

    fn intent(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let Some((path, name)) = containers_path(value) else {
            return Ok(Map::new());
        };
        let mut item = fields::write(env_field(), value, &AttributePath::default())?;
        item.insert("name".into(), Json::from(name));
        let mut out = Map::new();
        insert_at(&mut out, &path, Json::Array(vec![Json::Object(item)]));
        Ok(out)
    }

    fn read(&self, view: &Json, _live: &Json, prior: &Value) -> Value {
        let item = containers_path(prior).and_then(|(path, name)| {
            json_at(view, &path)?
                .as_array()?
                .iter()
                .find(|c| c.get("name").and_then(Json::as_str) == Some(name))
                .cloned()
        });
        let item = item.unwrap_or_else(|| Json::Object(Map::new()));
        fields::read(env_field(), &item, prior)
    }

    fn check(&self, live: &Json, value: &Value) -> Result<(), Diagnostic> {
        let Some((path, name)) = containers_path(value) else {
            return Ok(());
        };
        let found = json_at(live, &path)
            .and_then(Json::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|c| c.get("name").and_then(Json::as_str) == Some(name))
            });
        if found {
            return Ok(());
        }
        let attribute = if value.get("container").is_null() {
            "init_container"
        } else {
            "container"
        };
        let object = live
            .pointer("/metadata/name")
            .and_then(Json::as_str)
            .unwrap_or_default();
        Err(Diagnostic::error(
            "No such container",
            format!(
                "{} {object:?} has no {} named {name:?}: kubernetes_env sets variables of an existing \
                 container only.",
                live.get("kind").and_then(Json::as_str).unwrap_or_default(),
                path.last().copied().unwrap_or_default(),
            ),
        )
        .at(AttributePath::root(attribute)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(kind: &str) -> Value {
        Value::object([
            ("kind", Value::string(kind)),
            ("api_version", Value::string("apps/v1")),
            ("container", Value::string("web")),
            ("init_container", Value::Null),
            (
                "env",
                Value::List(vec![Value::object([
                    ("name", Value::string("LOG")),
                    ("value", Value::string("debug")),
                    ("value_from", Value::List(vec![])),
                ])]),
            ),
        ])
    }

    #[test]
    fn variables_go_into_the_named_container_of_the_pod_template() {
        let intent = Env.intent(&value("deployment")).unwrap();
        assert_eq!(
            Json::Object(intent),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "env": [{"name": "LOG", "value": "debug"}]}
            ]}}}})
        );
        let cron = Env.intent(&value("CronJob")).unwrap();
        assert!(cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"].is_array());
        assert_eq!(
            Env.target_kind(&value("deployment")),
            Some(("apps/v1".into(), "Deployment".into()))
        );
    }

    #[test]
    fn a_missing_container_is_an_error_at_its_attribute() {
        let live = json!({"kind": "Deployment", "metadata": {"name": "app"},
            "spec": {"template": {"spec": {"containers": [{"name": "other"}]}}}});
        let err = Env.check(&live, &value("Deployment")).unwrap_err();
        assert_eq!(err.attribute.unwrap().to_string(), "container");
        assert!(
            err.detail.contains("no containers named \"web\""),
            "{}",
            err.detail
        );
    }

    #[test]
    fn reads_back_the_variables_of_the_container() {
        let prior = value("Deployment");
        let view = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "env": [{"name": "LOG", "value": "info"}]}
        ]}}}});
        let got = Env.read(&view, &view, &prior);
        assert_eq!(got.get("env").elements()[0].get("value"), &Value::string("info"));
    }

    #[test]
    fn the_schema_has_hashicorps_attributes() {
        let block = Env.block();
        assert!(block.find_attribute("init_container").is_some());
        assert_eq!(block.find_block("env").unwrap().min_items, 1);
    }
}
