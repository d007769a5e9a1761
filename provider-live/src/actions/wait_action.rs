//! `kubernetes_wait`: waits until an object of any kind (`api_version`, `kind`, `name`,
//! `namespace`) meets every criterion given: status `condition`s (type and status, `True` by
//! default, as `kubectl wait --for=condition=...`), `fields` with exact values
//! (`status.phase = "Running"`), and `jsonpath` expressions (`kubectl wait --for=jsonpath=...`
//! syntax, with or without a value). Read-only: it never writes, so it acts on objects of any
//! estate. An object that does not exist yet is waited for too.
//!
//! Each look reports what is still missing (`db: condition Available is False
//! (MinimumReplicasUnavailable)`); a timeout says what the object looked like at the last
//! look and why that was not enough. A Secret's values are never shown.

use std::sync::Arc;

use async_trait::async_trait;
use jsonpath_rust::JsonPath;
use jsonpath_rust::parser::parse_json_path;
use plugin_runtime::{
    Action, Attribute, AttributePath, Block, Diagnostic, Diagnostics, InvokeRequest, NestedBlock, Nesting,
    Progress, Schema, Type, Value,
};
use serde_json::Value as Json;

use super::{ActionError, POLL_INTERVAL, invalid, namespace_of, outcome, text, timeout_of, validate_timeout};
use crate::context::Context;
use crate::objects::{self, Pace, Readiness, Target};

const TYPE_NAME: &str = "kubernetes_wait";

pub struct Wait {
    ctx: Arc<Context>,
}

impl Wait {
    pub fn new(ctx: Arc<Context>) -> Wait {
        Wait { ctx }
    }

    async fn wait(&self, config: &Value, progress: &Progress) -> Result<Diagnostics, ActionError> {
        let connection = self.ctx.connection()?;
        let client = &connection.client;
        let api_version = text(config, "api_version").unwrap_or_default();
        let kind = text(config, "kind").unwrap_or_default();
        let resolved = self.ctx.discovery.resolve(client, api_version, kind).await?;
        let target = Target {
            resource: resolved.resource,
            namespace: resolved.namespaced.then(|| namespace_of(&self.ctx, config)),
            name: text(config, "name").unwrap_or_default().to_string(),
        };
        let criteria = Criteria::of(config, kind == "Secret");
        let name = &target.name;
        let check = |live: Option<&Json>| {
            let readiness = criteria.check(live);
            match &readiness {
                Readiness::Ready => progress.report(format!("{name}: {}", criteria.describe())),
                Readiness::Waiting(why) | Readiness::Failed(why) => progress.report(format!("{name}: {why}")),
            }
            readiness
        };
        let pace = Pace::new(POLL_INTERVAL, timeout_of(config));
        let what = format!("meet {}", criteria.describe());
        match objects::poll(client, &target, None, pace, &what, check).await {
            Ok(_) => Ok(Diagnostics::new()),
            Err(error) => Err(ActionError::wait(error, "Nothing was changed.")),
        }
    }
}

/// What the object must meet.
#[derive(Debug, Default)]
struct Criteria {
    /// (type, status)
    conditions: Vec<(String, String)>,
    /// (dotted path as written, JSONPath query, value)
    fields: Vec<(String, String, String)>,
    /// (expression as written, JSONPath query, value if any)
    jsonpaths: Vec<(String, String, Option<String>)>,
    /// The object is a Secret: its values are never shown.
    secret: bool,
}

impl Criteria {
    fn of(config: &Value, secret: bool) -> Criteria {
        let conditions = config
            .get("condition")
            .elements()
            .iter()
            .map(|c| {
                let ty = text(c, "type").unwrap_or_default().to_string();
                (ty, text(c, "status").unwrap_or("True").to_string())
            })
            .collect();
        let fields = config
            .get("fields")
            .entries()
            .into_iter()
            .flatten()
            .filter_map(|(path, value)| Some((path.clone(), field_query(path), value.as_str()?.to_string())))
            .collect();
        let jsonpaths = config
            .get("jsonpath")
            .elements()
            .iter()
            .filter_map(|j| {
                let path = text(j, "path")?;
                Some((
                    path.to_string(),
                    kubectl_query(path),
                    text(j, "value").map(str::to_string),
                ))
            })
            .collect();
        Criteria {
            conditions,
            fields,
            jsonpaths,
            secret,
        }
    }

