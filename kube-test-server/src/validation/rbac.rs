//! Validation of RBAC's Roles and ClusterRoles (their rules) and of RoleBindings and
//! ClusterRoleBindings (roleRef and subjects).

use super::field_error::FieldError;
use super::str_at;
use serde_json::{Value, json};

pub(super) fn validate_rules(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, rule) in object
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if rule
            .get("verbs")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            errs.push(FieldError::required(
                format!("rules[{i}].verbs"),
                "verbs must contain at least one value",
            ));
        }
        let urls = rule
            .get("nonResourceURLs")
            .and_then(Value::as_array)
            .is_some_and(|u| !u.is_empty());
        let resources = rule
            .get("resources")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        if urls && resources {
            errs.push(FieldError::invalid(
                format!("rules[{i}].nonResourceURLs"),
                &rule["nonResourceURLs"],
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        if !urls
            && rule
                .get("apiGroups")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
            && resources
        {
            errs.push(FieldError::required(
                format!("rules[{i}].apiGroups"),
                "resource rules must supply at least one api group",
            ));
        }
    }
    errs
}

pub(super) fn validate_binding(kind: &str, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    // A binding's role never changes (19-rbac-kinds step 8); the value prints as the Go struct.
    if let Some(old) = old
        && old.get("roleRef") != object.get("roleRef")
    {
        let r = &object["roleRef"];
        let value = json!({"APIGroup": r["apiGroup"], "Kind": r["kind"], "Name": r["name"]});
        errs.push(FieldError::invalid("roleRef", &value, "cannot change roleRef"));
        return errs;
    }
    let role_kind = str_at(object, "/roleRef/kind");
    let allowed: &[&str] = if kind == "RoleBinding" {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !allowed.contains(&role_kind) {
        errs.push(FieldError::not_supported(
            "roleRef.kind",
            &json!(role_kind),
            allowed,
        ));
    }
    if str_at(object, "/roleRef/apiGroup") != "rbac.authorization.k8s.io" {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            &json!(str_at(object, "/roleRef/apiGroup")),
            &["rbac.authorization.k8s.io"],
        ));
    }
    if str_at(object, "/roleRef/name").is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    }
    for (i, subject) in object
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("subjects[{i}]");
        if str_at(subject, "/name").is_empty() {
            errs.push(FieldError::required(format!("{path}.name"), ""));
        }
        match str_at(subject, "/kind") {
            "ServiceAccount" => {
                if kind == "ClusterRoleBinding" && str_at(subject, "/namespace").is_empty() {
                    errs.push(FieldError::required(format!("{path}.namespace"), ""));
                }
            }
            "User" | "Group" => {}
            other => errs.push(FieldError::not_supported(
                format!("{path}.kind"),
                &json!(other),
                &["ServiceAccount", "User", "Group"],
            )),
        }
    }
    errs
}
