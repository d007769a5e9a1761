//! The Deployment controller: it keeps a ReplicaSet per pod template (named by the
//! `pod-template-hash`, with the `deployment.kubernetes.io/revision`, `desired-replicas` and
//! `max-replicas` annotations) and sizes them as kube-controller-manager v1.36 does: surge and
//! unavailability bounds, clean-up of unhealthy old replicas, proportional scaling when the
//! size changes mid-rollout, the revision history limit. The Deployment's status sums its
//! ReplicaSets' (whose Pods [`crate::workloads`] makes and [`crate::kubelet`] runs), with the
//! `Available` and `Progressing` conditions, `ProgressDeadlineExceeded` once the progress
//! deadline passes without progress; written as `kube-controller-manager` through `status`
//! (kube-golden 23-pod-template-annotations).

use serde_json::{Value, json};

use crate::meta;
use crate::pass::{self, Pass};
use crate::resources::{DEPLOYMENTS, REPLICASETS};

const REVISION: &str = "deployment.kubernetes.io/revision";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX: &str = "deployment.kubernetes.io/max-replicas";
const HASH: &str = "pod-template-hash";
const MANAGER: &str = "kube-controller-manager";

/// One ReplicaSet of a Deployment, as the controller sizes it.
#[derive(Debug, Clone, PartialEq)]
struct ReplicaSet {
    /// `<deployment>-<pod-template-hash>`.
    name: String,
    hash: String,
    revision: i64,
    replicas: i64,
    /// `deployment.kubernetes.io/desired-replicas` and `max-replicas`: the Deployment's size
    /// and size plus surge when this set was last scaled.
    desired: i64,
    max: i64,
    /// `status.availableReplicas`, as the controller last read it.
    available: i64,
    /// Creation order: `creationTimestamp`, then (where the controller takes the name) the
    /// revision, as sets made within a second are in a test (a new set sorts last).
    created: (String, i64),
    /// The stored object; None for a set this sync creates.
    object: Option<Value>,
}

impl ReplicaSet {
    fn of(object: &Value) -> ReplicaSet {
        let annotation = |key: &str| {
            object["metadata"]["annotations"][key]
                .as_str()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        ReplicaSet {
            name: object["metadata"]["name"].as_str().unwrap_or("").to_string(),
            hash: object["metadata"]["labels"][HASH]
                .as_str()
                .unwrap_or("")
                .to_string(),
            revision: annotation(REVISION),
            replicas: object["spec"]["replicas"].as_i64().unwrap_or(1),
            desired: annotation(DESIRED),
            max: annotation(MAX),
            available: object["status"]["availableReplicas"].as_i64().unwrap_or(0),
            created: (
                object["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
                annotation(REVISION),
            ),
            object: Some(object.clone()),
        }
    }
}

/// The parts of a Deployment's spec the controller works from.
struct Spec {
    replicas: i64,
    surge: i64,
    unavailable: i64,
    recreate: bool,
    hash: String,
    /// `revisionHistoryLimit`: old sets kept at size zero.
    history: usize,
}

impl Spec {
    fn of(deployment: &Value) -> Spec {
        let spec = &deployment["spec"];
        let replicas = spec["replicas"].as_i64().unwrap_or(1);
        let rolling = &spec["strategy"]["rollingUpdate"];
        let surge = scaled(&rolling["maxSurge"], replicas, true);
        let mut unavailable = scaled(&rolling["maxUnavailable"], replicas, false);
        // Both zero would never make progress: the controller then allows one unavailable.
        if surge == 0 && unavailable == 0 {
            unavailable = 1;
        }
        Spec {
            replicas,
            surge,
            unavailable: unavailable.min(replicas),
            recreate: spec["strategy"]["type"] == "Recreate",
            hash: template_hash(&spec["template"]),
            history: spec["revisionHistoryLimit"].as_u64().unwrap_or(10) as usize,
        }
    }
}

/// An int-or-percent of `total`, percentages rounded up (surge) or down (unavailable).
pub fn scaled(value: &Value, total: i64, round_up: bool) -> i64 {
    match value {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => {
            let percent: i64 = s.trim_end_matches('%').parse().unwrap_or(25);
            let product = total * percent;
            if round_up {
                (product + 99) / 100
            } else {
                product / 100
            }
        }
        _ => (total * 25 + if round_up { 99 } else { 0 }) / 100,
    }
}

/// The pod-template-hash: FNV-1a (32 bits) of the template, its decimal digits spelt in the
/// apiserver's safe alphabet. The real controller hashes Go's printout of the struct, so the
/// names differ from a real cluster's; only their shape and stability matter here.
pub fn template_hash(template: &Value) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut hash: u32 = 0x811c_9dc5;
    for byte in canonical(template).bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash.to_string()
        .bytes()
        .map(|b| ALPHABET[usize::from(b) % ALPHABET.len()] as char)
        .collect()
}

/// JSON with object keys sorted at every level, so equal templates hash alike.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", json!(k), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// One Deployment's sets while a sync works on them.
struct Sync {
    spec: Spec,
    name: String,
    sets: Vec<ReplicaSet>,
    /// Something was created or scaled: the rollout made progress this sync.
    moved: bool,
}

impl Sync {
    fn available(&self, rs: &ReplicaSet) -> i64 {
        rs.available.min(rs.replicas)
    }