    /// `condition Ready=True and status.phase = "Running"`.
    fn describe(&self) -> String {
        let conditions = (self.conditions.iter()).map(|(ty, status)| format!("condition {ty}={status}"));
        let fields = (self.fields.iter()).map(|(path, _, value)| format!("{path} = {}", self.show(value)));
        let jsonpaths = self.jsonpaths.iter().map(|(path, _, value)| match value {
            Some(value) => format!("{path} = {}", self.show(value)),
            None => format!("{path} set"),
        });
        let all: Vec<String> = conditions.chain(fields).chain(jsonpaths).collect();
        all.join(" and ")
    }

    /// A value as messages show it: quoted, or hidden for a Secret.
    fn show(&self, value: &str) -> String {
        if self.secret {
            "(a Secret's value, not shown)".to_string()
        } else {
            format!("{value:?}")
        }
    }

    /// Ready when every criterion holds; else the first that does not, and why.
    fn check(&self, live: Option<&Json>) -> Readiness {
        let Some(live) = live else {
            return Readiness::Waiting("it does not exist yet".to_string());
        };
        let unmet = (self.conditions.iter())
            .find_map(|(ty, status)| condition_unmet(live, ty, status))
            .or_else(|| {
                (self.fields.iter())
                    .find_map(|(path, query, value)| self.unmet(live, path, query, Some(value)))
            })
            .or_else(|| {
                (self.jsonpaths.iter())
                    .find_map(|(path, query, value)| self.unmet(live, path, query, value.as_ref()))
            });
        match unmet {
            Some(why) => Readiness::Waiting(why),
            None => Readiness::Ready,
        }
    }

    /// Why `query` (written as `path`) does not select `wanted` (or anything, when `None`).
    fn unmet(&self, live: &Json, path: &str, query: &str, wanted: Option<&String>) -> Option<String> {
        let found = match live.query(query) {
            Ok(found) => found,
            Err(e) => return Some(format!("{path} is not a valid JSONPath: {e}")),
        };
        let wanted_text = wanted
            .map(|w| format!(", wanted {}", self.show(w)))
            .unwrap_or_default();
        match found.as_slice() {
            [] | [Json::Null] => Some(format!("{path} is not set{wanted_text}")),
            [one] => {
                let value = display(one);
                match wanted {
                    Some(w) if *w != value && self.secret => Some(format!(
                        "{path} does not have the wanted value (a Secret's values are not shown)"
                    )),
                    Some(w) if *w != value => Some(format!("{path} is {value:?}{wanted_text}")),
                    _ => None,
                }
            }
            many => Some(format!("{path} selects {} values, not one", many.len())),
        }
    }
}

/// Why condition `ty` of `live` is not `status`, naming the conditions there are.
fn condition_unmet(live: &Json, ty: &str, status: &str) -> Option<String> {
    let conditions = live
        .pointer("/status/conditions")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let field = |c: &Json, key: &str| c.get(key).and_then(Json::as_str).unwrap_or("").to_string();
    let Some(found) = conditions.iter().find(|c| field(c, "type") == ty) else {
        let present: Vec<String> = conditions
            .iter()
            .map(|c| {
                let reason = field(c, "reason");
                let reason = if reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({reason})")
                };
                format!("{}={}{reason}", field(c, "type"), field(c, "status"))
            })
            .collect();
        let present = if present.is_empty() {
            "none".to_string()
        } else {
            present.join(", ")
        };
        return Some(format!("no condition {ty} (conditions: {present})"));
    };
    let actual = field(found, "status");
    if actual == status {
        return None;
    }
    let why = [field(found, "reason"), field(found, "message")]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    };
    Some(format!("condition {ty} is {actual}, wanted {status}{why}"))
}

