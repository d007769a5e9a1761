//! One round of the in-process controllers over the store ([`Pass`]): what they read, and how
//! they write — each change recorded as the controller's write (managedFields, generation)
//! under a new resourceVersion, as a real controller's request would be — and the owner
//! references that tie what a controller makes to its owner. [`crate::simulation`] runs the
//! rounds.

use serde_json::{Value, json};

use crate::auth::UserInfo;
use crate::resources::{self, Generation, ResourceType};
use crate::semantics::{self, WriteInfo};
use crate::store::Store;
use crate::{admission, kinds, meta, strategy};

/// The job controller's finalizer on the pods it counts.
pub const JOB_TRACKING: &str = "batch.kubernetes.io/job-tracking";

/// One round of the controllers over the store: what they read and how they write.
pub struct Pass<'a> {
    pub store: &'a mut Store,
    /// Seconds since the epoch, and the same as `metav1.Time`.
    pub now: f64,
    pub time: String,
    changed: bool,
    wake: Option<f64>,
}

impl Pass<'_> {
    /// A round starting now.
    pub fn new(store: &mut Store) -> Pass<'_> {
        Pass {
            store,
            now: meta::epoch_now(),
            time: meta::now(),
            changed: false,
            wake: None,
        }
    }

    /// Whether the round changed anything, and when one of the controllers wants to look again
    /// (seconds since the epoch).
    pub fn outcome(&self) -> (bool, Option<f64>) {
        (self.changed, self.wake)
    }

    /// Every object of a kind, or of one namespace.
    pub fn list(&self, rt: &ResourceType, namespace: Option<&str>) -> Vec<Value> {
        self.store.list(&rt.key(), namespace).cloned().collect()
    }

    pub fn get(&self, rt: &ResourceType, namespace: &str, name: &str) -> Option<Value> {
        self.store.get(&rt.key(), namespace, name).cloned()
    }

    /// Asks for another pass at `at` (seconds since the epoch).
    pub fn wake_at(&mut self, at: f64) {
        self.wake = Some(self.wake.map_or(at, |w: f64| w.min(at)));
    }

    /// Creates an object as the controller `manager`'s POST would: defaulted, admitted (a Pod
    /// gets its service account's volume, tolerations and priority) and with its status as the
    /// registry sets it. None when admission refuses it (the controller tries again later).
    pub fn create(&mut self, rt: ResourceType, mut obj: Value, manager: &str) -> Option<Value> {
        let (namespace, mut name) = crate::store::ns_name(&obj);
        if name.is_empty() {
            let prefix = obj["metadata"]["generateName"].as_str().unwrap_or("").to_string();
            name = format!("{prefix}{}", meta::name_suffix());
            obj["metadata"]["name"] = json!(name);
        }
        if self.store.get(&rt.key(), &namespace, &name).is_some() {
            return None;
        }
        let namespace_open = namespace.is_empty()
            || self
                .store
                .get(&resources::NAMESPACES.key(), "", &namespace)
                .is_some_and(|ns| ns["metadata"].get("deletionTimestamp").is_none());
        if !namespace_open {
            return None;
        }
        obj["kind"] = json!(rt.kind);
        obj["apiVersion"] = json!(rt.api_version(rt.storage_version()));
        kinds::prepare_create(&rt, &mut obj);
        semantics::apply_defaults(rt.kind, &mut obj);
        obj["metadata"]["uid"] = json!(meta::new_uid());
        obj["metadata"]["creationTimestamp"] = json!(self.time);
        let info = WriteInfo {
            manager,
            subresource: None,
            time: &self.time,
        };
        if rt.managed_fields {
            semantics::record_update(None, &mut obj, &info);
        }
        admission::mutate_create(&rt, &mut obj, self.store, &namespace).ok()?;
        strategy::prepare_create(&rt, &mut obj, &controller_user(), &self.time, true);
        semantics::apply_defaults(rt.kind, &mut obj);
        if matches!(rt.generation, Generation::Tracked | Generation::Fixed) {
            obj["metadata"]["generation"] = json!(1);
        }
        meta::canonicalize(&mut obj);
        self.changed = true;
        Some(self.store.put(&rt.key(), obj))
    }

    /// Writes `new` over `old` as `manager` (through `subresource`, e.g. `status`), when they
    /// differ; returns what is stored.
    pub fn update(
        &mut self,
        rt: ResourceType,
        old: &Value,
        mut new: Value,
        manager: &str,
        subresource: Option<&str>,
    ) -> Value {
        if new == *old {
            return new;
        }
        // A spec change bumps the generation, through the object or its `scale`.
        if matches!(subresource, None | Some("scale"))
            && rt.generation == Generation::Tracked
            && kinds::spec_changed(old, &new)
        {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(generation + 1);
        }
        if rt.managed_fields {
            let info = WriteInfo {
                manager,
                subresource,
                time: &self.time,
            };
            semantics::record_update(Some(old), &mut new, &info);
        }
        meta::canonicalize(&mut new);
        self.changed = true;
        self.store.put(&rt.key(), new)
    }

    /// Deletes an object as a controller's DELETE with background propagation would: at once,
    /// or marked for deletion while finalizers hold it. The job controller's finalizer on a
    /// pod goes with it (that controller lets its pods go once counted).
    pub fn delete(&mut self, rt: ResourceType, obj: &Value) {
        let (namespace, name) = crate::store::ns_name(obj);
        let finalizers: Vec<Value> = obj["metadata"]["finalizers"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| *f != JOB_TRACKING)
            .cloned()
            .collect();
        self.changed = true;
        if finalizers.is_empty() {
            self.store.remove(&rt.key(), &namespace, &name);
        } else if obj["metadata"].get("deletionTimestamp").is_none() {
            let mut marked = obj.clone();
            marked["metadata"]["deletionTimestamp"] = json!(self.time);
            marked["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            marked["metadata"]["finalizers"] = json!(finalizers);
            meta::canonicalize(&mut marked);
            self.store.put(&rt.key(), marked);
        }
    }

    /// Removes `finalizer` from an object being deleted, and the object once none is left.
    pub fn release(&mut self, rt: ResourceType, obj: &Value, finalizer: &str) {
        let (namespace, name) = crate::store::ns_name(obj);
        let mut left = obj.clone();
        if let Some(list) = left["metadata"]["finalizers"].as_array_mut() {
            list.retain(|f| f != finalizer);
        }
        let deleting = obj["metadata"].get("deletionTimestamp").is_some();
        if deleting
            && left["metadata"]["finalizers"]
                .as_array()
                .is_none_or(Vec::is_empty)
        {
            self.changed = true;
            self.store.remove(&rt.key(), &namespace, &name);
        } else if left != *obj {
            if left["metadata"]["finalizers"]
                .as_array()
                .is_some_and(Vec::is_empty)
            {
                left["metadata"]
                    .as_object_mut()
                    .map(|m| m.shift_remove("finalizers"));
            }
            self.changed = true;
            self.store.put(&rt.key(), left);
        }
    }
}

