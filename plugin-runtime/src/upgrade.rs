//! State written by an older schema version, or by another provider, brought to the current
//! schema: what changed between versions is declared as data ([`StateUpgrade`]), steps on the
//! stored JSON applied before that JSON is read against the current schema, where an old shape
//! (a block that became a map) would not decode. Reading then drops the attributes the schema
//! no longer has, as the legacy SDK does; nothing else is lost.
//!
//! The legacy SDK's private data ([`sdk_v2_timeouts`]) is read here too: a state that such a
//! provider wrote carries its timeouts there.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::codec::Json;

/// One change of the stored state from schema version `from_version` to the next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateUpgrade {
    /// The schema version the stored state is at before this step.
    pub from_version: i64,
    /// Attribute names from the root; every list or set on the way is walked element by
    /// element (a block stores as a list of objects).
    pub path: Vec<String>,
    /// What happens to the attribute at `path`.
    pub change: Change,
}

/// What happens at a [`StateUpgrade`]'s path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A block of at most one element became a map attribute: the first element's object is
    /// the map; an empty or absent block an empty map (only where the enclosing block exists).
    BlockToMap,
    /// The attribute is gone.
    Drop,
}

impl StateUpgrade {
    /// A step at a dotted path (`spec.template.spec.container.resources.limits`).
    pub fn new(from_version: i64, path: &str, change: Change) -> StateUpgrade {
        StateUpgrade {
            from_version,
            path: path.split('.').map(str::to_string).collect(),
            change,
        }
    }
}

/// Applies the steps from `version` up to (not including) `current`, version by version in
/// declared order.
pub(crate) fn apply(state: &mut Json, upgrades: &[StateUpgrade], version: i64, current: i64) {
    for from in version..current {
        for upgrade in upgrades.iter().filter(|u| u.from_version == from) {
            at(state, &upgrade.path, upgrade.change);
        }
    }
}

fn at(node: &mut Json, path: &[String], change: Change) {
    match node {
        Json::Array(items) => items.iter_mut().for_each(|item| at(item, path, change)),
        Json::Object(fields) => match path {
            [] => {}
            [last] => change_field(fields, last, change),
            [head, rest @ ..] => {
                if let Some((_, child)) = fields.iter_mut().find(|(k, _)| k == head) {
                    at(child, rest, change);
                }
            }
        },
        _ => {}
    }
}

fn change_field(fields: &mut Vec<(String, Json)>, name: &str, change: Change) {
    match change {
        Change::Drop => fields.retain(|(k, _)| k != name),
        Change::BlockToMap => {
            let old = fields
                .iter()
                .position(|(k, _)| k == name)
                .map(|i| fields.remove(i).1);
            let map = match old {
                Some(object @ Json::Object(_)) => object,
                Some(Json::Array(items)) => items
                    .into_iter()
                    .find(|i| matches!(i, Json::Object(_)))
                    .unwrap_or(Json::Object(Vec::new())),
                _ => Json::Object(Vec::new()),
            };
            fields.push((name.to_string(), map));
        }
    }
}

/// The key under which the legacy SDK (terraform-plugin-sdk v2) keeps a resource's timeouts in
/// its private data, in nanoseconds per operation.
pub const SDK_V2_TIMEOUTS_KEY: &str = "e2bfb730-ecaa-11e6-8f88-34363bc7c4c0";

/// The timeouts a legacy SDK provider recorded in an instance's private data
/// (`{"e2bfb730-…": {"create": 600000000000, ...}, "schema_version": "1"}`), by operation;
/// `None` when `private` is not such data.
pub fn sdk_v2_timeouts(private: &[u8]) -> Option<BTreeMap<String, Duration>> {
    let data: serde_json::Value = serde_json::from_slice(private).ok()?;
    let timeouts = data.get(SDK_V2_TIMEOUTS_KEY)?.as_object()?;
    Some(
        timeouts
            .iter()
            .filter_map(|(op, nanos)| Some((op.clone(), Duration::from_nanos(nanos.as_u64()?))))
            .collect(),
    )
}

