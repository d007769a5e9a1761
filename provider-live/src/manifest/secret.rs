//! A Secret written through `kubernetes_manifest`: its values never reach `object`.
//!
//! The plugin protocol has no way for a provider to mark part of a value sensitive, and a
//! configured attribute must be planned exactly as written, so what the engine prints of
//! `manifest` is the user's to hide (`sensitive(...)`, or a sensitive variable; the engine
//! then keeps those paths hidden in plans and state). `object` is the provider's: it would
//! print the live Secret's data in every plan and `show`, marked or not. So for a v1 Secret,
//! each value under `data` and `stringData` in `object` is only a marker saying whether the
//! live value is the manifest's ([`IN_SYNC`]) or not ([`DRIFTED`]); drift and changes are
//! still planned, by comparing markers and the manifest's own values.

use base64::Engine;
use plugin_runtime::Diagnostic;
use serde_json::{Map, Value as Json};

/// The fields of a Secret that hold its values.
const FIELDS: [&str; 2] = ["data", "stringData"];

/// `object`'s value for a Secret key whose live value is the manifest's.
pub const IN_SYNC: &str = "(sensitive value, as in the manifest)";
/// `object`'s value for a Secret key whose live value differs from the manifest's.
pub const DRIFTED: &str = "(sensitive value, changed outside Terraform)";
/// What a key's value changed in the configuration compares as: neither marker.
const CHANGED: &str = "(sensitive value, changed in the configuration)";

/// Whether a manifest (or live object) is a core v1 Secret.
pub fn is_secret(manifest: &Json) -> bool {
    manifest.get("apiVersion").and_then(Json::as_str) == Some("v1")
        && manifest.get("kind").and_then(Json::as_str) == Some("Secret")
}

/// The bytes of a `data` value (base64), or of a `stringData` value (as written).
fn bytes_of(field: &str, value: &Json) -> Option<Vec<u8>> {
    let text = value.as_str()?;
    match field {
        "data" => base64::engine::general_purpose::STANDARD.decode(text).ok(),
        _ => Some(text.as_bytes().to_vec()),
    }
}

/// `object` (the live object through the manifest's shape) with every Secret value
/// replaced by its marker. The server keeps `stringData` in `data`, so that is where both
/// are looked up. Other kinds pass unchanged.
pub fn redact(mut object: Json, live: &Json, manifest: &Json) -> Json {
    if !is_secret(manifest) {
        return object;
    }
    let Some(map) = object.as_object_mut() else {
        return object;
    };
    let live_data = live.get("data");
    for field in FIELDS {
        let Some(wanted) = manifest.get(field).and_then(Json::as_object) else {
            map.remove(field);
            continue;
        };
        let markers: Map<String, Json> = wanted
            .iter()
            .filter_map(|(key, value)| {
                let live = live_data?.get(key)?;
                let same =
                    bytes_of(field, value).is_some() && bytes_of(field, value) == bytes_of("data", live);
                Some((key.clone(), Json::from(if same { IN_SYNC } else { DRIFTED })))
            })
            .collect();
        map.insert(field.to_string(), Json::Object(markers));
    }
    object
}

/// What `object` must say for the configuration's `desired` manifest to need no change:
/// each Secret value in sync, as long as it is the value the prior `object` was judged
/// against (the prior manifest's). Other kinds: `desired` itself.
pub fn expected(desired: &Json, prior_manifest: &Json) -> Json {
    if !is_secret(desired) {
        return desired.clone();
    }
    let mut out = desired.clone();
    let Some(map) = out.as_object_mut() else {
        return out;
    };
    for field in FIELDS {
        let Some(wanted) = desired.get(field).and_then(Json::as_object) else {
            continue;
        };
        let before = prior_manifest.get(field);
        let markers: Map<String, Json> = wanted
            .iter()
            .map(|(key, value)| {
                let same = before.and_then(|b| b.get(key)) == Some(value);
                (key.clone(), Json::from(if same { IN_SYNC } else { CHANGED }))
            })
            .collect();
        map.insert(field.to_string(), Json::Object(markers));
    }
    out
}

/// The warning a Secret manifest with values gets: what the provider hides, and what only
/// the configuration can. It names no attribute: the engine would quote the source line,
/// and that line may hold the value.
pub fn plan_output_warning(manifest: &Json) -> Option<Diagnostic> {
    let has_values = FIELDS.into_iter().any(|f| {
        manifest
            .get(f)
            .and_then(Json::as_object)
            .is_some_and(|m| !m.is_empty())
    });
    if !has_values || !is_secret(manifest) {
        return None;
    }
    Some(Diagnostic::warning(
        "Secret values in a manifest show in plans unless marked sensitive",
        "The engine prints `manifest` as it is written, and a provider cannot hide part of it. \
             Mark each value sensitive, e.g. `password = sensitive(var.password)` or a variable with \
             `sensitive = true`, and plans and state show it as (sensitive value); `object` never \
             holds Secret values. Or use `kubernetes_secret`, whose data is always hidden.",
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn manifest() -> Json {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin"}})
    }

    #[test]
    fn object_holds_markers_never_values() {
        let live = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="}});
        let object = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
            "data": {"password": "aHVudGVyMg=="}});
        let redacted = redact(object.clone(), &live, &manifest());
        assert_eq!(redacted["data"], json!({"password": IN_SYNC}));
        assert_eq!(redacted["stringData"], json!({"user": IN_SYNC}));
        let text = redacted.to_string();
        assert!(
            !text.contains("aHVudGVyMg") && !text.contains("YWRtaW4"),
            "{text}"
        );

        let mut drifted = live.clone();
        drifted["data"]["password"] = json!("b3RoZXI=");
        assert_eq!(
            redact(object.clone(), &drifted, &manifest())["data"]["password"],
            DRIFTED
        );
        // Other kinds keep their values.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}});
        assert_eq!(redact(cm.clone(), &cm, &cm), cm);
    }

    #[test]
    fn expected_markers_tell_config_changes_from_no_change() {
        let m = manifest();
        let same = expected(&m, &m);
        assert_eq!(same["data"], json!({"password": IN_SYNC}));
        assert_eq!(same["stringData"], json!({"user": IN_SYNC}));
        let mut changed = m.clone();
        changed["stringData"]["user"] = json!("root");
        assert_eq!(expected(&changed, &m)["stringData"]["user"], CHANGED);
        assert!(!expected(&changed, &m).to_string().contains("root"));
    }

    #[test]
    fn only_secrets_with_values_are_warned_about() {
        let d = plan_output_warning(&manifest()).unwrap();
        // No attribute: the engine would quote the line, which may hold the value.
        assert!(d.attribute.is_none());
        assert!(
            plan_output_warning(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}))
                .is_none()
        );
        assert!(
            plan_output_warning(&json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque"})).is_none()
        );
    }
}
