//! RBAC authorization over Role/ClusterRole/(Cluster)RoleBinding objects, like kube-apiserver's
//! `--authorization-mode=RBAC` with the `system:masters` shortcut.
//!
//! Aggregated ClusterRoles are evaluated as the clusterrole-aggregation controller would fill
//! them. Forbidden bodies and SelfSubjectRulesReview statuses match the 14-rbac transcript.

mod bootstrap;

use crate::selectors::LabelSelector;
use crate::validation::str_at;
use serde_json::{Map, Value, json};

use bootstrap::MASTERS;
pub use bootstrap::bootstrap_policy;

/// The authenticated user as the authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// User name, e.g. `system:serviceaccount:ns:name` or `system:anonymous`.
    pub name: String,
    /// Groups, including `system:authenticated` / `system:unauthenticated`.
    pub groups: Vec<String>,
}

/// What a request wants to do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributes {
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection.
    pub verb: String,
    /// API group, "" for the core group.
    pub api_group: String,
    /// Resource (plural), empty for non-resource requests.
    pub resource: String,
    /// Subresource such as `status` or `scale`.
    pub subresource: Option<String>,
    /// Namespace of the request; None at cluster scope.
    pub namespace: Option<String>,
    /// Object name; None for list/create/collection requests.
    pub name: Option<String>,
    /// Path of a non-resource request (`/version`); Some makes this a non-resource request.
    pub non_resource_path: Option<String>,
}

/// The RBAC objects currently stored.
#[derive(Debug, Clone, Default)]
pub struct Policy<'a> {
    /// Roles of every namespace (matched by `metadata.namespace`).
    pub roles: Vec<&'a Value>,
    pub cluster_roles: Vec<&'a Value>,
    /// RoleBindings of every namespace.
    pub role_bindings: Vec<&'a Value>,
    pub cluster_role_bindings: Vec<&'a Value>,
}

/// An authorization decision with the reason SelfSubjectAccessReview reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// E.g. `RBAC: allowed by RoleBinding "b/ns" of Role "r" to User "u"`; empty when denied.
    pub reason: String,
}

/// True when `user` may do `attrs`.
pub fn authorize(policy: &Policy, user: &UserInfo, attrs: &Attributes) -> bool {
    decide(policy, user, attrs).allowed
}

/// The decision with its reason.
pub fn decide(policy: &Policy, user: &UserInfo, attrs: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == MASTERS) {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut reason = None;
    visit_rules(policy, user, attrs.namespace.as_deref(), &mut |source, rule| {
        if rule_allows(rule, attrs) {
            reason = Some(format!("RBAC: allowed by {source}"));
            return false;
        }
        true
    });
    match reason {
        Some(reason) => Decision {
            allowed: true,
            reason,
        },
        None => Decision {
            allowed: false,
            reason: String::new(),
        },
    }
}

