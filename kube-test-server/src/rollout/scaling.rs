//! How one sync sizes a Deployment's ReplicaSets: the sets and spec as the controller reads
//! them (revision and replica annotations, pod-template-hash), surge and unavailability
//! bounds, proportional scaling, and which old sets go first.

use serde_json::{Value, json};

pub(super) const REVISION: &str = "deployment.kubernetes.io/revision";
pub(super) const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
pub(super) const MAX: &str = "deployment.kubernetes.io/max-replicas";
pub(super) const HASH: &str = "pod-template-hash";
pub(super) const MANAGER: &str = "kube-controller-manager";

/// One ReplicaSet of a Deployment, as the controller sizes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ReplicaSet {
    /// `<deployment>-<pod-template-hash>`.
    pub(super) name: String,
    pub(super) hash: String,
    pub(super) revision: i64,
    pub(super) replicas: i64,
    /// `deployment.kubernetes.io/desired-replicas` and `max-replicas`: the Deployment's size
    /// and size plus surge when this set was last scaled.
    pub(super) desired: i64,
    pub(super) max: i64,
    /// `status.availableReplicas`, as the controller last read it.
    pub(super) available: i64,
    /// Creation order: `creationTimestamp`, then (where the controller takes the name) the
    /// revision, as sets made within a second are in a test (a new set sorts last).
    pub(super) created: (String, i64),
    /// The stored object; None for a set this sync creates.
    pub(super) object: Option<Value>,
}

impl ReplicaSet {
    pub(super) fn of(object: &Value) -> ReplicaSet {
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
pub(super) struct Spec {
    pub(super) replicas: i64,
    pub(super) surge: i64,
    pub(super) unavailable: i64,
    pub(super) recreate: bool,
    pub(super) hash: String,
    /// `revisionHistoryLimit`: old sets kept at size zero.
    pub(super) history: usize,
}

impl Spec {
    pub(super) fn of(deployment: &Value) -> Spec {
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
pub(super) fn canonical(value: &Value) -> String {
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
pub(super) struct Sync {
    pub(super) spec: Spec,
    pub(super) name: String,
    pub(super) sets: Vec<ReplicaSet>,
    /// Something was created or scaled: the rollout made progress this sync.
    pub(super) moved: bool,
}

impl Sync {
    pub(super) fn available(&self, rs: &ReplicaSet) -> i64 {
        rs.available.min(rs.replicas)
    }

    pub(super) fn total(&self) -> i64 {
        self.sets.iter().map(|rs| rs.replicas).sum()
    }

    pub(super) fn new_index(&self) -> Option<usize> {
        self.sets.iter().position(|rs| rs.hash == self.spec.hash)
    }

    /// Sets a ReplicaSet's size and, as `scaleReplicaSet` does, its replica annotations.
    pub(super) fn scale(&mut self, i: usize, replicas: i64) {
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
    pub(super) fn new_size(&self, current_new: i64) -> i64 {
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
    pub(super) fn new_set(&mut self) -> usize {
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
    pub(super) fn old_indices(&self, new: Option<usize>) -> Vec<usize> {
        let mut old: Vec<usize> = (0..self.sets.len()).filter(|i| Some(*i) != new).collect();
        old.sort_by_key(|i| self.sets[*i].created.clone());
        old
    }

    /// `isScalingEvent`: an active set was sized for another replica count.
    pub(super) fn scaling_event(&self) -> bool {
        self.sets
            .iter()
            .any(|rs| rs.replicas > 0 && rs.desired != self.spec.replicas)
    }

    /// `DeploymentController.scale`: a new size shared out over the active sets.
    pub(super) fn scale_all(&mut self) {
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
    pub(super) fn fraction(&self, rs: &ReplicaSet, allowed: i64) -> i64 {
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
    pub(super) fn roll(&mut self) {
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
