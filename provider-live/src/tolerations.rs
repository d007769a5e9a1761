//! Which of a Pod's tolerations are the user's.
//!
//! The API server's DefaultTolerationSeconds admission plugin adds two tolerations to every
//! Pod (`node.kubernetes.io/not-ready` and `unreachable`, NoExecute, 300 s), and other
//! admission plugins may add their own. A read keeps a toleration the prior value has, and one
//! on a node-condition key (`node.kubernetes.io/*`) that admission did not add: hashicorp's
//! Pod flatten drops every toleration on those keys, the user's too
//! (kubernetes/structures_pod.go:21 `builtInTolerations`), so a state it wrote lacks them and
//! its own next plan replaces the Pod. Read this way, that state moves in with an empty plan.
//!
//! A Pod's tolerations are an atomic list, and the API server accepts an update that only adds
//! to them. A write of the user's list over one that holds admission's defaults would remove
//! those, so it keeps them ([`with_admitted`]).

use plugin_runtime::Value;
use serde_json::Value as Json;

/// hashicorp's `builtInTolerations`: the node-condition taint keys its flatten leaves out.
const NODE_CONDITION_KEYS: &[&str] = &[
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/pid-pressure",
];

/// Whether `toleration` (JSON) is one the DefaultTolerationSeconds admission plugin adds.
pub fn is_admission_default(toleration: &Json) -> bool {
    toleration["effect"] == "NoExecute"
        && toleration["operator"] == "Exists"
        && toleration["tolerationSeconds"] == 300
        && matches!(
            toleration["key"].as_str(),
            Some("node.kubernetes.io/not-ready" | "node.kubernetes.io/unreachable")
        )
}

/// The Pod `object` with only the user's tolerations, and `prior` with its tolerations
/// unknown so that all of those are read; `None` when there is nothing to change (an import
/// has no prior: it drops admission's tolerations itself).
pub fn users(object: &Json, prior: &Value) -> Option<(Json, Value)> {
    let prior_spec = prior.get("spec").elements().first()?;
    let live = object.pointer("/spec/tolerations")?.as_array()?;
    let known = prior_spec.get("toleration").elements();
    let kept: Vec<Json> = live
        .iter()
        .filter(|t| {
            known.iter().any(|p| same(p, t))
                || (!is_admission_default(t)
                    && t["key"]
                        .as_str()
                        .is_some_and(|k| NODE_CONDITION_KEYS.contains(&k)))
        })
        .cloned()
        .collect();
    if kept.len() == known.len() {
        return None;
    }
    let mut view = object.clone();
    view["spec"]["tolerations"] = Json::Array(kept);
    let mut prior = prior.clone();
    let mut spec = prior_spec.clone();
    spec.set("toleration", Value::unknown());
    prior.set("spec", Value::List(vec![spec]));
    Some((view, prior))
}

/// `body` (a Pod to apply over `live`) with the admission defaults `live` holds added to its
/// tolerations; `None` when it has nothing to add (not a Pod, a create, no tolerations sent).
pub fn with_admitted(body: &Json, live: Option<&Json>) -> Option<Json> {
    if body["kind"] != "Pod" {
        return None;
    }
    let sent = body.pointer("/spec/tolerations")?.as_array()?;
    let missing: Vec<&Json> = live?
        .pointer("/spec/tolerations")?
        .as_array()?
        .iter()
        .filter(|t| is_admission_default(t) && !sent.iter().any(|s| s["key"] == t["key"]))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut body = body.clone();
    let list = body["spec"]["tolerations"].as_array_mut()?;
    list.extend(missing.into_iter().cloned());
    Some(body)
}

/// Whether the prior's toleration `p` stands for the live `t`: the same key, effect and
/// operator (absent reads as the API's default, Equal).
fn same(p: &Value, t: &Json) -> bool {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let live = |k: &str| t[k].as_str().unwrap_or_default().to_string();
    let operator = |s: String| if s.is_empty() { "Equal".to_string() } else { s };
    text(p.get("key")) == live("key")
        && text(p.get("effect")) == live("effect")
        && operator(text(p.get("operator"))) == operator(live("operator"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(tolerations: Json) -> Json {
        json!({"spec": {"tolerations": tolerations}})
    }

    fn prior(tolerations: Vec<Value>) -> Value {
        let mut spec = Value::object(Vec::<(String, Value)>::new());
        spec.set("toleration", Value::List(tolerations));
        let mut prior = Value::object(Vec::<(String, Value)>::new());
        prior.set("spec", Value::List(vec![spec]));
        prior
    }

    fn toleration(key: &str) -> Value {
        let mut t = Value::object(Vec::<(String, Value)>::new());
        t.set("key", Value::from(key.to_string()));
        t.set("operator", Value::from("Exists".to_string()));
        t.set("effect", Value::from("NoExecute".to_string()));
        t
    }

    fn default(key: &str) -> Json {
        json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    }

    #[test]
    fn a_node_condition_toleration_hashicorps_state_left_out_is_read() {
        let written = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 60});
        let live = pod(json!([written, default("node.kubernetes.io/not-ready")]));
        let (view, prior) = users(&live, &prior(vec![])).expect("a view");
        assert_eq!(view["spec"]["tolerations"], json!([written]));
        assert!(prior.get("spec").elements()[0].get("toleration").is_unknown());
    }

    #[test]
    fn admission_defaults_and_other_plugins_tolerations_stay_out() {
        let gpu = json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"});
        let live = pod(json!([
            default("node.kubernetes.io/not-ready"),
            default("node.kubernetes.io/unreachable"),
            gpu
        ]));
        assert!(
            users(&live, &prior(vec![])).is_none(),
            "nothing of the user's to add"
        );
    }

    #[test]
    fn the_priors_tolerations_read_as_before() {
        let live = pod(json!([
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            default("node.kubernetes.io/not-ready")
        ]));
        let prior = prior(vec![toleration("node.kubernetes.io/unreachable")]);
        assert!(
            users(&live, &prior).is_none(),
            "the prior's count already reads it"
        );
    }

    #[test]
    fn an_update_keeps_the_defaults_admission_added() {
        let users = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 60});
        let body = json!({"kind": "Pod", "spec": {"tolerations": [users]}});
        let live = pod(json!([users, default("node.kubernetes.io/not-ready")]));
        let sent = with_admitted(&body, Some(&live)).expect("a body with the default");
        assert_eq!(
            sent["spec"]["tolerations"],
            json!([users, default("node.kubernetes.io/not-ready")])
        );
        assert!(with_admitted(&body, None).is_none(), "a create sends what it has");
        let none = json!({"kind": "Pod", "spec": {}});
        assert!(
            with_admitted(&none, Some(&live)).is_none(),
            "no list sent, none owned"
        );
    }

    #[test]
    fn an_import_is_left_to_unclaim() {
        assert!(
            users(
                &pod(json!([default("node.kubernetes.io/not-ready")])),
                &Value::Null
            )
            .is_none()
        );
    }
}
