//! The Deployment controller: it keeps a ReplicaSet per pod template (named by the
//! `pod-template-hash`, with the `deployment.kubernetes.io/revision`, `desired-replicas` and
//! `max-replicas` annotations) and sizes them as kube-controller-manager v1.36 does: surge and
//! unavailability bounds, clean-up of unhealthy old replicas, proportional scaling when the
//! size changes mid-rollout, the revision history limit. The Deployment's status sums its
//! ReplicaSets' (whose Pods [`crate::workloads`] makes and [`crate::kubelet`] runs), with the
//! `Available` and `Progressing` conditions, `ProgressDeadlineExceeded` once the progress
//! deadline passes without progress; written as `kube-controller-manager` through `status`
//! (kube-golden 23-pod-template-annotations).

mod scaling;
mod status;

use crate::pass::{self, Pass};
use crate::resources::{DEPLOYMENTS, REPLICASETS};
use serde_json::{Value, json};

use scaling::{DESIRED, HASH, MANAGER, MAX, REVISION, ReplicaSet, Spec, Sync};
pub use scaling::{scaled, template_hash};
use status::status;

/// Syncs every Deployment that is not being deleted.
pub fn sync(pass: &mut Pass) {
    for deployment in pass.list(&DEPLOYMENTS, None) {
        if deployment["metadata"].get("deletionTimestamp").is_none() {
            sync_one(pass, &deployment);
        }
    }
}

/// One `syncDeployment`: one round of scaling (`scale` on a size change, else `rolloutRolling`
/// or `rolloutRecreate`), its ReplicaSets written, the old ones beyond the history limit
/// deleted, then the Deployment's revision annotation and status.
fn sync_one(pass: &mut Pass, deployment: &Value) {
    let mut sync = Sync {
        spec: Spec::of(deployment),
        name: deployment["metadata"]["name"].as_str().unwrap_or("").to_string(),
        sets: pass::owned(pass, &REPLICASETS, deployment)
            .iter()
            .map(ReplicaSet::of)
            .collect(),
        moved: false,
    };
    if deployment["spec"]["paused"] != true {
        if sync.scaling_event() {
            sync.scale_all();
        } else {
            sync.roll();
        }
    }
    for rs in &mut sync.sets {
        rs.object = write_set(pass, deployment, rs);
    }
    clean_up(pass, &sync);
    let new = sync.new_index().map(|i| sync.sets[i].clone());
    let mut updated = deployment.clone();
    if let Some(rs) = &new {
        updated["metadata"]["annotations"][REVISION] = json!(rs.revision.to_string());
    }
    updated["status"] = status(pass, &sync, deployment, new.as_ref());
    pass.update(DEPLOYMENTS, deployment, updated, MANAGER, Some("status"));
}

/// Creates or resizes one ReplicaSet as the sync left it; returns it as stored.
fn write_set(pass: &mut Pass, deployment: &Value, rs: &ReplicaSet) -> Option<Value> {
    let annotations = json!({
        DESIRED: rs.desired.to_string(), MAX: rs.max.to_string(), REVISION: rs.revision.to_string(),
    });
    let Some(old) = &rs.object else {
        let mut template = deployment["spec"]["template"].clone();
        template["metadata"]["labels"][HASH] = json!(rs.hash);
        let mut selector = deployment["spec"]["selector"].clone();
        selector["matchLabels"][HASH] = json!(rs.hash);
        let object = json!({
            "metadata": {
                "name": rs.name, "namespace": deployment["metadata"]["namespace"],
                "labels": template["metadata"]["labels"], "annotations": annotations,
                "ownerReferences": pass::owner_reference(deployment, "apps/v1", "Deployment"),
            },
            "spec": {
                "replicas": rs.replicas, "minReadySeconds": deployment["spec"]["minReadySeconds"],
                "selector": selector, "template": template,
            },
        });
        return pass.create(REPLICASETS, object, MANAGER);
    };
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(rs.replicas);
    for (key, value) in annotations.as_object().into_iter().flatten() {
        new["metadata"]["annotations"][key] = value.clone();
    }
    Some(pass.update(REPLICASETS, old, new, MANAGER, None))
}

