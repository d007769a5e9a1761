//! Whether an applied object is as its wait wants it, by kind, as hashicorp/kubernetes 3.4.0
//! and `kubectl rollout status` judge it: a rollout done, a Job complete, a claim bound, a
//! volume available, a load balancer's address. What is still missing is said in the user's
//! terms, with the counts against the desired count (`1 of 2 replicas ready; desired 2,
//! updated 2, ready 1, available 1`); a state that will not change by waiting (a Deployment past its progress
//! deadline, a failed Job) is a failure with the controller's reason. The pods' side of it is
//! in [`diagnosis`]; the poll that waits for an applied object, bounded by its `timeouts`, is
//! [`ready_wait`]. Kept apart from the kinds: a catalog row's wait, a kind's own code, the manifest
//! resources and the actions all judge readiness the same way.

pub mod diagnosis;
pub mod ready_wait;

use serde_json::Value as Json;

pub use crate::objects::Readiness;

fn count(v: &Json) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The controller has not seen the latest spec yet.
fn unobserved(object: &Json) -> Option<Readiness> {
    let generation = count(&object["metadata"]["generation"]);
    let observed = count(&object["status"]["observedGeneration"]);
    (observed < generation).then(|| {
        Readiness::Waiting(format!(
            "the controller has not yet seen generation {generation}, only {observed}"
        ))
    })
}

/// The condition of `kind` holding on the object, if any.
fn holds<'a>(object: &'a Json, kind: &str) -> Option<&'a Json> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind && c["status"] == "True")
}

/// `Reason: message` of a condition (without the message's closing full stop).
fn reason(condition: &Json) -> String {
    let text = |k: &str| {
        condition[k]
            .as_str()
            .unwrap_or("")
            .trim_end_matches('.')
            .to_string()
    };
    match (text("reason"), text("message")) {
        (r, m) if m.is_empty() => r,
        (r, m) if r.is_empty() => m,
        (r, m) => format!("{r}: {m}"),
    }
}

/// The rollout check of a workload kind, for `kubernetes_manifest`'s `wait { rollout }`.
pub fn rollout(kind: &str) -> Option<fn(&Json) -> Readiness> {
    match kind {
        "Deployment" => Some(deployment),
        "StatefulSet" => Some(stateful_set),
        "DaemonSet" => Some(daemon_set),
        _ => None,
    }
}

/// The check a `wait` row of `catalog/behaviour.tsv` names ([`crate::behaviour`]).
pub fn named(name: &str) -> Option<fn(&Json) -> Readiness> {
    match name {
        "deployment" => Some(deployment),
        "stateful_set" => Some(stateful_set),
        "daemon_set" => Some(daemon_set),
        "replication_controller" => Some(replication_controller),
        "job" => Some(job),
        "claim_bound" => Some(claim_bound),
        "volume_available" => Some(volume_available),
        "load_balancer" => Some(load_balancer),
        _ => None,
    }
}

/// A Deployment's rollout: every replica of the new ReplicaSet updated, ready and available,
/// no old one left; past its progress deadline, it failed.
pub fn deployment(deployment: &Json) -> Readiness {
    if let Some(waiting) = unobserved(deployment) {
        return waiting;
    }
    let status = &deployment["status"];
    let desired = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let (total, updated) = (count(&status["replicas"]), count(&status["updatedReplicas"]));
    let (ready, available) = (
        count(&status["readyReplicas"]),
        count(&status["availableReplicas"]),
    );
    let counts = format!("desired {desired}, updated {updated}, ready {ready}, available {available}");
    let stuck = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded");
    if let Some(condition) = stuck {
        return Readiness::Failed(format!("{}; {counts}", reason(condition)));
    }
    let missing = if updated < desired {
        format!("{updated} of {desired} replicas updated")
    } else if total > updated {
        format!("{} old replicas pending termination", total - updated)
    } else if total > ready {
        format!("{ready} of {total} replicas ready")
    } else if available < updated {
        format!("{available} of {updated} updated replicas available")
    } else {
        return Readiness::Ready;
    };
    Readiness::Waiting(format!("{missing}; {counts}"))
}

