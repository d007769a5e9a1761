//! What an import reads back, for the tests that compare a state an import wrote with the one
//! a create left: an import reads the object, so what only the engine knew stays out.

use serde_json::Value;

/// `state` without the Terraform-only settings (`timeouts`, `wait_for_rollout`,
/// `wait_until_bound`, ...): the object does not hold them, so an import leaves them unset, as
/// hashicorp's does (its acceptance cases list them in `ImportStateVerifyIgnore`). An empty map
/// counts as none, as `ImportStateVerify` skips a flatmapped map that holds nothing: an import
/// reads a ConfigMap without data as `data = {}`, as hashicorp's does, where the create left it
/// null.
pub fn without_settings(state: &Value) -> Value {
    let mut out = state.clone();
    if let Some(fields) = out.as_object_mut() {
        for (name, value) in fields.iter_mut() {
            let empty_map = value.as_object().is_some_and(|m| m.is_empty());
            if name == "timeouts" || name.starts_with("wait_") || empty_map {
                *value = Value::Null;
            }
        }
    }
    out
}

/// [`without_settings`], and without what controllers move between two reads: the resource
/// version, the generation and `status`.
pub fn comparable(state: &Value) -> Value {
    let mut out = without_settings(state);
    out["status"] = Value::Null;
    match &mut out["metadata"] {
        Value::Array(items) => items.iter_mut().for_each(|m| {
            m["resource_version"] = Value::Null;
            m["generation"] = Value::Null;
        }),
        meta @ Value::Object(_) => {
            meta["resource_version"] = Value::Null;
            meta["generation"] = Value::Null;
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_and_moving_fields_are_left_out() {
        let created = json!({
            "metadata": [{"name": "a", "resource_version": "7", "generation": 2}],
            "wait_for_rollout": true,
            "timeouts": {"create": "1m"},
            "spec": [{"replicas": "1"}],
        });
        let imported = json!({
            "metadata": [{"name": "a", "resource_version": "9", "generation": 3}],
            "wait_for_rollout": null,
            "timeouts": null,
            "spec": [{"replicas": "1"}],
        });
        assert_eq!(comparable(&created), comparable(&imported));
        assert_ne!(without_settings(&created), without_settings(&imported));
        let no_data = json!({"data": null, "binary_data": {"a": "AA=="}});
        let imported_data = json!({"data": {}, "binary_data": {"a": "AA=="}});
        assert_eq!(without_settings(&no_data), without_settings(&imported_data));
        let changed = json!({"metadata": [{"name": "a"}], "spec": [{"replicas": "2"}]});
        assert_ne!(comparable(&created), comparable(&changed));
    }
}
