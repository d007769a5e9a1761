//! The Job controller, reduced to a Job run to its end as clients observe it: the Job's status
//! (`startTime`, `active`, then `succeeded` or `failed` with the conditions kube-controller-manager
//! v1.36 sets) and its pods, which run on paper. Pods are modelled only here, for Jobs: a pod
//! runs `realk8s.local/run-seconds` of its template (default 1), then succeeds, or fails with
//! exit code 1 when one of its images contains `fail` (the conventions of the real lane's
//! simulated nodes, `../shared/realk8s`); a failing Job makes `backoffLimit` + 1 pods, one after
//! the other. No TTL controller: finished Jobs stay. It follows the server's [`Rollout`] mode:
//! `Ready` runs Jobs to their end; `NeverReady` (no nodes) marks them started and no pod ever
//! ends; `Off` (the recorded cluster's controllers) leaves them alone.

use std::time::Duration;

use serde_json::{Value, json};

use crate::meta;
use crate::resources;
use crate::semantics::{self, WriteInfo};
use crate::state::{Rollout, Shared};

const MANAGER: &str = "kube-controller-manager";
const RUN_SECONDS: &str = "realk8s.local/run-seconds";
/// How long the controller takes to start a pod.
const START_DELAY: Duration = Duration::from_millis(100);

/// Starts a Job the controller has not started yet (no `status.startTime`, not suspended):
/// marks it started at once, then runs its pods in the background.
pub fn start(st: &Shared, job: &Value) {
    let mode = st.rollout();
    let started = job["status"].get("startTime").is_some_and(|t| !t.is_null());
    if mode == Rollout::Off
        || started
        || job["spec"]["suspend"] == true
        || job["metadata"].get("deletionTimestamp").is_some()
    {
        return;
    }
    let now = meta::now();
    let parallelism = job["spec"]["parallelism"].as_i64().unwrap_or(1);
    let Some(job) = update_status(st, job, |status| {
        *status = json!({
            "startTime": now, "active": parallelism, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
        });
    }) else {
        return;
    };
    if mode == Rollout::NeverReady {
        return;
    }
    let st = st.clone();
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move { run(&st, job).await });
    }
}

/// Runs the pods of `job` and writes its outcome.
async fn run(st: &Shared, job: Value) {
    let template = &job["spec"]["template"];
    let seconds = template["metadata"]["annotations"][RUN_SECONDS]
        .as_str()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let fails = template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| {
            c["image"]
                .as_str()
                .is_some_and(|i| i.to_lowercase().contains("fail"))
        });
    let completions = job["spec"]["completions"].as_i64().unwrap_or(1);
    let backoff_limit = job["spec"]["backoffLimit"].as_i64().unwrap_or(6);
    let (mut succeeded, mut failed) = (0, 0);
    while succeeded < completions && failed <= backoff_limit {
        tokio::time::sleep(START_DELAY).await;
        let Some(pod) = put_pod(st, &job, None) else {
            return;
        };
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        if put_pod(st, &job, Some((&pod, fails))).is_none() {
            return;
        }
        if fails {
            failed += 1;
        } else {
            succeeded += 1;
        }
        let now = meta::now();
        let done = succeeded == completions || failed > backoff_limit;
        let outcome = update_status(st, &job, |status| {
            status["succeeded"] = json!(succeeded);
            status["failed"] = json!(failed);
            status["active"] = json!(if done { 0 } else { 1 });
            if succeeded == completions {
                status["completionTime"] = json!(now);
                status["conditions"] = json!([
                    condition(
                        "SuccessCriteriaMet",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods",
                        &now
                    ),
                    condition(
                        "Complete",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods",
                        &now
                    ),
                ]);
            } else if failed > backoff_limit {
                status["conditions"] = json!([
                    condition(
                        "FailureTarget",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                        &now
                    ),
                    condition(
                        "Failed",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                        &now
                    ),
                ]);
            }
            for key in ["succeeded", "failed"] {
                if status[key] == 0 {
                    status.as_object_mut().map(|s| s.remove(key));
                }
            }
        });
        if outcome.is_none() {
            return;
        }
    }
}