/// Calls `visit(source description, rule)` for every rule that applies to `user` in
/// `namespace` (cluster role bindings first, then role bindings of that namespace) until it
/// returns false.
fn visit_rules(
    policy: &Policy,
    user: &UserInfo,
    namespace: Option<&str>,
    visit: &mut dyn FnMut(&str, &Value) -> bool,
) {
    let mut crbs = policy.cluster_role_bindings.clone();
    crbs.sort_by_key(|b| name_of(b));
    for binding in crbs {
        let Some(subject) = matching_subject(binding, user, "") else {
            continue;
        };
        let role_name = str_at(binding, "/roleRef/name");
        let source = format!(
            "ClusterRoleBinding {} of ClusterRole {} to {}",
            quote(name_of(binding)),
            quote(role_name),
            describe_subject(subject, "")
        );
        for rule in cluster_role_rules(policy, role_name) {
            if !visit(&source, &rule) {
                return;
            }
        }
    }
    let Some(ns) = namespace.filter(|n| !n.is_empty()) else {
        return;
    };
    let mut rbs: Vec<&Value> = policy
        .role_bindings
        .iter()
        .copied()
        .filter(|b| str_at(b, "/metadata/namespace") == ns)
        .collect();
    rbs.sort_by_key(|b| name_of(b));
    for binding in rbs {
        let Some(subject) = matching_subject(binding, user, ns) else {
            continue;
        };
        let role_kind = str_at(binding, "/roleRef/kind");
        let role_name = str_at(binding, "/roleRef/name");
        let source = format!(
            "RoleBinding {} of {role_kind} {} to {}",
            quote(&format!("{}/{ns}", name_of(binding))),
            quote(role_name),
            describe_subject(subject, ns)
        );
        let rules = if role_kind == "ClusterRole" {
            cluster_role_rules(policy, role_name)
        } else {
            policy
                .roles
                .iter()
                .find(|r| name_of(r) == role_name && str_at(r, "/metadata/namespace") == ns)
                .map(|r| own_rules(r))
                .unwrap_or_default()
        };
        for rule in rules {
            if !visit(&source, &rule) {
                return;
            }
        }
    }
}

fn name_of(v: &Value) -> &str {
    str_at(v, "/metadata/name")
}

fn quote(s: &str) -> String {
    crate::validation::go_quote(s)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn own_rules(role: &Value) -> Vec<Value> {
    role.get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The rules of a ClusterRole, aggregated when it has an `aggregationRule`: what the
/// clusterrole-aggregation controller writes into an aggregated role's `rules`.
pub fn cluster_role_rules(policy: &Policy, name: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    aggregated_rules(policy, name, &mut seen)
}

fn aggregated_rules(policy: &Policy, name: &str, seen: &mut Vec<String>) -> Vec<Value> {
    if seen.iter().any(|s| s == name) {
        return Vec::new();
    }
    seen.push(name.to_string());
    let Some(role) = policy.cluster_roles.iter().find(|r| name_of(r) == name) else {
        return Vec::new();
    };
    let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    else {
        return own_rules(role);
    };
    let selectors: Vec<LabelSelector> = selectors
        .iter()
        .filter_map(|s| LabelSelector::from_label_selector(s).ok())
        .collect();
    let mut members: Vec<&Value> = policy
        .cluster_roles
        .iter()
        .copied()
        .filter(|r| name_of(r) != name && selectors.iter().any(|s| !s.is_empty() && s.matches_object(r)))
        .collect();
    members.sort_by_key(|r| name_of(r));
    let mut rules: Vec<Value> = Vec::new();
    for member in members {
        for rule in aggregated_rules(policy, name_of(member), seen) {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    rules
}

/// The binding's first subject that names `user`.
fn matching_subject<'a>(binding: &'a Value, user: &UserInfo, binding_ns: &str) -> Option<&'a Value> {
    binding.get("subjects")?.as_array()?.iter().find(|s| {
        let name = str_at(s, "/name");
        match str_at(s, "/kind") {
            "User" => user.name == name,
            "Group" => user.groups.iter().any(|g| g == name),
            "ServiceAccount" => {
                let ns = match str_at(s, "/namespace") {
                    "" => binding_ns,
                    ns => ns,
                };
                !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
            }
            _ => false,
        }
    })
}

fn describe_subject(subject: &Value, binding_ns: &str) -> String {
    let kind = str_at(subject, "/kind");
    let name = str_at(subject, "/name");
    if kind == "ServiceAccount" {
        let ns = match str_at(subject, "/namespace") {
            "" => binding_ns,
            ns => ns,
        };
        return format!("{kind} {}", quote(&format!("{name}/{ns}")));
    }
    format!("{kind} {}", quote(name))
}

fn rule_allows(rule: &Value, attrs: &Attributes) -> bool {
    let verbs = strings(rule, "verbs");
    if !verbs.iter().any(|v| v == "*" || *v == attrs.verb) {
        return false;
    }
    if let Some(path) = &attrs.non_resource_path {
        return strings(rule, "nonResourceURLs").iter().any(|u| {
            u == "*" || u == path || u.strip_suffix('*').is_some_and(|prefix| path.starts_with(prefix))
        });
    }
    let groups = strings(rule, "apiGroups");
    if !groups.iter().any(|g| g == "*" || *g == attrs.api_group) {
        return false;
    }
    let sub = attrs.subresource.as_deref().unwrap_or("");
    let combined = if sub.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{sub}", attrs.resource)
    };
    let resource_ok = strings(rule, "resources")
        .iter()
        .any(|r| r == "*" || *r == combined || (!sub.is_empty() && r.strip_prefix("*/") == Some(sub)));
    if !resource_ok {
        return false;
    }
    let names = strings(rule, "resourceNames");
    names.is_empty() || attrs.name.as_ref().is_some_and(|n| names.contains(n))
}

/// The 403 `Status` body for a denied request (14-rbac).
pub fn forbidden_status(user: &UserInfo, attrs: &Attributes) -> Value {
    let mut details = Map::new();
    let message = if let Some(path) = &attrs.non_resource_path {
        format!(
            "forbidden: User {} cannot {} path {}",
            quote(&user.name),
            attrs.verb,
            quote(path)
        )
    } else {
        let mut resource = attrs.resource.clone();
        if let Some(sub) = attrs.subresource.as_deref().filter(|s| !s.is_empty()) {
            resource = format!("{resource}/{sub}");
        }
        let scope = match attrs.namespace.as_deref().filter(|n| !n.is_empty()) {
            Some(ns) => format!("in the namespace {}", quote(ns)),
            None => "at the cluster scope".to_string(),
        };
        let reason = format!(
            "User {} cannot {} resource {} in API group {} {scope}",
            quote(&user.name),
            attrs.verb,
            quote(&resource),
            quote(&attrs.api_group)
        );
        let qualified = if attrs.api_group.is_empty() {
            attrs.resource.clone()
        } else {
            format!("{}.{}", attrs.resource, attrs.api_group)
        };
        let name = attrs.name.as_deref().unwrap_or("");
        if !name.is_empty() {
            details.insert("name".into(), json!(name));
        }
        if !attrs.api_group.is_empty() {
            details.insert("group".into(), json!(attrs.api_group));
        }
        details.insert("kind".into(), json!(attrs.resource));
        if name.is_empty() {
            format!("{qualified} is forbidden: {reason}")
        } else {
            format!("{qualified} {} is forbidden: {reason}", quote(name))
        }
    };
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Forbidden", "details": details, "code": 403
    })
}