    fn total(&self) -> i64 {
        self.sets.iter().map(|rs| rs.replicas).sum()
    }

    fn new_index(&self) -> Option<usize> {
        self.sets.iter().position(|rs| rs.hash == self.spec.hash)
    }

    /// Sets a ReplicaSet's size and, as `scaleReplicaSet` does, its replica annotations.
    fn scale(&mut self, i: usize, replicas: i64) {
        let (desired, max) = (self.spec.replicas, self.spec.replicas + self.spec.surge);
        let rs = &mut self.sets[i];
        if rs.replicas != replicas || rs.desired != desired || rs.max != max {
            self.moved |= rs.replicas != replicas;
            rs.replicas = replicas;
            rs.desired = desired;
            rs.max = max;
        }
    }

    /// `NewRSNewReplicas`: how far the new set may grow within the surge.
    fn new_size(&self, current_new: i64) -> i64 {
        if self.spec.recreate {
            return self.spec.replicas;
        }
        let max_total = self.spec.replicas + self.spec.surge;
        let total = self.total();
        if total >= max_total {
            return current_new;
        }
        current_new + (max_total - total).min(self.spec.replicas - current_new)
    }

    /// Creates the new ReplicaSet (revision one above the others), or moves an old one that
    /// matches the template again to the newest revision (a rollback).
    fn new_set(&mut self) -> usize {
        let top = self.sets.iter().map(|rs| rs.revision).max().unwrap_or(0);
        if let Some(i) = self.new_index() {
            if self.sets[i].revision < top {
                self.sets[i].revision = top + 1;
            }
            return i;
        }
        let replicas = self.new_size(0);
        let name = format!("{}-{}", self.name, self.spec.hash);
        self.sets.push(ReplicaSet {
            created: ("\u{10ffff}".into(), top + 1),
            name,
            hash: self.spec.hash.clone(),
            revision: top + 1,
            replicas,
            desired: self.spec.replicas,
            max: self.spec.replicas + self.spec.surge,
            available: 0,
            object: None,
        });
        self.moved = true;
        self.sets.len() - 1
    }

    /// Old sets, oldest first.
    fn old_indices(&self, new: Option<usize>) -> Vec<usize> {
        let mut old: Vec<usize> = (0..self.sets.len()).filter(|i| Some(*i) != new).collect();
        old.sort_by_key(|i| self.sets[*i].created.clone());
        old
    }

    /// `isScalingEvent`: an active set was sized for another replica count.
    fn scaling_event(&self) -> bool {
        self.sets
            .iter()
            .any(|rs| rs.replicas > 0 && rs.desired != self.spec.replicas)
    }

