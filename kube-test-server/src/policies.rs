//! ValidatingAdmissionPolicy admission: each binding applies its policy to the writes both
//! their match resources select, and a validation that evaluates to false denies the write
//! when the binding's actions include `Deny` (22-admission-misc steps 11 and 12).
//!
//! Parameters (`paramKind`) are not looked up (`params` is null); `Warn` and `Audit` actions do
//! not change the answer.

use serde_json::{Map, Value, json};

use crate::auth::UserInfo;
use crate::cel::{self, Activation};
use crate::resources::{self, ResourceType};
use crate::selectors::LabelSelector;
use crate::status::{self, ApiError};
use crate::store::Store;

/// The write under admission.
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
    let bindings: Vec<&Value> = store
        .list(&resources::VALIDATINGPOLICYBINDINGS.key(), None)
        .collect();
    if bindings.is_empty() {
        return Ok(());
    }
    let namespace = (!write.namespace.is_empty())
        .then(|| store.get(&resources::NAMESPACES.key(), "", write.namespace))
        .flatten();
    for binding in bindings {
        let policy_name = binding["spec"]["policyName"].as_str().unwrap_or("");
        let Some(policy) = store.get(&resources::VALIDATINGPOLICIES.key(), "", policy_name) else {
            continue;
        };
        let spec = &policy["spec"];
        if !matches(&spec["matchConstraints"], write, namespace, false) {
            continue;
        }
        if let Some(narrower) = binding["spec"].get("matchResources").filter(|m| !m.is_null())
            && !matches(narrower, write, namespace, true)
        {
            continue;
        }
        let denies = binding["spec"]["validationActions"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "Deny"));
        if let Some(message) = violation(spec, write, namespace)
            && denies
        {
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

/// The first failing validation of a policy, if any (match conditions that do not hold skip
/// the policy; an expression that cannot be evaluated fails under `failurePolicy: Fail`).
fn violation(spec: &Value, write: &Write, namespace: Option<&Value>) -> Option<Violation> {
    let fail_closed = spec["failurePolicy"].as_str() != Some("Ignore");
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
    for condition in spec["matchConditions"].as_array().into_iter().flatten() {
        match evaluate(condition["expression"].as_str().unwrap_or(""), &vars) {
            Ok(Value::Bool(true)) => {}
            Ok(_) => return None,
            Err(_) if !fail_closed => return None,
            Err(e) => {
                return Some(Violation {
                    message: format!("failed to evaluate match condition: {e}"),
                    reason: "Invalid".into(),
                });
            }
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
