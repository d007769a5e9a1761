//! Field errors ([`FieldError`]) as a 422 body's `details.causes[]` words them, Go's quoting
//! of values in those messages, and the `Status` that carries them.

use serde_json::{Map, Value, json};

/// One field error, as in a 422 body's `details.causes[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Field path, e.g. `metadata.labels` or `spec.ports[0].port`.
    pub field: String,
    /// Cause reason, e.g. `FieldValueInvalid`.
    pub reason: &'static str,
    /// The cause message without the field, e.g. `Invalid value: 70000: must be between ...`.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl FieldError {
    /// `Invalid value: <value>: <detail>`.
    pub fn invalid(field: impl Into<String>, value: &Value, detail: &str) -> Self {
        Self::with_value(field, "FieldValueInvalid", "Invalid value", value, detail)
    }

    /// `Invalid value: <text>: <detail>` for a value printed as the Go struct (field order kept).
    pub fn invalid_printed(field: impl Into<String>, text: &str, detail: &str) -> Self {
        FieldError {
            field: field.into(),
            reason: "FieldValueInvalid",
            message: format!("Invalid value: {text}: {detail}"),
        }
    }

    /// `Required value[: <detail>]`.
    pub fn required(field: impl Into<String>, detail: &str) -> Self {
        Self::bare(field, "FieldValueRequired", "Required value", detail)
    }

    /// `Forbidden: <detail>`.
    pub fn forbidden(field: impl Into<String>, detail: &str) -> Self {
        Self::bare(field, "FieldValueForbidden", "Forbidden", detail)
    }

    /// `Too long: must have at most <max> bytes`.
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self::bare(
            field,
            "FieldValueTooLong",
            "Too long",
            &format!("must have at most {max} bytes"),
        )
    }

    /// `Duplicate value: <value>`.
    pub fn duplicate(field: impl Into<String>, value: &Value) -> Self {
        Self::with_value(field, "FieldValueDuplicate", "Duplicate value", value, "")
    }

    /// `Unsupported value: <value>: supported values: "a", "b"`.
    pub fn not_supported(field: impl Into<String>, value: &Value, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
        let detail = format!("supported values: {}", list.join(", "));
        Self::with_value(
            field,
            "FieldValueNotSupported",
            "Unsupported value",
            value,
            &detail,
        )
    }

    pub(super) fn bare(field: impl Into<String>, reason: &'static str, kind: &str, detail: &str) -> Self {
        let message = if detail.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}: {detail}")
        };
        FieldError {
            field: field.into(),
            reason,
            message,
        }
    }

    pub(super) fn with_value(
        field: impl Into<String>,
        reason: &'static str,
        kind: &str,
        value: &Value,
        detail: &str,
    ) -> Self {
        let mut message = format!("{kind}: {}", render_value(value));
        if !detail.is_empty() {
            message = format!("{message}: {detail}");
        }
        FieldError {
            field: field.into(),
            reason,
            message,
        }
    }
}

/// Renders a bad value the way `field.Error` does: strings Go-quoted, numbers plain, the rest as
/// JSON with sorted keys.
pub(super) fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        other => canonical_json(other),
    }
}

/// Compact JSON with object keys sorted, like Go's encoding/json.
pub(super) fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Go's `%q` for the strings that occur in object fields.
pub fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The 422 `Status` body for `errors` on object `name` of `kind` in API `group`.
/// For storage-level errors the apiserver names the resource instead of the kind: pass e.g.
/// `("leases", "coordination.k8s.io")` to get `leases.coordination.k8s.io "x" is invalid`.
pub fn invalid_status(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> Value {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let mut rendered: Vec<String> = Vec::new();
    for e in errors {
        let s = e.to_string();
        if !rendered.contains(&s) {
            rendered.push(s);
        }
    }
    let aggregate = if rendered.len() == 1 {
        rendered.remove(0)
    } else {
        format!("[{}]", rendered.join(", "))
    };
    let mut details = Map::new();
    if !name.is_empty() {
        details.insert("name".into(), json!(name));
    }
    if !group.is_empty() {
        details.insert("group".into(), json!(group));
    }
    details.insert("kind".into(), json!(kind));
    let causes: Vec<Value> = errors
        .iter()
        .map(|e| {
            let mut cause = Map::new();
            cause.insert("reason".into(), json!(e.reason));
            cause.insert("message".into(), json!(e.message));
            if !e.field.is_empty() {
                cause.insert("field".into(), json!(e.field));
            }
            Value::Object(cause)
        })
        .collect();
    details.insert("causes".into(), Value::Array(causes));
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": format!("{qualified} {} is invalid: {aggregate}", go_quote(name)),
        "reason": "Invalid",
        "details": details,
        "code": 422
    })
}

/// Kinds whose update must carry `metadata.resourceVersion` (their strategy refuses
/// unconditional updates). The apiserver reports this from storage, naming the resource: build
/// the body with `invalid_status("leases", "coordination.k8s.io", name, ...)`.
pub fn resource_version_required(kind: &str, object: &Value) -> Option<FieldError> {
    let rv = object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    (kind == "Lease" && rv.is_empty()).then(|| {
        FieldError::invalid(
            "metadata.resourceVersion",
            &json!(0),
            "must be specified for an update",
        )
    })
}
