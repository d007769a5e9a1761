//! The Deployment controller, reduced to what clients observe of it: the Deployment's status,
//! its `deployment.kubernetes.io/revision` annotation and the `kube-controller-manager`
//! managedFields entry (an Update through `status`), as kube-controller-manager v1.36 writes
//! them (kube-golden 23-pod-template-annotations).
//!
//! ReplicaSets are not served; each Deployment's ReplicaSets are modelled here (size, revision,
//! the desired/max-replicas annotations) so that rolling updates, `kubectl rollout restart` and
//! `kubectl scale` in the middle of a rollout count replicas the way the real controller does:
//! surge and unavailability bounds, clean-up of unhealthy old replicas, proportional scaling.
//! Pods are never modelled: under [`Rollout::Ready`] every replica is available at once, under
//! [`Rollout::NeverReady`] none ever is (a cluster without nodes, where Pods stay Pending).
//! Each sync runs the controller's reconcile steps until nothing moves and writes the result once.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::meta;
use crate::semantics::{self, WriteInfo};
use crate::state::Rollout;

const REVISION: &str = "deployment.kubernetes.io/revision";
const MANAGER: &str = "kube-controller-manager";
/// Reconcile rounds per sync; a rollout settles in a handful.
const MAX_ROUNDS: usize = 50;

/// One modelled ReplicaSet of a Deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaSet {
    /// `<deployment>-<pod-template-hash>`.
    pub name: String,
    hash: String,
    revision: i64,
    replicas: i64,
    /// `deployment.kubernetes.io/desired-replicas` and `max-replicas`: the Deployment's size
    /// and size plus surge when this set was last scaled.
    desired: i64,
    max: i64,
    /// Creation order (the real controller sorts by creationTimestamp, then name).
    created: u64,
}

/// The ReplicaSets of every Deployment, by the Deployment's uid.
#[derive(Debug, Default)]
pub struct ReplicaSets {
    by_deployment: HashMap<String, Vec<ReplicaSet>>,
    created: u64,
}

/// The parts of a Deployment's spec the controller works from.
struct Spec {
    replicas: i64,
    surge: i64,
    unavailable: i64,
    recreate: bool,
    hash: String,
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
        }
    }
}

