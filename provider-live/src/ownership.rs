//! Who owns which field of a live object, read from `metadata.managedFields` (server-side
//! apply's bookkeeping, format `FieldsV1`).
//!
//! Real clusters are busy: `kubectl rollout restart` writes an annotation into a pod template,
//! `kubectl scale` and autoscalers write `replicas`, admission webhooks add containers. Those
//! fields belong to other field managers, and our server-side apply can neither remove them nor
//! should it. So:
//! - state is read from the object [`without_foreign`](Ownership::without_foreign) fields (owned
//!   by other managers and not by us): they never show as a diff;
//! - the stale-plan guard fingerprints only [`project`]ions onto the fields our manager owns,
//!   so another actor's fields never make a saved plan stale.
//!
//! Fields nobody owns (server defaults) are left to the readers' own default rules.
//!
//! `FieldsV1` is a tree: `f:<name>` a field, `k:<json>` a list item by its merge keys,
//! `v:<json>` a set member, `i:<n>` a list item by index, `.` the node itself. An empty node is
//! a leaf: that whole value is owned.

use serde_json::{Map, Value as Json};

/// The merged field sets of one object: ours and everybody else's.
#[derive(Debug, Default)]
pub struct Ownership {
    ours: Option<Map<String, Json>>,
    others: Map<String, Json>,
}

impl Ownership {
    /// The ownership of `object`'s fields, from the point of view of field manager `manager`.
    /// Status-subresource entries are left out: status is the server's, not a diff.
    pub fn of(object: &Json, manager: &str) -> Ownership {
        let mut ownership = Ownership::default();
        let entries = object
            .pointer("/metadata/managedFields")
            .and_then(Json::as_array)
            .into_iter()
            .flatten();
        for entry in entries {
            if entry.get("subresource").and_then(Json::as_str) == Some("status") {
                continue;
            }
            let Some(fields) = entry.get("fieldsV1").and_then(Json::as_object) else {
                continue;
            };
            let set = if entry.get("manager").and_then(Json::as_str) == Some(manager) {
                ownership.ours.get_or_insert_with(Map::new)
            } else {
                &mut ownership.others
            };
            merge(set, fields);
        }
        ownership
    }

    /// Whether `manager` owns the top-level `field` or anything inside it.
    pub fn owns(&self, field: &str) -> bool {
        self.ours
            .as_ref()
            .is_some_and(|ours| ours.contains_key(&format!("f:{field}")))
    }

    /// The object without the fields that only other managers own. Unchanged when we own
    /// nothing yet (an imported object: everything on it is what the user takes over).
    pub fn without_foreign(&self, object: &Json) -> Json {
        match &self.ours {
            Some(ours) => prune(object, Some(ours), &self.others),
            None => object.clone(),
        }
    }

    /// Only the fields some manager owns, ours or another's: the object without what the
    /// server filled in by default. The whole object when it records no managers at all.
    pub fn claimed(&self, object: &Json) -> Json {
        let mut all = self.others.clone();
        if let Some(ours) = &self.ours {
            merge(&mut all, ours);
        }
        if all.is_empty() {
            return object.clone();
        }
        project(object, &all)
    }

    /// The field set `manager` owns (`None` when it owns nothing).
    pub fn into_ours(self) -> Option<FieldSet> {
        self.ours
    }
}

/// A `FieldsV1` tree: the paths of some fields of an object.
pub type FieldSet = Map<String, Json>;

/// Only the fields of `object` that `set` names.
pub fn project(object: &Json, set: &FieldSet) -> Json {
    keep(object, set)
}

/// Adds the field set `from` to `into`.
pub fn merge(into: &mut Map<String, Json>, from: &Map<String, Json>) {
    for (key, node) in from {
        let slot = into
            .entry(key.clone())
            .or_insert_with(|| Json::Object(Map::new()));
        if let (Json::Object(slot), Json::Object(node)) = (slot, node) {
            merge(slot, node);
        }
    }
}

/// The part of `set` naming fields that `value` holds (a null holds nothing): of what a write
/// of `value` recorded (the server's defaults too), what a server-side apply of `value` owns.
pub fn within(set: &FieldSet, value: &Json) -> FieldSet {
    let mut out = FieldSet::new();
    if let Some(node) = set.get(".") {
        out.insert(".".into(), node.clone());
    }
    let mut add = |key: ChildKey<'_>, v: &Json| {
        if let Some((name, node)) = child_entry(set, key) {
            let node = if v.is_object() || v.is_array() {
                within(node, v)
            } else {
                node.clone()
            };
            out.insert(name.clone(), Json::Object(node));
        }
    };
    match value {
        Json::Object(fields) => fields
            .iter()
            .filter(|(_, v)| !v.is_null())
            .for_each(|(k, v)| add(ChildKey::Field(k), v)),
        Json::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| add(ChildKey::Item(i, v), v)),
        _ => {}
    }
    out
}

