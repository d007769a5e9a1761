//! `kubectl get … -o json` answered by the API server directly, without starting kubectl:
//! the tests read objects hundreds of times per suite, and each kubectl start costs about 50 ms
//! of CPU before its one request. The same requests kubectl makes (discovery to resolve the
//! resource, then a GET of the object or the collection), and the same output: the object, or a
//! `List` of them with each item's `apiVersion` and `kind`, `managedFields` left out unless
//! `--show-managed-fields`.
//!
//! Only the plain forms are read here (types, names, `type/name`, `-n`, `-l`, `-A`); anything
//! else, and a resource name that is ambiguous or unknown, is left to kubectl ([`Unsupported`]).

use std::sync::Mutex;

use kube_test_server::Client;
use serde_json::{Value, json};

use crate::cluster::Credentials;

/// The arguments are not a form read here, or name a resource discovery does not settle: run
/// kubectl instead.
#[derive(Debug)]
pub struct Unsupported;

/// One API resource as discovery lists it.
#[derive(Debug, Clone)]
struct Resource {
    group: String,
    group_version: String,
    plural: String,
    singular: String,
    kind: String,
    short_names: Vec<String>,
    namespaced: bool,
}

impl Resource {
    fn answers_to(&self, name: &str) -> bool {
        self.plural == name
            || self.singular == name
            || self.kind.to_ascii_lowercase() == name
            || self.short_names.iter().any(|s| s == name)
    }

    fn collection(&self, namespace: Option<&str>) -> String {
        let root = if self.group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{}", self.group_version)
        };
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{root}/namespaces/{ns}/{}", self.plural),
            None => format!("{root}/{}", self.plural),
        }
    }
}

/// What `kubectl get` was asked for.
struct Query {
    /// `(resource as written, name)`; no name: the whole collection.
    targets: Vec<(String, Option<String>)>,
    namespace: Option<String>,
    all_namespaces: bool,
    selector: Option<String>,
    managed_fields: bool,
    /// One named object, printed as itself rather than as a list.
    single: bool,
}

impl Query {
    fn parse(args: &[&str]) -> Result<Query, Unsupported> {
        let mut query = Query {
            targets: Vec::new(),
            namespace: None,
            all_namespaces: false,
            selector: None,
            managed_fields: false,
            single: false,
        };
        let mut positional = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match *arg {
                "-n" | "--namespace" => query.namespace = Some(args.next().ok_or(Unsupported)?.to_string()),
                "-l" | "--selector" => query.selector = Some(args.next().ok_or(Unsupported)?.to_string()),
                "-A" | "--all-namespaces" => query.all_namespaces = true,
                "--show-managed-fields" => query.managed_fields = true,
                flag if flag.starts_with("--namespace=") => {
                    query.namespace = Some(flag["--namespace=".len()..].to_string())
                }
                flag if flag.starts_with("--selector=") => {
                    query.selector = Some(flag["--selector=".len()..].to_string())
                }
                flag if flag.starts_with('-') => return Err(Unsupported),
                word => positional.push(word),
            }
        }
        let (first, rest) = positional.split_first().ok_or(Unsupported)?;
        if first.contains('/') {
            for word in &positional {
                let (resource, name) = word.split_once('/').ok_or(Unsupported)?;
                query.targets.push((resource.to_string(), Some(name.to_string())));
            }
        } else if rest.is_empty() {
            for resource in first.split(',') {
                query.targets.push((resource.to_string(), None));
            }
        } else {
            if first.contains(',') {
                return Err(Unsupported);
            }
            for name in rest {
                query.targets.push((first.to_string(), Some(name.to_string())));
            }
        }
        let named = query.targets.iter().all(|(_, name)| name.is_some());
        if named && (query.selector.is_some() || query.all_namespaces) {
            return Err(Unsupported);
        }
        query.single = named && query.targets.len() == 1;
        Ok(query)
    }
}

/// A cluster's reader: one keep-alive connection and the discovered resources, both made on
/// first use and kept.
pub struct ApiReads {
    credentials: Credentials,
    runtime: tokio::runtime::Runtime,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    client: Option<Client>,
    resources: Option<Vec<Resource>>,
}

impl ApiReads {
    pub fn new(credentials: Credentials) -> ApiReads {
        ApiReads {
            credentials,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for API reads"),
            state: Mutex::new(State::default()),
        }
    }

