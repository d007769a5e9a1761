//! Validation of Ingresses, IngressClasses, Endpoints and EndpointSlices, after
//! `pkg/apis/{networking,core,discovery}/validation`.

use serde_json::{Value, json};

use super::{FieldError, str_at, validate_port_number, validate_protocol};
use crate::names::{dns1035_label_errors, dns1123_subdomain_errors};

pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    match kind {
        "Ingress" => ingress(spec),
        "IngressClass" => ingress_class(spec, old.map(|o| &o["spec"])),
        "Endpoints" => endpoints(object),
        "EndpointSlice" => endpoint_slice(object, old),
        _ => Vec::new(),
    }
}

fn ingress(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = spec["rules"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if spec.get("defaultBackend").is_none_or(Value::is_null) && rules.is_empty() {
        errs.push(FieldError::invalid(
            "spec",
            spec.get("rules").unwrap_or(&Value::Null),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = spec.get("defaultBackend").filter(|b| !b.is_null()) {
        errs.extend(backend_errors(backend, "spec.defaultBackend"));
    }
    if let Some(class) = spec["ingressClassName"].as_str() {
        for msg in dns1123_subdomain_errors(class) {
            errs.push(FieldError::invalid("spec.ingressClassName", &json!(class), &msg));
        }
    }
    for (i, tls) in spec["tls"].as_array().into_iter().flatten().enumerate() {
        for (j, host) in tls["hosts"].as_array().into_iter().flatten().enumerate() {
            errs.extend(host_errors(
                host.as_str().unwrap_or(""),
                &format!("spec.tls[{i}].hosts[{j}]"),
            ));
        }
    }
    for (i, rule) in rules.iter().enumerate() {
        let base = format!("spec.rules[{i}]");
        if let Some(host) = rule["host"].as_str().filter(|h| !h.is_empty()) {
            errs.extend(host_errors(host, &format!("{base}.host")));
        }
        let Some(http) = rule.get("http").filter(|h| !h.is_null()) else {
            continue;
        };
        let paths = http["paths"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        if paths.is_empty() {
            errs.push(FieldError::required(format!("{base}.http.paths"), ""));
        }
        for (j, path) in paths.iter().enumerate() {
            let p = format!("{base}.http.paths[{j}]");
            let value = path["path"].as_str().unwrap_or("");
            match path["pathType"].as_str() {
                None => errs.push(FieldError::required(
                    format!("{p}.pathType"),
                    "pathType must be specified",
                )),
                Some("Exact" | "Prefix") => {
                    if !value.starts_with('/') {
                        errs.push(FieldError::invalid(
                            format!("{p}.path"),
                            &json!(value),
                            "must be an absolute path",
                        ));
                    }
                }
                Some("ImplementationSpecific") => {
                    if !value.is_empty() && !value.starts_with('/') {
                        errs.push(FieldError::invalid(
                            format!("{p}.path"),
                            &json!(value),
                            "must be an absolute path",
                        ));
                    }
                }
                Some(other) => errs.push(FieldError::not_supported(
                    format!("{p}.pathType"),
                    &json!(other),
                    &["Exact", "ImplementationSpecific", "Prefix"],
                )),
            }
            errs.extend(backend_errors(&path["backend"], &format!("{p}.backend")));
        }
    }
    errs
}

/// A rule or TLS host: a DNS subdomain, optionally with a leading `*.` wildcard.
fn host_errors(host: &str, path: &str) -> Vec<FieldError> {
    let name = host.strip_prefix("*.").unwrap_or(host);
    dns1123_subdomain_errors(name)
        .into_iter()
        .map(|msg| FieldError::invalid(path, &json!(host), &msg))
        .collect()
}

fn backend_errors(backend: &Value, path: &str) -> Vec<FieldError> {
    let service = backend.get("service").filter(|s| !s.is_null());
    let resource = backend.get("resource").filter(|r| !r.is_null());
    let mut errs = Vec::new();
    match (service, resource) {
        (Some(_), Some(_)) => errs.push(FieldError::invalid(
            path,
            &json!(""),
            "cannot set both resource and service backends",
        )),
        (None, Some(r)) => {
            for field in ["kind", "name"] {
                if str_at(r, &format!("/{field}")).is_empty() {
                    errs.push(FieldError::required(format!("{path}.resource.{field}"), ""));
                }
            }
        }
        (Some(s), None) => {
            let name = str_at(s, "/name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{path}.service.name"), ""));
            } else {
                for msg in dns1035_label_errors(name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.service.name"),
                        &json!(name),
                        &msg,
                    ));
                }
            }
            let port_name = str_at(s, "/port/name");
            let number = s.pointer("/port/number").and_then(Value::as_i64).unwrap_or(0);
            match (port_name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    path,
                    &json!(""),
                    "cannot set both port name & port number",
                )),
                (true, true) => errs.push(FieldError::required(path, "port name or number is required")),
                (true, false) => validate_port_number(
                    &format!("{path}.service.port.number"),
                    Some(&json!(number)),
                    &mut errs,
                ),
                (false, true) => {}
            }
        }
        (None, None) => errs.push(FieldError::invalid(
            path,
            &json!(""),
            "resource or service backend is required",
        )),
    }
    errs
}