/// `cleanupDeployment`: old sets with no replicas beyond `revisionHistoryLimit` go, oldest
/// first.
fn clean_up(pass: &mut Pass, sync: &Sync) {
    let new = sync.new_index();
    let idle: Vec<usize> = sync
        .old_indices(new)
        .into_iter()
        .filter(|i| {
            let rs = &sync.sets[*i];
            rs.replicas == 0
                && rs
                    .object
                    .as_ref()
                    .is_some_and(|o| o["status"]["replicas"].as_i64().unwrap_or(0) == 0)
        })
        .collect();
    let surplus = idle.len().saturating_sub(sync.spec.history);
    for i in idle.into_iter().take(surplus) {
        if let Some(object) = &sync.sets[i].object {
            pass.delete(REPLICASETS, object);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta;
    use crate::resources::{NAMESPACES, NODES, PODS};
    use crate::selectors::golden::golden;
    use crate::simulation;
    use crate::store::Store;
    use crate::tls::CaMaterial;

    const NS: &str = "g-23-pod-template-annotations";

    /// The recorded Deployment after `step`, as the server stored it.
    fn recorded(step: usize) -> Value {
        golden("23-pod-template-annotations.json")["steps"][step]["response"]["body"].clone()
    }

    fn counts(status: &Value) -> Vec<i64> {
        [
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "unavailableReplicas",
        ]
        .iter()
        .map(|f| status[*f].as_i64().unwrap_or(0))
        .collect()
    }

    /// A cluster with the recording's namespace, with the simulated nodes or none.
    fn cluster(nodes: bool) -> (Store, CaMaterial) {
        let mut store = Store::new();
        let time = meta::now();
        let namespace = json!({"kind": "Namespace", "apiVersion": "v1",
                               "metadata": {"name": NS, "uid": "ns-uid", "creationTimestamp": time}});
        store.put(&NAMESPACES.key(), namespace);
        crate::controllers::populate_namespace(&mut store, "", NS, &time);
        if nodes {
            for node in crate::scheduler::nodes(&time) {
                store.put(&NODES.key(), node);
            }
        }
        (store, CaMaterial::generate().expect("a CA"))
    }

    /// Stores the Deployment as step `step` wrote it (with `replicas` instead of the recorded
    /// size when given, and the status the controller left), lets the controllers run, and
    /// returns it as they left it.
    fn write(store: &mut Store, ca: &CaMaterial, step: usize, replicas: Option<i64>) -> Value {
        let mut d = recorded(step);
        if let Some(r) = replicas {
            d["spec"]["replicas"] = json!(r);
        }
        if let Some(stored) = store.get(&DEPLOYMENTS.key(), NS, "web") {
            d["status"] = stored["status"].clone();
            d["metadata"]["annotations"][REVISION] = stored["metadata"]["annotations"][REVISION].clone();
            d["metadata"]["managedFields"] = stored["metadata"]["managedFields"].clone();
        }
        store.put(&DEPLOYMENTS.key(), d);
        simulation::run(store, ca);
        store
            .get(&DEPLOYMENTS.key(), NS, "web")
            .cloned()
            .expect("the Deployment")
    }

    fn sets(store: &Store) -> Vec<Value> {
        store.list(&REPLICASETS.key(), Some(NS)).cloned().collect()
    }

    #[test]
    fn rollout_restart_then_image_change_then_scale_count_like_the_recording() {
        // No nodes, as recorded: the Pods stay Pending and no replica is ever available.
        let (mut store, ca) = cluster(false);
        // Step 1: created with 2 replicas; the controller makes revision 1 with 2 replicas.
        let first = write(&mut store, &ca, 1, None);
        assert_eq!(counts(&first["status"]), counts(&recorded(2)["status"]));
        assert_eq!(first["metadata"]["annotations"][REVISION], "1");
        // Step 2: `kubectl rollout restart` (generation 2): one surge replica of revision 2.
        let second = write(&mut store, &ca, 2, None);
        assert_eq!(counts(&second["status"]), counts(&recorded(3)["status"]));
        assert_eq!(second["metadata"]["annotations"][REVISION], "2");
        // Step 4: a new image (generation 3), then step 7: `kubectl scale --replicas=3` and an
        // apply (generation 4): revision 3 takes the extra replica.
        let third = write(&mut store, &ca, 4, None);
        assert_eq!(third["metadata"]["annotations"][REVISION], "3");
        assert_eq!(third["status"]["replicas"], 3);
        let fourth = write(&mut store, &ca, 7, Some(3));
        assert_eq!(counts(&fourth["status"]), counts(&recorded(8)["status"]));
        let newest = sets(&store)
            .into_iter()
            .find(|rs| rs["metadata"]["annotations"][REVISION] == "3")
            .expect("revision 3");
        assert_eq!(
            fourth["status"]["conditions"][1]["message"],
            format!(
                "ReplicaSet \"{}\" is progressing.",
                newest["metadata"]["name"].as_str().unwrap()
            )
        );
        // Every Pod waits for a node.
        let pods: Vec<Value> = store.list(&PODS.key(), Some(NS)).cloned().collect();
        assert_eq!(pods.len(), 4);
        assert!(
            pods.iter()
                .all(|p| p["status"]["conditions"][0]["message"] == "no nodes available to schedule pods")
        );
        // Every field the recording shows the controller owning, it owns here.
        let entry = |d: &Value| {
            d["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["manager"] == MANAGER)
                .cloned()
                .unwrap()
        };
        let (ours, theirs) = (entry(&fourth), entry(&recorded(8)));
        assert_eq!(ours["fieldsV1"], theirs["fieldsV1"]);
        assert_eq!(ours["subresource"], "status");
    }

    #[test]
    fn with_nodes_rollouts_complete_and_scale_in_place() {
        let (mut store, ca) = cluster(true);
        let created = write(&mut store, &ca, 1, None);
        let status = &created["status"];
        assert_eq!(
            (
                status["availableReplicas"].as_i64(),
                status["unavailableReplicas"].as_i64()
            ),
            (Some(2), None),
            "{status}"
        );
        assert_eq!(status["conditions"][0]["status"], "True");
        assert_eq!(status["conditions"][1]["reason"], "NewReplicaSetAvailable");
        // A new template replaces every replica; the old set ends at zero.
        let rolled = write(&mut store, &ca, 2, None);
        assert_eq!(rolled["status"]["updatedReplicas"], 2, "{}", rolled["status"]);
        assert_eq!(rolled["status"]["replicas"], 2);
        assert_eq!(rolled["metadata"]["annotations"][REVISION], "2");
        let sizes: Vec<i64> = sets(&store)
            .iter()
            .map(|rs| rs["spec"]["replicas"].as_i64().unwrap())
            .collect();
        assert_eq!(sizes.iter().sum::<i64>(), 2, "{sizes:?}");
        let pods: Vec<Value> = store.list(&PODS.key(), Some(NS)).cloned().collect();
        assert_eq!(pods.len(), 2);
        assert!(
            pods.iter()
                .all(|p| p["status"]["phase"] == "Running" && p["spec"]["nodeName"].is_string())
        );
        // Nothing left to do: no write.
        assert!(!simulation::run(&mut store, &ca).0);
        // Scaled: the one active set takes the new size.
        let bigger = write(&mut store, &ca, 2, Some(5));
        assert_eq!(counts(&bigger["status"])[1..], [5, 5, 0]);
    }

    #[test]
    fn a_rollout_without_progress_exceeds_its_deadline() {
        let (mut store, ca) = cluster(true);
        let mut broken = recorded(1);
        broken["spec"]["template"]["spec"]["containers"][0]["image"] = json!("example.com/nonexistent:1");
        broken["spec"]["progressDeadlineSeconds"] = json!(30);
        store.put(&DEPLOYMENTS.key(), broken);
        simulation::run(&mut store, &ca);
        let stuck = store.get(&DEPLOYMENTS.key(), NS, "web").cloned().unwrap();
        assert_eq!(stuck["status"]["conditions"][1]["reason"], "ReplicaSetUpdated");
        let pod = store.list(&PODS.key(), Some(NS)).next().cloned().unwrap();
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ErrImagePull"
        );
        // Half a minute without progress since the condition was last updated.
        let mut late = stuck.clone();
        late["status"]["conditions"][1]["lastUpdateTime"] = json!(meta::timestamp(meta::epoch_now() - 31.0));
        store.put(&DEPLOYMENTS.key(), late);
        simulation::run(&mut store, &ca);
        let failed = store.get(&DEPLOYMENTS.key(), NS, "web").cloned().unwrap();
        let progressing = &failed["status"]["conditions"][1];
        assert_eq!(progressing["reason"], "ProgressDeadlineExceeded", "{progressing}");
        assert_eq!(progressing["status"], "False");
    }

    #[test]
    fn surge_and_unavailability_round_like_intstr() {
        assert_eq!(scaled(&json!("25%"), 2, true), 1);
        assert_eq!(scaled(&json!("25%"), 2, false), 0);
        assert_eq!(scaled(&json!("25%"), 3, true), 1);
        assert_eq!(scaled(&json!(2), 3, true), 2);
        assert_eq!(
            template_hash(&json!({"a": 1, "b": 2})),
            template_hash(&json!({"b": 2, "a": 1}))
        );
        assert!(
            template_hash(&json!({}))
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
    }
}
