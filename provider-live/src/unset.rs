//! Attributes a state leaves null where the configuration gives a value that changes no object:
//! an import's Terraform-only settings (`wait_for_rollout`, `wait_for_load_balancer`,
//! `timeouts`), and an empty map, `false` or `0` the object cannot hold apart from nothing.
//!
//! hashicorp's SDKv2 resources import only what they read from the object, so those settings
//! stay null in the state; its next plan shows no change where the configuration sets one to
//! its zero value (`wait_for_rollout = false`, `data = {}`). Ours imports the same way and plans
//! no change whenever such attributes are all that differ: an import block plans no update,
//! and a state hashicorp imported moves in unchanged. Where anything else changes, the plan
//! carries the configured values, so the write that follows honours them.

use plugin_runtime::Value;
use serde_json::{Map, Value as Json};

/// The attribute whose planned value is the estate label a write stamps.
const ESTATE: &str = "estate";

/// The Kubernetes object a resource value describes, `None` where it cannot be built.
pub type ObjectOf<'a> = &'a dyn Fn(&Value) -> Option<Map<String, Json>>;

/// The prior when `planned` differs from it only in top-level attributes the prior leaves
/// null and whose planned value changes no object (or is its type's zero value); `None` when
/// the plan changes anything else.
pub fn settled(prior: &Value, planned: &Value, object_of: ObjectOf) -> Option<Value> {
    let (Value::Object(before), Value::Object(after)) = (prior.plain(), planned.plain()) else {
        return None;
    };
    let mut settled = planned.clone();
    for (name, value) in after {
        let old = before.get(name).unwrap_or(&Value::Null);
        if value == old {
            continue;
        }
        // The estate is a label the write stamps, beyond the object `object_of` builds.
        if !old.is_null() || name == ESTATE {
            return None;
        }
        let mut without = settled.clone();
        without.set(name, Value::Null);
        if !is_zero(value) && object_of(&without) != object_of(&settled) {
            return None;
        }
        settled = without;
    }
    (settled == *prior).then_some(settled)
}

/// `read` with the top-level Terraform-only settings that `defaulted` filled in put back to
/// null where `prior` has none (an import): the object says nothing about them.
pub fn keep_local_unset(read: &Value, defaulted: Value, prior: &Value, object_of: ObjectOf) -> Value {
    let Value::Object(filled) = defaulted.plain() else {
        return defaulted;
    };
    let candidates: Vec<&String> = filled
        .iter()
        .filter(|(name, value)| {
            !value.is_null() && *name != ESTATE && read.get(name).is_null() && prior.get(name).is_null()
        })
        .map(|(name, _)| name)
        .collect();
    if candidates.is_empty() {
        return defaulted;
    }
    let object = object_of(&defaulted);
    let mut out = defaulted.clone();
    for name in candidates {
        let mut without = out.clone();
        without.set(name, Value::Null);
        if object_of(&without) == object {
            out = without;
        }
    }
    out
}

/// `false`, `0`, `""` or an empty collection: what SDKv2's flat state cannot tell from unset.
fn is_zero(value: &Value) -> bool {
    match value.plain() {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(_) => value.as_i64() == Some(0),
        Value::Map(m) => m.is_empty(),
        Value::List(v) | Value::Set(v) => v.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resource whose object is its `data`; `wait` is Terraform's own.
    fn object_of(value: &Value) -> Option<Map<String, Json>> {
        let mut object = Map::new();
        if let Some(data) = value.get("data").entries() {
            let data: Map<String, Json> = data
                .iter()
                .map(|(k, v)| (k.clone(), Json::from(v.as_str().unwrap_or_default())))
                .collect();
            object.insert("data".into(), Json::Object(data));
        }
        Some(object)
    }

    fn value(data: Value, wait: Value) -> Value {
        Value::object([("data", data), ("wait", wait), ("id", Value::string("ns/x"))])
    }

    #[test]
    fn settings_and_empty_maps_the_prior_lacks_plan_no_change() {
        let prior = value(Value::Null, Value::Null);
        for wait in [Value::Bool(false), Value::Bool(true)] {
            let planned = value(Value::Map(Default::default()), wait);
            assert_eq!(settled(&prior, &planned, &object_of), Some(prior.clone()));
        }
    }

    #[test]
    fn anything_else_changing_keeps_the_configured_values() {
        let prior = value(Value::Null, Value::Null);
        let planned = value(Value::string_map([("a", "b")]), Value::Bool(false));
        assert_eq!(settled(&prior, &planned, &object_of), None);
        // A setting the prior holds is a change the plan shows.
        let prior = value(Value::Null, Value::Bool(true));
        let planned = value(Value::Null, Value::Bool(false));
        assert_eq!(settled(&prior, &planned, &object_of), None);
    }

    #[test]
    fn the_estate_stamp_is_a_change() {
        let prior = value(Value::Null, Value::Null);
        let mut planned = prior.clone();
        planned.set("estate", Value::string("app"));
        assert_eq!(settled(&prior, &planned, &object_of), None);
    }

    #[test]
    fn an_import_leaves_terraform_only_settings_unset() {
        let read = value(Value::string_map([("a", "b")]), Value::Null);
        let defaulted = value(Value::string_map([("a", "b")]), Value::Bool(true));
        let kept = keep_local_unset(&read, defaulted.clone(), &Value::Null, &object_of);
        assert_eq!(kept.get("wait"), &Value::Null);
        // A refresh keeps what the prior says.
        let prior = value(Value::Null, Value::Bool(true));
        assert_eq!(
            keep_local_unset(&read, defaulted.clone(), &prior, &object_of),
            defaulted
        );
    }
}
