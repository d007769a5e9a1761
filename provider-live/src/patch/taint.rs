//! `kubernetes_node_taint`: taints on an existing Node.
//!
//! A Node's `spec.taints` is an atomic list: server-side apply gives it to one manager at a
//! time and replaces it whole. So every write carries the taints other writers put there
//! (the node lifecycle controller's `not-ready`, another resource's) beside this resource's
//! own, and a destroy applies only those others: this resource's taints go, theirs stay. The
//! list stays with this resource's manager while it holds others' taints; a taint is this
//! resource's by its key (keys are unique per resource, as hashicorp requires).

use std::collections::BTreeSet;

use plugin_runtime::{AttributePath, Block, Diagnostic, Diagnostics, Value};
use serde_json::{Map, Value as Json};

use super::{FixedKind, MetaShape, PatchInfo, PatchKind, TargetKind, insert_at, json_at};
use crate::fields::{self, Field, Presence, Scalar, Shape};

static INFO: PatchInfo = PatchInfo {
    type_name: "kubernetes_node_taint",
    aliases: &[],
    description: "Taints on an existing Node. Only the taints set here are this resource's; the Node's other \
                  taints stay as they are.",
    target: TargetKind::Fixed(FixedKind {
        api_version: "v1",
        kind: "Node",
        plural: "nodes",
        namespaced: false,
    }),
    metadata: MetaShape::Name,
    manager_attributes: true,
    manages: "node-taint",
    identity: false,
};

const fn text(name: &'static str, doc: &'static str) -> Field {
    Field {
        name,
        json: name,
        shape: Shape::One(Scalar::Str),
        attribute: false,
        server_default: None,
        presence: Presence::Required,
        doc,
    }
}

static TAINT: [Field; 1] = [Field {
    name: "taint",
    json: "spec.taints",
    shape: Shape::Array(&[
        text(
            "effect",
            "The taint effect: NoSchedule, PreferNoSchedule or NoExecute.",
        ),
        text("key", "The taint key."),
        text("value", "The taint value."),
    ]),
    attribute: false,
    server_default: None,
    presence: Presence::Required,
    doc: "The taints to put on the node.",
}];

const TAINTS: &[&str] = &["spec", "taints"];

/// The keys of the taints a resource value sets.
fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .get("taint")
        .elements()
        .iter()
        .filter_map(|t| t.get("key").as_str())
        .collect()
}

pub struct NodeTaint;

impl PatchKind for NodeTaint {
    fn info(&self) -> &'static PatchInfo {
        &INFO
    }

    fn block(&self) -> Block {
        fields::block(&TAINT, INFO.description)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut seen = BTreeSet::new();
        let mut out = Diagnostics::new();
        for (i, taint) in config.get("taint").elements().iter().enumerate() {
            if let Some(key) = taint.get("key").as_str()
                && !seen.insert(key)
            {
                out.push(
                    Diagnostic::error(
                        "Duplicate taint key",
                        format!("taint key {key:?} is set twice: taint keys must be unique."),
                    )
                    .at(AttributePath::root("taint").index(i as i64).attribute("key")),
                );
            }
        }
        out
    }

    fn intent(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        fields::write(&TAINT, value, &AttributePath::default())
    }

    fn read(&self, view: &Json, _live: &Json, prior: &Value) -> Value {
        fields::read(&TAINT, view, prior)
    }

    fn keep_others(&self, body: &mut Map<String, Json>, live: &Json, claimed: &[&Value]) {
        let ours: BTreeSet<&str> = claimed.iter().flat_map(|v| keys(v)).collect();
        let others: Vec<Json> = json_at(live, TAINTS)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter(|t| {
                t.get("key")
                    .and_then(Json::as_str)
                    .is_none_or(|k| !ours.contains(k))
            })
            .cloned()
            .collect();
        let mut taints = others;
        if let Some(Json::Array(mine)) = json_at(&Json::Object(body.clone()), TAINTS) {
            taints.extend(mine.iter().cloned());
        }
        if !taints.is_empty() {
            insert_at(body, TAINTS, Json::Array(taints));
        }
    }

    fn id(&self, value: &Value) -> Option<String> {
        let mut id = super::meta(value).get("name").as_str()?.to_string();
        for taint in value.get("taint").elements() {
            let field = |name| taint.get(name).as_str();
            id.push_str(&format!(
                ",{}={}:{}",
                field("key")?,
                field("value")?,
                field("effect")?
            ));
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn taint(key: &str, value: &str) -> Value {
        Value::object([
            ("key", Value::string(key)),
            ("value", Value::string(value)),
            ("effect", Value::string("NoSchedule")),
        ])
    }

    #[test]
    fn writes_keep_the_taints_of_others_and_a_release_only_theirs() {
        let live = json!({"spec": {"taints": [
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
            {"key": "old", "value": "1", "effect": "NoSchedule"}
        ]}});
        let prior = Value::object([("taint", Value::List(vec![taint("old", "1")]))]);
        let planned = Value::object([("taint", Value::List(vec![taint("new", "2")]))]);
        let mut body = NodeTaint.intent(&planned).unwrap();
        NodeTaint.keep_others(&mut body, &live, &[&planned, &prior]);
        assert_eq!(
            Json::Object(body),
            json!({"spec": {"taints": [
                {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                {"key": "new", "value": "2", "effect": "NoSchedule"}
            ]}})
        );
        let mut release = Map::new();
        NodeTaint.keep_others(&mut release, &live, &[&prior]);
        assert_eq!(
            Json::Object(release),
            json!({"spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}})
        );
        let mut nothing_left = Map::new();
        let only_ours = json!({"spec": {"taints": [{"key": "old", "value": "1", "effect": "NoSchedule"}]}});
        NodeTaint.keep_others(&mut nothing_left, &only_ours, &[&prior]);
        assert!(nothing_left.is_empty());
    }

    #[test]
    fn duplicate_keys_and_ids_follow_hashicorp() {
        let config = Value::object([("taint", Value::List(vec![taint("a", "1"), taint("a", "2")]))]);
        let d = NodeTaint.validate(&config);
        assert_eq!(d.0[0].attribute.as_ref().unwrap().to_string(), "taint[1].key");
        let value = Value::object([
            (
                "metadata",
                Value::List(vec![Value::object([("name", Value::string("n1"))])]),
            ),
            ("taint", Value::List(vec![taint("a", "1")])),
        ]);
        assert_eq!(NodeTaint.id(&value).as_deref(), Some("n1,a=1:NoSchedule"));
    }
}
