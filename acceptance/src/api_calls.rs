//! kubectl's commonest calls made to the API server directly, without starting kubectl: the
//! tests read, create and delete objects hundreds of times per suite, and each kubectl start
//! costs about 50 ms of CPU before its one request. The same requests kubectl makes (discovery
//! to resolve the resource, then the GET, POST or DELETE) and the same answers: the output,
//! the exit code, and `Error from server (Reason): message` for a refusal.
//!
//! The forms made here:
//! - `get <types, names or type/name> [-n NS] [-l SEL] [-A] [--ignore-not-found] -o json`:
//!   the object, or a `List` with each item's `apiVersion` and `kind`, `managedFields` left out
//!   unless `--show-managed-fields`; with `--ignore-not-found` missing objects are skipped and
//!   nothing at all is printed for no object;
//! - `create namespace NAME`;
//! - `delete <names or type/name> [-n NS] [--ignore-not-found] [--wait=false]`, waiting until
//!   the objects are gone unless `--wait=false`.
//!
//! Anything else, and a resource name that is ambiguous or unknown, is left to kubectl
//! ([`Unsupported`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kube_test_server::Client;
use serde_json::{Value, json};

use crate::credentials::Credentials;
use crate::engine::EngineOutput;
use crate::requests;

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

    /// kubectl's line for a deleted object: `configmap "a" deleted from ns namespace`.
    fn deleted_line(&self, name: &str, namespace: &str) -> String {
        let mut label = if self.singular.is_empty() {
            self.kind.to_ascii_lowercase()
        } else {
            self.singular.clone()
        };
        if !self.group.is_empty() {
            label = format!("{label}.{}", self.group);
        }
        match self.namespaced {
            true => format!("{label} \"{name}\" deleted from {namespace} namespace\n"),
            false => format!("{label} \"{name}\" deleted\n"),
        }
    }
}

/// What `kubectl get` or `delete` was asked for.
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

    /// The namespace asked about: `-n`'s, else `default`; none for `-A`.
    fn scope(&self) -> Option<String> {
        (!self.all_namespaces).then(|| self.namespace.clone().unwrap_or_else(|| "default".to_string()))
    }
}

/// The flags of a `get` or `delete` answered here, taken out of its arguments.
#[derive(Default)]
struct Flags {
    json: bool,
    ignore_not_found: bool,
    /// `delete` waits until the objects are gone (kubectl's `--wait`, on by default).
    no_wait: bool,
}

impl Flags {
    /// The arguments without the flags this module knows; the rest go to [`Query::parse`].
    fn take<'a>(args: &[&'a str]) -> (Vec<&'a str>, Flags) {
        let mut flags = Flags::default();
        let mut rest = Vec::new();
        let mut args = args.iter().peekable();
        while let Some(arg) = args.next() {
            match *arg {
                "-o" | "--output" if args.peek() == Some(&&"json") => {
                    args.next();
                    flags.json = true;
                }
                "-ojson" | "-o=json" | "--output=json" => flags.json = true,
                "--ignore-not-found" | "--ignore-not-found=true" => flags.ignore_not_found = true,
                "--wait=false" => flags.no_wait = true,
                "--wait" | "--wait=true" => flags.no_wait = false,
                other => rest.push(other),
            }
        }
        (rest, flags)
    }
}

/// What a `get` found: the objects, and kubectl's error lines for the others.
struct Found {
    items: Vec<Value>,
    errors: Vec<String>,
}

/// A cluster's kubectl calls, as the admin: one keep-alive connection and the discovered
/// resources, both made on first use and kept.
pub struct ApiCalls {
    credentials: Credentials,
    runtime: tokio::runtime::Runtime,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    client: Option<Client>,
    resources: Option<Vec<Resource>>,
}

/// How long a `delete` waits for its objects to be gone, as a kubectl call may take.
const DELETE_WAIT: Duration = Duration::from_secs(120);

impl ApiCalls {
    pub fn new(credentials: Credentials) -> ApiCalls {
        ApiCalls {
            credentials,
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for API calls"),
            state: Mutex::new(State::default()),
        }
    }

