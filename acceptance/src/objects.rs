//! Objects the tests check behind the engine's back, read and deleted with kubectl: where a
//! resource of a hashicorp/kubernetes type lives ([`kubectl_target`]), and calls batched per
//! namespace, so dozens of objects cost a handful of kubectl runs.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::Cluster;

/// `text` as a Secret's `data` holds it: standard base64.
pub fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// An object as kubectl names it: resource (`deployments.apps`), namespace, name.
pub type Target = (String, Option<String>, String);

/// The kubectl resource (`deployments.apps`) and namespace of a resource of `type_name`.
pub fn kubectl_target(type_name: &str, values: &Value) -> Target {
    if type_name == "kubernetes_manifest" {
        // The manifest's kind, which kubectl resolves: `ConfigMap`, `Deployment.apps`.
        // The state holds a dynamic value as its `value` and `type`.
        let manifest = match &values["manifest"] {
            Value::Object(m) if m.contains_key("type") => &m["value"],
            other => other,
        };
        let text = |pointer: &str| {
            manifest
                .pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let kind = text("/kind").unwrap_or_default();
        let resource = match text("/apiVersion").unwrap_or_default().rsplit_once('/') {
            Some((group, _)) => format!("{kind}.{group}"),
            None => kind,
        };
        return (
            resource,
            text("/metadata/namespace"),
            text("/metadata/name").unwrap_or_default(),
        );
    }
    let (plural, group, namespaced, _) = kind_of_type(type_name);
    let meta = metadata_of(values);
    let resource = if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    };
    let namespace = namespaced.then(|| meta["namespace"].as_str().unwrap_or("default").to_string());
    (
        resource,
        namespace,
        meta["name"].as_str().unwrap_or_default().to_string(),
    )
}

/// A resource's `metadata`: a block (a list of one) on SDKv2 types, an object on the
/// framework's (a ValidatingAdmissionPolicy).
pub fn metadata_of(values: &Value) -> &Value {
    match &values["metadata"] {
        Value::Array(blocks) => blocks.first().unwrap_or(&Value::Null),
        other => other,
    }
}

/// Where the objects of a state's `resources` live, one target per instance.
pub fn targets_of(resources: &[Value]) -> Vec<Target> {
    resources
        .iter()
        .flat_map(|r| {
            let type_name = r["type"].as_str().unwrap_or_default().to_string();
            r["instances"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |i| kubectl_target(&type_name, &i["attributes"]))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An object kubectl printed as `(namespace, name, kind)`, to find it by.
pub fn object_key(object: &Value) -> (Option<String>, String, String) {
    let meta = &object["metadata"];
    (
        meta["namespace"].as_str().map(str::to_string),
        meta["name"].as_str().unwrap_or_default().to_string(),
        object["kind"].as_str().unwrap_or_default().to_string(),
    )
}

/// The kubectl resource (`deployments`), API group, scope and kind (`Deployment`) of a typed
/// resource of `type_name`.
fn kind_of_type(type_name: &str) -> (&'static str, &'static str, bool, &'static str) {
    let entry = provider_live::entries()
        .iter()
        .find(|e| e.info.type_name == type_name || e.info.aliases.contains(&type_name));
    match entry {
        Some(e) => {
            let group = e.info.api_version.rsplit_once('/').map_or("", |(g, _)| g);
            (e.info.plural, group, e.info.namespaced, e.info.kind)
        }
        None => match type_name.trim_end_matches("_v1") {
            "kubernetes_namespace" => ("namespaces", "", false, "Namespace"),
            "kubernetes_config_map" => ("configmaps", "", true, "ConfigMap"),
            "kubernetes_secret" => ("secrets", "", true, "Secret"),
            "kubernetes_service_account" | "kubernetes_default_service_account" => {
                ("serviceaccounts", "", true, "ServiceAccount")
            }
            other => panic!("no Kubernetes resource known for {other}"),
        },
    }
}

/// The kind of the object a resource of `type_name` with `values` manages (`Deployment`).
pub fn kubectl_kind(type_name: &str, values: &Value) -> String {
    if type_name == "kubernetes_manifest" {
        let (resource, _, _) = kubectl_target(type_name, values);
        return resource.split('.').next().unwrap_or_default().to_string();
    }
    kind_of_type(type_name).3.to_string()
}

/// One kubectl call per namespace (cluster-scoped objects are one more) over `targets`, as
/// `TYPE/NAME` arguments: the corpus's ~60 objects cost a handful of kubectl runs, not one each.
/// Each call gets `args` after the names; returns every call's output.
pub fn kubectl_per_namespace(
    cluster: &Cluster,
    verb: &str,
    targets: &[Target],
    args: &[&str],
) -> Vec<String> {
    calls_per_namespace(verb, targets, args)
        .into_iter()
        .map(|all| {
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            let out = cluster.kubectl(&all);
            assert!(out.success(), "kubectl {}:\n{out}", all.join(" "));
            out.stdout
        })
        .collect()
}

/// Deletes what `targets` name without waiting, one kubectl call per namespace, whatever the
/// outcome: a cleanup that must not hide a test's own failure (nor panic while unwinding).
pub fn kubectl_delete_quietly(cluster: &Cluster, targets: &[Target]) {
    for all in calls_per_namespace("delete", targets, &["--wait=false", "--ignore-not-found"]) {
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let _ = cluster.kubectl(&all);
    }
}

/// The arguments of [`kubectl_per_namespace`]'s calls.
fn calls_per_namespace(verb: &str, targets: &[Target], args: &[&str]) -> Vec<Vec<String>> {
    let mut by_namespace: BTreeMap<Option<&str>, Vec<String>> = BTreeMap::new();
    for (resource, namespace, name) in targets {
        by_namespace
            .entry(namespace.as_deref())
            .or_default()
            .push(format!("{resource}/{name}"));
    }
    by_namespace
        .into_iter()
        .map(|(namespace, names)| {
            let mut all = vec![verb.to_string()];
            all.extend(names);
            all.extend(args.iter().map(|a| a.to_string()));
            if let Some(ns) = namespace {
                all.extend(["-n".to_string(), ns.to_string()]);
            }
            all
        })
        .collect()
}

/// The objects `targets` name that exist (those missing are left out with
/// `ignore_missing`, else an error).
pub fn kubectl_get(cluster: &Cluster, targets: &[Target], ignore_missing: bool) -> Vec<Value> {
    let args: &[&str] = if ignore_missing {
        &["-o", "json", "--ignore-not-found"]
    } else {
        &["-o", "json"]
    };
    kubectl_per_namespace(cluster, "get", targets, args)
        .iter()
        .filter(|out| !out.trim().is_empty())
        .flat_map(|out| {
            let list: Value = serde_json::from_str(out).expect("kubectl printed JSON");
            // One name prints the object itself, several a List.
            match list["items"].as_array() {
                Some(items) => items.clone(),
                None => vec![list],
            }
        })
        .collect()
}

/// `kind/name` of an object kubectl printed, for messages.
pub fn described(object: &Value) -> String {
    format!(
        "{}/{}",
        object["kind"].as_str().unwrap_or_default(),
        object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    )
}

/// Where kubectl finds an object it printed.
pub fn target_of(object: &Value) -> Target {
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = object["apiVersion"]
        .as_str()
        .and_then(|v| v.rsplit_once('/'))
        .map(|(g, _)| g);
    let meta = &object["metadata"];
    (
        group.map_or(kind.to_string(), |g| format!("{kind}.{g}")),
        meta["namespace"].as_str().map(str::to_string),
        meta["name"].as_str().unwrap_or_default().to_string(),
    )
}