    /// `DeploymentController.scale`: a new size shared out over the active sets.
    fn scale_all(&mut self) {
        let new = self.new_index();
        let active: Vec<usize> = (0..self.sets.len())
            .filter(|i| self.sets[*i].replicas > 0)
            .collect();
        let replicas = self.spec.replicas;
        if active.len() <= 1 {
            // One active set (or none: the newest) takes the whole size.
            let target = active
                .first()
                .copied()
                .or(new)
                .or_else(|| (0..self.sets.len()).max_by_key(|i| self.sets[*i].created.clone()));
            if let Some(i) = target {
                self.scale(i, replicas);
            }
            return;
        }
        if let Some(n) = new {
            let rs = &self.sets[n];
            if rs.replicas == replicas && rs.desired == replicas && self.available(rs) == replicas {
                for i in self.old_indices(new) {
                    self.scale(i, 0);
                }
                return;
            }
        }
        if self.spec.recreate {
            return;
        }
        let allowed = if replicas > 0 {
            replicas + self.spec.surge
        } else {
            0
        };
        let to_add = allowed - active.iter().map(|i| self.sets[*i].replicas).sum::<i64>();
        let mut order = active;
        // Growing: the largest first, the newest on ties; shrinking: the largest, oldest first.
        order.sort_by(|a, b| {
            let (a, b) = (&self.sets[*a], &self.sets[*b]);
            b.replicas.cmp(&a.replicas).then(if to_add > 0 {
                b.created.cmp(&a.created)
            } else {
                a.created.cmp(&b.created)
            })
        });
        let mut added = 0;
        let mut sizes: Vec<i64> = Vec::new();
        for i in &order {
            let rs = &self.sets[*i];
            let proportion = if to_add == 0 || to_add == added {
                0
            } else {
                let fraction = self.fraction(rs, allowed);
                if to_add > 0 {
                    fraction.min(to_add - added)
                } else {
                    fraction.max(to_add - added)
                }
            };
            sizes.push(rs.replicas + proportion);
            added += proportion;
        }
        if let Some(first) = sizes.first_mut() {
            *first = (*first + to_add - added).max(0);
        }
        for (i, size) in order.into_iter().zip(sizes) {
            self.scale(i, size);
        }
    }

    /// `getReplicaSetFraction`: this set's share of the change, by the size it was made for.
    fn fraction(&self, rs: &ReplicaSet, allowed: i64) -> i64 {
        if self.spec.replicas == 0 {
            return -rs.replicas;
        }
        let before = if rs.max > 0 { rs.max } else { self.total() };
        if before == 0 {
            return 0;
        }
        // Go's math.Round: halves away from zero.
        ((rs.replicas * allowed) as f64 / before as f64).round() as i64 - rs.replicas
    }

