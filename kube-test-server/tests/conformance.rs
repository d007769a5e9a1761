//! Replays every transcript recorded from a real kube-apiserver (`acceptance/kube-golden/` and
//! this crate's `tests/transcripts/`) against a fresh test server per file and compares status codes, content types, warnings
//! and bodies after normalising volatile fields (uids and resourceVersions numbered by first
//! appearance, timestamps, cluster IPs and node ports, tokens, generated names and
//! ServiceAccount volume names, ReplicaSet names (their pod-template-hash is Go's hash of a
//! Go struct printout), order-free lists).
//! Differences must be fixed or listed with a reason in `conformance-allowlist.txt`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine;
use kube_test_server::{Client, ClientResponse};
use kube_test_server::{Controllers, Options, TestServer};
use serde_json::{Map, Value, json};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../acceptance/kube-golden");
/// This crate's own recordings from the same v1.36 apiserver build as kube-golden's 18-23, in
/// the same format: updates, subresources, deletion and validation of the kinds issue 10 added.
const OWN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts");
const ALLOWLIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance-allowlist.txt");

fn token(identity: &str) -> Option<&'static str> {
    match identity {
        "admin" => Some("admin-token-0123456789abcdef"),
        "restricted" => Some("restricted-token-0123456789abcdef"),
        "app-planner" => Some("app-planner-token-0123456789abcdef"),
        "system:serviceaccount:g-14-rbac:tofu-runner" => Some("sa-runner-token-0123456789abcdef"),
        "bogus" => Some("not-a-valid-token"),
        _ => None,
    }
}

/// `(file stem, step)` -> reason.
fn allowlist() -> HashMap<(String, usize), String> {
    let text = std::fs::read_to_string(ALLOWLIST).expect("conformance-allowlist.txt is readable");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let file = parts.next().unwrap_or_default().to_string();
            let step = parts
                .next()
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("bad allowlist line {l:?}"));
            let reason = parts.next().unwrap_or_default().trim().to_string();
            assert!(!reason.is_empty(), "allowlist line without a reason: {l:?}");
            ((file, step), reason)
        })
        .collect()
}

// ---------- normalisation ----------

/// Placeholders numbered by first appearance, one table per side.
#[derive(Default)]
struct Norm {
    uids: HashMap<String, usize>,
    rvs: HashMap<String, usize>,
    ips: HashMap<String, usize>,
    node_ports: HashMap<String, usize>,
    replica_sets: HashMap<String, usize>,
}

