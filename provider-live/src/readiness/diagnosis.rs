//! Why a workload is not ready, from its pods, for the message of a wait that failed or timed
//! out: a pod that cannot be scheduled (`Unschedulable: 0/2 nodes are available: …`), a
//! container that cannot start (`ImagePullBackOff on container "web" of pod "web-6d4…": …`),
//! one that keeps failing or failed (`CrashLoopBackOff …`, `Error (exit code 1) …`), or a
//! pod that is simply not ready. The pods are those the workload's selector selects, newest
//! first (a Deployment's new ReplicaSet's before the old ones'); pods failing alike are
//! reported once.

use kube::Client;
use kube::api::{ApiResource, ListParams};
use serde_json::Value as Json;

use crate::objects;

/// At most this many distinct problems are listed.
const SHOWN: usize = 3;
/// Pods read to find them.
const PODS: u32 = 100;

/// What the pods of `object`, of `kind` (a workload, a Job or a Pod), say about why it is not
/// ready, if anything; None also when they cannot be read (the wait's own message stands).
pub async fn explain(client: &Client, kind: &str, object: &Json) -> Option<String> {
    let pods = match kind {
        "Pod" => vec![object.clone()],
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "ReplicationController" | "Job" => {
            let namespace = object["metadata"]["namespace"].as_str()?;
            let params = ListParams::default().labels(&selector(object)?).limit(PODS);
            let resource = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
            objects::list_with(client, &resource, Some(namespace), &params)
                .await
                .ok()?
        }
        _ => return None,
    };
    summary(pods)
}

