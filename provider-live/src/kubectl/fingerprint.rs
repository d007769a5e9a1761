//! The fingerprints gavinbunney's and alekc v2's `kubectl_manifest` keep (`yaml_incluster`,
//! `live_manifest_incluster`): the live values of the fields the manifest sets, flattened to
//! sorted `dotted.path=value` pairs joined with `,`, as a sha256 hex digest (gavinbunney's format;
//! alekc v2 hashes each value instead, and its states keep their values until the next write).
//! Drift itself is `drift`'s; these are kept for the configurations and checks that read them.
//! Facts: reference/kubectl-providers.md §7.5.

use std::collections::BTreeMap;

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::drift::CONTROL_FIELDS;

/// The fingerprint of `live` over the fields `manifest` sets, without `ignore` (dotted paths,
/// a list index as `a.0` or `a.[0]`) and the control fields, nor the fields `live` lacks.
pub fn of(manifest: &Json, live: &Json, ignore: &[String]) -> String {
    let (mut user, mut seen) = (BTreeMap::new(), BTreeMap::new());
    flatten(manifest, String::new(), &mut user);
    flatten(live, String::new(), &mut seen);
    let ignored: Vec<String> = ignore
        .iter()
        .map(|path| path.replace(".[", ".").replace(']', ""))
        .chain(CONTROL_FIELDS.iter().map(|f| f.to_string()))
        .collect();
    let under =
        |key: &str, field: &str| key == field || key.strip_prefix(field).is_some_and(|r| r.starts_with('.'));
    let pairs: Vec<String> = user
        .keys()
        .filter(|key| !ignored.iter().any(|field| under(key, field)))
        .filter_map(|key| seen.get(key).map(|value| format!("{key}={}", value.trim())))
        .collect();
    sha256_hex(pairs.join(","))
}

/// `value` as `path → text`: map keys joined with `.`, a list as `path.#` (its length) and
/// `path.N`; nulls and empty keys left out.
fn flatten(value: &Json, path: String, out: &mut BTreeMap<String, String>) {
    let at = |key: &str| match path.is_empty() {
        true => key.to_string(),
        false => format!("{path}.{key}"),
    };
    match value {
        Json::Null => {}
        Json::Object(map) => {
            for (key, value) in map.iter().filter(|(k, _)| !k.is_empty()) {
                flatten(value, at(key), out);
            }
        }
        Json::Array(items) => {
            out.insert(at("#"), items.len().to_string());
            for (i, item) in items.iter().enumerate() {
                flatten(item, at(&i.to_string()), out);
            }
        }
        Json::String(text) => {
            out.insert(path, text.clone());
        }
        Json::Bool(b) => {
            out.insert(path, b.to_string());
        }
        Json::Number(n) => {
            // Go prints a whole float64 without a fraction.
            let text = match n.as_f64() {
                Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 1e21 => {
                    format!("{f:.0}")
                }
                _ => n.to_string(),
            };
            out.insert(path, text);
        }
    }
}

/// The sha256 digest of `bytes` in lowercase hex, as the kubectl providers write their ids and
/// fingerprints.
pub(super) fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sha(text: &str) -> String {
        sha256_hex(text)
    }

    #[test]
    fn the_live_values_of_the_manifests_fields_sorted() {
        let manifest = json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": null,
            "metadata": {"name": "s", "namespace": "ns"},
        });
        let live = json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "s", "namespace": "ns", "uid": "u", "labels": {"tofu-estate": "e"}},
        });
        assert_eq!(
            of(&manifest, &live, &[]),
            sha("apiVersion=v1,kind=Secret,metadata.name=s,metadata.namespace=ns,type=Opaque")
        );
    }

    #[test]
    fn lists_count_and_index_and_live_values_win() {
        let manifest =
            json!({"kind": "ClusterRole", "rules": [{"apiGroups": [""], "verbs": ["get"]}], "x": 1});
        let live =
            json!({"kind": "ClusterRole", "rules": [{"apiGroups": [""], "verbs": ["list"]}], "x": 1.0});
        assert_eq!(
            of(&manifest, &live, &[]),
            sha(
                "kind=ClusterRole,rules.#=1,rules.0.apiGroups.#=1,rules.0.apiGroups.0=,rules.0.verbs.#=1,rules.0.verbs.0=list,x=1"
            )
        );
    }

    #[test]
    fn ignored_and_control_fields_and_fields_the_server_dropped_are_left_out() {
        let manifest = json!({"kind": "K", "spec": {"a": 1, "b": {"c": 2}, "gone": 3}, "status": {"s": 1}});
        let live = json!({"kind": "K", "spec": {"a": 9, "b": {"c": 2}}, "status": {"s": 1}});
        assert_eq!(of(&manifest, &live, &["spec.a".into()]), sha("kind=K,spec.b.c=2"));
        let list = json!({"kind": "K", "items": [{"a": 1}, {"a": 2}]});
        assert_eq!(
            of(&list, &list, &["items.[1]".into()]),
            sha("items.#=2,items.0.a=1,kind=K")
        );
    }
}
