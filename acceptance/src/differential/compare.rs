//! Values of the two sides brought to one form and compared leaf by leaf: the side's run tag
//! taken out of names, a plan's unknown values marked, nested values flattened to paths such as
//! `spec.0.template.0.metadata.0.labels.app`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// What a planned value shows where it is known only after apply.
pub const UNKNOWN: &str = "(known after apply)";

/// `value` with the names a side's run tag made unique (`corpus-<tag>-…`,
/// `<tag>.corpus.example.com`), map keys too, written back as both sides share them:
/// `corpus-RUN-…`.
pub fn untagged(value: &Value, tag: &str) -> Value {
    let text = |s: &str| {
        s.replace(&format!("corpus-{tag}-"), "corpus-RUN-")
            .replace(&format!("{tag}.corpus.example.com"), "RUN.corpus.example.com")
    };
    match value {
        Value::String(s) => Value::String(text(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| untagged(v, tag)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (text(k), untagged(v, tag))).collect()),
        other => other.clone(),
    }
}

/// Every leaf of `value` by its path; an empty list or map is a leaf of its own, so `[]` and
/// `null` stay apart.
pub fn flatten(value: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    walk("", value, &mut out);
    out
}

fn walk(path: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match value {
        Value::Object(map) if !map.is_empty() => map.iter().for_each(|(k, v)| walk(&join(k), v, out)),
        Value::Array(items) if !items.is_empty() => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| walk(&join(&i.to_string()), v, out)),
        leaf => {
            out.insert(path.to_string(), leaf.clone());
        }
    }
}

/// A planned change's `after` with every path its `after_unknown` marks as [`UNKNOWN`], what
/// lies below such a path left out (the engine knows nothing of it yet).
pub fn planned(change: &Value) -> BTreeMap<String, Value> {
    let mut values = flatten(&change["after"]);
    let unknown: Vec<String> = flatten(&change["after_unknown"])
        .into_iter()
        .filter(|(_, v)| *v == Value::Bool(true))
        .map(|(path, _)| path)
        .collect();
    for path in unknown {
        let below = format!("{path}.");
        values.retain(|p, _| *p != path && !p.starts_with(&below));
        values.insert(path, Value::from(UNKNOWN));
    }
    values
}

/// The paths where `ours` and `theirs` differ, with each side's leaf (`None`: no such path).
pub fn differences(
    ours: &BTreeMap<String, Value>,
    theirs: &BTreeMap<String, Value>,
) -> Vec<(String, Option<Value>, Option<Value>)> {
    let paths: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let (a, b) = (ours.get(path), theirs.get(path));
            (a != b).then(|| (path.clone(), a.cloned(), b.cloned()))
        })
        .collect()
}

/// A leaf as a report shows it: compact JSON, long ones cut; `absent` for no such path.
pub fn shown(leaf: &Option<Value>) -> String {
    let text = match leaf {
        None => return "absent".to_string(),
        Some(Value::String(s)) if s == UNKNOWN => s.clone(),
        Some(v) => v.to_string(),
    };
    let text = text.replace(['\t', '\n'], " ");
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// `path` with its list indices as `*`, as `known.tsv` writes paths: `spec.*.port.*.node_port`.
pub fn generalised(path: &str) -> String {
    path.split('.')
        .map(|segment| {
            if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `text` matches the glob `pattern`: `**` stands for anything, `*` for anything
/// without a `.` (one path segment or part of one).
pub fn matches(pattern: &str, text: &str) -> bool {
    if let Some(rest) = pattern.strip_prefix("**") {
        return (0..=text.len())
            .filter(|&i| text.is_char_boundary(i))
            .any(|i| matches(rest, &text[i..]));
    }
    if let Some(rest) = pattern.strip_prefix('*') {
        let end = text.find('.').unwrap_or(text.len());
        return (0..=end)
            .filter(|&i| text.is_char_boundary(i))
            .any(|i| matches(rest, &text[i..]));
    }
    match (pattern.chars().next(), text.chars().next()) {
        (None, None) => true,
        (Some(p), Some(t)) if p == t => matches(&pattern[p.len_utf8()..], &text[t.len_utf8()..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn globs_match_segments_and_runs() {
        assert!(matches("**.uid", "metadata.0.uid"));
        assert!(matches("metadata.*.uid", "metadata.0.uid"));
        assert!(!matches("metadata.*.uid", "spec.0.metadata.0.uid"));
        assert!(matches("*", "kubernetes_service_v1"));
        assert!(matches("kubernetes_service*", "kubernetes_service_v1"));
        assert!(!matches("*.uid", "metadata.0.uid"));
    }

    #[test]
    fn plans_mark_unknown_paths_and_differences_name_both_sides() {
        let change = json!({
            "after": {"metadata": [{"name": "a", "uid": null}], "spec": [{"x": 1}]},
            "after_unknown": {"metadata": [{"uid": true}], "status": true}
        });
        let ours = planned(&change);
        assert_eq!(ours["metadata.0.uid"], json!(UNKNOWN));
        assert_eq!(ours["status"], json!(UNKNOWN));
        let theirs = flatten(&json!({"metadata": [{"name": "a", "uid": "u"}], "spec": [{"x": []}]}));
        let found = differences(&ours, &theirs);
        let paths: Vec<&str> = found.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(paths, ["metadata.0.uid", "spec.0.x", "status"]);
        assert_eq!(generalised("spec.0.port.12.node_port"), "spec.*.port.*.node_port");
    }

    #[test]
    fn run_tags_leave_names() {
        let v = json!({"id": "corpus-ab1-cm/corpus-ab1-x", "ab1.corpus.example.com/k": "v1.ab1.corpus.example.com"});
        assert_eq!(
            untagged(&v, "ab1"),
            json!({"id": "corpus-RUN-cm/corpus-RUN-x", "RUN.corpus.example.com/k": "v1.RUN.corpus.example.com"})
        );
    }
}