/// An int-or-percent of `total`, percentages rounded up (surge) or down (unavailable).
fn scaled(value: &Value, total: i64, round_up: bool) -> i64 {
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
fn template_hash(template: &Value) -> String {
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
struct Sync<'a> {
    spec: Spec,
    name: String,
    ready: bool,
    sets: &'a mut Vec<ReplicaSet>,
    counter: &'a mut u64,
    /// Something was created or scaled: the rollout made progress this sync.
    moved: bool,
}

impl Sync<'_> {
    fn available(&self, rs: &ReplicaSet) -> i64 {
        if self.ready { rs.replicas } else { 0 }
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
        *self.counter += 1;
        self.sets.push(ReplicaSet {
            name: format!("{}-{}", self.name, self.spec.hash),
            hash: self.spec.hash.clone(),
            revision: top + 1,
            replicas,
            desired: self.spec.replicas,
            max: self.spec.replicas + self.spec.surge,
            created: *self.counter,
        });
        self.moved = true;
        self.sets.len() - 1
    }

    /// Old sets, oldest first.
    fn old_indices(&self, new: Option<usize>) -> Vec<usize> {
        let mut old: Vec<usize> = (0..self.sets.len()).filter(|i| Some(*i) != new).collect();
        old.sort_by_key(|i| self.sets[*i].created);
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
                .or_else(|| (0..self.sets.len()).max_by_key(|i| self.sets[*i].created));
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

    /// Runs reconcile passes until nothing moves.
    fn settle(&mut self) {
        for _ in 0..MAX_ROUNDS {
            let before = self.sets.clone();
            if self.scaling_event() {
                self.scale_all();
            } else {
                self.roll();
            }
            if *self.sets == before {
                return;
            }
        }
    }
}

impl ReplicaSets {
    /// Brings `deployment` up to date: returns the object with the controller's status,
    /// revision annotation and managedFields entry, or None when it would not change.
    pub fn sync(&mut self, deployment: &Value, mode: Rollout) -> Option<Value> {
        if mode == Rollout::Off || deployment["metadata"].get("deletionTimestamp").is_some() {
            return None;
        }
        let uid = deployment["metadata"]["uid"].as_str().unwrap_or("").to_string();
        let spec = Spec::of(deployment);
        let sets = self.by_deployment.entry(uid).or_default();
        let mut sync = Sync {
            name: deployment["metadata"]["name"].as_str().unwrap_or("").to_string(),
            ready: mode == Rollout::Ready,
            sets,
            counter: &mut self.created,
            moved: false,
            spec,
        };
        if sync.sets.is_empty() {
            seed(&mut sync, deployment);
        }
        sync.settle();
        let mut updated = deployment.clone();
        let new = sync.new_index().map(|i| sync.sets[i].clone());
        if let Some(rs) = &new {
            updated["metadata"]["annotations"][REVISION] = json!(rs.revision.to_string());
        }
        updated["status"] = status(&sync, deployment, new.as_ref());
        if updated == *deployment {
            return None;
        }
        let info = WriteInfo {
            manager: MANAGER,
            subresource: Some("status"),
            time: &meta::now(),
        };
        semantics::record_update(Some(deployment), &mut updated, &info);
        meta::canonicalize(&mut updated);
        Some(updated)
    }

    /// Forgets the sets of Deployments that no longer exist.
    pub fn retain(&mut self, exists: impl Fn(&str) -> bool) {
        self.by_deployment.retain(|uid, _| exists(uid));
    }
}

/// A Deployment the model has not seen (the server restarted from a state file): its current
/// template's set at its recorded revision, already at full size.
fn seed(sync: &mut Sync, deployment: &Value) {
    let Some(revision) = deployment["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
    else {
        return;
    };
    let i = sync.new_set();
    sync.sets[i].revision = revision;
    sync.sets[i].replicas = sync.spec.replicas;
    sync.moved = false;
}

/// `calculateStatus` and `syncRolloutStatus`.
fn status(sync: &Sync, deployment: &Value, new: Option<&ReplicaSet>) -> Value {
    let old = &deployment["status"];
    let replicas = sync.spec.replicas;
    let total = sync.total();
    let available: i64 = sync.sets.iter().map(|rs| sync.available(rs)).sum();
    let updated = new.map_or(0, |rs| rs.replicas);
    let mut status =
        json!({"observedGeneration": deployment["metadata"]["generation"].as_i64().unwrap_or(1)});
    // Zero counts are left out (omitempty), all but terminatingReplicas.
    for (field, value) in [
        ("replicas", total),
        ("updatedReplicas", updated),
        ("readyReplicas", available),
        ("availableReplicas", available),
        ("unavailableReplicas", (total - available).max(0)),
    ] {
        if value != 0 {
            status[field] = json!(value);
        }
    }
    status["terminatingReplicas"] = json!(0);

    let now = meta::now();
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
    let progressing = match previous("Progressing") {
        Some(p) if p["reason"] == "NewReplicaSetAvailable" && total == updated && !sync.moved => p,
        _ if complete => set(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
            false,
        ),
        Some(p) if !sync.moved => p,
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
    use crate::selectors::golden::golden;

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

    /// A Deployment as step `step` wrote it (before the controller saw the write), with
    /// `replicas` instead of the recorded size when given.
    fn written(step: usize, replicas: Option<i64>) -> Value {
        let mut d = recorded(step);
        if let Some(r) = replicas {
            d["spec"]["replicas"] = json!(r);
        }
        d
    }

    #[test]
    fn rollout_restart_then_image_change_then_scale_count_like_the_recording() {
        let mut model = ReplicaSets::default();
        // Step 1: created with 2 replicas; the controller makes revision 1 with 2 replicas.
        let first = model
            .sync(&written(1, None), Rollout::NeverReady)
            .expect("status written");
        assert_eq!(counts(&first["status"]), counts(&recorded(2)["status"]));
        assert_eq!(first["metadata"]["annotations"][REVISION], "1");
        // Step 2: `kubectl rollout restart` (generation 2): one surge replica of revision 2.
        let mut restarted = written(2, None);
        restarted["status"] = first["status"].clone();
        let second = model
            .sync(&restarted, Rollout::NeverReady)
            .expect("status written");
        assert_eq!(counts(&second["status"]), counts(&recorded(3)["status"]));
        assert_eq!(second["metadata"]["annotations"][REVISION], "2");
        // Step 4: a new image (generation 3), then step 6: `kubectl scale --replicas=3`
        // (generation 4): revision 3 takes the extra replica.
        let mut image = written(4, None);
        image["status"] = second["status"].clone();
        let third = model.sync(&image, Rollout::NeverReady).expect("status written");
        assert_eq!(third["metadata"]["annotations"][REVISION], "3");
        assert_eq!(third["status"]["replicas"], 3);
        let mut scaled = third.clone();
        scaled["spec"]["replicas"] = json!(3);
        scaled["metadata"]["generation"] = json!(4);
        let fourth = model.sync(&scaled, Rollout::NeverReady).expect("status written");
        assert_eq!(counts(&fourth["status"]), counts(&recorded(8)["status"]));
        assert_eq!(
            fourth["status"]["conditions"][1]["message"],
            format!(
                "ReplicaSet \"{}\" is progressing.",
                model.by_deployment.values().next().unwrap()[2].name
            )
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
    fn ready_rollouts_complete_and_scale_in_place() {
        let mut model = ReplicaSets::default();
        let created = model
            .sync(&written(1, None), Rollout::Ready)
            .expect("status written");
        let status = &created["status"];
        assert_eq!(
            (
                status["availableReplicas"].as_i64(),
                status["unavailableReplicas"].as_i64()
            ),
            (Some(2), None)
        );
        assert_eq!(status["conditions"][0]["status"], "True");
        assert_eq!(status["conditions"][1]["reason"], "NewReplicaSetAvailable");
        // A new template replaces every replica; the old set ends at zero.
        let mut restarted = written(2, None);
        restarted["status"] = created["status"].clone();
        let rolled = model.sync(&restarted, Rollout::Ready).expect("status written");
        assert_eq!(rolled["status"]["updatedReplicas"], 2);
        assert_eq!(rolled["status"]["replicas"], 2);
        assert_eq!(rolled["metadata"]["annotations"][REVISION], "2");
        // Synced again without a change: nothing to write.
        assert_eq!(model.sync(&rolled, Rollout::Ready), None);
        // Scaled: the one active set takes the new size.
        let mut scaled = rolled.clone();
        scaled["spec"]["replicas"] = json!(5);
        let bigger = model.sync(&scaled, Rollout::Ready).expect("status written");
        assert_eq!(counts(&bigger["status"])[1..], [5, 5, 0]);
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
