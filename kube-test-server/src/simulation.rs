//! What runs beside a cluster's API, in process: the controller manager's workload, storage,
//! service and signing controllers, and simulated nodes with a scheduler and a kubelet, so that
//! Pods run, rollouts finish, Jobs complete, claims bind and load balancers get addresses, as
//! on `make test-real`'s cluster (`../shared/realk8s`, whose `nodes.py` is the model for the
//! nodes, scheduler and kubelet here, and whose conventions for failing images are these).
//!
//! One task watches the store. A write to a kind any of them acts on wakes it; a moment later
//! ([`REACTION`], as controllers answer a watch) it takes the store's lock and runs every
//! controller over the whole cluster in passes until none changes anything more, then sleeps
//! until the next write or the next moment one of them asked to look again (a container that
//! exits, an image pull that backs off, a progress deadline). Every change goes through
//! [`Pass`], which records it as the controller's write (managedFields, generation) and under a
//! new resourceVersion, so clients and watches see it as they would a real controller's.
//!
//! The controllers: [`crate::rollout`] (Deployments), [`crate::workloads`] (ReplicaSets,
//! ReplicationControllers, StatefulSets, DaemonSets, Jobs), [`crate::storage`] (provisioner,
//! binder, protection, ephemeral volumes),
//! [`crate::scheduler`] (nodes, scheduling), [`crate::kubelet`] (pod status) and
//! [`crate::controllers`] (load balancers, signing, autoscaling); the garbage collector's
//! background part
//! (dependents of deleted owners) is here.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::TryRecvError;

use crate::auth::UserInfo;
use crate::resources::{self, Generation, ResourceType};
use crate::semantics::{self, WriteInfo};
use crate::state::{Controllers, Shared};
use crate::store::Store;
use crate::tls::CaMaterial;
use crate::{admission, kinds, meta, strategy};

/// How long after a write the controllers act on it.
const REACTION: Duration = Duration::from_millis(100);
/// Passes per wake-up; a cluster settles in a handful, the rest wait for the next wake-up.
const MAX_PASSES: usize = 30;
/// The job controller's finalizer on the pods it counts.
pub const JOB_TRACKING: &str = "batch.kubernetes.io/job-tracking";

/// The kinds whose writes wake the controllers.
const WATCHED: &[ResourceType] = &[
    resources::PODS,
    resources::REPLICASETS,
    resources::REPLICATIONCONTROLLERS,
    resources::DEPLOYMENTS,
    resources::STATEFULSETS,
    resources::DAEMONSETS,
    resources::JOBS,
    resources::PERSISTENTVOLUMECLAIMS,
    resources::PERSISTENTVOLUMES,
    resources::STORAGECLASSES,
    resources::SERVICES,
    resources::INGRESSES,
    resources::CSRS,
    resources::NODES,
    resources::SERVICEACCOUNTS,
    resources::HPAS,
];

/// Kinds that own others, and the kinds they own (the garbage collector's part here).
const OWNERS: &[ResourceType] = &[
    resources::PODS,
    resources::REPLICATIONCONTROLLERS,
    resources::DEPLOYMENTS,
    resources::REPLICASETS,
    resources::STATEFULSETS,
    resources::DAEMONSETS,
    resources::JOBS,
    resources::CRONJOBS,
];
const DEPENDENTS: &[ResourceType] = &[
    resources::PODS,
    resources::REPLICASETS,
    resources::JOBS,
    resources::PERSISTENTVOLUMECLAIMS,
];

/// Starts the controllers' task on the server's runtime, unless they are off.
pub fn start(st: &Shared) {
    if st.controllers == Controllers::Off {
        return;
    }
    let st = st.clone();
    let mut events = {
        let store = st.store();
        store.watch_from(store.current_rv()).1
    };
    tokio::spawn(async move {
        let watched: HashSet<String> = WATCHED.iter().map(ResourceType::key).collect();
        // A first look at once: a server restored from a state file may have work waiting.
        let mut due = Some(tokio::time::Instant::now());
        loop {
            let woken = async {
                loop {
                    match events.recv().await {
                        Ok(e) if !watched.contains(&e.key) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
                        _ => return true,
                    }
                }
            };
            tokio::select! {
                running = woken => if !running { return },
                () = sleep_until(due) => {}
            }
            tokio::time::sleep(REACTION).await;
            let (changed, wake) = {
                let mut store = st.store();
                // Whatever happened up to here, this round sees.
                drain(&mut events);
                let outcome = run(&mut store, &st.ca);
                // Its own writes need no second look.
                drain(&mut events);
                outcome
            };
            if changed {
                st.written.notify_one();
            }
            due = wake.map(|at| {
                let wait = Duration::from_secs_f64((at - meta::epoch_now()).max(0.0));
                tokio::time::Instant::now() + wait
            });
        }
    });
}

async fn sleep_until(due: Option<tokio::time::Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn drain(events: &mut tokio::sync::broadcast::Receiver<crate::store::Event>) {
    while !matches!(events.try_recv(), Err(TryRecvError::Empty | TryRecvError::Closed)) {}
}

/// Runs every controller until nothing changes; returns whether anything did, and when one of
/// them wants to look again (seconds since the epoch).
pub fn run(store: &mut Store, ca: &CaMaterial) -> (bool, Option<f64>) {
    let mut any = false;
    let mut wake = None;
    for _ in 0..MAX_PASSES {
        let mut pass = Pass {
            store,
            now: meta::epoch_now(),
            time: meta::now(),
            changed: false,
            wake: None,
        };
        collect_garbage(&mut pass);
        crate::rollout::sync(&mut pass);
        crate::workloads::sync(&mut pass);
        crate::storage::sync(&mut pass);
        crate::scheduler::sync(&mut pass);
        crate::kubelet::sync(&mut pass);
        crate::controllers::load_balancers(&mut pass);
        crate::controllers::autoscale(&mut pass);
        crate::controllers::sign_requests(&mut pass, ca);
        wake = pass.wake;
        any |= pass.changed;
        if !pass.changed {
            break;
        }
    }
    (any, wake)
}

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

/// The garbage collector's background deletion: an object all of whose owners (of the kinds
/// that own here) are gone goes too.
fn collect_garbage(pass: &mut Pass) {
    let alive: HashSet<String> = OWNERS
        .iter()
        .flat_map(|rt| pass.list(rt, None))
        .filter_map(|o| o["metadata"]["uid"].as_str().map(str::to_string))
        .collect();
    let kinds: HashSet<&str> = OWNERS.iter().map(|rt| rt.kind).collect();
    for rt in DEPENDENTS {
        let orphans: Vec<Value> = pass
            .store
            .list(&rt.key(), None)
            .filter(|o| {
                let refs = o["metadata"]["ownerReferences"].as_array();
                refs.is_some_and(|refs| {
                    !refs.is_empty()
                        && refs.iter().all(|r| {
                            kinds.contains(r["kind"].as_str().unwrap_or(""))
                                && !alive.contains(r["uid"].as_str().unwrap_or(""))
                        })
                })
            })
            .filter(|o| o["metadata"].get("deletionTimestamp").is_none())
            .cloned()
            .collect();
        for orphan in orphans {
            pass.delete(*rt, &orphan);
        }
    }
}
