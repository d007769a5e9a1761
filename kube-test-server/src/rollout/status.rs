//! The Deployment's status as the controller writes it: replica counts summed from its
//! ReplicaSets, the `Available` and `Progressing` conditions and the progress deadline.

use super::scaling::{ReplicaSet, Sync};
use crate::meta;
use crate::pass::Pass;
use serde_json::{Value, json};

/// `calculateStatus` and `syncRolloutStatus`, from the ReplicaSets' own status.
pub(super) fn status(pass: &mut Pass, sync: &Sync, deployment: &Value, new: Option<&ReplicaSet>) -> Value {
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