fn condition(ty: &str, reason: &str, message: &str, now: &str) -> Value {
    json!({"type": ty, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
           "reason": reason, "message": message})
}

/// Writes the status `change` makes to the stored Job (the one `job` names, if still there
/// with the same uid) as the controller; returns the stored result.
fn update_status(st: &Shared, job: &Value, change: impl FnOnce(&mut Value)) -> Option<Value> {
    let key = resources::JOBS.key();
    let (namespace, name) = crate::store::ns_name(job);
    let mut store = st.store();
    let current = store.get(&key, &namespace, &name)?.clone();
    if current["metadata"]["uid"] != job["metadata"]["uid"] {
        return None;
    }
    let mut updated = current.clone();
    if !updated["status"].is_object() {
        updated["status"] = json!({});
    }
    change(&mut updated["status"]);
    let info = WriteInfo {
        manager: MANAGER,
        subresource: Some("status"),
        time: &meta::now(),
    };
    semantics::record_update(Some(&current), &mut updated, &info);
    meta::canonicalize(&mut updated);
    let stored = store.put(&key, updated);
    drop(store);
    st.written.notify_one();
    Some(stored)
}

/// Creates a running pod of `job` (`ended` None), or ends the pod given: Succeeded, or Failed
/// with exit code 1 when it `fails`. None when the Job is gone.
fn put_pod(st: &Shared, job: &Value, ended: Option<(&Value, bool)>) -> Option<Value> {
    let (namespace, job_name) = crate::store::ns_name(job);
    let mut store = st.store();
    let alive = store.get(&resources::JOBS.key(), &namespace, &job_name)?;
    if alive["metadata"]["uid"] != job["metadata"]["uid"] {
        return None;
    }
    let now = meta::now();
    let template = &job["spec"]["template"];
    let pod = match ended {
        None => {
            let uid = job["metadata"]["uid"].clone();
            let mut labels = template["metadata"]["labels"].clone();
            if !labels.is_object() {
                labels = json!({});
            }
            for (key, value) in [
                ("batch.kubernetes.io/controller-uid", &uid),
                ("batch.kubernetes.io/job-name", &json!(job_name)),
                ("controller-uid", &uid),
                ("job-name", &json!(job_name)),
            ] {
                labels[key] = value.clone();
            }
            let statuses = containers(template, |_| json!({"running": {"startedAt": now}}));
            json!({
                "kind": "Pod", "apiVersion": "v1",
                "metadata": {
                    "name": format!("{job_name}-{}", meta::name_suffix()), "namespace": namespace,
                    "uid": meta::new_uid(), "creationTimestamp": now, "labels": labels,
                    "annotations": template["metadata"]["annotations"],
                    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                        "uid": uid, "controller": true, "blockOwnerDeletion": true}],
                },
                "spec": template["spec"],
                "status": {"phase": "Running", "startTime": now, "containerStatuses": statuses},
            })
        }
        Some((running, fails)) => {
            let (namespace, name) = crate::store::ns_name(running);
            let mut pod = store.get(&resources::PODS.key(), &namespace, &name)?.clone();
            let started = pod["status"]["startTime"].clone();
            let (code, reason) = if fails { (1, "Error") } else { (0, "Completed") };
            pod["status"]["phase"] = json!(if fails { "Failed" } else { "Succeeded" });
            pod["status"]["containerStatuses"] = containers(
                template,
                |_| json!({"terminated": {"exitCode": code, "reason": reason, "startedAt": started, "finishedAt": now}}),
            );
            pod
        }
    };
    let stored = store.put(&resources::PODS.key(), pod);
    drop(store);
    st.written.notify_one();
    Some(stored)
}

/// The container statuses of a pod of `template`, each in the state `state` gives.
fn containers(template: &Value, state: impl Fn(&Value) -> Value) -> Value {
    let statuses: Vec<Value> = template["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            json!({"name": c["name"], "image": c["image"], "ready": false, "restartCount": 0,
                   "started": false, "state": state(c)})
        })
        .collect();
    json!(statuses)
}
