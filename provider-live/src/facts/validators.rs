//! The validators hashicorp/kubernetes puts on its attributes, by the names the facts record
//! (`provider-live/catalog/hashicorp/README.md` lists them), as runtime [`Validator`]s. Each
//! message says what is allowed; the runtime adds the attribute path.

use std::net::IpAddr;
use std::sync::Arc;

use base64::Engine as _;
use plugin_runtime::Value;
use plugin_runtime::rules::Validator;
use regex::Regex;
use serde_json::Value as Json;

use crate::fields::quantity;

/// A validator of the facts, or why the fact cannot be read.
pub fn parse(text: &str) -> Result<Arc<dyn Validator>, String> {
    let (name, argument) = match text.split_once(' ') {
        Some((name, rest)) => (name, Some(rest)),
        None => (text, None),
    };
    let json = || -> Result<Json, String> {
        let raw = argument.ok_or_else(|| format!("{name} needs an argument"))?;
        serde_json::from_str(raw).map_err(|e| format!("{name}: {e}"))
    };
    let int = || {
        json()?
            .as_i64()
            .ok_or_else(|| format!("{name}: expected a whole number"))
    };
    let strings = || -> Result<Vec<String>, String> {
        serde_json::from_value(json()?).map_err(|e| format!("{name}: {e}"))
    };
    Ok(match name {
        "one_of" => Arc::new(OneOf {
            allowed: strings()?,
            any_case: false,
        }),
        "one_of_ci" => Arc::new(OneOf {
            allowed: strings()?,
            any_case: true,
        }),
        "int_between" => {
            let bounds: (i64, i64) = serde_json::from_value(json()?).map_err(|e| format!("{name}: {e}"))?;
            Arc::new(IntRange {
                min: Some(bounds.0),
                max: Some(bounds.1),
            })
        }
        "int_at_least" => Arc::new(IntRange {
            min: Some(int()?),
            max: None,
        }),
        "int_greater_than" => Arc::new(IntRange {
            min: Some(int()? + 1),
            max: None,
        }),
        "non_negative_int" => Arc::new(IntRange {
            min: Some(0),
            max: None,
        }),
        "positive_int" => Arc::new(IntRange {
            min: Some(1),
            max: None,
        }),
        "port_number" => Arc::new(IntRange {
            min: Some(1),
            max: Some(65535),
        }),
        "port_number_or_zero" => Arc::new(IntRange {
            min: Some(0),
            max: Some(65535),
        }),
        "int_not_in" => Arc::new(IntNotIn(
            serde_json::from_value(json()?).map_err(|e| format!("{name}: {e}"))?,
        )),
        "regex" => {
            let (pattern, message) = match json()? {
                Json::String(p) => (p, None),
                Json::Array(items) => (
                    items
                        .first()
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    items.get(1).and_then(Json::as_str).map(str::to_string),
                ),
                other => return Err(format!("regex: {other} is not a pattern")),
            };
            let regex = Regex::new(&pattern).map_err(|e| format!("regex {pattern:?}: {e}"))?;
            Arc::new(Matches { regex, message })
        }
        "any" => {
            let parts: Vec<String> = strings()?;
            Arc::new(AnyOf(parts.iter().map(|p| parse(p)).collect::<Result<_, _>>()?))
        }
        simple => Arc::new(Named(match simple {
            "not_whitespace" => Check::NotWhitespace,
            "valid_regexp" => Check::ValidRegexp,
            "ip_address" => Check::IpAddress,
            "cidr" => Check::Cidr,
            "port_name_or_number" => Check::PortNameOrNumber,
            "nullable_int_string" => Check::NullableInt,
            "nullable_int_or_percent_string" => Check::NullableIntOrPercent,
            "non_negative_int_string" => Check::NonNegativeIntString,
            "quantity" => Check::Quantity,
            "quantity_map" => Check::QuantityMap,
            "mode_bits" => Check::ModeBits,
            "label_map" => Check::LabelMap,
            "annotation_map" => Check::AnnotationMap,
            "name" => Check::Name,
            "generate_name" => Check::GenerateName,
            "dns_label" => Check::DnsLabel,
            "path" => Check::RelativePath,
            "path_segment_name" => Check::PathSegmentName,
            "cron" => Check::Cron,
            "base64_map" => Check::Base64Map,
            "webhook_url" => Check::WebhookUrl,
            other => return Err(format!("unknown validator {other:?}")),
        })),
    })
}

