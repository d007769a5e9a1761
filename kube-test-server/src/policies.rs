//! Admission policies. Each ValidatingAdmissionPolicy binding applies its policy to the writes
//! both their match resources select, and a validation that evaluates to false denies the write
//! when the binding's actions include `Deny` (22-admission-misc steps 11 and 12). Each
//! MutatingAdmissionPolicy binding likewise applies its policy's mutations before validation.
//!
//! Parameters (`paramKind`) are not looked up (`params` is null); `Warn` and `Audit` actions do
//! not change the answer; an apply configuration merges maps and replaces everything else.

use serde_json::{Map, Value, json};

use crate::auth::UserInfo;
use crate::cel::{self, Activation};
use crate::resources::{self, ResourceType};
use crate::selectors::LabelSelector;
use crate::status::{self, ApiError};
use crate::store::Store;

/// The write under admission.
#[derive(Clone, Copy)]
pub struct Write<'a> {
    pub rt: &'a ResourceType,
    pub version: &'a str,
    pub operation: &'a str,
    pub object: &'a Value,
    pub old: Option<&'a Value>,
    pub namespace: &'a str,
    pub user: &'a UserInfo,
}

/// Runs every bound policy over `write`; the first denial is the error to answer.
pub fn admit(store: &Store, write: &Write) -> Result<(), ApiError> {
    let namespace = namespace_of(store, write);
    let bound = bound(
        store,
        (
            &resources::VALIDATINGPOLICYBINDINGS,
            &resources::VALIDATINGPOLICIES,
        ),
        write,
        namespace,
    );
    for (binding, policy) in bound {
        let spec = &policy["spec"];
        let denies = binding["spec"]["validationActions"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "Deny"));
        if let Some(message) = violation(spec, write, namespace)
            && denies
        {
            let policy_name = policy["metadata"]["name"].as_str().unwrap_or("");
            let binding_name = binding["metadata"]["name"].as_str().unwrap_or("");
            return Err(denied(
                write,
                &format!(
                    "ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}' denied request: {message}"
                ),
                &message.reason,
            ));
        }
    }
    Ok(())
}

/// `write`'s object as every bound MutatingAdmissionPolicy leaves it, in binding order (its
/// `ApplyConfiguration` merged in, its `JSONPatch` applied), or `None` when none applies.
pub fn mutate(store: &Store, write: &Write) -> Result<Option<Value>, ApiError> {
    let namespace = namespace_of(store, write);
    let bound = bound(
        store,
        (&resources::MUTATINGPOLICYBINDINGS, &resources::MUTATINGPOLICIES),
        write,
        namespace,
    );
    let mut object = write.object.clone();
    let mut changed = false;
    for (_, policy) in bound {
        let spec = &policy["spec"];
        let fail_closed = spec["failurePolicy"].as_str() != Some("Ignore");
        let current = Write {
            object: &object,
            ..*write
        };
        let vars = activation(spec, &current, namespace);
        let mut mutated = object.clone();
        let outcome = conditions_hold(spec, &vars).and_then(|hold| {
            if !hold {
                return Ok(());
            }
            for mutation in spec["mutations"].as_array().into_iter().flatten() {
                mutation_of(mutation, &vars, &mut mutated)?;
            }
            Ok(())
        });
        match outcome {
            Ok(()) => {
                changed |= mutated != object;
                object = mutated;
            }
            Err(_) if !fail_closed => {}
            Err(e) => {
                let name = policy["metadata"]["name"].as_str().unwrap_or("");
                return Err(denied(
                    write,
                    &format!("MutatingAdmissionPolicy '{name}' failed: {e}"),
                    "Invalid",
                ));
            }
        }
    }
    Ok(changed.then_some(object))
}

/// One mutation of a policy applied to `object`.
fn mutation_of(mutation: &Value, vars: &Vars, object: &mut Value) -> Result<(), String> {
    match mutation["patchType"].as_str() {
        Some("ApplyConfiguration") => {
            let expression = mutation["applyConfiguration"]["expression"]
                .as_str()
                .unwrap_or("");
            merge(object, evaluate(expression, vars)?);
            Ok(())
        }
        Some("JSONPatch") => {
            let expression = mutation["jsonPatch"]["expression"].as_str().unwrap_or("");
            for op in evaluate(expression, vars)?.as_array().into_iter().flatten() {
                json_patch(object, op)?;
            }
            Ok(())
        }
        other => Err(format!("unsupported patchType {other:?}")),
    }
}