    /// One `rolloutRolling` (or `rolloutRecreate`) pass.
    fn roll(&mut self) {
        let n = self.new_set();
        if self.spec.recreate {
            for i in self.old_indices(Some(n)) {
                self.scale(i, 0);
            }
            self.scale(n, self.spec.replicas);
            return;
        }
        let current = self.sets[n].replicas;
        if current > self.spec.replicas {
            self.scale(n, self.spec.replicas);
            return;
        }
        let grown = self.new_size(current);
        if grown != current {
            self.scale(n, grown);
            return;
        }
        // reconcileOldReplicaSets: first the old sets' unhealthy replicas, then healthy ones
        // beyond the minimum availability.
        let min_available = self.spec.replicas - self.spec.unavailable;
        let new_unavailable = self.sets[n].replicas - self.available(&self.sets[n]);
        let max_down = self.total() - min_available - new_unavailable;
        if max_down <= 0 {
            return;
        }
        let mut down = 0;
        for i in self.old_indices(Some(n)) {
            if down >= max_down {
                break;
            }
            let rs = &self.sets[i];
            let unhealthy = rs.replicas - self.available(rs);
            if rs.replicas == 0 || unhealthy == 0 {
                continue;
            }
            let step = (max_down - down).min(unhealthy);
            self.scale(i, rs.replicas - step);
            down += step;
        }
        let available: i64 = self.sets.iter().map(|rs| self.available(rs)).sum();
        if available <= min_available {
            return;
        }
        let mut left = available - min_available;
        for i in self.old_indices(Some(n)) {
            if left == 0 {
                break;
            }
            let rs = &self.sets[i];
            let step = rs.replicas.min(left);
            if step > 0 {
                self.scale(i, rs.replicas - step);
                left -= step;
            }
        }
    }
}

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

/// `calculateStatus` and `syncRolloutStatus`, from the ReplicaSets' own status.
fn status(pass: &mut Pass, sync: &Sync, deployment: &Value, new: Option<&ReplicaSet>) -> Value {
    let old = &deployment["status"];
    let replicas = sync.spec.replicas;
    let count = |rs: &ReplicaSet, field: &str| {
        rs.object
            .as_ref()
            .map_or(0, |o| o["status"][field].as_i64().unwrap_or(0))
    };
    let sum = |field: &str| sync.sets.iter().map(|rs| count(rs, field)).sum::<i64>();
    let (total, ready, available) = (sum("replicas"), sum("readyReplicas"), sum("availableReplicas"));
    let updated = new.map_or(0, |rs| count(rs, "replicas"));
    let mut status =
        json!({"observedGeneration": deployment["metadata"]["generation"].as_i64().unwrap_or(1)});
    // Zero counts are left out (omitempty), all but terminatingReplicas.
    for (field, value) in [
        ("replicas", total),
        ("updatedReplicas", updated),
        ("readyReplicas", ready),
        ("availableReplicas", available),
        ("unavailableReplicas", (sync.total() - available).max(0)),
    ] {
        if value != 0 {
            status[field] = json!(value);
        }
    }
    status["terminatingReplicas"] = json!(0);

    let now = pass.time.clone();
    let previous = |kind: &str| {
        old["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == kind)
            .cloned()
    };
    // SetDeploymentCondition: the same status and reason keep the condition as it was; the same
    // status keeps its transition time.
    let set = |kind: &str, state: &str, reason: &str, message: String, force_update: bool| {
        let before = previous(kind);
        if let Some(b) = &before
            && b["status"] == state
            && b["reason"] == reason
            && !force_update
        {
            return b.clone();
        }
        let transition = match &before {
            Some(b) if b["status"] == state => b["lastTransitionTime"].clone(),
            _ => json!(now),
        };
        json!({"type": kind, "status": state, "lastUpdateTime": now, "lastTransitionTime": transition,
               "reason": reason, "message": message})
    };
    let available_condition = if available >= replicas - sync.spec.unavailable {
        set(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.".into(),
            false,
        )
    } else {
        set(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.".into(),
            false,
        )
    };
    let rs_name = new.map_or(deployment["metadata"]["name"].as_str().unwrap_or(""), |rs| {
        rs.name.as_str()
    });
    let complete = updated == replicas && total == replicas && available == replicas;
    // `DeploymentProgressing`: more updated, ready or available replicas, or fewer old ones.
    let was = |field: &str| old[field].as_i64().unwrap_or(0);
    let progressed = updated > was("updatedReplicas")
        || total - updated < was("replicas") - was("updatedReplicas")
        || ready > was("readyReplicas")
        || available > was("availableReplicas");
    let deadline = deployment["spec"]["progressDeadlineSeconds"].as_f64();
    let progressing = match previous("Progressing") {
        Some(p) if p["reason"] == "NewReplicaSetAvailable" && total == updated && !sync.moved => p,
        _ if complete => set(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
            false,
        ),
        Some(p) if !sync.moved && !progressed => {
            // `DeploymentTimedOut`: no progress for `progressDeadlineSeconds` since the
            // condition was last updated.
            let since = p["lastUpdateTime"].as_str().and_then(meta::epoch);
            match (deadline, since) {
                (Some(limit), Some(since)) if p["reason"] != "ProgressDeadlineExceeded" => {
                    if since + limit < pass.now.floor() {
                        set(
                            "Progressing",
                            "False",
                            "ProgressDeadlineExceeded",
                            format!("ReplicaSet \"{rs_name}\" has timed out progressing."),
                            false,
                        )
                    } else {
                        pass.wake_at(since + limit + 1.0);
                        p
                    }
                }
                _ => p,
            }
        }
        _ => set(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{rs_name}\" is progressing."),
            true,
        ),
    };
    status["conditions"] = json!([available_condition, progressing]);
    status
}

#[cfg(test)]
mod tests {
    use super::*;
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