/// The `status` of a SelfSubjectRulesReview for `user` in `namespace`.
pub fn rules_review(policy: &Policy, user: &UserInfo, namespace: &str) -> Value {
    let mut resource_rules: Vec<Value> = Vec::new();
    let mut non_resource_rules: Vec<Value> = Vec::new();
    let push = |list: &mut Vec<Value>, rule: Value| {
        if !list.contains(&rule) {
            list.push(rule);
        }
    };
    let everything = || json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]});
    if user.groups.iter().any(|g| g == MASTERS) {
        push(&mut resource_rules, everything());
        push(
            &mut non_resource_rules,
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
        );
    }
    visit_rules(policy, user, Some(namespace), &mut |_, rule| {
        let verbs = json!(strings(rule, "verbs"));
        if !strings(rule, "resources").is_empty() {
            let mut r = Map::new();
            r.insert("verbs".into(), verbs.clone());
            for key in ["apiGroups", "resources", "resourceNames"] {
                let values = strings(rule, key);
                if !values.is_empty() {
                    r.insert(key.into(), json!(values));
                }
            }
            push(&mut resource_rules, Value::Object(r));
        }
        let urls = strings(rule, "nonResourceURLs");
        if !urls.is_empty() {
            push(
                &mut non_resource_rules,
                json!({"verbs": verbs, "nonResourceURLs": urls}),
            );
        }
        true
    });
    json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::golden;

    /// The policy of 14-rbac: bootstrap plus the recorded Role and RoleBindings.
    fn policy_objects() -> Vec<Value> {
        let file = golden("14-rbac.json");
        let mut objects = bootstrap_policy();
        for index in [5, 6, 7] {
            objects.push(file["steps"][index]["response"]["body"].clone());
        }
        objects
    }

    fn policy(objects: &[Value]) -> Policy<'_> {
        let of = |kind: &str| objects.iter().filter(|o| o["kind"] == kind).collect::<Vec<_>>();
        Policy {
            roles: of("Role"),
            cluster_roles: of("ClusterRole"),
            role_bindings: of("RoleBinding"),
            cluster_role_bindings: of("ClusterRoleBinding"),
        }
    }

    fn user(identity: &str) -> UserInfo {
        let (name, groups): (&str, &[&str]) = match identity {
            "admin" => ("admin", &[MASTERS, "system:authenticated"]),
            "restricted" => ("restricted", &["system:authenticated"]),
            "app-planner" => ("app-planner", &["tofu-planners", "system:authenticated"]),
            "anonymous" => ("system:anonymous", &["system:unauthenticated"]),
            sa => (
                sa,
                &[
                    "system:serviceaccounts",
                    "system:serviceaccounts:g-14-rbac",
                    "system:authenticated",
                ],
            ),
        };
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        }
    }

    /// Request attributes of a recorded path (the few shapes 14-rbac uses).
    fn attributes(method: &str, path: &str) -> Attributes {
        let path = path.split('?').next().unwrap();
        if !path.starts_with("/api") {
            return Attributes {
                verb: "get".into(),
                non_resource_path: Some(path.into()),
                ..Default::default()
            };
        }
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (group, rest) = if parts[0] == "api" {
            ("", &parts[2..])
        } else {
            (parts[1], &parts[3..])
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(ns.to_string()), rest),
            _ => (None, rest),
        };
        let name = rest.get(1).map(|n| n.to_string());
        let verb = match (method, name.is_some()) {
            ("GET", true) => "get",
            ("GET", false) => "list",
            ("POST", _) => "create",
            ("DELETE", _) => "delete",
            _ => unreachable!("not used in 14-rbac"),
        };
        Attributes {
            verb: verb.into(),
            api_group: group.into(),
            resource: rest[0].into(),
            namespace,
            name,
            ..Default::default()
        }
    }

    #[test]
    fn requests_of_the_transcript() {
        let objects = policy_objects();
        let policy = policy(&objects);
        let file = golden("14-rbac.json");
        let mut checked = 0;
        for (index, step) in file["steps"].as_array().unwrap().iter().enumerate().skip(8) {
            let identity = step["identity"].as_str().unwrap();
            let path = step["path"].as_str().unwrap();
            if identity == "bogus" || identity == "admin" || path.contains("selfsubject") {
                continue;
            }
            let attrs = attributes(step["method"].as_str().unwrap(), path);
            let u = user(identity);
            let status = step["response"]["status"].as_u64().unwrap();
            assert_eq!(authorize(&policy, &u, &attrs), status != 403, "step {index}");
            if status == 403 {
                assert_eq!(
                    forbidden_status(&u, &attrs),
                    step["response"]["body"],
                    "step {index}"
                );
            }
            checked += 1;
        }
        assert_eq!(checked, 14);
    }

    #[test]
    fn access_and_rules_reviews() {
        let objects = policy_objects();
        let policy = policy(&objects);
        let file = golden("14-rbac.json");
        let planner = user("app-planner");
        for index in [17, 18] {
            let step = &file["steps"][index];
            let ra = &step["body"]["spec"]["resourceAttributes"];
            let attrs = Attributes {
                verb: ra["verb"].as_str().unwrap().into(),
                resource: ra["resource"].as_str().unwrap().into(),
                namespace: Some(ra["namespace"].as_str().unwrap().into()),
                name: Some(ra["name"].as_str().unwrap().into()),
                ..Default::default()
            };
            let decision = decide(&policy, &planner, &attrs);
            let expected = &step["response"]["body"]["status"];
            assert_eq!(decision.allowed, expected["allowed"]);
            assert_eq!(decision.reason, expected["reason"].as_str().unwrap_or(""));
        }
        let review = rules_review(&policy, &planner, "g-14-rbac");
        let expected = &file["steps"][19]["response"]["body"]["status"];
        let as_set = |v: &Value| {
            let mut items: Vec<String> = v.as_array().unwrap().iter().map(Value::to_string).collect();
            items.sort();
            items
        };
        for key in ["resourceRules", "nonResourceRules"] {
            assert_eq!(as_set(&review[key]), as_set(&expected[key]), "{key}");
        }
        assert_eq!(review["incomplete"], false);
    }

    #[test]
    fn rule_forms() {
        let objects = policy_objects();
        let policy = policy(&objects);
        let sa = user("system:serviceaccount:g-14-rbac:tofu-runner");
        let attrs = |verb: &str, group: &str, resource: &str, sub: Option<&str>| Attributes {
            verb: verb.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.map(str::to_string),
            namespace: Some("g-14-rbac".into()),
            ..Default::default()
        };
        // view aggregates system:aggregate-to-view: deployments and their scale, no secrets.
        assert!(authorize(
            &policy,
            &sa,
            &attrs("list", "apps", "deployments", None)
        ));
        assert!(authorize(
            &policy,
            &sa,
            &attrs("get", "apps", "deployments", Some("scale"))
        ));
        assert!(!authorize(
            &policy,
            &sa,
            &attrs("update", "apps", "deployments", Some("scale"))
        ));
        assert!(!authorize(&policy, &sa, &attrs("get", "", "secrets", None)));
        let mut elsewhere = attrs("list", "", "configmaps", None);
        elsewhere.namespace = Some("other".into());
        assert!(!authorize(&policy, &sa, &elsewhere));
        // edit includes view's rules through two aggregation levels.
        let edit = cluster_role_rules(&policy, "edit");
        assert!(
            edit.iter()
                .any(|r| rule_allows(r, &attrs("watch", "apps", "deployments", None)))
        );
        assert!(
            !cluster_role_rules(&policy, "view")
                .iter()
                .any(|r| rule_allows(r, &attrs("get", "", "secrets", None)))
        );
        let wildcard = json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/status"]});
        assert!(rule_allows(
            &wildcard,
            &attrs("get", "apps", "deployments", Some("status"))
        ));
        assert!(!rule_allows(
            &wildcard,
            &attrs("get", "apps", "deployments", None)
        ));
        let anonymous = user("anonymous");
        let path = |p: &str| Attributes {
            verb: "get".into(),
            non_resource_path: Some(p.into()),
            ..Default::default()
        };
        assert!(authorize(
            &policy,
            &anonymous,
            &path("/.well-known/openid-configuration")
        ));
        assert!(!authorize(&policy, &anonymous, &path("/apis")));
        assert_eq!(
            forbidden_status(&anonymous, &path("/apis"))["message"],
            "forbidden: User \"system:anonymous\" cannot get path \"/apis\""
        );
        let mut scale = attrs("update", "apps", "deployments", Some("scale"));
        scale.name = Some("web".into());
        assert_eq!(
            forbidden_status(&sa, &scale)["message"],
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:g-14-rbac:tofu-runner\" cannot update resource \"deployments/scale\" in API group \"apps\" in the namespace \"g-14-rbac\""
        );
        assert!(authorize(
            &policy,
            &user("admin"),
            &attrs("delete", "", "secrets", None)
        ));
    }
}