fn number(table: &mut HashMap<String, usize>, prefix: &str, value: &str) -> String {
    let n = table.len() + 1;
    let id = *table.entry(value.to_string()).or_insert(n);
    format!("<{prefix}-{id}>")
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

impl Norm {
    /// Replaces every UUID inside a string.
    fn uuids_in(&mut self, s: &str) -> String {
        let mut out = String::new();
        let mut i = 0;
        while i < s.len() {
            if i + 36 <= s.len()
                && s.is_char_boundary(i + 36)
                && is_uuid(&s[i..i + 36])
                && s[i..i + 36] != *"00000000-0000-0000-0000-000000000000"
            {
                out.push_str(&number(&mut self.uids, "uid", &s[i..i + 36]));
                i += 36;
            } else {
                let c = s[i..].chars().next().expect("in bounds");
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    fn message(&mut self, s: &str) -> String {
        let s = self.uuids_in(s);
        // `ReplicaSet "web-698cdd4db6" is progressing.`: numbered like uids.
        let s = match s.split_once("ReplicaSet \"") {
            Some((head, tail)) => match tail.split_once('"') {
                Some((name, rest)) => format!(
                    "{head}ReplicaSet \"{}\"{rest}",
                    number(&mut self.replica_sets, "replicaset", name)
                ),
                None => s,
            },
            None => s,
        };
        // "... ResourceVersion in record (458) ..." embeds the stored resourceVersion.
        match s.split_once("ResourceVersion in record (") {
            Some((head, tail)) => match tail.split_once(')') {
                Some((rv, rest)) => format!(
                    "{head}ResourceVersion in record ({}){rest}",
                    number(&mut self.rvs, "rv", rv)
                ),
                None => s,
            },
            None => s,
        }
    }

    fn continue_token(&mut self, token: &str) -> String {
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token.trim_end_matches('='))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        match decoded {
            Some(v) => {
                let rv = number(&mut self.rvs, "rv", &v["rv"].to_string());
                format!(
                    "continue(v={},rv={rv},start={:?})",
                    v["v"],
                    v["start"].as_str().unwrap_or("")
                )
            }
            None => format!("undecodable continue token {token}"),
        }
    }

    fn value(&mut self, v: &Value, key: &str, parent: &Map<String, Value>) -> Value {
        match v {
            Value::Object(m) => self.object(m),
            Value::Array(items) => {
                let mut out: Vec<Value> = items.iter().map(|i| self.value(i, "", parent)).collect();
                if matches!(key, "managedFields") {
                    out.sort_by_key(|f| format!("{}|{}|{}", f["operation"], f["manager"], f["subresource"]));
                }
                if matches!(key, "causes" | "resourceRules" | "nonResourceRules") {
                    out.sort_by_key(Value::to_string);
                }
                if matches!(key, "clusterIPs") {
                    out = items
                        .iter()
                        .map(|i| json!(number(&mut self.ips, "ip", i.as_str().unwrap_or(""))))
                        .collect();
                }
                Value::Array(out)
            }
            Value::String(s) => json!(self.string(s, key, parent)),
            Value::Number(n) if matches!(key, "nodePort" | "healthCheckNodePort") => {
                json!(number(&mut self.node_ports, "node-port", &n.to_string()))
            }
            other => other.clone(),
        }
    }

    fn string(&mut self, s: &str, key: &str, parent: &Map<String, Value>) -> String {
        match key {
            "uid" => number(&mut self.uids, "uid", s),
            "resourceVersion" if !s.is_empty() => number(&mut self.rvs, "rv", s),
            "creationTimestamp"
            | "deletionTimestamp"
            | "time"
            | "expirationTimestamp"
            | "lastPhaseTransitionTime" => "<time>".into(),
            "lastUpdateTime" | "lastTransitionTime" if parent.contains_key("reason") => "<time>".into(),
            "continue" => self.continue_token(s),
            "clusterIP" if s.starts_with("10.96.") => number(&mut self.ips, "ip", s),
            "token" if s.starts_with("eyJ") => "<jwt>".into(),
            "serverAddress" => "<address>".into(),
            "ca.crt" if s.starts_with("-----BEGIN CERTIFICATE-----") => "<ca.crt>".into(),
            "name"
                if parent
                    .get("generateName")
                    .and_then(Value::as_str)
                    .is_some_and(|p| {
                        s.strip_prefix(p).is_some_and(|sfx| {
                            sfx.len() == 5
                                && sfx.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                        })
                    }) =>
            {
                format!("{}<suffix>", parent["generateName"].as_str().unwrap_or(""))
            }
            "message" => self.message(s),
            // A Job's generated selector and labels carry its uid.
            _ if is_uuid(s) => number(&mut self.uids, "uid", s),
            // The ServiceAccount admission's volume: `kube-api-access-` and 5 random characters.
            _ if s.strip_prefix("kube-api-access-").is_some_and(|sfx| {
                sfx.len() == 5 && sfx.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            }) =>
            {
                "kube-api-access-<suffix>".into()
            }
            _ => s.to_string(),
        }
    }

    fn object(&mut self, m: &Map<String, Value>) -> Value {
        // Sorted traversal so that placeholder numbering does not depend on key order.
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort();
        let mut out = Map::new();
        for k in keys {
            out.insert(k.clone(), self.value(&m[k], k, m));
        }
        // A 422 listing several causes orders them like Go map iteration: sort the message list.
        // (From the normalised causes, so uids inside them are numbered like everywhere else.)
        if let (Some(msg), Some(causes)) = (
            out.get("message").and_then(Value::as_str),
            out.get("details").and_then(|d| d["causes"].as_array()),
        ) && let Some((head, _)) = msg.split_once("is invalid: [")
        {
            let mut parts: Vec<String> = causes
                .iter()
                .map(|c| {
                    format!(
                        "{}: {}",
                        c["field"].as_str().unwrap_or(""),
                        c["message"].as_str().unwrap_or("")
                    )
                })
                .collect();
            parts.sort();
            let rebuilt = format!("{head}is invalid: [{}]", parts.join(", "));
            out.insert("message".into(), json!(rebuilt));
        }
        Value::Object(out)
    }

    /// Normalises a response body (a watch stream becomes a list of events).
    fn body(&mut self, body: &Value, watch: bool) -> Value {
        match body {
            Value::String(s) if watch => {
                let events: Vec<Value> = s
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap_or(json!(l)))
                    .collect();
                let empty = Map::new();
                self.value(&Value::Array(events), "", &empty)
            }
            other => self.value(other, "", &Map::new()),
        }
    }
}

/// Paths where two normalised values differ (at most a few).
fn diff(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= 6 {
        return;
    }
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(x, y, &format!("{path}/{k}"), out),
                    (Some(x), None) => out.push(format!("{path}/{k}: missing (expected {})", short(x))),
                    (None, Some(y)) => out.push(format!("{path}/{k}: unexpected {}", short(y))),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, &format!("{path}/{i}"), out);
            }
        }
        (x, y) if x != y => out.push(format!("{path}: expected {} got {}", short(x), short(y))),
        _ => {}
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}...", &s[..s.floor_char_boundary(300)])
    } else {
        s
    }
}

