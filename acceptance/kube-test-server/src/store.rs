//! In-memory object storage with one global resourceVersion counter and a watch log.
//!
//! Objects are kept as JSON in their storage version, keyed by resource type, namespace and
//! name, so that lists come out in the apiserver's order (namespace, then name). Every write
//! takes the next resourceVersion and appends a watch event.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

/// How many past events a watch starting from an old resourceVersion can replay.
const HISTORY: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "ADDED")]
    Added,
    #[serde(rename = "MODIFIED")]
    Modified,
    #[serde(rename = "DELETED")]
    Deleted,
}

/// One change, as a watch reports it.
#[derive(Debug, Clone)]
pub struct Event {
    /// The resource type's storage key (`configmaps`, `deployments.apps`, ...).
    pub key: String,
    pub namespace: String,
    pub rv: u64,
    pub kind: EventType,
    pub object: Arc<Value>,
}

type Bucket = BTreeMap<(String, String), Value>;

/// The persisted part of the store.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Snapshot {
    pub rv: u64,
    pub objects: BTreeMap<String, Vec<Value>>,
}

pub struct Store {
    objects: BTreeMap<String, Bucket>,
    rv: u64,
    history: VecDeque<Event>,
    events: broadcast::Sender<Event>,
    dirty: bool,
}

impl Default for Store {
    fn default() -> Self {
        Self::new()
    }
}

/// `metadata.namespace` and `metadata.name` of a stored object.
pub fn ns_name(obj: &Value) -> (String, String) {
    let m = &obj["metadata"];
    (
        m["namespace"].as_str().unwrap_or("").to_string(),
        m["name"].as_str().unwrap_or("").to_string(),
    )
}

impl Store {
    pub fn new() -> Self {
        // The counter starts above zero like a fresh etcd with a bootstrapped cluster.
        Self {
            objects: BTreeMap::new(),
            rv: 100,
            history: VecDeque::new(),
            events: broadcast::channel(1024).0,
            dirty: false,
        }
    }

    pub fn current_rv(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, key: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
    }

    /// Objects of one type in key order; `namespace` `None` means all namespaces.
    pub fn list<'a>(&'a self, key: &str, namespace: Option<&'a str>) -> impl Iterator<Item = &'a Value> + 'a {
        self.entries(key, namespace).map(|(_, v)| v)
    }

    /// Like [`Store::list`], with each object's `(namespace, name)` key.
    pub fn entries<'a>(
        &'a self,
        key: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a (String, String), &'a Value)> + 'a {
        let bucket = self.objects.get(key);
        bucket.into_iter().flat_map(move |b| {
            let range: Box<dyn Iterator<Item = (&(String, String), &Value)>> = match namespace {
                Some(ns) => Box::new(
                    b.range((ns.to_string(), String::new())..)
                        .take_while(move |((n, _), _)| n == ns),
                ),
                None => Box::new(b.iter()),
            };
            range
        })
    }

    /// Stores `obj` (new or replacing) under the next resourceVersion and records the event.
    pub fn put(&mut self, key: &str, mut obj: Value) -> Value {
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        let (ns, name) = ns_name(&obj);
        let bucket = self.objects.entry(key.to_string()).or_default();
        let kind = if bucket.insert((ns.clone(), name), obj.clone()).is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.emit(key, ns, kind, obj.clone());
        obj
    }

    /// Removes an object and returns it carrying the deletion's resourceVersion (as the
    /// DELETED event does).
    pub fn remove(&mut self, key: &str, namespace: &str, name: &str) -> Option<Value> {
        let mut gone = self
            .objects
            .get_mut(key)?
            .remove(&(namespace.to_string(), name.to_string()))?;
        self.rv += 1;
        gone["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.emit(key, namespace.to_string(), EventType::Deleted, gone.clone());
        Some(gone)
    }

    fn emit(&mut self, key: &str, namespace: String, kind: EventType, object: Value) {
        let event = Event {
            key: key.to_string(),
            namespace,
            rv: self.rv,
            kind,
            object: Arc::new(object),
        };
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(event.clone());
        // No receivers is the normal case; the event stays in the history.
        let _ = self.events.send(event);
        self.dirty = true;
    }

    /// Past events after `rv` (`None` when the history no longer reaches back that far),
    /// plus a receiver for the events that follow them.
    pub fn watch_from(&self, rv: u64) -> (Option<Vec<Event>>, broadcast::Receiver<Event>) {
        let rx = self.events.subscribe();
        let oldest = self.history.front().map(|e| e.rv).unwrap_or(self.rv + 1);
        let past = if rv + 1 >= oldest || rv >= self.rv {
            Some(self.history.iter().filter(|e| e.rv > rv).cloned().collect())
        } else {
            None
        };
        (past, rx)
    }

    /// Whether anything changed since the last call (for debounced persistence).
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            rv: self.rv,
            objects: self
                .objects
                .iter()
                .map(|(k, b)| (k.clone(), b.values().cloned().collect()))
                .collect(),
        }
    }

    pub fn restore(&mut self, snap: Snapshot) {
        self.rv = snap.rv;
        for (key, objs) in snap.objects {
            let bucket = self.objects.entry(key).or_default();
            for obj in objs {
                bucket.insert(ns_name(&obj), obj);
            }
        }
    }
}