/// Whether `private` is a legacy SDK provider's private data rather than this provider's own.
pub fn is_sdk_v2_private(private: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(private)
        .ok()
        .and_then(|d| {
            d.as_object()
                .map(|o| o.contains_key(SDK_V2_TIMEOUTS_KEY) || o.contains_key("schema_version"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode_parsed_json, parse_json};
    use crate::types::Type;
    use crate::value::Value;

    fn upgraded(json: &str, upgrades: &[StateUpgrade], version: i64) -> Json {
        let mut state = parse_json(json.as_bytes()).expect("parses");
        apply(&mut state, upgrades, version, 1);
        state
    }

    #[test]
    fn blocks_of_one_become_maps_in_every_element_on_the_way() {
        let steps = [
            StateUpgrade::new(0, "spec.container.resources.limits", Change::BlockToMap),
            StateUpgrade::new(0, "spec.container.resources.requests", Change::BlockToMap),
        ];
        let v0 = r#"{"spec":[{"container":[
            {"resources":[{"limits":[{"cpu":"1","memory":"1Gi"}],"requests":[]}]},
            {"resources":[]},
            {"name":"x"}]}]}"#;
        let expected = r#"{"spec":[{"container":[
            {"resources":[{"limits":{"cpu":"1","memory":"1Gi"},"requests":{}}]},
            {"resources":[]},
            {"name":"x"}]}]}"#;
        assert_eq!(upgraded(v0, &steps, 0), parse_json(expected.as_bytes()).unwrap());
        // A state already at the current version is left alone.
        assert_eq!(upgraded(v0, &steps, 1), parse_json(v0.as_bytes()).unwrap());
        // Once upgraded it reads as a map.
        let ty = Type::object([(
            "spec",
            Type::list(Type::object([(
                "container",
                Type::list(Type::object([(
                    "resources",
                    Type::list(Type::object([
                        ("limits", Type::map(Type::String)),
                        ("requests", Type::map(Type::String)),
                    ])),
                )])),
            )])),
        )]);
        let value = decode_parsed_json(&upgraded(v0, &steps, 0), &ty).expect("decodes");
        let resources = &value.get("spec").elements()[0].get("container").elements()[0]
            .get("resources")
            .elements()[0];
        assert_eq!(resources.get("limits").get("memory"), &Value::string("1Gi"));
        assert_eq!(resources.get("requests").entries().map(|e| e.len()), Some(0));
        // Without the upgrade the old shape does not decode.
        assert!(decode_parsed_json(&parse_json(v0.as_bytes()).unwrap(), &ty).is_err());
    }

    #[test]
    fn dropped_attributes_and_unknown_ones_are_gone() {
        let steps = [StateUpgrade::new(0, "load_balancer_ingress", Change::Drop)];
        let v0 = r#"{"id":"a/b","load_balancer_ingress":[{"ip":"1.2.3.4","hostname":""}],"gone":1}"#;
        let state = upgraded(v0, &steps, 0);
        assert_eq!(state, parse_json(br#"{"id":"a/b","gone":1}"#).unwrap());
        let ty = Type::object([("id", Type::String)]);
        assert_eq!(
            decode_parsed_json(&state, &ty).unwrap(),
            Value::object([("id", Value::string("a/b"))])
        );
    }

    #[test]
    fn the_legacy_sdks_private_timeouts_are_read() {
        let private = br#"{"e2bfb730-ecaa-11e6-8f88-34363bc7c4c0":{"create":600000000000,"delete":60000000000},"schema_version":"1"}"#;
        let timeouts = sdk_v2_timeouts(private).expect("timeouts");
        assert_eq!(timeouts["create"], Duration::from_secs(600));
        assert_eq!(timeouts["delete"], Duration::from_secs(60));
        assert!(is_sdk_v2_private(private));
        assert!(is_sdk_v2_private(br#"{"schema_version":"1"}"#));
        assert_eq!(sdk_v2_timeouts(b"\x01\x02 fingerprint"), None);
        assert!(!is_sdk_v2_private(b"\x01\x02 fingerprint"));
        assert!(!is_sdk_v2_private(b""));
    }
}
