//! A label index: (label key, value) to the objects carrying it, per resource type, so a
//! LIST whose label selector is only `key=value` terms touches just the objects that can
//! match instead of walking every stored object.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

/// `(namespace, name)` of a stored object.
pub type Id = (String, String);

#[derive(Default)]
pub struct LabelIndex {
    by_type: HashMap<String, HashMap<(String, String), BTreeSet<Id>>>,
}

fn labels(obj: &Value) -> impl Iterator<Item = (String, String)> + '_ {
    obj["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
}

impl LabelIndex {
    pub fn insert(&mut self, key: &str, id: &Id, obj: &Value) {
        let index = self.by_type.entry(key.to_string()).or_default();
        for pair in labels(obj) {
            index.entry(pair).or_default().insert(id.clone());
        }
    }

    pub fn remove(&mut self, key: &str, id: &Id, obj: &Value) {
        let Some(index) = self.by_type.get_mut(key) else {
            return;
        };
        for pair in labels(obj) {
            if let Some(ids) = index.get_mut(&pair) {
                ids.remove(id);
                if ids.is_empty() {
                    index.remove(&pair);
                }
            }
        }
    }

    /// Ids (in key order) of the objects of `key` carrying every `(label, value)` pair;
    /// `pairs` must not be empty.
    pub fn lookup<'a>(&'a self, key: &str, pairs: &[(String, String)]) -> Vec<&'a Id> {
        let Some(index) = self.by_type.get(key) else {
            return Vec::new();
        };
        let mut sets: Vec<&BTreeSet<Id>> = Vec::new();
        for pair in pairs {
            match index.get(pair) {
                Some(ids) => sets.push(ids),
                None => return Vec::new(),
            }
        }
        sets.sort_by_key(|s| s.len());
        let (smallest, rest) = sets.split_first().expect("pairs is not empty");
        smallest
            .iter()
            .filter(|id| rest.iter().all(|s| s.contains(*id)))
            .collect()
    }
}