fn quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `value` as text for a message.
fn shown(value: &Value) -> String {
    match value.plain() {
        Value::String(s) => format!("{s:?}"),
        other => other.to_json().to_string(),
    }
}

struct OneOf {
    allowed: Vec<String>,
    any_case: bool,
}

impl Validator for OneOf {
    fn check(&self, value: &Value) -> Result<(), String> {
        self.check_at(value, "the value")
    }

    /// In SDKv2's words (`validation.StringInSlice`), which configurations' tests match.
    fn check_at(&self, value: &Value, sdk_path: &str) -> Result<(), String> {
        let found = value.as_str().is_some_and(|s| {
            self.allowed
                .iter()
                .any(|a| a == s || (self.any_case && a.eq_ignore_ascii_case(s)))
        });
        if found {
            return Ok(());
        }
        let allowed: Vec<String> = self.allowed.iter().map(|a| format!("{a:?}")).collect();
        let got = match value.plain() {
            Value::String(s) => s.clone(),
            other => other.to_json().to_string(),
        };
        Err(format!(
            "expected {sdk_path} to be one of [{}], got {got}",
            allowed.join(" ")
        ))
    }

    fn names_the_path(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        format!("one of {}", quoted(&self.allowed))
    }
}

struct IntRange {
    min: Option<i64>,
    max: Option<i64>,
}

impl Validator for IntRange {
    fn check(&self, value: &Value) -> Result<(), String> {
        let n = value
            .as_i64()
            .ok_or_else(|| format!("Expected a whole number, got {}.", shown(value)))?;
        if self.min.is_some_and(|m| n < m) || self.max.is_some_and(|m| n > m) {
            return Err(format!("Expected {}, got {n}.", self.describe()));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) => format!("a whole number from {a} to {b}"),
            (Some(a), None) => format!("a whole number of at least {a}"),
            (None, Some(b)) => format!("a whole number of at most {b}"),
            (None, None) => "a whole number".to_string(),
        }
    }
}

struct IntNotIn(Vec<i64>);

impl Validator for IntNotIn {
    fn check(&self, value: &Value) -> Result<(), String> {
        match value.as_i64() {
            Some(n) if !self.0.contains(&n) => Ok(()),
            _ => Err(format!("Expected {}, got {}.", self.describe(), shown(value))),
        }
    }

    fn describe(&self) -> String {
        format!("a whole number other than {:?}", self.0)
    }
}

struct Matches {
    regex: Regex,
    message: Option<String>,
}

impl Validator for Matches {
    fn check(&self, value: &Value) -> Result<(), String> {
        match value.as_str() {
            Some(s) if self.regex.is_match(s) => Ok(()),
            _ => Err(match &self.message {
                Some(m) => format!("{m} (got {})", shown(value)),
                None => format!("Expected {}, got {}.", self.describe(), shown(value)),
            }),
        }
    }

    fn describe(&self) -> String {
        format!("a value matching `{}`", self.regex.as_str())
    }
}

struct AnyOf(Vec<Arc<dyn Validator>>);

impl Validator for AnyOf {
    fn check(&self, value: &Value) -> Result<(), String> {
        if self.0.iter().any(|v| v.check(value).is_ok()) {
            Ok(())
        } else {
            Err(format!("Expected {}, got {}.", self.describe(), shown(value)))
        }
    }

    fn describe(&self) -> String {
        self.0
            .iter()
            .map(|v| v.describe())
            .collect::<Vec<_>>()
            .join(", or ")
    }
}

/// The checks with no argument.
#[derive(Clone, Copy)]
enum Check {
    NotWhitespace,
    ValidRegexp,
    IpAddress,
    Cidr,
    PortNameOrNumber,
    NullableInt,
    NullableIntOrPercent,
    NonNegativeIntString,
    Quantity,
    QuantityMap,
    ModeBits,
    LabelMap,
    AnnotationMap,
    Name,
    GenerateName,
    DnsLabel,
    RelativePath,
    PathSegmentName,
    Cron,
    Base64Map,
    WebhookUrl,
}

struct Named(Check);

impl Validator for Named {
    fn check(&self, value: &Value) -> Result<(), String> {
        let problem = match (self.0, value.plain()) {
            (
                Check::LabelMap | Check::AnnotationMap | Check::QuantityMap | Check::Base64Map,
                Value::Map(m),
            ) => m
                .iter()
                .find_map(|(k, v)| entry_problem(self.0, k, v.as_str().unwrap_or_default()))
                .map(|why| why.to_string()),
            (check, Value::String(s)) => text_problem(check, s),
            (Check::PortNameOrNumber, Value::Number(_)) => match value.as_i64() {
                Some(1..=65535) => None,
                _ => Some("must be a port number from 1 to 65535".to_string()),
            },
            _ => Some(format!("expected {}", self.describe())),
        };
        match problem {
            None => Ok(()),
            Some(why) if matches!(value.plain(), Value::Map(_)) => Err(format!("The map {why}.")),
            Some(why) => Err(format!("{} {why}.", shown(value).replace('\n', " "))),
        }
    }