// ---------- replay ----------

fn pointer_set(doc: &mut Value, pointer: &str, value: Value) {
    if let Some(slot) = doc.pointer_mut(pointer) {
        *slot = value;
        return;
    }
    let (parent, last) = pointer.rsplit_once('/').expect("a JSON pointer");
    if let Some(Value::Object(m)) = doc.pointer_mut(parent) {
        m.insert(last.replace("~1", "/").replace("~0", "~"), value);
    }
}

fn set_query(path: &str, name: &str, value: &str) -> String {
    let Some((base, query)) = path.split_once('?') else {
        return format!("{path}?{name}={value}");
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| {
            if p.split_once('=').is_some_and(|(k, _)| k == name) {
                format!("{name}={value}")
            } else {
                p.to_string()
            }
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

struct Outcome {
    passed: usize,
    allowlisted: usize,
    failures: Vec<String>,
    stale: Vec<String>,
}

async fn replay(file: &Path, allow: &HashMap<(String, usize), String>) -> Outcome {
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let doc: Value = serde_json::from_slice(&std::fs::read(file).expect("transcript readable"))
        .expect("transcript is JSON");
    // The Deployment controller as recorded: off, or on (23) with Pods that never start (no
    // nodes); namespaces stay Terminating long enough for 02-namespace's steps to see it even
    // on a loaded machine.
    let controller = ran_deployment_controller(&doc);
    let server = TestServer::start(Options {
        controllers: if controller {
            Controllers::NoNodes
        } else {
            Controllers::Off
        },
        namespace_grace: Some(Duration::from_secs(2)),
        ..Default::default()
    });
    let mut client = Client::connect(server.url(), server.ca_pem())
        .await
        .expect("connect to the test server");
    let mut ours: Vec<Value> = Vec::new();
    let (mut exp_norm, mut act_norm) = (Norm::default(), Norm::default());
    let mut outcome = Outcome {
        passed: 0,
        allowlisted: 0,
        failures: Vec::new(),
        stale: Vec::new(),
    };
    let steps = doc["steps"].as_array().expect("steps");
    let mut deleted: Vec<String> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        // The recorder paused seconds between steps: the controller had caught up each time.
        if controller {
            wait_rolled_out(&mut client).await;
        }
        let mut path = step["path"].as_str().expect("path").to_string();
        let mut body = step["body"].clone();
        for r in step["refs"].as_array().into_iter().flatten() {
            let from = r["from"]
                .as_str()
                .unwrap_or("")
                .trim_start_matches("response.body:");
            let value = ours[r["from_step"].as_u64().unwrap_or(0) as usize]
                .pointer(from)
                .cloned()
                .unwrap_or(Value::Null);
            let to = r["to"].as_str().unwrap_or("");
            if let Some(ptr) = to.strip_prefix("body:") {
                pointer_set(&mut body, ptr, value);
            } else if let Some(name) = to.strip_prefix("query:") {
                path = set_query(&path, name, value.as_str().unwrap_or(""));
            }
        }
        let headers: Vec<(String, String)> = step["headers"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
            .collect();
        let header_refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let bytes = match &body {
            Value::Null => None,
            Value::String(s) => Some(s.clone().into_bytes()),
            v => Some(serde_json::to_vec(v).expect("JSON")),
        };
        let method = step["method"].as_str().unwrap_or("GET");
        let resp: ClientResponse = client
            .request(
                method,
                &path,
                &header_refs,
                token(step["identity"].as_str().unwrap_or("")),
                bytes,
            )
            .await
            .expect("request answered");
        let expected = &step["response"];
        let watch = expected["body"].is_string() && expected["status"] == 200;
        let text = || json!(String::from_utf8_lossy(&resp.body));
        let actual_body = match resp.json() {
            Some(v) if !watch && resp.content_type.starts_with("application/json") => v,
            _ => text(),
        };
        ours.push(actual_body.clone());

        let mut problems = Vec::new();
        if expected["status"].as_u64() != Some(u64::from(resp.status)) {
            problems.push(format!(
                "status: expected {} got {}",
                expected["status"], resp.status
            ));
        }
        if expected["content_type"].as_str() != Some(resp.content_type.as_str()) {
            problems.push(format!(
                "content-type: expected {} got {:?}",
                expected["content_type"], resp.content_type
            ));
        }
        if let Some(w) = expected["warnings"].as_str()
            && resp.warnings.join(", ") != w
        {
            problems.push(format!("warnings: expected {w:?} got {:?}", resp.warnings));
        }
        let e = exp_norm.body(&expected["body"], watch);
        let a = act_norm.body(&actual_body, watch);
        diff(&e, &a, "", &mut problems);

        let key = (stem.clone(), i);
        match (problems.is_empty(), allow.get(&key)) {
            (true, None) => outcome.passed += 1,
            (true, Some(_)) => {
                outcome.passed += 1;
                outcome.stale.push(format!("{stem} {i}: allowlisted but passes"));
            }
            (false, Some(_)) => outcome.allowlisted += 1,
            (false, None) => outcome.failures.push(format!(
                "{stem} step {i} ({method} {path}):\n    {}",
                problems.join("\n    ")
            )),
        }

        // What the recorder did between steps without recording it: after a namespace DELETE
        // it waited for the namespace to go (unless later steps still use it), and it polled
        // before recording a 404 that follows a DELETE of the same object.
        if resp.status == 200 && method == "DELETE" {
            let item = path.split('?').next().unwrap_or(&path).to_string();
            let namespace_delete = item.starts_with("/api/v1/namespaces/") && item.matches('/').count() == 4;
            let later_use = steps[i + 1..]
                .iter()
                .any(|s| s["path"].as_str().is_some_and(|p| p.starts_with(&item)));
            if namespace_delete && !later_use {
                wait_gone(&mut client, &item).await;
            }
            deleted.push(item);
        }
        if let Some(next) = steps.get(i + 1) {
            let next_path = next["path"].as_str().unwrap_or("");
            if next["method"] == "GET"
                && next["response"]["status"] == 404
                && deleted.iter().any(|d| d == next_path)
            {
                wait_gone(&mut client, next_path).await;
            }
        }
    }
    server.shutdown();
    outcome
}

/// Whether the recorded cluster ran the Deployment controller: a Deployment it answered with
/// carries the revision annotation only that controller writes.
fn ran_deployment_controller(doc: &Value) -> bool {
    doc["steps"].as_array().into_iter().flatten().any(|s| {
        s["response"]["body"]["metadata"]["annotations"]
            .get("deployment.kubernetes.io/revision")
            .is_some()
    })
}

/// Waits until the Deployment controller has seen the last change of every Deployment.
async fn wait_rolled_out(client: &mut Client) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let r = client
            .request("GET", "/apis/apps/v1/deployments", &[], token("admin"), None)
            .await
            .expect("list answered");
        let list = r.json().unwrap_or_default();
        let settled = list["items"].as_array().into_iter().flatten().all(|d| {
            d["metadata"].get("deletionTimestamp").is_some()
                || d["status"]["observedGeneration"] == d["metadata"]["generation"]
        });
        if settled {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Deployment controller did not catch up within 10 s");
}

async fn wait_gone(client: &mut Client, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let r = client
            .request("GET", path, &[], token("admin"), None)
            .await
            .expect("poll answered");
        if r.status == 404 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} still exists 10 s after its DELETE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcripts_replay_like_the_real_apiserver() {
    let allow = allowlist();
    let mut files: Vec<PathBuf> = [GOLDEN, OWN]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{dir} holds transcripts: {e}")))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no transcripts in {GOLDEN}");
    let known: BTreeSet<String> = files
        .iter()
        .filter_map(|f| f.file_stem()?.to_str().map(String::from))
        .collect();
    for (file, _) in allow.keys() {
        assert!(known.contains(file), "allowlist names unknown transcript {file}");
    }
    // `CONFORMANCE_ONLY=18,20` replays only the transcripts whose names start so.
    if let Ok(only) = std::env::var("CONFORMANCE_ONLY") {
        let prefixes: Vec<&str> = only.split(',').map(str::trim).collect();
        files.retain(|f| {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            prefixes.iter().any(|p| name.starts_with(p))
        });
    }
    // Each transcript has a server of its own and spends most of its time waiting (namespaces
    // terminate for 2 s, watches run out): all are replayed at once, and reported in order.
    let replays = files.iter().map(|file| {
        let allow = &allow;
        async move {
            let started = Instant::now();
            let outcome = replay(file, allow).await;
            (outcome, started.elapsed())
        }
    });
    let outcomes = futures::future::join_all(replays).await;
    let mut failures = Vec::new();
    for (file, (o, took)) in files.iter().zip(outcomes) {
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        println!(
            "{stem}: {} passed, {} allowlisted, {} failed ({:.1} s)",
            o.passed,
            o.allowlisted,
            o.failures.len(),
            took.as_secs_f64()
        );
        for s in &o.stale {
            println!("  note: {s}");
        }
        failures.extend(o.failures);
    }
    assert!(
        failures.is_empty(),
        "{} unlisted differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
