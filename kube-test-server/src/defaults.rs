//! Server-side defaults a real apiserver fills in on create and update, per kind.
//!
//! Three layers, as in the apiserver's decoding: the schema's declarative defaults and Go zero
//! values ([`crate::schema`]), the kind's defaulting function (`SetDefaults_<Kind>`), and the
//! defaulting functions of nested types wherever they occur (pod specs, probes, volume sources,
//! webhooks, ...). Quantities are rewritten into canonical form. Strategy and admission changes
//! (status on create, cluster IPs, `generation`) are the server's job, not defaulting.

mod apiextensions;
mod cluster;
mod workloads;

pub(crate) use apiextensions::order_keys;

use base64::Engine;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;

/// Fills in the defaults of `kind` (e.g. "Deployment") in place.
pub fn apply_defaults(kind: &str, object: &mut Value) {
    let schema = crate::schema::of_object(object);
    if let Some(t) = schema {
        t.fill_defaults(object);
    }
    let Some(obj) = object.as_object_mut() else { return };
    normalise_metadata(obj);
    match kind {
        "Namespace" => default_namespace(obj),
        "Secret" => default_secret(obj),
        "ConfigMap" => drop_empty(obj, &["data", "binaryData"]),
        "Service" => default_service(obj),
        "HorizontalPodAutoscaler" => default_hpa(obj),
        "NetworkPolicy" => default_network_policy(obj),
        "CustomResourceDefinition" => apiextensions::default_definition(obj),
        _ => {
            workloads::object(kind, obj);
            cluster::object(kind, obj);
        }
    }
    if let Some(t) = schema {
        t.visit_structs(object, &mut by_type);
        t.fill_defaults(object);
        t.visit_quantities(object, &mut |q| {
            let text = match q {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return,
            };
            if let Some(c) = canonical_quantity(&text) {
                *q = json!(c);
            }
        });
    }
}

/// The defaulting functions of nested types, by OpenAPI definition name.
fn by_type(definition: &str, map: &mut Map<String, Value>) {
    let Some(name) = definition.strip_prefix("io.k8s.api.") else {
        return;
    };
    match name {
        "rbac.v1.Subject" => {
            if matches!(map.get("kind").and_then(Value::as_str), Some("User" | "Group")) {
                ensure(map, "apiGroup", json!("rbac.authorization.k8s.io"));
            }
        }
        "core.v1.EndpointPort" | "networking.v1.NetworkPolicyPort" => ensure(map, "protocol", json!("TCP")),
        "discovery.v1.EndpointPort" => {
            ensure(map, "name", json!(""));
            ensure(map, "protocol", json!("TCP"));
        }
        _ => {
            workloads::nested(name, map);
            cluster::nested(name, map);
        }
    }
}

/// Inserts `value` under `key` unless a non-null value is already there.
fn ensure(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// The object at `key`, created empty when missing or not an object.
fn child<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    if !map.get(key).is_some_and(Value::is_object) {
        map.insert(key.to_string(), json!({}));
    }
    map.get_mut(key)
        .and_then(Value::as_object_mut)
        .expect("just inserted")
}

/// Every object in the array at `key`.
fn items<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// Go drops empty `omitempty` maps, so `labels: {}` is never stored or returned.
fn drop_empty(map: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if map
            .get(*key)
            .is_some_and(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
        {
            map.remove(*key);
        }
    }
}

/// Whether a map field is missing, null or empty (what Go's `len(m) == 0` sees).
fn is_empty_map(v: Option<&Value>) -> bool {
    v.is_none_or(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
}

fn normalise_metadata(obj: &mut Map<String, Value>) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        drop_empty(meta, &["labels", "annotations"]);
        if meta
            .get("finalizers")
            .is_some_and(|f| f.is_null() || f.as_array().is_some_and(Vec::is_empty))
        {
            meta.remove("finalizers");
        }
    }
}

fn default_namespace(obj: &mut Map<String, Value>) {
    let meta = child(obj, "metadata");
    let name = meta.get("name").cloned().unwrap_or(json!(""));
    child(meta, "labels").insert("kubernetes.io/metadata.name".into(), name);
    ensure(child(obj, "spec"), "finalizers", json!(["kubernetes"]));
    ensure(child(obj, "status"), "phase", json!("Active"));
}

fn default_secret(obj: &mut Map<String, Value>) {
    if let Some(Value::Object(string_data)) = obj.remove("stringData") {
        let data = child(obj, "data");
        for (key, value) in string_data {
            let plain = value.as_str().unwrap_or_default();
            data.insert(
                key,
                json!(base64::engine::general_purpose::STANDARD.encode(plain)),
            );
        }
    }
    drop_empty(obj, &["data"]);
    ensure(obj, "type", json!("Opaque"));
}

