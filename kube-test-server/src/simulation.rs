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

use serde_json::Value;
use tokio::sync::broadcast::error::TryRecvError;

use crate::meta;
use crate::pass::Pass;
use crate::resources::{self, ResourceType};
use crate::state::{Controllers, Shared};
use crate::store::Store;
use crate::tls::CaMaterial;

/// How long after a write the controllers act on it.
const REACTION: Duration = Duration::from_millis(100);
/// Passes per wake-up; a cluster settles in a handful, the rest wait for the next wake-up.
const MAX_PASSES: usize = 30;

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
        let mut pass = Pass::new(store);
        collect_garbage(&mut pass);
        crate::rollout::sync(&mut pass);
        crate::workloads::sync(&mut pass);
        crate::jobs::sync(&mut pass);
        crate::storage::sync(&mut pass);
        crate::scheduler::sync(&mut pass);
        crate::kubelet::sync(&mut pass);
        crate::controllers::load_balancers(&mut pass);
        crate::controllers::autoscale(&mut pass);
        crate::controllers::sign_requests(&mut pass, ca);
        let changed;
        (changed, wake) = pass.outcome();
        any |= changed;
        if !changed {
            break;
        }
    }
    (any, wake)
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