/// The problems of `pods`, newest first, alike ones once: `a; b (and 2 more pods alike)`.
fn summary(mut pods: Vec<Json>) -> Option<String> {
    pods.sort_by(|a, b| {
        let created = |p: &Json| {
            p["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        created(b).cmp(&created(a)).then_with(|| name(a).cmp(name(b)))
    });
    let mut shown: Vec<(Problem, usize)> = Vec::new();
    for problem in pods.iter().filter_map(problem) {
        match shown.iter_mut().find(|(p, _)| p.kind == problem.kind) {
            Some((_, alike)) => *alike += 1,
            None => shown.push((problem, 0)),
        }
    }
    let lines: Vec<String> = shown
        .into_iter()
        .take(SHOWN)
        .map(|(p, alike)| match alike {
            0 => p.text,
            1 => format!("{} (and 1 more pod alike)", p.text),
            n => format!("{} (and {n} more pods alike)", p.text),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// One pod's problem: what it is (to tell alike ones) and how it reads.
struct Problem {
    kind: (String, String),
    text: String,
}

fn name(pod: &Json) -> &str {
    pod["metadata"]["name"].as_str().unwrap_or("")
}

/// A workload's selector as a label selector string (`app=web,tier in (a,b)`).
fn selector(object: &Json) -> Option<String> {
    let selector = &object["spec"]["selector"];
    // A ReplicationController's selector is a plain map.
    let labels = selector.get("matchLabels").unwrap_or(selector);
    let mut parts: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "matchExpressions")
        .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
        .collect();
    for expr in selector["matchExpressions"].as_array().into_iter().flatten() {
        let key = expr["key"].as_str()?;
        let values: Vec<&str> = expr["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        parts.push(match expr["operator"].as_str()? {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            _ => format!("!{key}"),
        });
    }
    (!parts.is_empty()).then(|| parts.join(","))
}

/// The first thing keeping `pod` from being ready, if any.
fn problem(pod: &Json) -> Option<Problem> {
    let pod_name = name(pod);
    let status = &pod["status"];
    if status["phase"] == "Succeeded" {
        return None;
    }
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let condition = |kind: &str| conditions.iter().find(|c| c["type"] == kind);
    if let Some(scheduled) = condition("PodScheduled").filter(|c| c["status"] == "False") {
        let reason = scheduled["reason"].as_str().unwrap_or("Unschedulable");
        return Some(Problem {
            kind: (reason.to_string(), String::new()),
            text: format!(
                "{reason}: {} (pod \"{pod_name}\")",
                scheduled["message"].as_str().unwrap_or("no message")
            ),
        });
    }
    for (list, what) in [
        ("initContainerStatuses", "init container"),
        ("containerStatuses", "container"),
    ] {
        for container in status[list].as_array().into_iter().flatten() {
            if let Some(found) = container_problem(container, what, pod_name) {
                return Some(found);
            }
        }
    }
    let ready = condition("Ready").filter(|c| c["status"] == "False")?;
    Some(Problem {
        kind: ("NotReady".into(), String::new()),
        text: format!(
            "pod \"{pod_name}\" is not ready: {}",
            ready["message"].as_str().unwrap_or("no message")
        ),
    })
}

/// A container that waits for a reason other than its pod starting, or ended with an error.
fn container_problem(container: &Json, what: &str, pod_name: &str) -> Option<Problem> {
    let name = container["name"].as_str().unwrap_or("");
    let last_exit = container["lastState"]["terminated"]["exitCode"].as_i64();
    let waiting = &container["state"]["waiting"];
    let terminated = &container["state"]["terminated"];
    let (reason, detail) = if let Some(reason) = waiting["reason"].as_str() {
        if matches!(reason, "PodInitializing" | "ContainerCreating") {
            return None;
        }
        let mut detail = waiting["message"].as_str().unwrap_or("").to_string();
        if let Some(code) = last_exit {
            detail = format!("{detail} (last exit code {code})")
                .trim_start()
                .to_string();
        }
        (reason.to_string(), detail)
    } else if let Some(code) = terminated["exitCode"].as_i64().filter(|c| *c != 0) {
        let reason = terminated["reason"].as_str().unwrap_or("Error");
        (
            format!("{reason} (exit code {code})"),
            terminated["message"].as_str().unwrap_or("").to_string(),
        )
    } else {
        return None;
    };
    let mut text = format!("{reason} on {what} \"{name}\" of pod \"{pod_name}\"");
    if !detail.is_empty() {
        text = format!("{text}: {detail}");
    }
    let kind = (
        reason.split(' ').next().unwrap_or("").to_string(),
        name.to_string(),
    );
    Some(Problem { kind, text })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, created: &str, status: Json) -> Json {
        json!({"metadata": {"name": name, "creationTimestamp": created}, "status": status})
    }

    #[test]
    fn pods_say_why_newest_first_alike_ones_once() {
        let pulling = |name: &str| {
            pod(
                name,
                "2026-01-01T00:00:02Z",
                json!({"phase": "Pending", "containerStatuses": [{"name": "web",
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"x/nonexistent\""}}}]}),
            )
        };
        let running = pod(
            "web-old",
            "2026-01-01T00:00:00Z",
            json!({"phase": "Running", "conditions": [
            {"type": "Ready", "status": "True"}]}),
        );
        let pending = pod(
            "web-new-c",
            "2026-01-01T00:00:01Z",
            json!({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
             "message": "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."}]}),
        );
        let text = summary(vec![running, pending, pulling("web-new-b"), pulling("web-new-a")]).unwrap();
        assert_eq!(
            text,
            "ImagePullBackOff on container \"web\" of pod \"web-new-a\": Back-off pulling image \"x/nonexistent\" \
             (and 1 more pod alike); Unschedulable: 0/2 nodes are available: 2 node(s) didn't match Pod's node \
             affinity/selector. (pod \"web-new-c\")"
        );
        let failed = pod(
            "once-x",
            "2026-01-01T00:00:00Z",
            json!({"phase": "Failed", "containerStatuses": [{"name": "main",
            "state": {"terminated": {"reason": "Error", "exitCode": 1}}}]}),
        );
        assert_eq!(
            summary(vec![failed]).unwrap(),
            "Error (exit code 1) on container \"main\" of pod \"once-x\""
        );
        assert_eq!(summary(vec![]), None);
    }

    #[test]
    fn selectors_read_as_label_selector_strings() {
        let deployment = json!({"spec": {"selector": {"matchLabels": {"app": "web"}, "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["a", "b"]}, {"key": "canary", "operator": "DoesNotExist"}]}}});
        assert_eq!(selector(&deployment).unwrap(), "app=web,tier in (a,b),!canary");
        let controller = json!({"spec": {"selector": {"app": "echo"}}});
        assert_eq!(selector(&controller).unwrap(), "app=echo");
    }
}