/// A node that owns its whole value: a leaf. (`.` with children below owns the node itself,
/// a map or list item, but only the children it lists.)
fn whole(node: &Map<String, Json>) -> bool {
    node.is_empty()
}

/// The set node for one child of a live value: an object key, or a list item (`index`) by its
/// merge keys, value or position.
fn child<'a>(set: &'a Map<String, Json>, key: ChildKey<'_>) -> Option<&'a Map<String, Json>> {
    child_entry(set, key).map(|(_, node)| node)
}

/// [`child`] with the set's key for it (`f:name`, `k:{…}`, `v:…` or `i:n`).
fn child_entry<'a>(
    set: &'a Map<String, Json>,
    key: ChildKey<'_>,
) -> Option<(&'a String, &'a Map<String, Json>)> {
    let found = match key {
        ChildKey::Field(name) => set.get_key_value(&format!("f:{name}")),
        ChildKey::Item(index, item) => set.iter().find_map(|(k, node)| {
            let hit = if let Some(keys) = k.strip_prefix("k:") {
                serde_json::from_str::<Map<String, Json>>(keys)
                    .is_ok_and(|keys| keys.iter().all(|(f, v)| item.get(f) == Some(v)))
            } else if let Some(value) = k.strip_prefix("v:") {
                serde_json::from_str::<Json>(value).is_ok_and(|v| v == *item)
            } else if let Some(i) = k.strip_prefix("i:") {
                i.parse::<usize>().is_ok_and(|i| i == index)
            } else {
                false
            };
            hit.then_some((k, node))
        }),
    };
    found.and_then(|(k, node)| Some((k, node.as_object()?)))
}

