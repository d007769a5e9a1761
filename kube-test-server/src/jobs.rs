//! The job controller and the TTL-after-finished controller, as kube-controller-manager
//! v1.36's, reduced to what clients observe: Pods made from the template up to `parallelism`
//! (for `Indexed` jobs one per index, with its completion-index annotation and label), each
//! carrying the `batch.kubernetes.io/job-tracking` finalizer until counted; finished pods
//! counted into `succeeded` / `failed` (`completedIndexes` for indexed jobs); a failed pod
//! replaced after the controller's back-off (10 s, doubling); the job fails once its failures
//! pass `backoffLimit` (under `restartPolicy: OnFailure`, its pods' restarts count) or it runs
//! past `activeDeadlineSeconds`, and completes once enough pods succeeded, with the
//! `FailureTarget`/`Failed` or `SuccessCriteriaMet`/`Complete` conditions; a finished job goes
//! `ttlSecondsAfterFinished` later.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::meta;
use crate::pass::live;
use crate::pass::{self, JOB_TRACKING, Pass};
use crate::pods::{active, phase, pod_from, ready, terminal};
use crate::resources::{JOBS, PODS};

const MANAGER: &str = "kube-controller-manager";
const INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The pod failure back-off: 10 s, doubled per failure, at most 6 minutes.
const BACKOFF: f64 = 10.0;
const MAX_BACKOFF: f64 = 360.0;

pub fn sync(pass: &mut Pass) {
    for job in live(pass, &JOBS) {
        job_sync(pass, &job);
    }
}

/// The condition of `kind` holding on the job, if any.
fn holds<'a>(job: &'a Value, kind: &str) -> Option<&'a Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind && c["status"] == "True")
}

fn index_of(pod: &Value) -> Option<u64> {
    pod["metadata"]["annotations"][INDEX].as_str()?.parse().ok()
}

/// `0,2-4`: the compressed list of indexes Kubernetes writes.
fn compress(indexes: &BTreeSet<u64>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u64, u64)> = None;
    for &i in indexes {
        run = match run {
            Some((start, end)) if end + 1 == i => Some((start, i)),
            Some(done) => {
                parts.push(range(done));
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    parts.extend(run.map(range));
    parts.join(",")
}

fn range((start, end): (u64, u64)) -> String {
    if start == end {
        start.to_string()
    } else {
        format!("{start}-{end}")
    }
}

fn parse_indexes(text: &str) -> BTreeSet<u64> {
    text.split(',')
        .filter_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            Some(a.parse::<u64>().ok()?..=b.parse::<u64>().ok()?)
        })
        .flatten()
        .collect()
}

/// When the pod's containers last finished (seconds since the epoch).
fn finished_at(pod: &Value) -> Option<f64> {
    pod["status"]["containerStatuses"]
        .as_array()?
        .iter()
        .filter_map(|c| {
            c["state"]["terminated"]["finishedAt"]
                .as_str()
                .and_then(meta::epoch)
        })
        .reduce(f64::max)
}

