//! Rollout strategies whose `type` excludes a block the API server defaulted under the other
//! type: a Deployment's `spec.strategy.rollingUpdate` (25 % / 25 %) is refused beside
//! `Recreate`, a StatefulSet's `spec.updateStrategy.rollingUpdate` beside `OnDelete`.
//!
//! A server-side apply removes only fields its manager owns, and nobody owns a defaulted
//! block, so applying `type = Recreate` over it fails validation (hashicorp's update, which
//! replaces the whole spec, succeeds). The write goes in two steps instead: first the body with
//! the live strategy as it is, which makes the block ours, then the body itself, which drops it.

use serde_json::Value as Json;

/// `(path of the strategy, the type its sibling belongs to, the sibling)`.
const EXCLUSIVE: [(&str, &str, &str); 2] = [
    ("/spec/strategy", "RollingUpdate", "rollingUpdate"),
    ("/spec/updateStrategy", "RollingUpdate", "rollingUpdate"),
];

/// The body to apply before `body` so that it can drop a sibling block `live` holds and
/// `body`'s strategy type excludes; `None` when `body` can be applied as it is.
pub fn bridge(body: &Json, live: Option<&Json>) -> Option<Json> {
    let live = live?;
    let mut first = None;
    for (path, allowing, sibling) in EXCLUSIVE {
        let (Some(wanted), Some(current)) = (body.pointer(path), live.pointer(path)) else {
            continue;
        };
        let excluded = wanted
            .get("type")
            .and_then(Json::as_str)
            .is_some_and(|t| t != allowing);
        if excluded && wanted.get(sibling).is_none() && current.get(sibling).is_some() {
            let first = first.get_or_insert_with(|| body.clone());
            if let Some(strategy) = first.pointer_mut(path) {
                *strategy = current.clone();
            }
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(strategy: Json) -> Json {
        json!({"kind": "Deployment", "spec": {"replicas": 1, "strategy": strategy}})
    }

    #[test]
    fn recreate_over_a_defaulted_rolling_update_first_takes_the_live_strategy() {
        let live = deployment(
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
        );
        let body = deployment(json!({"type": "Recreate"}));
        assert_eq!(bridge(&body, Some(&live)), Some(live.clone()));
        assert_eq!(bridge(&body, None), None, "a create has nothing to drop");
        assert_eq!(bridge(&live, Some(&live)), None, "RollingUpdate keeps its block");
        let recreated = deployment(json!({"type": "Recreate"}));
        assert_eq!(bridge(&body, Some(&recreated)), None, "already without the block");
    }

    #[test]
    fn on_delete_over_a_defaulted_partition_does_too() {
        let live = json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, "replicas": 2}});
        let body = json!({"spec": {"updateStrategy": {"type": "OnDelete"}, "replicas": 3}});
        let first = bridge(&body, Some(&live)).expect("a first step");
        assert_eq!(first["spec"]["updateStrategy"], live["spec"]["updateStrategy"]);
        assert_eq!(first["spec"]["replicas"], 3, "the rest of the body as written");
    }
}
