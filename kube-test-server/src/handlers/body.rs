//! Decoding a request: its body as an object of the kind (JSON, YAML, a patch), the `dryRun`
//! option, and the namespace checks that come before validation.

use super::call::Call;
use crate::exchange::Ctx;
use crate::kinds;
use crate::resources;
use crate::semantics;
use crate::status::{self, ApiError};
use crate::store::Store;
use serde_json::{Value, json};

impl<'a> Call<'a> {
    /// Decodes the request body as an object of this kind; returns it with any warnings.
    pub fn decode_object(&self) -> Result<(Value, Vec<String>), ApiError> {
        let kind = self.rt.kind;
        let mut obj = parse_body(self.ctx, kind)?;
        let Some(map) = obj.as_object_mut() else {
            return Err(status::bad_request(&format!(
                "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                go_json_type(&obj)
            )));
        };
        let body_kind = map
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or(kind)
            .to_string();
        let body_version = map
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(|v| v.rsplit('/').next().unwrap_or(v).to_string())
            .unwrap_or_else(|| self.version.clone());
        if body_kind != kind {
            return Err(status::bad_request(&format!(
                "{body_kind} in version \"{body_version}\" cannot be handled as a {kind}: converting ({body_version}.{body_kind}) to ({}.{kind}): unknown conversion",
                kinds::internal_package(self.rt.group)
            )));
        }
        let api_version = self.rt.api_version(&self.version);
        let schema = crate::schema::of(&api_version, kind).filter(|_| !self.rt.custom);
        let unknown = match &self.custom {
            Some(c) => c.unknown_fields(&obj),
            None => schema.map(|t| t.unknown_fields(&obj)).unwrap_or_default(),
        };
        let mut warnings = Vec::new();
        match self.ctx.query.get("fieldValidation").unwrap_or("Warn") {
            "Strict" if !unknown.is_empty() => {
                let list: Vec<String> = unknown.iter().map(|u| format!("unknown field \"{u}\"")).collect();
                return Err(status::bad_request(&format!(
                    "{kind} in version \"{body_version}\" cannot be handled as a {kind}: strict decoding error: {}",
                    list.join(", ")
                )));
            }
            "Ignore" => {}
            _ => warnings.extend(unknown.iter().map(|u| format!("unknown field \"{u}\""))),
        }
        if let Some(t) = schema {
            t.prune(&mut obj);
        }
        if let Some(c) = &self.custom {
            c.prune(&mut obj);
        }
        let map = obj.as_object_mut().expect("checked to be an object above");
        map.insert("kind".into(), json!(kind));
        map.insert("apiVersion".into(), json!(api_version));
        if !map.get("metadata").is_some_and(Value::is_object) {
            map.insert("metadata".into(), json!({}));
        }
        Ok((obj, warnings))
    }

    /// `dryRun` option: only `All` is valid.
    pub fn dry_run(&self, options_kind: &str) -> Result<bool, ApiError> {
        dry_run_value(self.ctx.query.get("dryRun"), options_kind)
    }

    pub(super) fn check_body_namespace(&self, obj: &mut Value) -> Result<(), ApiError> {
        if !self.rt.namespaced {
            if let Some(m) = obj["metadata"].as_object_mut() {
                m.shift_remove("namespace");
            }
            return Ok(());
        }
        match obj["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() && ns != self.namespace => Err(status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            _ => {
                obj["metadata"]["namespace"] = json!(self.namespace);
                Ok(())
            }
        }
    }

    /// Admission's namespace lifecycle check for creates.
    pub(super) fn check_namespace_open(&self, store: &Store, name: &str) -> Result<(), ApiError> {
        if !self.rt.namespaced {
            return Ok(());
        }
        match store.get(&resources::NAMESPACES.key(), "", &self.namespace) {
            None => Err(status::not_found(
                resources::NAMESPACES.target(Some(&self.namespace)),
            )),
            Some(ns) if ns["status"]["phase"] == "Terminating" => Err(status::namespace_terminating(
                self.rt.target(Some(name)),
                &self.namespace,
            )),
            Some(_) => Ok(()),
        }
    }
}

/// `dryRun` option value check shared by every verb.
pub fn dry_run_value(value: Option<&str>, options_kind: &str) -> Result<bool, ApiError> {
    match value {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(status::invalid_options(
            options_kind,
            "dryRun",
            "FieldValueNotSupported",
            &format!("Unsupported value: [\"{other}\"]: supported values: \"All\""),
        )),
    }
}

/// Parses the body as JSON (or YAML when the Content-Type says so).
pub fn parse_body(ctx: &Ctx, kind: &str) -> Result<Value, ApiError> {
    let ct = ctx.content_type();
    if ct == "application/vnd.kubernetes.protobuf" {
        return crate::protobuf::decode(&ctx.body).map_err(|e| status::bad_request(&e.to_string()));
    }
    if ct == "application/yaml" {
        return serde_yaml::from_slice(&ctx.body).map_err(|e| {
            status::bad_request(&format!(
                "the object provided is unrecognized (must be of type {kind}): {e}"
            ))
        });
    }
    serde_json::from_slice(&ctx.body).map_err(|e| {
        let text = String::from_utf8_lossy(&ctx.body);
        let snippet: String = text.chars().take(30).collect();
        let more = if text.chars().count() > 30 { " ..." } else { "" };
        status::bad_request(&format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {} ({snippet}{more})",
            go_json_error(&e)
        ))
    })
}

/// The apply body: YAML (JSON is YAML).
pub fn parse_yaml_body(ctx: &Ctx) -> Result<Value, ApiError> {
    let value: Value = serde_yaml::from_slice(&ctx.body)
        .map_err(|e| status::bad_request(&format!("error decoding YAML: {e}")))?;
    if !value.is_object() {
        return Err(status::bad_request(
            "error decoding YAML: the apply configuration must be an object",
        ));
    }
    Ok(value)
}

/// Applies a merge, JSON or strategic-merge patch body to `current`.
pub fn apply_patch(ctx: &Ctx, current: &Value) -> Result<Value, ApiError> {
    let patch: Value = serde_json::from_slice(&ctx.body)
        .map_err(|e| status::bad_request(&format!("error decoding patch: {}", go_json_error(&e))))?;
    match ctx.content_type() {
        "application/merge-patch+json" => Ok(semantics::merge_patch(current, &patch)),
        "application/json-patch+json" => semantics::json_patch(current, &patch),
        "application/strategic-merge-patch+json" => semantics::strategic_merge_patch(current, &patch),
        _ => Err(status::unsupported_media_type()),
    }
}

/// Go's encoding/json wording for the common parse failures.
pub(super) fn go_json_error(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "unexpected end of JSON input".into(),
        _ => format!("invalid character at line {} column {}", e.line(), e.column()),
    }
}

pub(super) fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "null",
    }
}