/// Server-side apply's merge of an apply configuration, as far as policies use it: maps merge
/// field by field, anything else is replaced.
fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

/// One JSON Patch operation (`add`, `replace`, `remove`) at its JSON pointer.
fn json_patch(object: &mut Value, op: &Value) -> Result<(), String> {
    let path = op["path"].as_str().unwrap_or("");
    let (parent, last) = path
        .rsplit_once('/')
        .ok_or_else(|| format!("invalid path {path:?}"))?;
    let key = last.replace("~1", "/").replace("~0", "~");
    let holder = object
        .pointer_mut(parent)
        .ok_or_else(|| format!("no {parent:?} to patch"))?;
    match (op["op"].as_str(), holder) {
        (Some("add" | "replace"), Value::Object(map)) => {
            map.insert(key, op["value"].clone());
        }
        (Some("add"), Value::Array(items)) if key == "-" => items.push(op["value"].clone()),
        (Some("remove"), Value::Object(map)) => {
            map.shift_remove(&key);
        }
        (other, _) => return Err(format!("unsupported JSON patch operation {other:?} at {path:?}")),
    }
    Ok(())
}

/// The write's namespace object, for namespace selectors.
fn namespace_of<'s>(store: &'s Store, write: &Write) -> Option<&'s Value> {
    (!write.namespace.is_empty())
        .then(|| store.get(&resources::NAMESPACES.key(), "", write.namespace))
        .flatten()
}

/// Each binding of `kinds.0` whose policy (of `kinds.1`) and own match resources select
/// `write`, with that policy.
fn bound<'s>(
    store: &'s Store,
    kinds: (&ResourceType, &ResourceType),
    write: &Write,
    namespace: Option<&Value>,
) -> Vec<(&'s Value, &'s Value)> {
    let (bindings, policies) = kinds;
    store
        .list(&bindings.key(), None)
        .filter_map(|binding| {
            let policy_name = binding["spec"]["policyName"].as_str().unwrap_or("");
            let policy = store.get(&policies.key(), "", policy_name)?;
            if !matches(&policy["spec"]["matchConstraints"], write, namespace, false) {
                return None;
            }
            if let Some(narrower) = binding["spec"].get("matchResources").filter(|m| !m.is_null())
                && !matches(narrower, write, namespace, true)
            {
                return None;
            }
            Some((binding, policy))
        })
        .collect()
}

/// A failed validation: its message and the reason the answer carries.
struct Violation {
    message: String,
    reason: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn denied(write: &Write, message: &str, reason: &str) -> ApiError {
    let name = write.object["metadata"]["name"]
        .as_str()
        .or_else(|| write.old.and_then(|o| o["metadata"]["name"].as_str()))
        .unwrap_or("");
    let target = write.rt.target(Some(name));
    let code = match reason {
        "Unauthorized" => 401,
        "Forbidden" => 403,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    let mut details = target.details();
    details["causes"] = json!([{"message": message}]);
    let text = format!("{} \"{name}\" is forbidden: {message}", target.qualified());
    status::failure(code, reason, &text, Some(details))
}

/// Whether `rules` (resource rules and selectors, as a policy's match constraints write them)
/// select `write`, its namespace read from `store`.
pub fn selects(store: &Store, rules: &Value, write: &Write) -> bool {
    matches(rules, write, namespace_of(store, write), false)
}

/// Whether `m` (a policy's match constraints or a binding's match resources) selects the write;
/// a binding without resource rules narrows by its selectors only (`any_resource`).
fn matches(m: &Value, write: &Write, namespace: Option<&Value>, any_resource: bool) -> bool {
    if m.is_null() {
        return false;
    }
    let selector_ok = |key: &str, target: Option<&Value>| {
        let Some(s) = m.get(key).filter(|s| !s.is_null()) else {
            return true;
        };
        match (LabelSelector::from_label_selector(s), target) {
            (Ok(sel), Some(t)) => sel.is_empty() || sel.matches_object(t),
            (Ok(sel), None) => sel.is_empty(),
            (Err(_), _) => false,
        }
    };
    let object = if write.object.is_null() {
        write.old
    } else {
        Some(write.object)
    };
    // Cluster-scoped objects are not subject to namespace selectors.
    let namespace_ok = !write.rt.namespaced || selector_ok("namespaceSelector", namespace);
    let rules = |key: &str| {
        m[key]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| rule_matches(r, write))
    };
    let included =
        rules("resourceRules") || (any_resource && m["resourceRules"].as_array().is_none_or(Vec::is_empty));
    namespace_ok && selector_ok("objectSelector", object) && included && !rules("excludeResourceRules")
}

fn rule_matches(rule: &Value, write: &Write) -> bool {
    let listed = |key: &str, value: &str| {
        rule[key]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "*" || x == value))
    };
    let scope_ok = match rule["scope"].as_str() {
        Some("Cluster") => !write.rt.namespaced,
        Some("Namespaced") => write.rt.namespaced,
        _ => true,
    };
    let name = write.object["metadata"]["name"].as_str().unwrap_or("");
    let names_ok = rule["resourceNames"]
        .as_array()
        .is_none_or(|n| n.is_empty() || n.iter().any(|x| x == name));
    listed("operations", write.operation)
        && listed("apiGroups", write.rt.group)
        && listed("apiVersions", write.version)
        && listed("resources", write.rt.resource)
        && scope_ok
        && names_ok
}

