//! The live object as `kubernetes_manifest` sees it: projected onto the manifest's shape (so
//! server defaults never show), with `computed_fields` paths taken out of the comparison.

use kube_estate::ESTATE_LABEL;
use plugin_runtime::Value;
use regex::Regex;
use serde_json::Value as Json;

use super::{secret, typed};
use crate::openapi::Node;

/// The live object through the manifest's shape: the keys the manifest sets, recursively;
/// array elements beyond the manifest's come whole, so added elements show.
pub(super) fn project(live: &Json, shape: &Json) -> Json {
    match (shape, live) {
        (Json::Object(s), Json::Object(l)) => Json::Object(
            s.iter()
                .filter_map(|(k, sv)| l.get(k).map(|lv| (k.clone(), project(lv, sv))))
                .collect(),
        ),
        (Json::Array(s), Json::Array(l)) => Json::Array(
            l.iter()
                .enumerate()
                .map(|(i, lv)| s.get(i).map(|sv| project(lv, sv)).unwrap_or(lv.clone()))
                .collect(),
        ),
        _ => live.clone(),
    }
}

/// One step of a `computed_fields` path (`spec.replicas`, `metadata.annotations["a/b"]`, `x[0]`).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

pub(super) fn parse_path(path: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let re = Regex::new(r#"([^.\[\]]+)|\["([^"]*)"\]|\[(\d+)\]"#).expect("static regex");
    for c in re.captures_iter(path) {
        if let Some(k) = c.get(1).or(c.get(2)) {
            steps.push(Step::Key(k.as_str().to_string()));
        } else if let Some(i) = c.get(3).and_then(|i| i.as_str().parse().ok()) {
            steps.push(Step::Index(i));
        }
    }
    steps
}

/// Removes the value at `path` (if present).
pub(super) fn remove_path(value: &mut Json, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = value;
    for step in parents {
        let next = match step {
            Step::Key(k) => at.get_mut(k.as_str()),
            Step::Index(i) => at.get_mut(*i),
        };
        let Some(next) = next else { return };
        at = next;
    }
    match (last, at) {
        (Step::Key(k), Json::Object(m)) => {
            m.remove(k);
        }
        (Step::Index(i), Json::Array(a)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// Whether the live object (through the manifest's shape) says what the manifest says,
/// leaving out `computed_fields`.
pub(super) fn matches(object: &Json, manifest: &Json, computed_fields: &[String]) -> bool {
    let (mut a, mut b) = (object.clone(), manifest.clone());
    for path in computed_fields {
        let steps = parse_path(path);
        remove_path(&mut a, &steps);
        remove_path(&mut b, &steps);
    }
    a == b
}

/// What a manifest value (or a live object) becomes in state as `object`: typed as `schema`
/// says (int-or-string values as text) when the kind has one.
pub(super) fn object_value(live: &Json, manifest: &Json, schema: Option<Node>) -> Value {
    let object = secret::redact(project(live, manifest), live, manifest);
    Value::from_json(&stated_by(&object, schema))
}

/// `value` as `object` holds it, when the kind's schema is known.
pub(super) fn stated_by(value: &Json, schema: Option<Node>) -> Json {
    schema.map_or_else(|| value.clone(), |node| typed::stated(value, node))
}

/// A live object as the manifest a user would write for it: no status, no server
/// bookkeeping, no estate label.
pub(crate) fn as_manifest(live: &Json) -> Json {
    let mut m = live.clone();
    if let Some(map) = m.as_object_mut() {
        map.remove("status");
    }
    if let Some(meta) = m.get_mut("metadata").and_then(Json::as_object_mut) {
        for key in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(key);
        }
        if let Some(labels) = meta.get_mut("labels").and_then(Json::as_object_mut) {
            labels.remove(ESTATE_LABEL);
            if labels.is_empty() {
                meta.remove("labels");
            }
        }
    }
    m
}