/// A StatefulSet's rollout: every replica ready, and updated to the latest revision (down to
/// the partition).
pub fn stateful_set(set: &Json) -> Readiness {
    if let Some(waiting) = unobserved(set) {
        return waiting;
    }
    let status = &set["status"];
    let desired = set["spec"]["replicas"].as_i64().unwrap_or(1);
    let (ready, updated) = (count(&status["readyReplicas"]), count(&status["updatedReplicas"]));
    let current = count(&status["currentReplicas"]);
    let counts = format!("desired {desired}, updated {updated}, ready {ready}, current {current}");
    let partition = set["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .unwrap_or(0);
    let rolling = set["spec"]["updateStrategy"]["type"] != "OnDelete";
    let missing = if ready < desired {
        format!("{ready} of {desired} replicas ready")
    } else if rolling && partition > 0 && updated < desired - partition {
        format!(
            "{updated} of {} replicas above the partition updated",
            desired - partition
        )
    } else if rolling && partition == 0 && status["updateRevision"] != status["currentRevision"] {
        format!("{updated} of {desired} replicas updated")
    } else {
        return Readiness::Ready;
    };
    Readiness::Waiting(format!("{missing}; {counts}"))
}

/// A DaemonSet's rollout: a ready, available pod of the latest template on every node it
/// should run on.
pub fn daemon_set(set: &Json) -> Readiness {
    if let Some(waiting) = unobserved(set) {
        return waiting;
    }
    let status = &set["status"];
    let desired = count(&status["desiredNumberScheduled"]);
    let updated = count(&status["updatedNumberScheduled"]);
    let (ready, available) = (count(&status["numberReady"]), count(&status["numberAvailable"]));
    let counts = format!("desired {desired}, updated {updated}, ready {ready}, available {available}");
    let missing = if updated < desired {
        format!("{updated} of {desired} scheduled pods updated")
    } else if ready < desired {
        format!("{ready} of {desired} pods ready")
    } else if available < desired {
        format!("{available} of {desired} pods available")
    } else {
        return Readiness::Ready;
    };
    Readiness::Waiting(format!("{missing}; {counts}"))
}

/// A ReplicationController: as many pods carrying its labels as it wants.
pub fn replication_controller(controller: &Json) -> Readiness {
    let desired = controller["spec"]["replicas"].as_i64().unwrap_or(1);
    let labelled = count(&controller["status"]["fullyLabeledReplicas"]);
    if labelled == desired {
        Readiness::Ready
    } else {
        Readiness::Waiting(format!("{labelled} of {desired} replicas scheduled"))
    }
}

/// A Job: complete, or failed with the controller's reason.
pub fn job(job: &Json) -> Readiness {
    let status = &job["status"];
    let completions = job["spec"]["completions"].as_i64().unwrap_or(1);
    let counts = format!(
        "succeeded {} of {completions}, failed {}, active {}",
        count(&status["succeeded"]),
        count(&status["failed"]),
        count(&status["active"])
    );
    if let Some(failed) = holds(job, "Failed") {
        return Readiness::Failed(format!("{}; {counts}", reason(failed)));
    }
    if holds(job, "Complete").is_some() {
        Readiness::Ready
    } else {
        Readiness::Waiting(counts)
    }
}

pub fn claim_bound(claim: &Json) -> Readiness {
    match claim["status"]["phase"].as_str() {
        Some("Bound") => Readiness::Ready,
        Some("Lost") => Readiness::Failed("the claim lost its volume".to_string()),
        phase => Readiness::Waiting(format!("phase {}", phase.unwrap_or("unknown"))),
    }
}

/// A PersistentVolume the binder has seen: Available or Bound.
pub fn volume_available(volume: &Json) -> Readiness {
    match volume["status"]["phase"].as_str() {
        Some("Available" | "Bound") => Readiness::Ready,
        Some("Failed") => Readiness::Failed(format!(
            "the volume failed: {}",
            volume["status"]["message"].as_str().unwrap_or("no message")
        )),
        phase => Readiness::Waiting(format!("phase {}", phase.unwrap_or("unknown"))),
    }
}

pub fn load_balancer(object: &Json) -> Readiness {
    match object["status"]["loadBalancer"]["ingress"].as_array() {
        Some(ingress) if !ingress.is_empty() => Readiness::Ready,
        _ => Readiness::Waiting("no ingress address yet".to_string()),
    }
}

/// A Pod in one of the `wanted` phases; a pod that ended in another never will be.
pub fn pod_phase(pod: &Json, wanted: &[String]) -> Readiness {
    let phase = pod["status"]["phase"].as_str().unwrap_or("Pending");
    if wanted.iter().any(|w| w == phase) {
        Readiness::Ready
    } else if matches!(phase, "Failed" | "Succeeded") {
        Readiness::Failed(format!("the pod ended in phase {phase}"))
    } else {
        Readiness::Waiting(format!("phase {phase}"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rollouts_wait_for_the_controller_and_the_replicas() {
        let deployment_status = json!({
            "metadata": {"generation": 2}, "spec": {"replicas": 2},
            "status": {"observedGeneration": 2, "updatedReplicas": 2, "replicas": 2, "readyReplicas": 2, "availableReplicas": 1}
        });
        assert!(matches!(
            deployment(&deployment_status),
            Readiness::Waiting(w) if w == "1 of 2 updated replicas available; desired 2, updated 2, ready 2, available 1"
        ));
        let set = json!({
            "metadata": {"generation": 1}, "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "readyReplicas": 1, "currentRevision": "a", "updateRevision": "a"}
        });
        assert!(matches!(stateful_set(&set), Readiness::Ready));
        let stale = json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2}});
        assert!(matches!(daemon_set(&stale), Readiness::Waiting(_)));
        let stuck = json!({
            "metadata": {"generation": 1}, "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                 "message": "ReplicaSet \"web-1\" has timed out progressing."}]}
        });
        assert!(matches!(
            deployment(&stuck),
            Readiness::Failed(m) if m.starts_with("ProgressDeadlineExceeded: ReplicaSet \"web-1\" has timed out")
        ));
        assert!(rollout("DaemonSet").is_some() && rollout("Job").is_none());
    }

    #[test]
    fn jobs_claims_and_volumes() {
        let failed = json!({"status": {"failed": 2, "conditions": [
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}});
        assert!(matches!(job(&failed), Readiness::Failed(m)
            if m == "BackoffLimitExceeded: Job has reached the specified backoff limit; succeeded 0 of 1, failed 2, active 0"));
        let done = json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}});
        assert!(matches!(job(&done), Readiness::Ready));
        assert!(matches!(
            claim_bound(&json!({"status": {"phase": "Pending"}})),
            Readiness::Waiting(_)
        ));
        assert!(matches!(
            volume_available(&json!({"status": {"phase": "Available"}})),
            Readiness::Ready
        ));
    }
}