    fn describe(&self) -> String {
        match self.0 {
            Check::NotWhitespace => "a string that is not empty or only whitespace",
            Check::ValidRegexp => "a valid regular expression",
            Check::IpAddress => "an IP address",
            Check::Cidr => "a CIDR block such as 10.0.0.0/16",
            Check::PortNameOrNumber => "a port number from 1 to 65535 or an IANA service name",
            Check::NullableInt => "an empty string or a whole number",
            Check::NullableIntOrPercent => "an empty string, a whole number or a percentage",
            Check::NonNegativeIntString => "a whole number of at least 0",
            Check::Quantity => "a Kubernetes quantity such as \"500m\" or \"128Mi\"",
            Check::QuantityMap => "a map of Kubernetes quantities",
            Check::ModeBits => "an octal file mode from \"0000\" to \"0777\"",
            Check::LabelMap => "a map of valid label keys and values",
            Check::AnnotationMap => "a map with valid annotation keys",
            Check::Name => "a DNS-1123 subdomain name",
            Check::GenerateName => "a DNS-1123 label prefix",
            Check::DnsLabel => "a DNS-1123 label",
            Check::RelativePath => "a relative path without \"..\"",
            Check::PathSegmentName => "a name without \"/\" or \"%\", other than \".\" and \"..\"",
            Check::Cron => "a cron schedule such as \"*/5 * * * *\" or \"@hourly\"",
            Check::Base64Map => "a map of base64-encoded values",
            Check::WebhookUrl => "an https URL with a host and no user, query or fragment",
        }
        .to_string()
    }
}

/// What is wrong with one entry of a map, if anything.
fn entry_problem(check: Check, key: &str, value: &str) -> Option<String> {
    match check {
        Check::LabelMap => qualified_name(key)
            .map(|why| format!("has the key {key:?}, which {why}"))
            .or_else(|| {
                label_value(value).map(|why| format!("has the value {value:?} for {key:?}, which {why}"))
            }),
        Check::AnnotationMap => {
            qualified_name(&key.to_lowercase()).map(|why| format!("has the key {key:?}, which {why}"))
        }
        Check::QuantityMap => (!quantity::is_valid(value))
            .then(|| format!("has {value:?} for {key:?}, which is not a Kubernetes quantity")),
        Check::Base64Map => base64::engine::general_purpose::STANDARD
            .decode(value)
            .is_err()
            .then(|| format!("has a value for {key:?} that is not base64-encoded")),
        _ => None,
    }
}

