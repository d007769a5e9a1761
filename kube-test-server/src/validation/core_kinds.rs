//! Validation of core/v1's ConfigMaps, Secrets (their data maps, `immutable`) and Services
//! (types, ports, cluster IPs and what an update may not change).

use super::field_error::FieldError;
use super::{str_at, validate_port_number, validate_protocol};
use crate::names::{config_key_errors, dns1123_label_errors};
use serde_json::{Value, json};

pub(super) const MAX_DATA_SIZE: usize = 1024 * 1024;

/// Validates `data`-like maps: key syntax and the total size limit.
pub(super) fn validate_data_maps(object: &Value, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0;
    let mut seen: Vec<&str> = Vec::new();
    for field in fields {
        let Some(map) = object.get(*field).and_then(Value::as_object) else {
            continue;
        };
        for (key, value) in map {
            let path = format!("{field}[{key}]");
            for msg in config_key_errors(key) {
                errs.push(FieldError::invalid(&path, &json!(key), &msg));
            }
            if seen.contains(&key.as_str()) {
                errs.push(FieldError::invalid(
                    &path,
                    &json!(key),
                    "duplicate of key present in data",
                ));
            }
            seen.push(key);
            total += value.as_str().map_or(0, str::len);
        }
    }
    if total > MAX_DATA_SIZE {
        errs.push(FieldError::too_long("", MAX_DATA_SIZE));
    }
    errs
}

pub(super) const IMMUTABLE_MSG: &str = "field is immutable when `immutable` is set";

/// The rules for ConfigMaps and Secrets marked `immutable: true`.
pub(super) fn validate_immutable(object: &Value, old: Option<&Value>, fields: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(old) = old else { return errs };
    if old.get("immutable") != Some(&Value::Bool(true)) {
        return errs;
    }
    if object.get("immutable") != Some(&Value::Bool(true)) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_MSG));
    }
    for field in fields {
        if non_empty(object.get(*field)) != non_empty(old.get(*field)) {
            errs.push(FieldError::forbidden(*field, IMMUTABLE_MSG));
        }
    }
    errs
}

/// A missing map and an empty one are the same to Go's decoder.
pub(super) fn non_empty(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !matches!(v, Value::Null) && v.as_object().is_none_or(|m| !m.is_empty()))
}

pub(super) fn validate_config_map(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = validate_immutable(object, old, &["data", "binaryData"]);
    errs.extend(validate_data_maps(object, &["data", "binaryData"]));
    errs
}

pub(super) fn validate_secret(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let secret_type = object.get("type").and_then(Value::as_str).unwrap_or("Opaque");
    if let Some(old) = old {
        let old_type = old.get("type").and_then(Value::as_str).unwrap_or("Opaque");
        if old_type != secret_type {
            errs.push(FieldError::invalid(
                "type",
                &json!(secret_type),
                "field is immutable",
            ));
        }
    }
    errs.extend(validate_immutable(object, old, &["data"]));
    errs.extend(validate_data_maps(object, &["data"]));
    let has = |key: &str| {
        object
            .pointer(&format!("/data/{}", key.replace('~', "~0").replace('/', "~1")))
            .is_some()
    };
    let required: &[&str] = match secret_type {
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        _ => &[],
    };
    for key in required {
        if !has(key) {
            errs.push(FieldError::required(format!("data[{key}]"), ""));
        }
    }
    if secret_type == "kubernetes.io/service-account-token"
        && str_at(
            object,
            "/metadata/annotations/kubernetes.io~1service-account.name",
        )
        .is_empty()
    {
        errs.push(FieldError::required(
            "metadata.annotations[kubernetes.io/service-account.name]",
            "",
        ));
    }
    if secret_type == "kubernetes.io/basic-auth" && !has("username") && !has("password") {
        errs.push(FieldError::required("data[username]", ""));
        errs.push(FieldError::required("data[password]", ""));
    }
    errs
}

pub(super) fn validate_service(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let service_type = spec.get("type").and_then(Value::as_str).unwrap_or("ClusterIP");
    const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if !TYPES.contains(&service_type) {
        errs.push(FieldError::not_supported(
            "spec.type",
            &json!(service_type),
            TYPES,
        ));
    }
    if let Some(affinity) = spec.get("sessionAffinity").and_then(Value::as_str)
        && !["ClientIP", "None"].contains(&affinity)
    {
        errs.push(FieldError::not_supported(
            "spec.sessionAffinity",
            &json!(affinity),
            &["ClientIP", "None"],
        ));
    }
    // kube-apiserver's ValidateService: the field belongs to load balancers only.
    if spec
        .get("allocateLoadBalancerNodePorts")
        .is_some_and(|v| !v.is_null())
        && service_type != "LoadBalancer"
    {
        errs.push(FieldError::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    let ports = spec
        .get("ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
    if service_type == "ExternalName" {
        if str_at(spec, "/externalName").is_empty() {
            errs.push(FieldError::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && !headless {
        errs.push(FieldError::required("spec.ports", ""));
    }
    let mut names: Vec<&str> = Vec::new();
    let mut keys: Vec<(i64, &str)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let base = format!("spec.ports[{i}]");
        let name = port.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            if ports.len() > 1 {
                errs.push(FieldError::required(format!("{base}.name"), ""));
            }
        } else {
            for msg in dns1123_label_errors(name) {
                errs.push(FieldError::invalid(format!("{base}.name"), &json!(name), &msg));
            }
            if names.contains(&name) {
                errs.push(FieldError::duplicate(format!("{base}.name"), &json!(name)));
            }
            names.push(name);
        }
        validate_port_number(&format!("{base}.port"), port.get("port"), &mut errs);
        validate_protocol(&format!("{base}.protocol"), port.get("protocol"), &mut errs);
        validate_port_number(&format!("{base}.targetPort"), port.get("targetPort"), &mut errs);
        // The node port allocator's range (20-networking step 9).
        if let Some(node_port) = port.get("nodePort").and_then(Value::as_i64)
            && node_port != 0
            && !(30000..=32767).contains(&node_port)
        {
            errs.push(FieldError::invalid(
                format!("{base}.nodePort"),
                &json!(node_port),
                "provided port is not in the valid range. The range of valid ports is 30000-32767",
            ));
        }
        let key = (
            port.get("port").and_then(Value::as_i64).unwrap_or(0),
            port.get("protocol").and_then(Value::as_str).unwrap_or("TCP"),
        );
        if keys.contains(&key) {
            errs.push(FieldError::duplicate(
                &base,
                &json!({"port": key.0, "protocol": key.1}),
            ));
        }
        keys.push(key);
    }
    if let Some(old_spec) = old.and_then(|o| o.get("spec")) {
        let cluster_ips = |s: &Value| -> Vec<Value> {
            match s.get("clusterIPs").and_then(Value::as_array) {
                Some(ips) if !ips.is_empty() => ips.clone(),
                _ => s
                    .get("clusterIP")
                    .and_then(Value::as_str)
                    .map(|ip| vec![json!(ip)])
                    .unwrap_or_default(),
            }
        };
        let (new_ips, old_ips) = (cluster_ips(spec), cluster_ips(old_spec));
        if let (Some(new_first), Some(old_first)) = (new_ips.first(), old_ips.first())
            && new_first != old_first
            && service_type != "ExternalName"
        {
            errs.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                &Value::Array(new_ips),
                "may not change once set",
            ));
        }
    }
    errs
}