fn job_sync(pass: &mut Pass, job: &Value) {
    let spec = &job["spec"];
    let mut status = job["status"].as_object().cloned().unwrap_or_default();
    let finished = holds(job, "Complete").is_some() || holds(job, "Failed").is_some();
    if finished {
        expire(pass, job);
        return;
    }
    let pods = pass::owned(pass, &PODS, job);
    let indexed = spec["completionMode"] == "Indexed";
    let mut succeeded = status.get("succeeded").and_then(Value::as_i64).unwrap_or(0);
    let mut failed = status.get("failed").and_then(Value::as_i64).unwrap_or(0);
    let mut done = parse_indexes(
        status
            .get("completedIndexes")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    // Finished pods still carrying the finalizer are counted now, then let go.
    for pod in pods
        .iter()
        .filter(|p| terminal(p) || p["metadata"].get("deletionTimestamp").is_some())
    {
        let tracked = pod["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == JOB_TRACKING));
        if !tracked {
            continue;
        }
        match phase(pod) {
            "Succeeded" if indexed => {
                done.extend(index_of(pod));
                succeeded = done.len() as i64;
            }
            "Succeeded" => succeeded += 1,
            _ => failed += 1,
        }
        pass.release(PODS, pod, JOB_TRACKING);
    }
    let running: Vec<&Value> = pods.iter().filter(|p| active(p)).collect();
    let restarts: i64 = running
        .iter()
        .flat_map(|p| p["status"]["containerStatuses"].as_array().into_iter().flatten())
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    let limit = spec["backoffLimit"].as_i64().unwrap_or(6);
    let on_failure = spec["template"]["spec"]["restartPolicy"] == "OnFailure";
    let completions = spec["completions"].as_i64();
    let started = status
        .get("startTime")
        .and_then(Value::as_str)
        .and_then(meta::epoch)
        .unwrap_or(pass.now);
    let deadline = spec["activeDeadlineSeconds"].as_f64();
    let failure = if failed > limit || (on_failure && restarts > 0 && restarts >= limit.max(1)) {
        Some((
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ))
    } else if deadline.is_some_and(|d| started + d <= pass.now) {
        Some((
            "DeadlineExceeded",
            "Job was active longer than specified deadline",
        ))
    } else {
        if let Some(d) = deadline {
            pass.wake_at(started + d);
        }
        None
    };
    let complete = match completions {
        Some(n) => succeeded >= n,
        None => succeeded > 0 && running.is_empty(),
    };
    let suspended = spec["suspend"] == true;
    let mut active_count = running.len() as i64;
    if failure.is_some() || complete {
        for pod in &running {
            pass.delete(PODS, pod);
        }
        active_count = 0;
    } else if !suspended {
        active_count += create_pods(pass, job, &pods, &running, succeeded, failed, &done);
    }
    status.insert("active".into(), json!(active_count));
    status.insert("ready".into(), json!(running.iter().filter(|p| ready(p)).count()));
    status.insert("terminating".into(), json!(0));
    status.insert("uncountedTerminatedPods".into(), json!({}));
    for (field, value) in [
        ("succeeded", succeeded),
        ("failed", failed),
        ("active", active_count),
    ] {
        if value == 0 {
            status.shift_remove(field);
        } else {
            status.insert(field.into(), json!(value));
        }
    }
    if indexed && !done.is_empty() {
        status.insert("completedIndexes".into(), json!(compress(&done)));
    }
    if !suspended {
        status.entry("startTime").or_insert_with(|| json!(pass.time));
    }
    let ending = match (failure, complete) {
        (Some((reason, message)), _) => Some(("FailureTarget", "Failed", reason, message)),
        (None, true) => Some((
            "SuccessCriteriaMet",
            "Complete",
            "CompletionsReached",
            "Reached expected number of succeeded pods",
        )),
        _ => None,
    };
    if let Some((target, final_type, reason, message)) = ending {
        let condition = |kind: &str| {
            json!({"type": kind, "status": "True", "lastProbeTime": pass.time,
                   "lastTransitionTime": pass.time, "reason": reason, "message": message})
        };
        let mut conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        conditions.push(condition(target));
        conditions.push(condition(final_type));
        status.insert("conditions".into(), json!(conditions));
        if final_type == "Complete" {
            status.insert("completionTime".into(), json!(pass.time));
        }
    }
    let mut new = job.clone();
    new["status"] = json!(status);
    pass.update(JOBS, job, new, MANAGER, Some("status"));
}

/// Makes the pods the job lacks (after the failure back-off); returns how many.
fn create_pods(
    pass: &mut Pass,
    job: &Value,
    pods: &[Value],
    running: &[&Value],
    succeeded: i64,
    failed: i64,
    done: &BTreeSet<u64>,
) -> i64 {
    let spec = &job["spec"];
    let parallelism = spec["parallelism"].as_i64().unwrap_or(1);
    let wanted = match spec["completions"].as_i64() {
        Some(n) => parallelism.min(n - succeeded),
        None => parallelism,
    } - running.len() as i64;
    if wanted <= 0 {
        return 0;
    }
    if failed > 0 {
        let last = pods
            .iter()
            .filter(|p| phase(p) == "Failed")
            .filter_map(finished_at)
            .reduce(f64::max);
        let delay = (BACKOFF * 2f64.powi(failed as i32 - 1)).min(MAX_BACKOFF);
        if let Some(last) = last
            && last + delay > pass.now
        {
            pass.wake_at(last + delay);
            return 0;
        }
    }
    let indexed = spec["completionMode"] == "Indexed";
    let busy: BTreeSet<u64> = running.iter().filter_map(|p| index_of(p)).collect();
    let mut free =
        (0..spec["completions"].as_u64().unwrap_or(0)).filter(|i| !done.contains(i) && !busy.contains(i));
    let mut made = 0;
    for _ in 0..wanted {
        let mut pod = pod_from(job, "batch/v1", "Job", None);
        if indexed {
            let Some(index) = free.next() else { break };
            let name = job["metadata"]["name"].as_str().unwrap_or("");
            pod["metadata"]["generateName"] = json!(format!("{name}-{index}-"));
            pod["metadata"]["annotations"][INDEX] = json!(index.to_string());
            pod["metadata"]["labels"][INDEX] = json!(index.to_string());
        }
        pod["metadata"]["finalizers"] = json!([JOB_TRACKING]);
        if pass.create(PODS, pod, MANAGER).is_some() {
            made += 1;
        }
    }
    made
}

/// The TTL-after-finished controller: a finished job goes `ttlSecondsAfterFinished` after it
/// finished.
fn expire(pass: &mut Pass, job: &Value) {
    let Some(ttl) = job["spec"]["ttlSecondsAfterFinished"].as_f64() else {
        return;
    };
    let finished = ["Complete", "Failed"]
        .iter()
        .filter_map(|kind| {
            holds(job, kind)?["lastTransitionTime"]
                .as_str()
                .and_then(meta::epoch)
        })
        .reduce(f64::max);
    let Some(finished) = finished else { return };
    if finished + ttl <= pass.now {
        pass.delete(JOBS, job);
    } else {
        pass.wake_at(finished + ttl);
    }
}