    /// What `kubectl <args>` prints and exits with; `Err(Unsupported)` for kubectl to answer.
    pub fn kubectl(&self, args: &[&str]) -> Result<EngineOutput, Unsupported> {
        match args {
            ["get", rest @ ..] => self.get(rest),
            ["create", "namespace" | "ns", name] => Ok(self.create_namespace(name)),
            ["delete", rest @ ..] => self.delete(rest),
            _ => Err(Unsupported),
        }
    }

    /// `kubectl get <args> -o json`'s output, parsed; `Err(Unsupported)` for kubectl to answer.
    /// Panics, as a failing kubectl would, when the server refuses a read.
    pub fn get_json(&self, args: &[&str]) -> Result<Value, Unsupported> {
        let query = Query::parse(args)?;
        let found = self.find(&query, false)?;
        if !found.errors.is_empty() {
            panic!("kubectl get {}: {}", args.join(" "), found.errors.join("\n"));
        }
        Ok(listed(&query, found.items))
    }

    fn get(&self, args: &[&str]) -> Result<EngineOutput, Unsupported> {
        let (rest, flags) = Flags::take(args);
        if !flags.json {
            return Err(Unsupported);
        }
        let query = Query::parse(&rest)?;
        let found = self.find(&query, flags.ignore_not_found)?;
        let stdout = if found.items.is_empty() && (flags.ignore_not_found || !found.errors.is_empty()) {
            String::new()
        } else {
            kubectl_json(&listed(&query, found.items))
        };
        Ok(answer(stdout, found.errors))
    }