fn ingress_class(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let controller = str_at(spec, "/controller");
    if controller.is_empty() {
        errs.push(FieldError::required("spec.controller", ""));
    } else if let Some(old) = old
        && str_at(old, "/controller") != controller
    {
        errs.push(FieldError::invalid(
            "spec.controller",
            &json!(controller),
            "field is immutable",
        ));
    }
    if let Some(params) = spec.get("parameters").filter(|p| !p.is_null()) {
        for field in ["kind", "name"] {
            if str_at(params, &format!("/{field}")).is_empty() {
                errs.push(FieldError::required(format!("spec.parameters.{field}"), ""));
            }
        }
        let namespace = params.get("namespace").and_then(Value::as_str);
        match params["scope"].as_str() {
            Some("Cluster") if namespace.is_some() => errs.push(FieldError::forbidden(
                "spec.parameters.namespace",
                "`parameters.scope` is set to 'Cluster'",
            )),
            Some("Namespace") if namespace.is_none_or(str::is_empty) => errs.push(FieldError::required(
                "spec.parameters.namespace",
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some("Cluster" | "Namespace") | None => {}
            Some(other) => errs.push(FieldError::not_supported(
                "spec.parameters.scope",
                &json!(other),
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

const IP_MESSAGE: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";

fn is_ip(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok()
}

fn endpoints(object: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, subset) in object["subsets"].as_array().into_iter().flatten().enumerate() {
        let base = format!("subsets[{i}]");
        for list in ["addresses", "notReadyAddresses"] {
            for (j, address) in subset[list].as_array().into_iter().flatten().enumerate() {
                // A node name, when given (even empty), must be a DNS subdomain.
                if let Some(node) = address.get("nodeName").and_then(Value::as_str) {
                    for msg in dns1123_subdomain_errors(node) {
                        errs.push(FieldError::invalid(
                            format!("{base}.{list}[{j}].nodeName"),
                            &json!(node),
                            &msg,
                        ));
                    }
                }
                let ip = str_at(address, "/ip");
                if !is_ip(ip) {
                    // Checked twice on the real apiserver, with two wordings.
                    for detail in [IP_MESSAGE, "must be a valid IP address"] {
                        errs.push(FieldError::invalid(
                            format!("{base}.{list}[{j}].ip"),
                            &json!(ip),
                            detail,
                        ));
                    }
                }
            }
        }
        let ports = subset["ports"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        for (j, port) in ports.iter().enumerate() {
            let p = format!("{base}.ports[{j}]");
            if ports.len() > 1 && str_at(port, "/name").is_empty() {
                errs.push(FieldError::required(format!("{p}.name"), ""));
            }
            validate_port_number(&format!("{p}.port"), port.get("port"), &mut errs);
            validate_protocol(&format!("{p}.protocol"), port.get("protocol"), &mut errs);
        }
    }
    errs
}

/// Addresses are checked like the apiserver checks IPs since v1.33: an address the stored
/// object already had is not re-checked (validation ratcheting).
fn endpoint_slice(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let known: Vec<&Value> = old
        .map(|o| {
            o["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                .collect()
        })
        .unwrap_or_default();
    let mut errs = Vec::new();
    let address_type = str_at(object, "/addressType");
    const TYPES: &[&str] = &["FQDN", "IPv4", "IPv6"];
    if address_type.is_empty() {
        errs.push(FieldError::required("addressType", ""));
    } else if !TYPES.contains(&address_type) {
        errs.push(FieldError::not_supported(
            "addressType",
            &json!(address_type),
            TYPES,
        ));
    }
    if let Some(old) = old
        && str_at(old, "/addressType") != address_type
    {
        errs.push(FieldError::invalid(
            "addressType",
            &json!(address_type),
            "field is immutable",
        ));
    }
    for (i, endpoint) in object["endpoints"].as_array().into_iter().flatten().enumerate() {
        let addresses = endpoint["addresses"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        if addresses.is_empty() {
            errs.push(FieldError::required(
                format!("endpoints[{i}].addresses"),
                "must contain at least 1 address",
            ));
        }
        for (j, address) in addresses.iter().enumerate() {
            if known.contains(&address) {
                continue;
            }
            let a = address.as_str().unwrap_or("");
            let ok = match address_type {
                "IPv4" => a.parse::<std::net::Ipv4Addr>().is_ok(),
                "IPv6" => a.parse::<std::net::Ipv6Addr>().is_ok(),
                _ => dns1123_subdomain_errors(a).is_empty(),
            };
            if !ok {
                let detail = if address_type == "FQDN" {
                    "must be a valid DNS subdomain"
                } else {
                    IP_MESSAGE
                };
                errs.push(FieldError::invalid(
                    format!("endpoints[{i}].addresses[{j}]"),
                    address,
                    detail,
                ));
            }
        }
    }
    for (i, port) in object["ports"].as_array().into_iter().flatten().enumerate() {
        validate_protocol(&format!("ports[{i}].protocol"), port.get("protocol"), &mut errs);
    }
    errs
}