/// What is wrong with a string, if anything.
fn text_problem(check: Check, s: &str) -> Option<String> {
    let fails = |ok: bool, why: &str| (!ok).then(|| why.to_string());
    match check {
        Check::NotWhitespace => fails(!s.trim().is_empty(), "is empty or only whitespace"),
        Check::ValidRegexp => fails(Regex::new(s).is_ok(), "is not a valid regular expression"),
        Check::IpAddress => fails(s.parse::<IpAddr>().is_ok(), "is not an IP address"),
        Check::Cidr => fails(
            s.split_once('/').is_some_and(|(ip, bits)| {
                ip.parse::<IpAddr>().is_ok_and(|ip| {
                    bits.parse::<u8>()
                        .is_ok_and(|b| b <= if ip.is_ipv4() { 32 } else { 128 })
                })
            }),
            "is not a CIDR block",
        ),
        Check::PortNameOrNumber => match s.parse::<i64>() {
            Ok(n) => fails((1..=65535).contains(&n), "is not a port number from 1 to 65535"),
            Err(_) => port_name(s),
        },
        Check::NullableInt => fails(s.is_empty() || s.parse::<i64>().is_ok(), "is not a whole number"),
        Check::NullableIntOrPercent => match s.strip_suffix('%') {
            Some(p) => fails(
                p.parse::<i64>().is_ok_and(|n| (0..=100).contains(&n)),
                "is not a percentage from 0% to 100%",
            ),
            None => fails(
                s.is_empty() || s.parse::<i32>().is_ok(),
                "is not a whole number or a percentage",
            ),
        },
        Check::NonNegativeIntString => fails(
            s.parse::<i64>().is_ok_and(|n| n >= 0),
            "is not a whole number of at least 0",
        ),
        // The second half is Kubernetes' own wording (`resource.ParseQuantity`), which
        // hashicorp's message carries and its tests look for.
        Check::Quantity => fails(
            quantity::is_valid(s),
            "is not a Kubernetes quantity: quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        Check::ModeBits => fails(
            s.starts_with('0') && i64::from_str_radix(s, 8).is_ok_and(|n| (0..=0o777).contains(&n)),
            "is not an octal file mode from \"0000\" to \"0777\"",
        ),
        Check::Name => dns_subdomain(s),
        Check::GenerateName => {
            let masked = match s.strip_suffix('-') {
                Some(head) => format!("{head}a"),
                None => s.to_string(),
            };
            dns_label(&masked)
        }
        Check::DnsLabel => dns_label(s),
        Check::RelativePath => {
            if s.starts_with('/') {
                Some("must be a relative path".to_string())
            } else {
                fails(!s.split('/').any(|part| part == ".."), "must not contain \"..\"")
            }
        }
        Check::PathSegmentName => fails(
            s != "." && s != ".." && !s.contains('/') && !s.contains('%'),
            "may not be \".\" or \"..\" and may not contain \"/\" or \"%\"",
        ),
        Check::Cron => fails(is_cron(s), "is not a cron schedule"),
        Check::WebhookUrl => webhook_url(s),
        Check::LabelMap | Check::AnnotationMap | Check::QuantityMap | Check::Base64Map => {
            Some("is not a map".to_string())
        }
    }
}

fn label_chars(s: &str) -> bool {
    let bytes = s.as_bytes();
    let edge = |b: &u8| b.is_ascii_alphanumeric();
    bytes.first().is_some_and(edge)
        && bytes.last().is_some_and(edge)
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Kubernetes' qualified name: an optional DNS subdomain prefix and `/`, then a name of at most
/// 63 characters.
fn qualified_name(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix
        && (p.is_empty() || dns_subdomain(p).is_some())
    {
        return Some("has a prefix that is not a DNS-1123 subdomain".to_string());
    }
    if name.is_empty() || name.len() > 63 || !label_chars(name) {
        return Some(
            "is not a valid name (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)"
                .to_string(),
        );
    }
    None
}

fn label_value(value: &str) -> Option<String> {
    (!value.is_empty() && (value.len() > 63 || !label_chars(value))).then(|| {
        "is not a valid label value (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)"
            .to_string()
    })
}

fn dns_label(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let ok = !s.is_empty()
        && s.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first().is_some_and(|b| b.is_ascii_alphanumeric())
        && bytes.last().is_some_and(|b| b.is_ascii_alphanumeric());
    (!ok).then(|| {
        "is not a DNS-1123 label (at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit)"
            .to_string()
    })
}

fn dns_subdomain(s: &str) -> Option<String> {
    let ok = !s.is_empty() && s.len() <= 253 && s.split('.').all(|part| dns_label(part).is_none());
    (!ok).then(|| {
        "is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)"
            .to_string()
    })
}

/// An IANA service name: at most 15 lowercase letters, digits and single hyphens, with a letter.
fn port_name(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let ok = !s.is_empty()
        && s.len() <= 15
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.iter().any(u8::is_ascii_lowercase)
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--");
    (!ok).then(|| "is neither a port number from 1 to 65535 nor an IANA service name".to_string())
}

/// A standard cron schedule: five fields, or a descriptor (`@hourly`, `@every 5m`).
fn is_cron(s: &str) -> bool {
    let s = s.trim();
    let s = match s.split_once(' ') {
        Some((tz, rest)) if tz.starts_with("TZ=") || tz.starts_with("CRON_TZ=") => rest.trim(),
        _ => s,
    };
    if let Some(descriptor) = s.strip_prefix('@') {
        return match descriptor.split_once(' ') {
            Some(("every", duration)) => plugin_runtime::duration::parse(duration.trim()).is_ok(),
            None => matches!(
                descriptor,
                "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly"
            ),
            _ => false,
        };
    }
    let fields: Vec<&str> = s.split_whitespace().collect();
    fields.len() == 5
        && fields.iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '*' | '/' | ',' | '-' | '?'))
        })
}

