//! Test hooks: request counters by identity/verb/resource/user agent, and injectable faults.
//!
//! Served at `/_test/requests` (GET counters, DELETE resets) and `/_test/faults` (POST a
//! fault, GET the pending ones, DELETE clears), for the admin token only.
//!
//! Also the one metric of a real apiserver's `/metrics` that tests read, so that they count
//! requests the same way on either server: `apiserver_request_total`, by verb, dry run, group,
//! version, resource, subresource, scope, component, code and system client (Prometheus text).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What an injected fault does to a matching request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FaultKind {
    /// Delay the request by `latencyMs`, then serve it.
    Latency,
    /// Answer 429 TooManyRequests with Retry-After.
    #[serde(rename = "429")]
    TooManyRequests,
    /// Answer 500 InternalError.
    #[serde(rename = "500")]
    InternalError,
    /// Answer 409 Conflict (as for a stale resourceVersion).
    Conflict,
    /// Close the connection without answering.
    Drop,
}

/// One fault: applies to the next `count` requests on `resource` (and `verb`, if given).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fault {
    /// Plural resource name (`configmaps`), or `*` for every resource request.
    pub resource: String,
    pub kind: FaultKind,
    #[serde(default = "one")]
    pub count: u32,
    #[serde(default)]
    pub verb: Option<String>,
    #[serde(default)]
    pub latency_ms: Option<u64>,
}

fn one() -> u32 {
    1
}

impl Fault {
    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms.unwrap_or(500))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct CounterKey {
    user: String,
    verb: String,
    resource: String,
    user_agent: String,
}

/// The labels of one `apiserver_request_total` series, as the real apiserver sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, `DELETECOLLECTION`.
    pub verb: String,
    pub dry_run: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    /// `resource` (one object), `namespace` or `cluster` (collections); empty for other paths.
    pub scope: String,
}

#[derive(Default)]
pub struct Telemetry {
    counters: Mutex<BTreeMap<CounterKey, u64>>,
    faults: Mutex<Vec<Fault>>,
    requests: Mutex<BTreeMap<(RequestLabels, u16), u64>>,
}

impl Telemetry {
    pub fn count(&self, user: &str, verb: &str, resource: &str, user_agent: &str) {
        let key = CounterKey {
            user: user.into(),
            verb: verb.into(),
            resource: resource.into(),
            user_agent: user_agent.into(),
        };
        *self
            .counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default() += 1;
    }

    /// Counts one answered request for `apiserver_request_total`.
    pub fn count_answer(&self, labels: RequestLabels, code: u16) {
        *self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((labels, code))
            .or_default() += 1;
    }

    /// `/metrics`: `apiserver_request_total` in the Prometheus text format. Every request here
    /// comes from a client (the controllers are not), so `system_client` is always empty.
    pub fn metrics(&self) -> String {
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::from(
            "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, \
             dry run value, group, version, resource, scope, component, and HTTP response code.\n\
             # TYPE apiserver_request_total counter\n",
        );
        for ((l, code), n) in requests.iter() {
            out.push_str(&format!(
                "apiserver_request_total{{code=\"{code}\",component=\"apiserver\",dry_run=\"{}\",group=\"{}\",\
                 resource=\"{}\",scope=\"{}\",subresource=\"{}\",system_client=\"\",verb=\"{}\",version=\"{}\"}} {n}\n",
                l.dry_run, l.group, l.resource, l.scope, l.subresource, l.verb, l.version
            ));
        }
        out
    }

    /// Counters as a JSON list: `{user, verb, resource, userAgent, count}`.
    pub fn counters(&self) -> Value {
        let counters = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let items: Vec<Value> = counters
            .iter()
            .map(|(k, n)| {
                json!({"user": k.user, "verb": k.verb, "resource": k.resource, "userAgent": k.user_agent, "count": n})
            })
            .collect();
        json!({"items": items})
    }

    pub fn reset_counters(&self) {
        self.counters.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    pub fn add_fault(&self, fault: Fault) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).push(fault);
    }

    pub fn faults(&self) -> Value {
        json!({"items": *self.faults.lock().unwrap_or_else(|e| e.into_inner())})
    }

    pub fn clear_faults(&self) {
        self.faults.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Takes one use of the first fault matching this request, if any.
    pub fn take_fault(&self, resource: &str, verb: &str) -> Option<Fault> {
        let mut faults = self.faults.lock().unwrap_or_else(|e| e.into_inner());
        let idx = faults.iter().position(|f| {
            (f.resource == "*" || f.resource == resource) && f.verb.as_deref().is_none_or(|v| v == verb)
        })?;
        let fault = faults[idx].clone();
        faults[idx].count -= 1;
        if faults[idx].count == 0 {
            faults.remove(idx);
        }
        Some(fault)
    }
}