    /// `kubectl get <args> -o json`'s output; `Err(Unsupported)` for kubectl to answer. Panics,
    /// as a failing kubectl would, when the server refuses a read.
    pub fn get_json(&self, args: &[&str]) -> Result<Value, Unsupported> {
        let query = Query::parse(args)?;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let namespace = if query.all_namespaces {
            None
        } else {
            Some(query.namespace.clone().unwrap_or_else(|| "default".to_string()))
        };
        let mut items = Vec::new();
        for (written, name) in &query.targets {
            let resource = self.resolve(&mut state, written)?;
            let mut path = resource.collection(namespace.as_deref());
            match name {
                Some(name) => {
                    path = format!("{path}/{name}");
                    items.push(self.read(&mut state, &path, args));
                }
                None => {
                    if let Some(selector) = &query.selector {
                        path = format!("{path}?labelSelector={}", encode(selector));
                    }
                    let list = self.read(&mut state, &path, args);
                    for mut item in list["items"].as_array().cloned().unwrap_or_default() {
                        if item.get("kind").is_none() {
                            item["apiVersion"] = json!(resource.group_version);
                            item["kind"] = json!(resource.kind);
                        }
                        items.push(item);
                    }
                }
            }
        }
        if !query.managed_fields {
            for item in &mut items {
                if let Some(meta) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
            }
        }
        if query.single {
            return Ok(items.pop().unwrap_or_default());
        }
        Ok(json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}))
    }

    /// The one resource `written` (`configmaps`, `cm`, `Deployment.apps`, `widgets.example.com`)
    /// names, discovering again once when none does (a definition created since).
    fn resolve(&self, state: &mut State, written: &str) -> Result<Resource, Unsupported> {
        let lower = written.to_ascii_lowercase();
        let (name, group) = match lower.split_once('.') {
            Some((name, group)) => (name.to_string(), Some(group.to_string())),
            None => (lower.clone(), None),
        };
        for fresh in [false, true] {
            if fresh || state.resources.is_none() {
                state.resources = Some(self.discover(state));
            }
            let found: Vec<&Resource> = state
                .resources
                .iter()
                .flatten()
                .filter(|r| r.answers_to(&name) && group.as_ref().is_none_or(|g| *g == r.group))
                .collect();
            match found.as_slice() {
                [one] => return Ok((*one).clone()),
                [] => continue,
                _ => return Err(Unsupported),
            }
        }
        Err(Unsupported)
    }

    /// Every resource of the preferred version of every group; a group whose discovery fails
    /// (an APIService no server backs) is left out.
    fn discover(&self, state: &mut State) -> Vec<Resource> {
        let mut versions = vec![(String::new(), "v1".to_string(), "/api/v1".to_string())];
        if let Ok(groups) = self.try_read(state, "/apis") {
            for group in groups["groups"].as_array().into_iter().flatten() {
                let name = group["name"].as_str().unwrap_or_default().to_string();
                if let Some(gv) = group["preferredVersion"]["groupVersion"].as_str() {
                    versions.push((name, gv.to_string(), format!("/apis/{gv}")));
                }
            }
        }
        let mut resources = Vec::new();
        for (group, group_version, path) in versions {
            let Ok(list) = self.try_read(state, &path) else {
                continue;
            };
            for r in list["resources"].as_array().into_iter().flatten() {
                let plural = r["name"].as_str().unwrap_or_default();
                if plural.is_empty() || plural.contains('/') {
                    continue;
                }
                resources.push(Resource {
                    group: group.clone(),
                    group_version: group_version.clone(),
                    plural: plural.to_string(),
                    singular: r["singularName"].as_str().unwrap_or_default().to_string(),
                    kind: r["kind"].as_str().unwrap_or_default().to_string(),
                    short_names: r["shortNames"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                });
            }
        }
        resources
    }

    fn read(&self, state: &mut State, path: &str, args: &[&str]) -> Value {
        self.try_read(state, path)
            .unwrap_or_else(|e| panic!("kubectl get {} (GET {path}): {e}", args.join(" ")))
    }

    /// GET `path` as JSON over the kept connection, connecting (again) when there is none or
    /// it broke.
    fn try_read(&self, state: &mut State, path: &str) -> Result<Value, String> {
        let credentials = &self.credentials;
        let token = credentials.token.as_str();
        let headers = [("accept", "application/json")];
        let mut last = String::new();
        for _ in 0..2 {
            if state.client.is_none() {
                let connect = Client::connect(&credentials.server, &credentials.ca_pem);
                match self.runtime.block_on(connect) {
                    Ok(client) => state.client = Some(client),
                    Err(e) => {
                        last = format!("connecting: {e}");
                        continue;
                    }
                }
            }
            let client = state.client.as_mut().expect("connected above");
            match self
                .runtime
                .block_on(client.request("GET", path, &headers, Some(token), None))
            {
                Ok(response) if response.status == 200 => {
                    return serde_json::from_slice(&response.body).map_err(|e| format!("not JSON: {e}"));
                }
                Ok(response) => {
                    return Err(format!(
                        "{} {}",
                        response.status,
                        String::from_utf8_lossy(&response.body)
                    ));
                }
                Err(e) => {
                    state.client = None;
                    last = e.to_string();
                }
            }
        }
        Err(last)
    }
}

/// A label selector as a query parameter value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_forms_parse_and_others_are_left_to_kubectl() {
        let q = Query::parse(&["configmap", "cfg", "-n", "ns"]).expect("a named object");
        assert!(q.single);
        assert_eq!(q.targets, [("configmap".to_string(), Some("cfg".to_string()))]);
        assert_eq!(q.namespace.as_deref(), Some("ns"));
        let q = Query::parse(&["secrets,roles", "-n", "ns", "-l", "a=b"]).expect("lists");
        assert!(!q.single);
        assert_eq!(q.targets.len(), 2);
        assert_eq!(q.selector.as_deref(), Some("a=b"));
        let q = Query::parse(&["-n", "ns", "deployment/web", "cm/x"]).expect("type/name pairs");
        assert!(!q.single);
        assert_eq!(q.targets[1], ("cm".to_string(), Some("x".to_string())));
        assert!(Query::parse(&["pods", "--field-selector", "x"]).is_err());
        assert!(Query::parse(&["--raw", "/metrics"]).is_err());
        assert!(Query::parse(&["a,b", "name"]).is_err());
        assert!(Query::parse(&[]).is_err());
        assert_eq!(encode("app in (a,b)"), "app%20in%20%28a%2Cb%29");
    }
}