    /// The objects `query` names or lists; a missing named object is skipped when
    /// `ignore_not_found`, else an error line.
    fn find(&self, query: &Query, ignore_not_found: bool) -> Result<Found, Unsupported> {
        let mut state = self.lock();
        let namespace = query.scope();
        let resources = self.resolve_targets(&mut state, query)?;
        let mut found = Found {
            items: Vec::new(),
            errors: Vec::new(),
        };
        for (resource, name) in resources {
            let mut path = resource.collection(namespace.as_deref());
            match &name {
                Some(name) => path = format!("{path}/{name}"),
                None => {
                    if let Some(selector) = &query.selector {
                        path = format!("{path}?labelSelector={}", encode(selector));
                    }
                }
            }
            let value = match self.call(&mut state, "GET", &path, None) {
                Ok((200, body)) => match serde_json::from_slice::<Value>(&body) {
                    Ok(value) => value,
                    Err(e) => {
                        found
                            .errors
                            .push(format!("error: GET {path} answered no JSON: {e}"));
                        continue;
                    }
                },
                Ok((404, _)) if ignore_not_found && name.is_some() => continue,
                Ok((status, body)) => {
                    found.errors.push(refusal(status, &body));
                    continue;
                }
                Err(e) => {
                    found.errors.push(e);
                    continue;
                }
            };
            if name.is_some() {
                found.items.push(value);
                continue;
            }
            for mut item in value["items"].as_array().cloned().unwrap_or_default() {
                if item.get("kind").is_none() {
                    item["apiVersion"] = json!(resource.group_version);
                    item["kind"] = json!(resource.kind);
                }
                found.items.push(item);
            }
        }
        if !query.managed_fields {
            for item in &mut found.items {
                if let Some(meta) = item.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.remove("managedFields");
                }
            }
        }
        Ok(found)
    }

    fn create_namespace(&self, name: &str) -> EngineOutput {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let mut state = self.lock();
        match self.call(&mut state, "POST", "/api/v1/namespaces", Some(body.to_string())) {
            Ok((201, _)) => answer(format!("namespace/{name} created\n"), vec![]),
            Ok((status, body)) => answer(String::new(), vec![refusal(status, &body)]),
            Err(e) => answer(String::new(), vec![e]),
        }
    }

    /// Deletes each named object in the background (kubectl's default cascade), then waits
    /// until every one is gone (no object, or one with another uid) unless `--wait=false`.
    fn delete(&self, args: &[&str]) -> Result<EngineOutput, Unsupported> {
        let (rest, flags) = Flags::take(args);
        let query = Query::parse(&rest)?;
        let named = query.targets.iter().all(|(_, name)| name.is_some());
        if flags.json || !named || query.selector.is_some() || query.all_namespaces || query.managed_fields {
            return Err(Unsupported);
        }
        let namespace = query.scope().unwrap_or_default();
        let mut state = self.lock();
        let resources = self.resolve_targets(&mut state, &query)?;
        let options = r#"{"propagationPolicy":"Background"}"#.to_string();
        let (mut stdout, mut errors, mut deleted) = (String::new(), Vec::new(), Vec::new());
        for (resource, name) in resources {
            let Some(name) = name else { continue }; // every target is named (checked above)
            let path = format!("{}/{name}", resource.collection(Some(&namespace)));
            match self.call(&mut state, "DELETE", &path, Some(options.clone())) {
                Ok((200 | 202, body)) => {
                    let uid = serde_json::from_slice::<Value>(&body)
                        .ok()
                        .map(|v| v["metadata"]["uid"].clone());
                    stdout.push_str(&resource.deleted_line(&name, &namespace));
                    deleted.push((path, uid));
                }
                Ok((404, _)) if flags.ignore_not_found => {}
                Ok((status, body)) => errors.push(refusal(status, &body)),
                Err(e) => errors.push(e),
            }
        }
        drop(state);
        if !flags.no_wait {
            let deadline = Instant::now() + DELETE_WAIT;
            for (path, uid) in deleted {
                if let Err(e) = self.wait_gone(&path, uid, deadline) {
                    errors.push(e);
                }
            }
        }
        Ok(answer(stdout, errors))
    }

    fn wait_gone(&self, path: &str, uid: Option<Value>, deadline: Instant) -> Result<(), String> {
        loop {
            let answer = self.call(&mut self.lock(), "GET", path, None)?;
            match answer {
                (404, _) => return Ok(()),
                (200, body) => {
                    let now: Value = serde_json::from_slice(&body).unwrap_or_default();
                    if uid.as_ref().is_some_and(|uid| now["metadata"]["uid"] != *uid) {
                        return Ok(());
                    }
                }
                (status, body) => return Err(refusal(status, &body)),
            }
            if Instant::now() >= deadline {
                return Err(format!("error: timed out waiting for the deletion of {path}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Each of `query`'s targets with the resource its written name resolves to.
    fn resolve_targets(
        &self,
        state: &mut State,
        query: &Query,
    ) -> Result<Vec<(Resource, Option<String>)>, Unsupported> {
        query
            .targets
            .iter()
            .map(|(written, name)| Ok((self.resolve(state, written)?, name.clone())))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
        if let Some(groups) = self.read_json(state, "/apis") {
            for group in groups["groups"].as_array().into_iter().flatten() {
                let name = group["name"].as_str().unwrap_or_default().to_string();
                if let Some(gv) = group["preferredVersion"]["groupVersion"].as_str() {
                    versions.push((name, gv.to_string(), format!("/apis/{gv}")));
                }
            }
        }
        let mut resources = Vec::new();
        for (group, group_version, path) in versions {
            let Some(list) = self.read_json(state, &path) else {
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

    /// A discovery document; None when the server does not serve it.
    fn read_json(&self, state: &mut State, path: &str) -> Option<Value> {
        match self.call(state, "GET", path, None) {
            Ok((200, body)) => serde_json::from_slice(&body).ok(),
            _ => None,
        }
    }

    /// One request over the kept connection, connecting (again) when there is none or it
    /// broke: the status and body, or kubectl's line for a server it cannot reach.
    fn call(
        &self,
        state: &mut State,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<(u16, Vec<u8>), String> {
        // Not while another test counts the requests it makes (see `requests`).
        let _traffic = requests::shared();
        let credentials = &self.credentials;
        let mut headers = vec![("accept", "application/json")];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        let mut last = String::new();
        for _ in 0..2 {
            if state.client.is_none() {
                let connect = Client::connect(&credentials.server, &credentials.ca_pem);
                match self.runtime.block_on(connect) {
                    Ok(client) => state.client = Some(client),
                    Err(e) => {
                        last = e.to_string();
                        continue;
                    }
                }
            }
            let client = state.client.as_mut().expect("connected above");
            let request = client.request(
                method,
                path,
                &headers,
                Some(credentials.token.as_str()),
                body.clone().map(String::into_bytes),
            );
            match self.runtime.block_on(request) {
                Ok(response) => return Ok((response.status, response.body)),
                Err(e) => {
                    state.client = None;
                    last = e.to_string();
                }
            }
        }
        Err(format!("Unable to connect to the server: {last}"))
    }
}

/// `get`'s answer: the one named object as itself, anything else as a `List`.
fn listed(query: &Query, mut items: Vec<Value>) -> Value {
    if query.single && items.len() == 1 {
        return items.pop().unwrap_or_default();
    }
    json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

/// JSON as kubectl prints it: four-space indents and a final newline.
fn kubectl_json(value: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut serializer).expect("a JSON value serializes");
    out.push(b'\n');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A call's output with kubectl's exit code: 1 when any error line was printed.
fn answer(stdout: String, errors: Vec<String>) -> EngineOutput {
    EngineOutput {
        code: i32::from(!errors.is_empty()),
        stdout,
        stderr: errors.iter().map(|e| format!("{e}\n")).collect(),
    }
}

/// kubectl's line for a refused request: the Status's reason and message when there is one.
fn refusal(status: u16, body: &[u8]) -> String {
    let parsed: Value = serde_json::from_slice(body).unwrap_or_default();
    match (parsed["reason"].as_str(), parsed["message"].as_str()) {
        (Some(reason), Some(message)) => format!("Error from server ({reason}): {message}"),
        _ => format!(
            "Error from server ({status}): {}",
            String::from_utf8_lossy(body).trim()
        ),
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

    #[test]
    fn kubectl_flags_are_taken_out_and_the_rest_left_for_the_query() {
        let (rest, flags) = Flags::take(&["cm", "a", "--ignore-not-found", "-o", "json", "-n", "ns"]);
        assert_eq!(rest, ["cm", "a", "-n", "ns"]);
        assert!(flags.json && flags.ignore_not_found && !flags.no_wait);
        let (rest, flags) = Flags::take(&["ns", "x", "--wait=false", "-o", "yaml"]);
        assert_eq!(rest, ["ns", "x", "-o", "yaml"], "only JSON output is made here");
        assert!(flags.no_wait && !flags.json);
    }

    #[test]
    fn answers_read_as_kubectl_prints_them() {
        let resource = |group: &str, namespaced| Resource {
            group: group.to_string(),
            group_version: String::new(),
            plural: "deployments".to_string(),
            singular: "deployment".to_string(),
            kind: "Deployment".to_string(),
            short_names: vec![],
            namespaced,
        };
        assert_eq!(
            resource("apps", true).deleted_line("web", "shop"),
            "deployment.apps \"web\" deleted from shop namespace\n"
        );
        assert_eq!(
            resource("", false).deleted_line("web", "shop"),
            "deployment \"web\" deleted\n"
        );
        let status = br#"{"kind":"Status","reason":"NotFound","message":"configmaps \"a\" not found"}"#;
        assert_eq!(
            refusal(404, status),
            r#"Error from server (NotFound): configmaps "a" not found"#
        );
        assert_eq!(
            refusal(502, b"bad gateway\n"),
            "Error from server (502): bad gateway"
        );
        assert_eq!(
            kubectl_json(&json!({"a": [1]})),
            "{\n    \"a\": [\n        1\n    ]\n}\n"
        );
        let refused = answer(
            String::new(),
            vec!["Error from server (Forbidden): no".to_string()],
        );
        assert_eq!(
            (refused.code, refused.stderr.as_str()),
            (1, "Error from server (Forbidden): no\n")
        );
    }
}
