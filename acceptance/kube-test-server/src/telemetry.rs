//! Test hooks: request counters by identity/verb/resource/user agent, and injectable faults.
//!
//! Served at `/_test/requests` (GET counters, DELETE resets) and `/_test/faults` (POST a
//! fault, GET the pending ones, DELETE clears), for the admin token only.

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

#[derive(Default)]
pub struct Telemetry {
    counters: Mutex<BTreeMap<CounterKey, u64>>,
    faults: Mutex<Vec<Fault>>,
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
