//! `drift` (alekc/kubectl v3's): the paths of the manifest whose live values no longer are
//! what it says, as YAML (`""` when in sync). Only paths the manifest sets count; what only
//! the live object has (server defaults, other managers' fields, the estate label) never does.
//! A drift plans an update, which applies the manifest again.

use base64::Engine as _;
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};

use super::yaml;

/// Paths never compared (nor fingerprinted): what the server and controllers write.
pub(super) const CONTROL_FIELDS: [&str; 10] = [
    "status",
    "metadata.finalizers",
    "metadata.initializers",
    "metadata.ownerReferences",
    "metadata.creationTimestamp",
    "metadata.generation",
    "metadata.resourceVersion",
    "metadata.uid",
    "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
    "metadata.managedFields",
];

/// How a drifted value is shown (`show_drift_values`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Show {
    None,
    Hash,
    Full,
}

impl Show {
    /// `none`, `hash` or `full`; anything else is `None` (validation names it first).
    pub fn parse(text: Option<&str>) -> Option<Show> {
        match text.unwrap_or("none") {
            "none" => Some(Show::None),
            "hash" => Some(Show::Hash),
            "full" => Some(Show::Full),
            _ => None,
        }
    }
}

/// What a comparison leaves out and hides.
pub struct Settings<'a> {
    pub ignore: &'a [String],
    pub masks: &'a [String],
    pub show: Show,
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

/// The drift of `live` from `desired`, as YAML; `""` when none.
pub fn drift(desired: &Json, live: &Json, settings: &Settings<'_>) -> String {
    let secret = desired["apiVersion"] == "v1" && desired["kind"] == "Secret";
    let desired = if secret { as_data(desired) } else { desired.clone() };
    let mut found = Vec::new();
    walk(&desired, live, &mut Vec::new(), settings, &mut found);
    if found.is_empty() {
        return String::new();
    }
    let mut tree = Json::Object(Map::new());
    for (path, (was, now)) in found {
        let masked = (secret
            && matches!(path.first(), Some(Seg::Key(k)) if k == "data" || k == "stringData"))
            || settings.masks.iter().any(|m| glob(m, &path));
        let leaf = if masked {
            "<drift sensitive>".to_string()
        } else {
            shown(settings.show, &was, &now)
        };
        insert(&mut tree, &path, Json::from(leaf));
    }
    yaml::to_yaml(&tree)
}

/// A Secret's `stringData` as the `data` the server keeps of it.
fn as_data(secret: &Json) -> Json {
    let mut out = secret.clone();
    let Some(object) = out.as_object_mut() else {
        return out;
    };
    if let Some(Json::Object(strings)) = object.remove("stringData") {
        let data = object.entry("data").or_insert_with(|| Json::Object(Map::new()));
        if let Some(data) = data.as_object_mut() {
            for (k, v) in strings {
                let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                data.insert(
                    k,
                    Json::from(base64::engine::general_purpose::STANDARD.encode(text)),
                );
            }
        }
    }
    out
}

fn walk(
    desired: &Json,
    live: &Json,
    path: &mut Vec<Seg>,
    s: &Settings<'_>,
    out: &mut Vec<(Vec<Seg>, (Json, Json))>,
) {
    if skipped(path, s.ignore) {
        return;
    }
    match (desired, live) {
        (Json::Object(want), Json::Object(have)) => {
            for (key, value) in want {
                if let Some(live_value) = have.get(key) {
                    path.push(Seg::Key(key.clone()));
                    walk(value, live_value, path, s, out);
                    path.pop();
                }
            }
        }
        (Json::Array(want), Json::Array(have)) => {
            for (i, value) in want.iter().enumerate() {
                if let Some(live_value) = have.get(i) {
                    path.push(Seg::Index(i));
                    walk(value, live_value, path, s, out);
                    path.pop();
                }
            }
        }
        (Json::String(a), Json::String(b)) if a.trim() == b.trim() => {}
        (a, b) if a == b => {}
        (a, b) => out.push((path.clone(), (a.clone(), b.clone()))),
    }
}

/// Whether `path` is a control field or an `ignore_fields` entry, or under one. Entries may
/// write a list index either way the kubectl providers did: `a.0.b` (v2) or `a.[0].b` (v3).
fn skipped(path: &[Seg], ignore: &[String]) -> bool {
    if path.is_empty() {
        return false;
    }
    let render = |bracketed: bool| {
        path.iter()
            .map(|seg| match seg {
                Seg::Key(k) => k.clone(),
                Seg::Index(i) if bracketed => format!("[{i}]"),
                Seg::Index(i) => i.to_string(),
            })
            .collect::<Vec<_>>()
            .join(".")
    };
    let forms = [render(false), render(true)];
    CONTROL_FIELDS
        .iter()
        .map(|f| f.to_string())
        .chain(ignore.iter().cloned())
        .any(|entry| {
            forms
                .iter()
                .any(|p| *p == entry || p.starts_with(&format!("{entry}.")))
        })
}

