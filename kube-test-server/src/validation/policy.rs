//! Validation of the policy and cluster-configuration kinds: PodDisruptionBudget,
//! PriorityClass, RuntimeClass, LimitRange, ResourceQuota, webhook configurations,
//! ValidatingAdmissionPolicy (+Binding), APIService and CertificateSigningRequest.
//!
//! Policy expressions are parsed by [`crate::cel`] (syntax only; types are not checked).

use base64::Engine;
use serde_json::{Value, json};

use super::{FieldError, canonical_json, str_at, validate_port_number};
use crate::defaults::Quantity;
use crate::names::{dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_errors};

pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    match kind {
        "PodDisruptionBudget" => pod_disruption_budget(spec),
        "PriorityClass" => priority_class(object, old),
        "RuntimeClass" => runtime_class(object, old),
        "LimitRange" => limit_range(spec),
        "ResourceQuota" => resource_quota(spec, old.map(|o| &o["spec"])),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => webhooks(object),
        "ValidatingAdmissionPolicy" => admission_policy(spec),
        "ValidatingAdmissionPolicyBinding" => policy_binding(spec),
        "APIService" => api_service(object),
        "CertificateSigningRequest" => certificate_request(spec),
        _ => Vec::new(),
    }
}

fn pod_disruption_budget(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (min, max) = (spec.get("minAvailable"), spec.get("maxUnavailable"));
    if min.is_some() && max.is_some() {
        // The internal Go struct, printed as JSON in field order.
        let printed = format!(
            "{{\"MinAvailable\":{},\"Selector\":{},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
            canonical_json(min.unwrap_or(&Value::Null)),
            label_selector_json(spec.get("selector")),
            canonical_json(max.unwrap_or(&Value::Null)),
            canonical_json(spec.get("unhealthyPodEvictionPolicy").unwrap_or(&Value::Null)),
        );
        errs.push(FieldError::invalid_printed(
            "spec",
            &printed,
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (field, value) in [("minAvailable", min), ("maxUnavailable", max)] {
        match value {
            Some(Value::Number(n)) if n.as_i64().is_some_and(|n| n < 0) => errs.push(FieldError::invalid(
                format!("spec.{field}"),
                &json!(n),
                "must be greater than or equal to 0",
            )),
            Some(Value::String(s)) => {
                let percent = s.strip_suffix('%').and_then(|p| p.parse::<u32>().ok());
                match percent {
                    None => errs.push(FieldError::invalid(
                        format!("spec.{field}"),
                        &json!(s),
                        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                    )),
                    Some(p) if p > 100 => errs.push(FieldError::invalid(
                        format!("spec.{field}"),
                        &json!(s),
                        "must not be greater than 100%",
                    )),
                    Some(_) => {}
                }
            }
            _ => {}
        }
    }
    if let Some(p) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !["AlwaysAllow", "IfHealthyBudget"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            &json!(p),
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
    errs
}

/// A `*metav1.LabelSelector` as Go's encoder writes it (json tags, field order).
fn label_selector_json(selector: Option<&Value>) -> String {
    let Some(s) = selector.filter(|s| s.is_object()) else {
        return "null".into();
    };
    let mut parts = Vec::new();
    for key in ["matchLabels", "matchExpressions"] {
        if let Some(v) = s.get(key).filter(|v| !v.is_null()) {
            parts.push(format!("\"{key}\":{}", canonical_json(v)));
        }
    }
    format!("{{{}}}", parts.join(","))
}

const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

fn priority_class(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(object, "/metadata/name");
    let value = object["value"].as_i64().unwrap_or(0);
    if name.starts_with("system-") {
        if !matches!(name, "system-node-critical" | "system-cluster-critical") {
            errs.push(FieldError::forbidden(
                "metadata.name",
                &format!(
                                        "priority class names with 'system-' prefix are reserved for system use only. error: {name} is not a known system priority class"
                ),
            ));
        }
    } else if value > HIGHEST_USER_PRIORITY {
        errs.push(FieldError::forbidden(
            "value",
            &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"),
        ));
    }
    if let Some(p) = object["preemptionPolicy"].as_str()
        && !["Never", "PreemptLowerPriority"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "preemptionPolicy",
            &json!(p),
            &["PreemptLowerPriority", "Never"],
        ));
    }
    if let Some(old) = old {
        if old["value"] != object["value"] {
            errs.push(FieldError::forbidden("value", "may not be changed in an update."));
        }
        if old["preemptionPolicy"] != object["preemptionPolicy"] {
            errs.push(FieldError::invalid(
                "preemptionPolicy",
                &object["preemptionPolicy"],
                "field is immutable",
            ));
        }
    }
    errs
}

fn runtime_class(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let handler = str_at(object, "/handler");
    if handler.is_empty() {
        errs.push(FieldError::required("handler", ""));
    } else {
        for msg in dns1123_label_errors(handler) {
            errs.push(FieldError::invalid("handler", &json!(handler), &msg));
        }
    }
    if let Some(old) = old
        && str_at(old, "/handler") != handler
    {
        errs.push(FieldError::invalid(
            "handler",
            &json!(handler),
            "field is immutable",
        ));
    }
    for (k, v) in object
        .pointer("/overhead/podFixed")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if v.as_str().and_then(Quantity::parse).is_some_and(|q| q < zero()) {
            errs.push(FieldError::invalid(
                format!("overhead.podFixed[{k}]"),
                v,
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

fn zero() -> Quantity {
    Quantity::parse("0").expect("zero parses")
}

fn limit_range(spec: &Value) -> Vec<FieldError> {
    const TYPES: &[&str] = &["Container", "PersistentVolumeClaim", "Pod"];
    let mut errs = Vec::new();
    for (i, item) in spec["limits"].as_array().into_iter().flatten().enumerate() {
        let base = format!("spec.limits[{i}]");
        let kind = str_at(item, "/type");
        if !TYPES.contains(&kind) && !kind.contains('/') {
            errs.push(FieldError::invalid(
                format!("{base}.type"),
                &json!(kind),
                "must be a standard limit type or fully qualified",
            ));
        }
        if kind == "Pod" {
            for field in ["default", "defaultRequest"] {
                if item[field].as_object().is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        format!("{base}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        }
        let get = |list: &str, k: &str| item[list][k].as_str().and_then(Quantity::parse);
        let mut keys: Vec<&String> = ["max", "min", "default", "defaultRequest"]
            .iter()
            .flat_map(|l| item[*l].as_object().into_iter().flatten().map(|(k, _)| k))
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (max, min, default, request) = (
                get("max", k),
                get("min", k),
                get("default", k),
                get("defaultRequest", k),
            );
            // (field the error is on, a, b, message when a > b, the list whose value it shows)
            let checks = [
                (
                    "min",
                    min,
                    max,
                    "min value {a} is greater than max value {b}",
                    "min",
                ),
                (
                    "defaultRequest",
                    min,
                    request,
                    "min value {a} is greater than default request value {b}",
                    "defaultRequest",
                ),
                (
                    "defaultRequest",
                    request,
                    max,
                    "default request value {a} is greater than max value {b}",
                    "defaultRequest",
                ),
                (
                    "defaultRequest",
                    request,
                    default,
                    "default request value {a} is greater than default limit value {b}",
                    "defaultRequest",
                ),
                (
                    "default",
                    min,
                    default,
                    "min value {a} is greater than default value {b}",
                    "min",
                ),
                (
                    "default",
                    default,
                    max,
                    "default value {a} is greater than max value {b}",
                    "max",
                ),
            ];
            for (at, a, b, template, shown) in checks {
                if let (Some(a), Some(b)) = (a, b)
                    && a > b
                {
                    let message = template
                        .replace("{a}", &a.canonical())
                        .replace("{b}", &b.canonical());
                    errs.push(FieldError::invalid(
                        format!("{base}.{at}[{k}]"),
                        &item[shown][k],
                        &message,
                    ));
                }
            }
        }
    }
    errs
}

fn resource_quota(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in spec["hard"].as_object().into_iter().flatten() {
        match v.as_str().and_then(Quantity::parse) {
            Some(q) if q < zero() => errs.push(FieldError::invalid(
                format!("spec.hard[{k}]"),
                v,
                "must be greater than or equal to 0",
            )),
            _ => {}
        }
    }
    const SCOPES: &[&str] = &[
        "BestEffort",
        "CrossNamespacePodAffinity",
        "NotBestEffort",
        "NotTerminating",
        "PriorityClass",
        "Terminating",
        "VolumeAttributesClass",
    ];
    let mut scopes = spec["scopes"].as_array().into_iter().flatten();
    if scopes.any(|s| !s.as_str().is_some_and(|s| SCOPES.contains(&s))) {
        errs.push(FieldError::invalid(
            "spec.scopes",
            &spec["scopes"],
            "unsupported scope",
        ));
    }
    if let Some(old) = old {
        // kube-apiserver compares the scopes as sets (ValidateResourceQuotaUpdate): a write
        // that lists them in another order changes nothing.
        let set = |v: Option<&Value>| -> std::collections::BTreeSet<String> {
            v.and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        };
        if set(old.get("scopes")) != set(spec.get("scopes")) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                spec.get("scopes").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
        if old.get("scopeSelector") != spec.get("scopeSelector") {
            errs.push(FieldError::invalid(
                "spec.scopeSelector",
                spec.get("scopeSelector").unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
    errs
}

/// apimachinery's `IsFullyQualifiedName`: a DNS subdomain with at least three segments.
fn fully_qualified_name_errors(path: &str, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = dns1123_subdomain_errors(name);
    if !errs.is_empty() {
        return vec![FieldError::invalid(path, &json!(name), &errs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            &json!(name),
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

fn webhooks(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, hook) in object["webhooks"].as_array().into_iter().flatten().enumerate() {
        let base = format!("webhooks[{i}]");
        let name = str_at(hook, "/name");
        errs.extend(fully_qualified_name_errors(&format!("{base}.name"), name));
        if !name.is_empty() && names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{base}.name"), &json!(name)));
        }
        names.push(name);
        for (j, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
            errs.extend(rule_errors(rule, &format!("{base}.rules[{j}]")));
        }
        let enums: &[(&str, &[&str])] = &[
            ("failurePolicy", &["Fail", "Ignore"]),
            ("matchPolicy", &["Equivalent", "Exact"]),
            ("reinvocationPolicy", &["IfNeeded", "Never"]),
        ];
        for (field, allowed) in enums {
            if let Some(v) = hook[*field].as_str()
                && !allowed.contains(&v)
            {
                errs.push(FieldError::not_supported(
                    format!("{base}.{field}"),
                    &json!(v),
                    allowed,
                ));
            }
        }
        match hook["sideEffects"].as_str() {
            None => errs.push(FieldError::required(
                format!("{base}.sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => errs.push(FieldError::not_supported(
                format!("{base}.sideEffects"),
                &json!(other),
                &["None", "NoneOnDryRun"],
            )),
        }
        if let Some(t) = hook["timeoutSeconds"].as_i64()
            && !(1..=30).contains(&t)
        {
            errs.push(FieldError::invalid(
                format!("{base}.timeoutSeconds"),
                &json!(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
        let versions: Vec<&str> = hook["admissionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if versions.is_empty() {
            errs.push(FieldError::required(
                format!("{base}.admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            ));
        } else if !versions.iter().any(|v| matches!(*v, "v1" | "v1beta1")) {
            errs.push(FieldError::invalid(
                format!("{base}.admissionReviewVersions"),
                &hook["admissionReviewVersions"],
                "must include at least one of v1, v1beta1",
            ));
        }
        errs.extend(client_config(
            &hook["clientConfig"],
            &format!("{base}.clientConfig"),
        ));
    }
    errs
}

fn rule_errors(rule: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["operations", "apiGroups", "apiVersions", "resources"] {
        if rule[field].as_array().is_none_or(Vec::is_empty) {
            errs.push(FieldError::required(format!("{base}.{field}"), ""));
        }
    }
    if let Some(scope) = rule["scope"].as_str()
        && !["*", "Cluster", "Namespaced"].contains(&scope)
    {
        errs.push(FieldError::not_supported(
            format!("{base}.scope"),
            &json!(scope),
            &["*", "Cluster", "Namespaced"],
        ));
    }
    errs
}

fn client_config(config: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let url = config.get("url").filter(|u| !u.is_null());
    let service = config.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => {
            errs.push(FieldError::required(
                base,
                "exactly one of url or service is required",
            ));
        }
        (Some(u), None) => {
            if !u.as_str().unwrap_or("").starts_with("https://") {
                errs.push(FieldError::invalid(
                    format!("{base}.url"),
                    u,
                    "'https' is the only allowed URL scheme",
                ));
            }
        }
        (None, Some(s)) => {
            for field in ["name", "namespace"] {
                if str_at(s, &format!("/{field}")).is_empty() {
                    errs.push(FieldError::required(
                        format!("{base}.service.{field}"),
                        &format!("service {field} is required"),
                    ));
                }
            }
            if let Some(port) = s.get("port") {
                validate_port_number(&format!("{base}.service.port"), Some(port), &mut errs);
            }
        }
    }
    errs
}

fn admission_policy(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(p) = spec["failurePolicy"].as_str()
        && !["Fail", "Ignore"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.failurePolicy",
            &json!(p),
            &["Fail", "Ignore"],
        ));
    }
    match spec.get("matchConstraints").filter(|m| !m.is_null()) {
        None => errs.push(FieldError::required("spec.matchConstraints", "")),
        Some(m) => {
            let rules = m["resourceRules"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            if rules.is_empty() {
                errs.push(FieldError::required("spec.matchConstraints.resourceRules", ""));
            }
            for (i, rule) in rules.iter().enumerate() {
                errs.extend(rule_errors(
                    rule,
                    &format!("spec.matchConstraints.resourceRules[{i}]"),
                ));
            }
        }
    }
    let validations = spec["validations"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if validations.is_empty() && spec["auditAnnotations"].as_array().is_none_or(Vec::is_empty) {
        for field in ["spec.validations", "spec.auditAnnotations"] {
            errs.push(FieldError::required(
                field,
                "validations or auditAnnotations must contain at least one item",
            ));
        }
    }
    let mut expressions: Vec<(String, &str)> = Vec::new();
    for (i, v) in validations.iter().enumerate() {
        if str_at(v, "/expression").trim().is_empty() {
            errs.push(FieldError::required(
                format!("spec.validations[{i}].expression"),
                "",
            ));
        } else {
            expressions.push((
                format!("spec.validations[{i}].expression"),
                str_at(v, "/expression"),
            ));
        }
        if let Some(m) = v["messageExpression"].as_str() {
            expressions.push((format!("spec.validations[{i}].messageExpression"), m));
        }
    }
    for (key, field) in [("matchConditions", "expression"), ("variables", "expression")] {
        for (i, item) in spec[key].as_array().into_iter().flatten().enumerate() {
            expressions.push((
                format!("spec.{key}[{i}].{field}"),
                str_at(item, &format!("/{field}")),
            ));
        }
    }
    for (path, expression) in expressions {
        if let Err(e) = crate::cel::compile(expression) {
            errs.push(FieldError::invalid(
                path,
                &json!(expression),
                &format!("compilation failed: {e}"),
            ));
        }
    }
    errs
}

fn policy_binding(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if str_at(spec, "/policyName").is_empty() {
        errs.push(FieldError::required("spec.policyName", ""));
    }
    let actions = spec["validationActions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if actions.is_empty() {
        errs.push(FieldError::required(
            "spec.validationActions",
            "at least one validation action is required",
        ));
    }
    let mut seen: Vec<&Value> = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let path = format!("spec.validationActions[{i}]");
        if !action
            .as_str()
            .is_some_and(|a| ["Audit", "Deny", "Warn"].contains(&a))
        {
            errs.push(FieldError::not_supported(
                &path,
                action,
                &["Audit", "Deny", "Warn"],
            ));
        }
        if seen.contains(&action) {
            errs.push(FieldError::duplicate(&path, action));
        }
        seen.push(action);
    }
    if seen.contains(&&json!("Deny")) && seen.contains(&&json!("Warn")) {
        errs.push(FieldError::invalid(
            "spec.validationActions",
            &spec["validationActions"],
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    errs
}

fn api_service(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = &object["spec"];
    let (group, version) = (str_at(spec, "/group"), str_at(spec, "/version"));
    let required = format!("{version}.{group}");
    let name = str_at(object, "/metadata/name");
    if !name.is_empty() && name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            &json!(name),
            &format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for msg in dns1123_subdomain_errors(group) {
            errs.push(FieldError::invalid("spec.group", &json!(group), &msg));
        }
    }
    for msg in dns1035_label_errors(version) {
        errs.push(FieldError::invalid("spec.version", &json!(version), &msg));
    }
    let priorities = [
        (
            "groupPriorityMinimum",
            20000,
            "must be positive and less than 20000",
        ),
        ("versionPriority", 1000, "must be positive and less than 1000"),
    ];
    for (field, max, message) in priorities {
        let value = spec[field].as_i64().unwrap_or(0);
        if value <= 0 || value > max {
            errs.push(FieldError::invalid(
                format!("spec.{field}"),
                &json!(value),
                message,
            ));
        }
    }
    let service = spec.get("service").filter(|s| !s.is_null());
    if service.is_none() {
        if let Some(bundle) = spec["caBundle"].as_str().filter(|b| !b.is_empty()) {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .map_or(0, |b| b.len());
            errs.push(FieldError::invalid(
                "spec.caBundle",
                &json!(format!("{bytes} bytes")),
                "local APIServices may not have a caBundle",
            ));
        }
    } else if let Some(s) = service {
        for field in ["name", "namespace"] {
            if str_at(s, &format!("/{field}")).is_empty() {
                errs.push(FieldError::required(format!("spec.service.{field}"), ""));
            }
        }
    }
    errs
}

fn certificate_request(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let request = str_at(spec, "/request");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(request)
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&decoded);
    if !text.contains("-----BEGIN CERTIFICATE REQUEST-----") {
        errs.push(FieldError::invalid(
            "spec.request",
            &json!(request),
            "PEM block type must be CERTIFICATE REQUEST",
        ));
    }
    if str_at(spec, "/signerName").is_empty() {
        errs.push(FieldError::required("spec.signerName", ""));
    }
    if let Some(seconds) = spec["expirationSeconds"].as_i64()
        && seconds < 600
    {
        errs.push(FieldError::invalid(
            "spec.expirationSeconds",
            &json!(seconds),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quotas_scopes_are_compared_as_a_set() {
        let old = json!({"scopes": ["NotTerminating", "BestEffort"]});
        let reordered = json!({"scopes": ["BestEffort", "NotTerminating"]});
        assert!(
            resource_quota(&reordered, Some(&old)).is_empty(),
            "the same scopes"
        );
        let changed = json!({"scopes": ["BestEffort"]});
        let errs = resource_quota(&changed, Some(&old));
        assert_eq!(errs.len(), 1, "{errs:?}");
    }
}