/// The CEL variables of one evaluation.
struct Vars {
    values: Map<String, Value>,
}

impl Activation for Vars {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.values.get(name).cloned()
    }
}

/// The CEL variables a policy's expressions see for `write`, its `variables` evaluated in order.
fn activation(spec: &Value, write: &Write, namespace: Option<&Value>) -> Vars {
    let mut vars = Vars { values: Map::new() };
    vars.values.insert("object".into(), write.object.clone());
    vars.values
        .insert("oldObject".into(), write.old.cloned().unwrap_or(Value::Null));
    vars.values.insert("params".into(), Value::Null);
    vars.values.insert(
        "namespaceObject".into(),
        namespace.cloned().unwrap_or(Value::Null),
    );
    vars.values.insert("request".into(), request(write));
    let mut variables = Map::new();
    for v in spec["variables"].as_array().into_iter().flatten() {
        vars.values
            .insert("variables".into(), Value::Object(variables.clone()));
        let value = evaluate(v["expression"].as_str().unwrap_or(""), &vars).unwrap_or(Value::Null);
        variables.insert(v["name"].as_str().unwrap_or("").to_string(), value);
    }
    vars.values.insert("variables".into(), Value::Object(variables));
    vars
}

/// The first failing validation of a policy, if any (match conditions that do not hold skip
/// the policy; an expression that cannot be evaluated fails under `failurePolicy: Fail`).
fn violation(spec: &Value, write: &Write, namespace: Option<&Value>) -> Option<Violation> {
    let fail_closed = spec["failurePolicy"].as_str() != Some("Ignore");
    let vars = activation(spec, write, namespace);
    match conditions_hold(spec, &vars) {
        Ok(true) => {}
        Ok(false) => return None,
        Err(_) if !fail_closed => return None,
        Err(message) => {
            return Some(Violation {
                message,
                reason: "Invalid".into(),
            });
        }
    }
    for validation in spec["validations"].as_array().into_iter().flatten() {
        let expression = validation["expression"].as_str().unwrap_or("");
        let message = match evaluate(expression, &vars) {
            Ok(Value::Bool(true)) => continue,
            Ok(_) => validation["messageExpression"]
                .as_str()
                .and_then(|m| evaluate(m, &vars).ok())
                .and_then(|m| m.as_str().map(str::to_string))
                .or_else(|| validation["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| format!("failed expression: {expression}")),
            Err(_) if !fail_closed => continue,
            Err(e) => format!("expression '{expression}' resulted in error: {e}"),
        };
        return Some(Violation {
            message,
            reason: validation["reason"].as_str().unwrap_or("Invalid").to_string(),
        });
    }
    None
}

/// Whether every match condition of a policy holds; why not, when one cannot be evaluated.
fn conditions_hold(spec: &Value, vars: &Vars) -> Result<bool, String> {
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        match evaluate(condition["expression"].as_str().unwrap_or(""), vars) {
            Ok(Value::Bool(true)) => {}
            Ok(_) => return Ok(false),
            Err(e) => return Err(format!("failed to evaluate match condition: {e}")),
        }
    }
    Ok(true)
}

fn evaluate(source: &str, vars: &Vars) -> Result<Value, String> {
    let expr = cel::compile(source).map_err(|e| e.to_string())?;
    cel::eval(&expr, vars).map_err(|e| e.to_string())
}

/// CEL's `request`: the admission request's attributes.
fn request(write: &Write) -> Value {
    let name = write.object["metadata"]["name"]
        .as_str()
        .or_else(|| write.old.and_then(|o| o["metadata"]["name"].as_str()))
        .unwrap_or("");
    json!({
        "kind": {"group": write.rt.group, "version": write.version, "kind": write.rt.kind},
        "resource": {"group": write.rt.group, "version": write.version, "resource": write.rt.resource},
        "name": name,
        "namespace": write.namespace,
        "operation": write.operation,
        "userInfo": {"username": write.user.name, "uid": write.user.uid, "groups": write.user.groups},
        "dryRun": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::step;

    /// A bound mutating policy labels what it matches in the binding's namespaces (its apply
    /// configuration merged in, a JSON patch applied after), and nothing elsewhere.
    #[test]
    fn a_bound_mutating_policy_changes_what_it_selects() {
        let mut store = Store::new();
        store.put(
            &resources::MUTATINGPOLICIES.key(),
            json!({"metadata": {"name": "stamp"}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "variables": [{"name": "team", "expression": "'platform'"}],
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
                    "Object{metadata: Object.metadata{labels: {\"team\": variables.team}}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression":
                    "[JSONPatch{op: \"add\", path: \"/data/stamped\", value: \"yes\"}]"}}
            ]}}),
        );
        store.put(
            &resources::MUTATINGPOLICYBINDINGS.key(),
            json!({"metadata": {"name": "stamp"}, "spec": {"policyName": "stamp",
                "matchResources": {"namespaceSelector": {"matchLabels": {"team": "yes"}}}}}),
        );
        for (name, team) in [("in", "yes"), ("out", "no")] {
            store.put(
                &resources::NAMESPACES.key(),
                json!({"metadata": {"name": name, "labels": {"team": team}}}),
            );
        }
        let user = UserInfo {
            name: "admin".into(),
            uid: "admin".into(),
            groups: vec![],
        };
        let object = json!({"metadata": {"name": "c", "labels": {"app": "web"}}, "data": {"a": "1"}});
        let write = |namespace: &'static str| Write {
            rt: &resources::CONFIGMAPS,
            version: "v1",
            operation: "CREATE",
            object: &object,
            old: None,
            namespace,
            user: &user,
        };
        let mutated = mutate(&store, &write("in")).unwrap().expect("a mutation");
        assert_eq!(
            mutated["metadata"]["labels"],
            json!({"app": "web", "team": "platform"})
        );
        assert_eq!(mutated["data"], json!({"a": "1", "stamped": "yes"}));
        assert_eq!(mutate(&store, &write("out")).unwrap(), None);
    }

    /// 22-admission-misc: the recorded policy and binding deny step 11 and admit step 12.
    #[test]
    fn recorded_policy_denies_like_the_transcript() {
        let mut store = Store::new();
        let file = "22-admission-misc.json";
        store.put(
            &resources::VALIDATINGPOLICIES.key(),
            step(file, 7)["response"]["body"].clone(),
        );
        store.put(
            &resources::VALIDATINGPOLICYBINDINGS.key(),
            step(file, 8)["response"]["body"].clone(),
        );
        store.put(
            &resources::NAMESPACES.key(),
            step(file, 0)["response"]["body"].clone(),
        );
        let user = UserInfo {
            name: "admin".into(),
            uid: "admin".into(),
            groups: vec!["system:masters".into()],
        };
        let write = |object: &Value| {
            let w = Write {
                rt: &resources::CONFIGMAPS,
                version: "v1",
                operation: "CREATE",
                object,
                old: None,
                namespace: "g-22-admission-misc",
                user: &user,
            };
            admit(&store, &w)
        };
        let denied = write(&step(file, 11)["body"]).unwrap_err();
        assert_eq!(denied.code, 422);
        assert_eq!(denied.body, step(file, 11)["response"]["body"]);
        assert!(write(&step(file, 12)["body"]).is_ok());
    }
}