/// Whether mask `pattern` (`*` one segment, `**` any number) covers `path` or one of its parents.
fn glob(pattern: &str, path: &[Seg]) -> bool {
    let pattern: Vec<&str> = pattern.split('.').collect();
    let segs: Vec<String> = path
        .iter()
        .map(|seg| match seg {
            Seg::Key(k) => k.clone(),
            Seg::Index(i) => format!("[{i}]"),
        })
        .collect();
    fn at(p: &[&str], s: &[String]) -> bool {
        match (p.first(), s.first()) {
            (None, _) => true,
            (Some(&"**"), _) => at(&p[1..], s) || (!s.is_empty() && at(p, &s[1..])),
            (Some(_), None) => false,
            (Some(&"*"), Some(_)) => at(&p[1..], &s[1..]),
            (Some(want), Some(seg)) => {
                (*want == seg || want.trim_matches(['[', ']']) == seg.trim_matches(['[', ']']))
                    && at(&p[1..], &s[1..])
            }
        }
    }
    at(&pattern, &segs)
}

fn shown(show: Show, was: &Json, now: &Json) -> String {
    let text = |v: &Json| match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    match show {
        Show::None => "<drift>".into(),
        Show::Hash => {
            let short = |v: &Json| {
                Sha256::digest(text(v))[..4]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            };
            format!("<was:{} now:{}>", short(was), short(now))
        }
        Show::Full => format!("<was: {was}, now: {now}>"),
    }
}

/// Puts `leaf` at `path` in the drift tree; a list element shows its index as `_index_`.
fn insert(tree: &mut Json, path: &[Seg], leaf: Json) {
    let Some((first, rest)) = path.split_first() else {
        *tree = leaf;
        return;
    };
    match first {
        Seg::Key(k) => {
            if !tree.is_object() {
                *tree = Json::Object(Map::new());
            }
            let child = tree
                .as_object_mut()
                .expect("an object")
                .entry(k.clone())
                .or_insert(Json::Null);
            insert(child, rest, leaf);
        }
        Seg::Index(i) => {
            if !tree.is_array() {
                *tree = Json::Array(Vec::new());
            }
            let items = tree.as_array_mut().expect("a list");
            let at = items.iter().position(|e| e["_index_"] == *i);
            let at = at.unwrap_or_else(|| {
                items.push(Json::Object(Map::from_iter([("_index_".into(), Json::from(*i))])));
                items.len() - 1
            });
            if rest.is_empty() {
                items[at]["_value_"] = leaf;
            } else {
                insert_into_element(&mut items[at], rest, leaf);
            }
        }
    }
}

fn insert_into_element(element: &mut Json, rest: &[Seg], leaf: Json) {
    match rest.first() {
        Some(Seg::Key(_)) => insert(element, rest, leaf),
        _ => {
            let value = element
                .as_object_mut()
                .expect("an element")
                .entry("_value_")
                .or_insert(Json::Null);
            insert(value, rest, leaf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings<'a>(ignore: &'a [String], masks: &'a [String], show: Show) -> Settings<'a> {
        Settings { ignore, masks, show }
    }

    #[test]
    fn only_the_manifests_paths_count() {
        let desired = json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v "}});
        let live = json!({"kind": "ConfigMap", "metadata": {"name": "a", "uid": "u",
            "labels": {"tofu-estate": "e"}}, "data": {"k": "v", "other": "x"}});
        assert_eq!(drift(&desired, &live, &settings(&[], &[], Show::None)), "");
        let changed = json!({"kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "w"}});
        let d = drift(&desired, &changed, &settings(&[], &[], Show::Full));
        assert!(
            d.contains("k: '<was: \"v \", now: \"w\">'") || d.contains("<was: \"v \", now: \"w\">"),
            "{d}"
        );
    }

    #[test]
    fn ignore_fields_take_either_index_form_and_lists_show_their_index() {
        let desired = json!({"webhooks": [{"clientConfig": {"caBundle": "a"}, "name": "n"}]});
        let live = json!({"webhooks": [{"clientConfig": {"caBundle": "b"}, "name": "m"}]});
        let all = drift(&desired, &live, &settings(&[], &[], Show::None));
        assert!(all.contains("_index_: 0") && all.contains("caBundle"), "{all}");
        for form in [
            "webhooks.0.clientConfig.caBundle",
            "webhooks.[0].clientConfig.caBundle",
        ] {
            let ignore = [form.to_string()];
            let d = drift(&desired, &live, &settings(&ignore, &[], Show::None));
            assert!(!d.contains("caBundle") && d.contains("name"), "{form}: {d}");
        }
    }

    #[test]
    fn secrets_and_masked_paths_never_show_values() {
        let desired = json!({"apiVersion": "v1", "kind": "Secret", "stringData": {"p": "new"}});
        let live = json!({"apiVersion": "v1", "kind": "Secret", "data": {"p": "b2xk"}});
        let d = drift(&desired, &live, &settings(&[], &[], Show::Full));
        assert!(
            d.contains("<drift sensitive>") && !d.contains("old") && !d.contains("new"),
            "{d}"
        );
        let in_sync = json!({"apiVersion": "v1", "kind": "Secret", "data": {"p": "bmV3"}});
        assert_eq!(drift(&desired, &in_sync, &settings(&[], &[], Show::Full)), "");
        let masks = ["spec.**".to_string()];
        let d = drift(
            &json!({"spec": {"a": {"b": 1}}}),
            &json!({"spec": {"a": {"b": 2}}}),
            &settings(&[], &masks, Show::Hash),
        );
        assert!(d.contains("<drift sensitive>"), "{d}");
    }
}