/// A selected value as compared: strings as they are, numbers and booleans as written,
/// anything else as compact JSON.
fn display(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The JSONPath query of a dotted field path (`status.phase`, `metadata.annotations["a/b"]`,
/// `status.conditions[0].type`).
fn field_query(path: &str) -> String {
    format!("$.{path}")
}

/// The JSONPath query of a kubectl JSONPath expression (`{.status.phase}`, `.status.phase`).
fn kubectl_query(expression: &str) -> String {
    let inner = expression.trim();
    let inner = inner
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or(inner)
        .trim();
    if inner.starts_with('$') {
        inner.to_string()
    } else if inner.starts_with('.') || inner.starts_with('[') {
        format!("${inner}")
    } else {
        format!("$.{inner}")
    }
}

fn validate(config: &Value) -> Diagnostics {
    let mut out: Diagnostics = validate_timeout(config).into_iter().collect();
    let blocks = |name: &str| config.get(name).elements().len();
    let fields = config.get("fields");
    if blocks("condition") == 0
        && blocks("jsonpath") == 0
        && fields.entries().is_none_or(|f| f.is_empty())
        && !fields.is_unknown()
    {
        out.push(Diagnostic::error(
            "Nothing to wait for",
            "Give at least one `condition` block, a `fields` entry or a `jsonpath` block.",
        ));
    }
    for (path, _) in fields.entries().into_iter().flatten() {
        if let Err(e) = parse_json_path(&field_query(path)) {
            out.push(
                Diagnostic::error("Invalid field path", format!("{path:?} is not a field path: {e}"))
                    .at(AttributePath::root("fields").key(path)),
            );
        }
    }
    for (i, jsonpath) in config.get("jsonpath").elements().iter().enumerate() {
        let Some(path) = text(jsonpath, "path") else {
            continue;
        };
        if let Err(e) = parse_json_path(&kubectl_query(path)) {
            out.push(
                Diagnostic::error("Invalid JSONPath", format!("{path:?} is not a JSONPath: {e}"))
                    .at(AttributePath::root("jsonpath").index(i as i64).attribute("path")),
            );
        }
    }
    for name in ["api_version", "kind", "name"] {
        if text(config, name) == Some("") {
            out.push(invalid(name, "Empty value", format!("{name} must not be empty")));
        }
    }
    out
}

#[async_trait]
impl Action for Wait {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        let condition = Block::new("A status condition the object must have.")
            .attribute(Attribute::required(
                "type",
                Type::String,
                "The condition's type, e.g. `Available`, `Ready`, `Complete`.",
            ))
            .attribute(Attribute::optional(
                "status",
                Type::String,
                "The status it must have: `True` (the default), `False` or `Unknown`.",
            ));
        let jsonpath = Block::new(
            "A JSONPath expression the object must satisfy, as `kubectl wait --for=jsonpath=` takes it.",
        )
        .attribute(Attribute::required(
            "path",
            Type::String,
            "The expression, e.g. `{.status.loadBalancer.ingress[0].ip}` or \
                 `{.status.conditions[?(@.type==\"Ready\")].status}`; it must select one value.",
        ))
        .attribute(Attribute::optional(
            "value",
            Type::String,
            "The value it must have (numbers and booleans as written); when unset, any value will do.",
        ));
        let block = Block::new(
            "Waits until an object of any kind meets every criterion given: status conditions, field \
             values, JSONPath expressions. It reports what is still missing as it waits, and on timeout \
             what the object looked like and why that was not enough. Read-only: it acts on objects of \
             any estate, and waits for an object that does not exist yet.",
        )
        .attribute(Attribute::required(
            "api_version",
            Type::String,
            "The object's API version, e.g. `apps/v1` or `v1`.",
        ))
        .attribute(Attribute::required(
            "kind",
            Type::String,
            "The object's kind, e.g. `Deployment`.",
        ))
        .attribute(Attribute::required("name", Type::String, "The object's name."))
        .attribute(Attribute::optional(
            "namespace",
            Type::String,
            "The object's namespace (default `default`; ignored for cluster-scoped kinds).",
        ))
        .attribute(Attribute::optional(
            "fields",
            Type::map(Type::String),
            "Field paths (`status.phase`, `status.conditions[0].type`, `metadata.annotations[\"a/b\"]`) \
             and the exact value each must have (numbers and booleans as written).",
        ))
        .attribute(Attribute::optional(
            "timeout",
            Type::String,
            "How long to wait, as a duration such as `\"5m\"` or `\"90s\"` (default `\"10m\"`).",
        ))
        .block(NestedBlock::new("condition", Nesting::List, condition))
        .block(NestedBlock::new("jsonpath", Nesting::List, jsonpath));
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        validate(config)
    }

    async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics {
        outcome(self.wait(&request.config, progress).await)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn service() -> Json {
        json!({
            "metadata": {"name": "svc", "annotations": {"a/b": "c"}},
            "spec": {"type": "ClusterIP", "ports": [{"port": 80}]},
            "status": {"conditions": [
                {"type": "Ready", "status": "True", "reason": "Test"},
                {"type": "Degraded", "status": "False", "reason": "Fine", "message": "all good"}
            ]}
        })
    }

    fn criteria(config: Value) -> Criteria {
        assert!(validate(&config).is_empty(), "{:?}", validate(&config));
        Criteria::of(&config, false)
    }

    fn waiting(readiness: Readiness) -> String {
        match readiness {
            Readiness::Waiting(why) => why,
            Readiness::Ready => panic!("ready"),
            Readiness::Failed(why) => panic!("failed: {why}"),
        }
    }

    fn condition(ty: &str, status: Option<&str>) -> Value {
        let mut c = Value::object([("type", Value::string(ty))]);
        if let Some(s) = status {
            c.set("status", Value::string(s));
        }
        Value::object([("condition", Value::List(vec![c]))])
    }

    #[test]
    fn conditions_default_to_true_and_report_what_the_object_has() {
        let live = service();
        assert!(matches!(
            criteria(condition("Ready", None)).check(Some(&live)),
            Readiness::Ready
        ));
        assert_eq!(
            waiting(criteria(condition("Degraded", None)).check(Some(&live))),
            "condition Degraded is False, wanted True (Fine: all good)"
        );
        assert!(matches!(
            criteria(condition("Degraded", Some("False"))).check(Some(&live)),
            Readiness::Ready
        ));
        assert_eq!(
            waiting(criteria(condition("Available", None)).check(Some(&live))),
            "no condition Available (conditions: Ready=True (Test), Degraded=False (Fine))"
        );
        assert_eq!(
            waiting(criteria(condition("Ready", None)).check(None)),
            "it does not exist yet"
        );
        assert_eq!(
            criteria(condition("Ready", None)).describe(),
            "condition Ready=True"
        );
    }

    #[test]
    fn fields_and_jsonpaths_compare_exact_values() {
        let live = service();
        let fields =
            |path: &str, value: &str| Value::object([("fields", Value::string_map([(path, value)]))]);
        assert!(matches!(
            criteria(fields("spec.type", "ClusterIP")).check(Some(&live)),
            Readiness::Ready
        ));
        assert!(matches!(
            criteria(fields("spec.ports[0].port", "80")).check(Some(&live)),
            Readiness::Ready
        ));
        assert!(matches!(
            criteria(fields("metadata.annotations[\"a/b\"]", "c")).check(Some(&live)),
            Readiness::Ready
        ));
        assert_eq!(
            waiting(criteria(fields("spec.type", "LoadBalancer")).check(Some(&live))),
            "spec.type is \"ClusterIP\", wanted \"LoadBalancer\""
        );
        assert_eq!(
            waiting(criteria(fields("spec.clusterIP", "None")).check(Some(&live))),
            "spec.clusterIP is not set, wanted \"None\""
        );
        let jsonpath = |path: &str, value: Option<&str>| {
            let mut j = Value::object([("path", Value::string(path))]);
            if let Some(v) = value {
                j.set("value", Value::string(v));
            }
            Value::object([("jsonpath", Value::List(vec![j]))])
        };
        let ready = r#"{.status.conditions[?(@.type=="Ready")].status}"#;
        assert!(matches!(
            criteria(jsonpath(ready, Some("True"))).check(Some(&live)),
            Readiness::Ready
        ));
        assert!(matches!(
            criteria(jsonpath("{.spec.ports}", None)).check(Some(&live)),
            Readiness::Ready
        ));
        assert_eq!(
            waiting(criteria(jsonpath("{.status.loadBalancer.ingress[0].ip}", None)).check(Some(&live))),
            "{.status.loadBalancer.ingress[0].ip} is not set"
        );
        assert_eq!(
            waiting(criteria(jsonpath("{.status.conditions[*].type}", Some("Ready"))).check(Some(&live))),
            "{.status.conditions[*].type} selects 2 values, not one"
        );
    }

    #[test]
    fn a_secrets_values_are_never_shown() {
        let secret = json!({"data": {"password": "aHVudGVyMg=="}});
        let config = Value::object([("fields", Value::string_map([("data.password", "c2VjcmV0")]))]);
        let criteria = Criteria::of(&config, true);
        let why = waiting(criteria.check(Some(&secret)));
        assert!(
            !why.contains("aHVudGVyMg==") && !why.contains("c2VjcmV0"),
            "{why}"
        );
        assert!(!criteria.describe().contains("c2VjcmV0"));
    }

    #[test]
    fn bad_configurations_are_refused_at_their_attribute() {
        let none = Value::object([("name", Value::string("x"))]);
        assert_eq!(validate(&none).0[0].summary, "Nothing to wait for");
        let bad = Value::object([(
            "jsonpath",
            Value::List(vec![Value::object([("path", Value::string("{.status[}"))])]),
        )]);
        let d = validate(&bad);
        assert_eq!(d.0[0].attribute.as_ref().unwrap().to_string(), "jsonpath[0].path");
        // Unknown at plan time: nothing to say yet.
        let unknown = Value::object([("fields", Value::unknown())]);
        assert!(validate(&unknown).is_empty(), "{:?}", validate(&unknown));
    }
}