fn default_service(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    ensure(spec, "type", json!("ClusterIP"));
    let service_type = spec["type"].as_str().unwrap_or_default().to_string();
    ensure(spec, "sessionAffinity", json!("None"));
    if spec["sessionAffinity"] == "ClientIP" {
        ensure(
            spec,
            "sessionAffinityConfig",
            json!({"clientIP": {"timeoutSeconds": 10800}}),
        );
    }
    for port in items(spec, "ports") {
        if port
            .get("targetPort")
            .is_none_or(|t| t.is_null() || t == 0 || t == "")
        {
            let number = port.get("port").cloned().unwrap_or(json!(0));
            port.insert("targetPort".into(), number);
        }
    }
    if service_type != "ExternalName" {
        ensure(spec, "internalTrafficPolicy", json!("Cluster"));
        ensure(spec, "ipFamilies", json!(["IPv4"]));
        ensure(spec, "ipFamilyPolicy", json!("SingleStack"));
    }
    if service_type == "NodePort" || service_type == "LoadBalancer" {
        ensure(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if service_type == "LoadBalancer" {
        ensure(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

fn default_hpa(obj: &mut Map<String, Value>) {
    let v2 = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_none_or(|v| v == "autoscaling/v2");
    let spec = child(obj, "spec");
    ensure(spec, "minReplicas", json!(1));
    if !v2 {
        return;
    }
    if spec
        .get("metrics")
        .is_none_or(|m| m.as_array().is_none_or(Vec::is_empty))
    {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let up = child(behavior, "scaleUp");
        ensure(up, "stabilizationWindowSeconds", json!(0));
        ensure(up, "selectPolicy", json!("Max"));
        ensure(
            up,
            "policies",
            json!([{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
        let down = child(behavior, "scaleDown");
        ensure(down, "stabilizationWindowSeconds", json!(300));
        ensure(down, "selectPolicy", json!("Max"));
        ensure(
            down,
            "policies",
            json!([{"type": "Percent", "value": 100, "periodSeconds": 15}]),
        );
    }
}

fn default_network_policy(obj: &mut Map<String, Value>) {
    let spec = child(obj, "spec");
    let has_egress = spec
        .get("egress")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    if spec
        .get("policyTypes")
        .is_none_or(|p| p.as_array().is_none_or(Vec::is_empty))
    {
        let types = if has_egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec.insert("policyTypes".into(), types);
    }
}

/// The canonical form of a resource quantity (`0.1` -> `100m`, `1024Mi` -> `1Gi`), or None when
/// `s` is not a quantity.
pub fn canonical_quantity(s: &str) -> Option<String> {
    Quantity::parse(s).map(|q| q.canonical())
}

/// An exact resource quantity: `mantissa * 10^exponent`, remembering the suffix family.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

const DECIMAL_SUFFIXES: &[(&str, i32)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];
const BINARY_SUFFIXES: &[&str] = &["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const MAX_EXPONENT: i32 = 18;

impl Quantity {
    /// Parses `[+-]digits[.digits][suffix]` with SI, binary or exponent suffixes.
    pub fn parse(s: &str) -> Option<Quantity> {
        let (negative, rest) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let number_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return None;
        }
        let mut mantissa: i128 = 0;
        for d in whole.chars().chain(fraction.chars()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(i128::from(d.to_digit(10)? as u8))?;
        }
        let mut exponent = -(fraction.len() as i32);
        let format = if let Some(i) = BINARY_SUFFIXES.iter().position(|b| !b.is_empty() && *b == suffix) {
            mantissa = mantissa.checked_mul(1024i128.checked_pow(i as u32)?)?;
            Format::BinarySi
        } else if let Some((_, e)) = DECIMAL_SUFFIXES.iter().find(|(n, _)| *n == suffix) {
            exponent += e;
            Format::DecimalSi
        } else if let Some(e) = suffix
            .strip_prefix(['e', 'E'])
            .and_then(|e| e.parse::<i32>().ok())
        {
            exponent = exponent.checked_add(e)?;
            Format::DecimalExponent
        } else {
            return None;
        };
        // Far beyond any real resource amount; keeps the arithmetic below in range.
        if exponent > MAX_EXPONENT {
            return None;
        }
        if negative {
            mantissa = -mantissa;
        }
        // Quantities carry at most nano precision; finer values round up.
        if exponent < -9 {
            let divisor = 10i128.checked_pow((-9 - exponent) as u32)?;
            mantissa = mantissa.div_euclid(divisor) + i128::from(mantissa.rem_euclid(divisor) != 0);
            exponent = -9;
        }
        Some(Quantity {
            mantissa,
            exponent,
            format,
        })
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// The sum, in this quantity's suffix family.
    pub fn add(&self, other: &Quantity) -> Option<Quantity> {
        let exponent = self.exponent.min(other.exponent);
        Some(Quantity {
            mantissa: self.scaled(exponent)?.checked_add(other.scaled(exponent)?)?,
            exponent,
            format: self.format,
        })
    }

    /// The value as a float (for comparing amounts, as a scheduler does).
    pub fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// The value as an integer number of `10^exponent` units, if it fits.
    fn scaled(&self, exponent: i32) -> Option<i128> {
        if self.exponent >= exponent {
            self.mantissa
                .checked_mul(10i128.checked_pow((self.exponent - exponent) as u32)?)
        } else {
            let divisor = 10i128.checked_pow((exponent - self.exponent) as u32)?;
            (self.mantissa % divisor == 0).then(|| self.mantissa / divisor)
        }
    }

    /// The apiserver's canonical string for this quantity.
    pub fn canonical(&self) -> String {
        if self.mantissa == 0 {
            return "0".to_string();
        }
        if self.format == Format::BinarySi
            && let Some(bytes) = self.scaled(0)
            && bytes.abs() >= 1024
        {
            let mut n = bytes;
            let mut power = 0;
            while power < BINARY_SUFFIXES.len() - 1 && n % 1024 == 0 {
                n /= 1024;
                power += 1;
            }
            return format!("{n}{}", BINARY_SUFFIXES[power]);
        }
        let (mut m, mut e) = (self.mantissa, self.exponent);
        while m % 10 == 0 {
            m /= 10;
            e += 1;
        }
        let mut e3 = e.div_euclid(3) * 3;
        if self.format != Format::DecimalExponent {
            e3 = e3.min(18);
        }
        let m = m * 10i128.pow((e - e3) as u32);
        if self.format == Format::DecimalExponent {
            return if e3 == 0 {
                m.to_string()
            } else {
                format!("{m}e{e3}")
            };
        }
        let suffix = DECIMAL_SUFFIXES
            .iter()
            .find(|(_, x)| *x == e3)
            .map_or("", |(s, _)| s);
        format!("{m}{suffix}")
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        let e = self.exponent.min(other.exponent);
        Some(self.scaled(e)?.cmp(&other.scaled(e)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::step;

    /// Strips what the server (not defaulting) adds: identity, versions, managedFields,
    /// allocated cluster IPs and generation.
    fn strip_server_fields(v: &mut Value) {
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "managedFields",
                "namespace",
                "generation",
            ] {
                meta.remove(key);
            }
        }
        if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
    }

    #[test]
    fn created_objects_match_transcripts() {
        let cases: &[(&str, &[usize])] = &[
            ("02-namespace.json", &[0]),
            ("03-configmap.json", &[1]),
            ("06-secret.json", &[1, 5]),
            ("07-service.json", &[1, 2]),
            ("08-serviceaccount.json", &[1]),
            ("09-deployment.json", &[1]),
            ("10-hpa.json", &[1, 2, 4, 5]),
            ("11-networkpolicy.json", &[1, 2, 3]),
            ("12-server-side-apply.json", &[9]),
            ("14-rbac.json", &[2, 5, 6, 7]),
            ("15-lease.json", &[1]),
            ("18-workloads.json", &[1, 4, 6]),
            ("19-rbac-kinds.json", &[1, 5, 9, 10, 15]),
            ("20-networking.json", &[1, 4, 13, 15]),
            ("21-storage-policy.json", &[1, 8, 9, 10, 12, 14, 17, 24]),
            ("22-admission-misc.json", &[1, 4, 7, 8]),
        ];
        for (file, indexes) in cases {
            for &index in *indexes {
                let s = step(file, index);
                let mut body = s["body"].clone();
                if body.is_string() {
                    continue;
                }
                let kind = body["kind"].as_str().unwrap().to_string();
                apply_defaults(&kind, &mut body);
                strip_server_fields(&mut body);
                let mut expected = s["response"]["body"].clone();
                strip_server_fields(&mut expected);
                assert_eq!(body, expected, "{file} step {index}");
            }
        }
    }

    #[test]
    fn quantities() {
        for (input, canonical) in [
            ("0.1", "100m"),
            ("0.5", "500m"),
            ("1024Mi", "1Gi"),
            ("128Mi", "128Mi"),
            ("1.5Gi", "1536Mi"),
            ("512Mi", "512Mi"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("1000", "1k"),
            ("100M", "100M"),
            ("1e3", "1e3"),
            ("0", "0"),
            ("500Ki", "500Ki"),
            ("1000Ki", "1000Ki"),
            ("100", "100"),
            ("0.5Ki", "512"),
            ("0.0000000001", "1n"),
            ("-2", "-2"),
        ] {
            assert_eq!(canonical_quantity(input).as_deref(), Some(canonical), "{input}");
        }
        for bad in ["", "abc", "1.2.3", "1Qi", ".", "1e40", "1e99999999999"] {
            assert_eq!(canonical_quantity(bad), None, "{bad}");
        }
        assert!(Quantity::parse("2").unwrap() > Quantity::parse("1500m").unwrap());
        assert!(Quantity::parse("1Gi").unwrap() == Quantity::parse("1024Mi").unwrap());
    }

    #[test]
    fn hpa_behavior_only_when_given() {
        let mut hpa = json!({"apiVersion": "autoscaling/v2", "spec": {"maxReplicas": 3, "behavior": {"scaleUp": {"selectPolicy": "Min"}}}});
        apply_defaults("HorizontalPodAutoscaler", &mut hpa);
        assert_eq!(hpa["spec"]["behavior"]["scaleUp"]["selectPolicy"], "Min");
        assert_eq!(
            hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            300
        );
    }
}
