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

use crate::index::{Id, LabelIndex};

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
    /// Only sent by watches (the end of `sendInitialEvents`), never stored.
    #[serde(rename = "BOOKMARK")]
    Bookmark,
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

/// Objects are shared with the watch history rather than copied into it.
type Bucket = BTreeMap<(String, String), Arc<Value>>;

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
    labels: LabelIndex,
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
            labels: LabelIndex::default(),
        }
    }

    pub fn current_rv(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, key: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
            .map(Arc::as_ref)
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
            let range = match namespace {
                // `ns\0` is the least string above `ns`, so this is exactly namespace `ns`.
                Some(ns) => b.range((ns.to_string(), String::new())..(format!("{ns}\0"), String::new())),
                None => b.range::<(String, String), _>(..),
            };
            range.map(|(k, v)| (k, v.as_ref()))
        })
    }

    /// The objects of `key` (in `namespace`, if given) whose labels include every
    /// `(label, value)` pair, in key order, found through the label index.
    pub fn with_labels<'a>(
        &'a self,
        key: &str,
        namespace: Option<&str>,
        pairs: &[(String, String)],
    ) -> Vec<(&'a Id, &'a Value)> {
        let Some(bucket) = self.objects.get(key) else {
            return Vec::new();
        };
        self.labels
            .lookup(key, pairs)
            .into_iter()
            .filter(|(ns, _)| namespace.is_none_or(|want| want == ns))
            .filter_map(|id| bucket.get_key_value(id).map(|(k, v)| (k, v.as_ref())))
            .collect()
    }

    /// Stores `obj` (new or replacing) under the next resourceVersion and records the event.
    pub fn put(&mut self, key: &str, mut obj: Value) -> Value {
        self.rv += 1;
        let fresh = obj["metadata"].get("resourceVersion").is_none();
        obj["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        if fresh {
            // Keep ObjectMeta's field order, so reads need not reorder stored objects.
            crate::meta::canonicalize(&mut obj);
        }
        let (ns, name) = ns_name(&obj);
        let shared = Arc::new(obj);
        let id = (ns.clone(), name);
        let bucket = self.objects.entry(key.to_string()).or_default();
        let previous = bucket.insert(id.clone(), shared.clone());
        let kind = match &previous {
            Some(old) => {
                self.labels.remove(key, &id, old);
                EventType::Modified
            }
            None => EventType::Added,
        };
        self.labels.insert(key, &id, &shared);
        let obj = shared.as_ref().clone();
        self.emit(key, ns, kind, shared);
        obj
    }

    /// Removes an object and returns it carrying the deletion's resourceVersion (as the
    /// DELETED event does).
    pub fn remove(&mut self, key: &str, namespace: &str, name: &str) -> Option<Value> {
        let id = (namespace.to_string(), name.to_string());
        let removed = self.objects.get_mut(key)?.remove(&id)?;
        self.labels.remove(key, &id, &removed);
        let mut gone = Arc::unwrap_or_clone(removed);
        self.rv += 1;
        gone["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.emit(
            key,
            namespace.to_string(),
            EventType::Deleted,
            Arc::new(gone.clone()),
        );
        Some(gone)
    }

    fn emit(&mut self, key: &str, namespace: String, kind: EventType, object: Arc<Value>) {
        let event = Event {
            key: key.to_string(),
            namespace,
            rv: self.rv,
            kind,
            object,
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
                .map(|(k, b)| (k.clone(), b.values().map(|o| o.as_ref().clone()).collect()))
                .collect(),
        }
    }

    pub fn restore(&mut self, snap: Snapshot) {
        self.rv = snap.rv;
        for (key, objs) in snap.objects {
            let bucket = self.objects.entry(key.clone()).or_default();
            for obj in objs {
                let id = ns_name(&obj);
                self.labels.insert(&key, &id, &obj);
                bucket.insert(id, Arc::new(obj));
            }
        }
    }
}