#[derive(Clone, Copy)]
enum ChildKey<'a> {
    Field(&'a str),
    Item(usize, &'a Json),
}

/// `value` with each child (object field or list item) mapped by `f`, or dropped where `f`
/// gives `None`; a scalar as it is.
fn filter_children(value: &Json, f: impl Fn(ChildKey<'_>, &Json) -> Option<Json>) -> Json {
    match value {
        Json::Object(fields) => Json::Object(
            fields
                .iter()
                .filter_map(|(k, v)| f(ChildKey::Field(k), v).map(|v| (k.clone(), v)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(
            items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| f(ChildKey::Item(i, v), v))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `value` without the children that others own and `ours` does not.
fn prune(value: &Json, ours: Option<&Map<String, Json>>, others: &Map<String, Json>) -> Json {
    filter_children(value, |key, v| {
        let mine = ours.and_then(|o| child(o, key));
        let theirs = child(others, key);
        match (mine, theirs) {
            (Some(m), _) if whole(m) => Some(v.clone()),
            (None, Some(t)) if whole(t) || t.contains_key(".") => None,
            (m, Some(t)) => Some(prune(v, m, t)),
            (_, None) => Some(v.clone()),
        }
    })
}

/// Only the children of `value` that `set` owns.
fn keep(value: &Json, set: &Map<String, Json>) -> Json {
    filter_children(value, |key, v| {
        child(set, key).map(|node| if whole(node) { v.clone() } else { keep(v, node) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_apply_owns_of_a_create_what_its_body_set() {
        // A POST of a Deployment records the server's defaults (replicas, strategy) too.
        let recorded = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tofu-estate": {}}},
            "f:spec": {
                "f:replicas": {},
                "f:strategy": {"f:type": {}},
                "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}, "f:imagePullPolicy": {}}
                }}}
            }
        });
        let body = json!({
            "metadata": {"name": "web", "labels": {"app": "web", "tofu-estate": "shop"}, "annotations": null},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
        });
        let owned = within(recorded.as_object().unwrap(), &body);
        assert_eq!(
            Json::Object(owned),
            json!({
                "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:tofu-estate": {}}},
                "f:spec": {"f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}
                }}}}
            })
        );
    }

    /// A Deployment as a real v1.36 server returns it after `kubectl rollout restart` and
    /// `kubectl scale` (kube-golden 23, trimmed).
    fn deployment() -> Json {
        json!({
            "metadata": {
                "name": "web",
                "labels": {"app": "web", "tofu-estate": "app"},
                "annotations": {"deployment.kubernetes.io/revision": "2"},
                "managedFields": [
                    {"manager": "tofu-live", "operation": "Apply", "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:app": {}, "f:tofu-estate": {}}},
                        "f:spec": {"f:selector": {}, "f:template": {
                            "f:metadata": {"f:labels": {"f:app": {}}},
                            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}
                        }}
                    }},
                    {"manager": "kubectl-rollout", "operation": "Update", "fieldsV1": {
                        "f:spec": {"f:template": {"f:metadata": {"f:annotations": {
                            ".": {}, "f:kubectl.kubernetes.io/restartedAt": {}
                        }}}}
                    }},
                    {"manager": "kubectl", "operation": "Update", "subresource": "scale", "fieldsV1": {
                        "f:spec": {"f:replicas": {}}
                    }},
                    {"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": {
                        "f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}
                    }},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                     "fieldsV1": {"f:status": {"f:replicas": {}}}}
                ]
            },
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"},
                                 "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-12-02T10:00:00Z"}},
                    "spec": {"containers": [
                        {"name": "web", "image": "nginx", "imagePullPolicy": "Always"},
                        {"name": "sidecar", "image": "proxy"}
                    ]}
                }
            },
            "status": {"replicas": 3}
        })
    }

    #[test]
    fn other_managers_fields_are_pruned_and_ours_and_defaults_stay() {
        let live = deployment();
        let got = Ownership::of(&live, "tofu-live").without_foreign(&live);
        let template = &got["spec"]["template"];
        assert!(
            template["metadata"].get("annotations").is_none(),
            "restartedAt is kubectl's, and so is the map it created"
        );
        assert_eq!(template["metadata"]["labels"], json!({"app": "web"}));
        assert!(got["spec"].get("replicas").is_none(), "replicas is the scaler's");
        assert!(got["metadata"].get("annotations").is_none());
        assert_eq!(got["metadata"]["labels"]["app"], "web");
        // Server defaults (owned by nobody) and status stay for the readers' own rules.
        assert_eq!(template["spec"]["containers"][0]["imagePullPolicy"], "Always");
        assert_eq!(got["status"], json!({"replicas": 3}));
        // A list item nobody else claims stays; so does ours.
        assert_eq!(template["spec"]["containers"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_list_item_another_manager_added_is_pruned() {
        let mut live = deployment();
        live["metadata"]["managedFields"][1]["fieldsV1"]["f:spec"]["f:template"]["f:spec"] = json!({
            "f:containers": {"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}}
        });
        let got = Ownership::of(&live, "tofu-live").without_foreign(&live);
        let containers = got["spec"]["template"]["spec"]["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 1);
        assert_eq!(containers[0]["name"], "web");
    }

    #[test]
    fn a_field_we_lost_to_another_manager_is_pruned() {
        let mut live = deployment();
        // `kubectl set image` took the image: it is no longer ours.
        live["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
            ["k:{\"name\":\"web\"}"] = json!({".": {}, "f:name": {}});
        live["metadata"]["managedFields"][1]["fieldsV1"]["f:spec"]["f:template"]["f:spec"] =
            json!({"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}});
        let got = Ownership::of(&live, "tofu-live").without_foreign(&live);
        let web = &got["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(web["name"], "web");
        assert!(web.get("image").is_none());
    }

    fn ours(live: &Json, manager: &str) -> Option<Json> {
        Ownership::of(live, manager)
            .into_ours()
            .map(|set| project(live, &set))
    }

    #[test]
    fn ours_is_only_what_our_manager_owns() {
        let live = deployment();
        let ours = ours(&live, "tofu-live").unwrap();
        assert_eq!(
            ours,
            json!({
                "metadata": {"labels": {"app": "web", "tofu-estate": "app"}},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]}
                }}
            })
        );
    }

    #[test]
    fn an_object_we_never_wrote_is_read_whole() {
        let live = deployment();
        let ownership = Ownership::of(&live, "someone-else-entirely");
        assert!(ownership.ours.is_none());
        assert_eq!(ownership.without_foreign(&live), live);
        assert_eq!(ours(&live, "someone-else-entirely"), None);
    }

    #[test]
    fn set_members_and_indexes_are_matched() {
        let live = json!({"metadata": {"managedFields": [
            {"manager": "us", "fieldsV1": {"f:finalizers": {"v:\"a\"": {}}, "f:args": {"i:0": {}}}},
            {"manager": "them", "fieldsV1": {"f:finalizers": {"v:\"b\"": {}}, "f:args": {"i:1": {}}}}
        ]}, "finalizers": ["a", "b"], "args": ["x", "y"]});
        let ownership = Ownership::of(&live, "us");
        let got = ownership.without_foreign(&live);
        assert_eq!(got["finalizers"], json!(["a"]));
        assert_eq!(got["args"], json!(["x"]));
        assert_eq!(
            ours(&live, "us").unwrap(),
            json!({"finalizers": ["a"], "args": ["x"]})
        );
    }
}