/// Who the controllers are, for what a registry records of its writer.
fn controller_user() -> UserInfo {
    UserInfo {
        name: "system:kube-controller-manager".into(),
        uid: String::new(),
        groups: vec!["system:authenticated".into()],
    }
}

/// The controller owner reference `owner` puts on what it makes.
pub fn owner_reference(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!([{
        "apiVersion": api_version, "kind": kind,
        "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true,
    }])
}

/// The uid of the object's controller (its owner reference with `controller: true`).
pub fn controller_uid(obj: &Value) -> Option<&str> {
    obj["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

/// The objects of `rt` in `namespace` whose controller is `owner`.
pub fn owned(pass: &Pass, rt: &ResourceType, owner: &Value) -> Vec<Value> {
    let namespace = owner["metadata"]["namespace"].as_str().unwrap_or("");
    let uid = owner["metadata"]["uid"].as_str();
    pass.store
        .list(&rt.key(), Some(namespace))
        .filter(|o| controller_uid(o).is_some() && controller_uid(o) == uid)
        .cloned()
        .collect()
}

/// The objects of a kind that are not being deleted.
pub fn live(pass: &Pass, rt: &ResourceType) -> Vec<Value> {
    pass.list(rt, None)
        .into_iter()
        .filter(|o| o["metadata"].get("deletionTimestamp").is_none())
        .collect()
}