fn webhook_url(s: &str) -> Option<String> {
    let Some(rest) = s.strip_prefix("https://") else {
        return Some("must use the https scheme".to_string());
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        return Some("has no host".to_string());
    }
    if authority.contains('@') {
        return Some("may not contain a user".to_string());
    }
    if s.contains('?') || s.contains('#') {
        return Some("may not contain a query or fragment".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(spec: &str, value: Value) -> Result<(), String> {
        parse(spec).unwrap_or_else(|e| panic!("{e}")).check(&value)
    }

    fn s(text: &str) -> Value {
        Value::string(text)
    }

    #[test]
    fn lists_and_ranges_name_what_is_allowed() {
        let err = checks(r#"one_of ["Always","OnFailure","Never"]"#, s("Sometimes")).unwrap_err();
        assert_eq!(
            err,
            r#"expected the value to be one of ["Always" "OnFailure" "Never"], got Sometimes"#
        );
        let rule = parse(r#"one_of ["Always"]"#).unwrap();
        let at = rule.check_at(&s("Never"), "spec.0.restart_policy").unwrap_err();
        assert_eq!(
            at,
            r#"expected spec.0.restart_policy to be one of ["Always"], got Never"#
        );
        assert!(checks(r#"one_of_ci ["TCP"]"#, s("tcp")).is_ok());
        assert!(checks("int_between [1,65535]", Value::int(0)).is_err());
        assert!(checks("int_greater_than 600", Value::int(601)).is_ok());
        assert!(checks("int_greater_than 600", Value::int(600)).is_err());
        assert!(checks("port_number", Value::int(80)).is_ok());
        assert!(checks(r#"int_not_in [0]"#, Value::int(0)).is_err());
        assert!(checks(r#"any ["one_of [\"None\"]","ip_address"]"#, s("None")).is_ok());
        assert!(checks(r#"any ["one_of [\"None\"]","ip_address"]"#, s("10.0.0.1")).is_ok());
        assert!(checks(r#"any ["one_of [\"None\"]","ip_address"]"#, s("nope")).is_err());
        assert!(checks(r#"regex "^[0-9]+$""#, s("12")).is_ok());
    }

    #[test]
    fn kubernetes_names_labels_and_quantities() {
        assert!(checks("name", s("web-1.example")).is_ok());
        assert!(checks("name", s("Web")).is_err());
        assert!(checks("generate_name", s("web-")).is_ok());
        let labels = |k: &str, v: &str| Value::string_map([(k, v)]);
        assert!(checks("label_map", labels("app.kubernetes.io/name", "web")).is_ok());
        assert!(checks("label_map", labels("bad key", "web")).is_err());
        let err = checks("label_map", labels("app", "not ok!")).unwrap_err();
        assert!(err.contains("not ok!"), "{err}");
        assert!(checks("annotation_map", labels("Example.com/Note", "anything at all")).is_ok());
        assert!(checks("quantity", s("1Gi")).is_ok());
        assert!(checks("quantity", s("1 GB")).is_err());
        assert!(checks("quantity_map", labels("cpu", "lots")).is_err());
        assert!(checks("mode_bits", s("0644")).is_ok());
        assert!(checks("mode_bits", s("644")).is_err());
        assert!(checks("mode_bits", s("01000")).is_err());
        assert!(checks("port_name_or_number", s("http")).is_ok());
        assert!(checks("port_name_or_number", s("8080")).is_ok());
        assert!(checks("port_name_or_number", s("http--x")).is_err());
        assert!(checks("nullable_int_or_percent_string", s("25%")).is_ok());
        assert!(checks("nullable_int_or_percent_string", s("125%")).is_err());
        assert!(checks("nullable_int_string", s("")).is_ok());
        assert!(checks("path", s("config/app.yaml")).is_ok());
        assert!(checks("path", s("../etc")).is_err());
        assert!(checks("path", s("/etc")).is_err());
        assert!(checks("cron", s("*/5 * * * *")).is_ok());
        assert!(checks("cron", s("@hourly")).is_ok());
        assert!(checks("cron", s("every hour")).is_err());
        assert!(checks("cidr", s("10.0.0.0/16")).is_ok());
        assert!(checks("cidr", s("10.0.0.0/33")).is_err());
        assert!(checks("webhook_url", s("https://hooks.example.com/x")).is_ok());
        assert!(checks("webhook_url", s("http://hooks.example.com/x")).is_err());
        assert!(checks("base64_map", labels("k", "aGVsbG8=")).is_ok());
        assert!(checks("base64_map", labels("k", "not base64!")).is_err());
    }

    #[test]
    fn unknown_validators_are_errors() {
        assert!(parse("maybe").is_err());
        assert!(parse("one_of").is_err());
    }
}
