//! The kubelet of the simulated nodes ([`crate::scheduler`]), after
//! `../shared/realk8s/nodes.py`, with the same conventions, so a configuration fails alike on
//! both clusters: containers never run, but their status says they do. A bound pod gets its
//! IP (`10.244.<node>.x`), `Running` with every condition, and Ready containers; a pod whose
//! containers exit (restart policy `Never` or `OnFailure`) ends `Succeeded` after a second.
//!
//! By image name (lower-cased) and pod annotation:
//! - `nonexistent` or `invalid` in the image: `ErrImagePull`, after 2 s `ImagePullBackOff`;
//!   the pod stays Pending.
//! - `fail` in the image: the container exits 1: the pod is `Failed` under `restartPolicy:
//!   Never`, else in `CrashLoopBackOff` (restarts after 10 s, 20 s, ... 300 s), never Ready.
//! - `realk8s.local/exit-code: "N"`: the containers exit N; `realk8s.local/run-seconds: "S"`:
//!   they run S seconds first (default 1); `realk8s.local/ready: "false"`: they run, never
//!   Ready. A failing init container blocks the pod.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::meta::{epoch, timestamp};
use crate::pass::Pass;
use crate::pods::terminal;
use crate::resources::PODS;
use crate::scheduler::{node_index, simulated};

const EXIT_CODE: &str = "realk8s.local/exit-code";
const RUN_SECONDS: &str = "realk8s.local/run-seconds";
const READY: &str = "realk8s.local/ready";
/// How long an image pull fails as `ErrImagePull` before it backs off.
const PULL_SECONDS: f64 = 2.0;

/// Writes the status of every pod the simulated nodes run.
pub fn sync(pass: &mut Pass) {
    let nodes = simulated(pass);
    let pods = pass.list(&PODS, None);
    for pod in &pods {
        let Some(node) = pod["spec"]["nodeName"].as_str() else {
            continue;
        };
        let Some(node) = nodes.iter().find(|n| n["metadata"]["name"] == node) else {
            continue;
        };
        if terminal(pod) || pod["metadata"].get("deletionTimestamp").is_some() {
            continue;
        }
        let host = node["status"]["addresses"][0]["address"]
            .as_str()
            .unwrap_or("127.0.0.1")
            .to_string();
        let ip = if pod["spec"]["hostNetwork"] == true {
            host.clone()
        } else {
            pod_ip(&pods, pod, node_index(node))
        };
        let (status, next) = Kubelet::new(pass.now, pod).status(&host, &ip);
        if let Some(next) = next {
            pass.wake_at(next);
        }
        let mut new = pod.clone();
        new["status"] = status;
        pass.update(PODS, pod, new, "kubelet", Some("status"));
    }
}

/// The pod's IP: kept, else the first free one of its node's range.
fn pod_ip(pods: &[Value], pod: &Value, index: usize) -> String {
    let prefix = format!("10.244.{index}.");
    if let Some(ip) = pod["status"]["podIP"]
        .as_str()
        .filter(|ip| ip.starts_with(&prefix))
    {
        return ip.to_string();
    }
    let used: Vec<&str> = pods
        .iter()
        .filter(|p| !terminal(p))
        .filter_map(|p| p["status"]["podIP"].as_str())
        .collect();
    (2..255)
        .map(|host| format!("{prefix}{host}"))
        .find(|ip| !used.contains(&ip.as_str()))
        .unwrap_or_else(|| format!("{prefix}254"))
}

fn pull_fails(image: &str) -> bool {
    image.contains("nonexistent") || image.contains("invalid")
}

/// `docker.io/library/nginx@sha256:...`: the image's repository with a digest of its name.
fn image_id(image: &str) -> String {
    if image.contains('@') {
        return image.to_string();
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    let repo = if last.contains(':') {
        image.rsplit_once(':').map_or(image, |(r, _)| r)
    } else {
        image
    };
    let first = repo.split('/').next().unwrap_or("");
    let repo = if !repo.contains('/') {
        format!("docker.io/library/{repo}")
    } else if !first.contains('.') && !first.contains(':') && first != "localhost" {
        format!("docker.io/{repo}")
    } else {
        repo.to_string()
    };
    format!("{repo}@sha256:{:x}", Sha256::digest(image.as_bytes()))
}

/// Where one container is at `now`, having started at `start`.
struct Timeline {
    state: State,
    restarts: i64,
    started: f64,
    finished: Option<f64>,
    /// The previous run, when the container restarted.
    previous: Option<(f64, f64)>,
    /// When this changes next.
    next: Option<f64>,
}

#[derive(PartialEq)]
enum State {
    Running,
    Terminated,
    BackOff,
}

/// A container that `exits` after `run` seconds, and `restarts` after each exit (at once the
/// first time, then after 10 s, 20 s, ... 300 s).
fn timeline(start: f64, now: f64, run: f64, exits: bool, restarts: bool) -> Timeline {
    let at = |state, restarts, started, finished, previous, next| Timeline {
        state,
        restarts,
        started,
        finished,
        previous,
        next,
    };
    if !exits {
        return at(State::Running, 0, start, None, None, None);
    }
    if !restarts {
        return if now < start + run {
            at(State::Running, 0, start, None, None, Some(start + run))
        } else {
            at(State::Terminated, 0, start, Some(start + run), None, None)
        };
    }
    let (mut n, mut s, mut previous) = (0, start, None);
    loop {
        let end = s + run;
        if now < end {
            return at(State::Running, n, s, None, previous, Some(end));
        }
        let back_off = if n == 0 {
            0.0
        } else {
            (10.0 * 2f64.powi(n as i32 - 1)).min(300.0)
        };
        if now < end + back_off {
            return at(State::BackOff, n, s, Some(end), None, Some(end + back_off));
        }
        previous = Some((s, end));
        s = end + back_off;
        n += 1;
    }
}

/// One pod's kubelet at `now`.
struct Kubelet<'a> {
    pod: &'a Value,
    now: f64,
    start: f64,
    run: f64,
    exit_code: Option<i64>,
    never_ready: bool,
    restart_policy: &'a str,
    /// When something changes next.
    next: Vec<f64>,
}

impl<'a> Kubelet<'a> {
    fn new(now: f64, pod: &'a Value) -> Kubelet<'a> {
        let annotations = &pod["metadata"]["annotations"];
        let start = pod["status"]["startTime"]
            .as_str()
            .and_then(epoch)
            .unwrap_or(now.floor());
        Kubelet {
            pod,
            now,
            start,
            run: annotations[RUN_SECONDS]
                .as_str()
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(1.0)
                .max(0.0),
            exit_code: annotations[EXIT_CODE].as_str().and_then(|s| s.parse().ok()),
            never_ready: annotations[READY]
                .as_str()
                .is_some_and(|r| r.eq_ignore_ascii_case("false")),
            restart_policy: pod["spec"]["restartPolicy"].as_str().unwrap_or("Always"),
            next: Vec::new(),
        }
    }

    fn container_id(&self, name: &str, run: i64) -> String {
        let uid = self.pod["metadata"]["uid"].as_str().unwrap_or("");
        format!(
            "containerd://{:x}",
            Sha256::digest(format!("{uid}/{name}/{run}").as_bytes())
        )
    }

    fn terminated(&self, name: &str, run: i64, code: i64, started: f64, finished: f64) -> Value {
        json!({"exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
               "startedAt": timestamp(started), "finishedAt": timestamp(finished),
               "containerID": self.container_id(name, run)})
    }

    fn pulling(&mut self, image: &str) -> Value {
        let waiting = if self.now < self.start + PULL_SECONDS {
            self.next.push(self.start + PULL_SECONDS);
            json!({"reason": "ErrImagePull", "message": format!(
                "failed to pull and unpack image \"{image}\": not found (realk8s: image names containing \"nonexistent\" or \"invalid\" never pull)")})
        } else {
            json!({"reason": "ImagePullBackOff", "message": format!("Back-off pulling image \"{image}\"")})
        };
        json!({"ready": false, "started": false, "restartCount": 0, "state": {"waiting": waiting}})
    }

    /// A container exiting `code` (`exits`), restarting (`restarts`); Ready only if `ready_ok`.
    fn run(&mut self, name: &str, code: i64, exits: bool, restarts: bool, ready_ok: bool) -> Value {
        let t = timeline(self.start, self.now, self.run, exits, restarts);
        self.next.extend(t.next);
        let mut out = json!({"restartCount": t.restarts, "lastState": {}});
        match t.state {
            State::Running => {
                out["ready"] = json!(ready_ok && !self.never_ready && !(exits && restarts));
                out["started"] = json!(true);
                out["state"] = json!({"running": {"startedAt": timestamp(t.started)}});
                if let Some((s, e)) = t.previous {
                    out["lastState"] =
                        json!({"terminated": self.terminated(name, t.restarts - 1, code, s, e)});
                }
            }
            State::Terminated => {
                out["ready"] = json!(false);
                out["started"] = json!(false);
                let finished = t.finished.unwrap_or(t.started);
                out["state"] =
                    json!({"terminated": self.terminated(name, t.restarts, code, t.started, finished)});
            }
            State::BackOff => {
                let (finished, next) = (t.finished.unwrap_or(t.started), t.next.unwrap_or(self.now));
                out["ready"] = json!(false);
                out["started"] = json!(false);
                out["lastState"] =
                    json!({"terminated": self.terminated(name, t.restarts, code, t.started, finished)});
                let pod = &self.pod["metadata"];
                out["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!(
                    "back-off {}s restarting failed container={name} pod={}_{}({})",
                    (next - finished).round(),
                    pod["name"].as_str().unwrap_or(""),
                    pod["namespace"].as_str().unwrap_or(""),
                    pod["uid"].as_str().unwrap_or(""))}});
            }
        }
        out
    }

    /// The status fields every container status starts with.
    fn base(&self, container: &Value, mut status: Value) -> Value {
        let image = container["image"].as_str().unwrap_or("");
        let name = container["name"].as_str().unwrap_or("");
        let waiting = status["state"].get("waiting").is_some();
        let restarted = status["lastState"].as_object().is_some_and(|m| !m.is_empty());
        let mut out = json!({"name": name, "image": image,
                             "imageID": if waiting && !restarted { String::new() } else { image_id(image) }});
        if !waiting || restarted {
            out["containerID"] = json!(self.container_id(name, status["restartCount"].as_i64().unwrap_or(0)));
        }
        if let (Some(out), Some(status)) = (out.as_object_mut(), status.as_object_mut()) {
            out.append(status);
        }
        out
    }

    /// The pod's status, and when it changes next (None: not before something else does).
    fn status(mut self, host: &str, ip: &str) -> (Value, Option<f64>) {
        let spec = &self.pod["spec"];
        let waiting_init = json!({"ready": false, "started": false, "restartCount": 0,
                                  "state": {"waiting": {"reason": "PodInitializing"}}});
        let (mut init_done, mut init_failed) = (true, false);
        let (mut init_statuses, mut pending_init) = (Vec::new(), Vec::new());
        for c in spec["initContainers"].as_array().into_iter().flatten() {
            let image = c["image"].as_str().unwrap_or("").to_lowercase();
            let name = c["name"].as_str().unwrap_or("");
            let sidecar = c["restartPolicy"] == "Always";
            let status = if !init_done {
                waiting_init.clone()
            } else if pull_fails(&image) {
                init_done = false;
                self.pulling(c["image"].as_str().unwrap_or(""))
            } else if image.contains("fail") {
                let s = self.run(name, 1, true, sidecar || self.restart_policy != "Never", false);
                init_failed |= s["state"].get("terminated").is_some();
                init_done &= sidecar;
                s
            } else if sidecar {
                json!({"ready": !self.never_ready, "started": true, "restartCount": 0,
                       "state": {"running": {"startedAt": timestamp(self.start)}}})
            } else {
                json!({"ready": false, "started": false, "restartCount": 0,
                       "state": {"terminated": self.terminated(name, 0, 0, self.start, self.start)}})
            };
            if !init_done && !sidecar {
                pending_init.push(name.to_string());
            }
            init_statuses.push(self.base(c, status));
        }
        let mut statuses = Vec::new();
        for c in spec["containers"].as_array().into_iter().flatten() {
            let image = c["image"].as_str().unwrap_or("").to_lowercase();
            let status = if !init_done {
                waiting_init.clone()
            } else if pull_fails(&image) {
                self.pulling(c["image"].as_str().unwrap_or(""))
            } else {
                let code = self.exit_code.unwrap_or(i64::from(image.contains("fail")));
                let exits = self.restart_policy != "Always" || self.exit_code.is_some() || code != 0;
                let restarts =
                    self.restart_policy == "Always" || (self.restart_policy == "OnFailure" && code != 0);
                self.run(c["name"].as_str().unwrap_or(""), code, exits, restarts, code == 0)
            };
            statuses.push(self.base(c, status));
        }
        let phase = self.phase(&statuses, init_done, init_failed);
        let ended = matches!(phase, "Succeeded" | "Failed");
        if ended {
            for s in init_statuses
                .iter_mut()
                .filter(|s| s["state"].get("running").is_some())
            {
                let name = s["name"].as_str().unwrap_or("").to_string();
                s["ready"] = json!(false);
                s["started"] = json!(false);
                s["state"] = json!({"terminated": self.terminated(&name, 0, 0, self.start, self.now)});
            }
        }
        let mut conditions = self.conditions(&statuses, &init_statuses, &pending_init, init_done, ended);
        // Conditions of other writers (readiness gates, disruption targets) stay.
        let others = self.pod["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let ours: Vec<Value> = conditions.iter().map(|c| c["type"].clone()).collect();
        conditions.extend(others.into_iter().filter(|c| !ours.contains(&c["type"])));
        let mut status = self.pod["status"].as_object().cloned().unwrap_or_default();
        let fields: Map<String, Value> = json!({
            "phase": phase, "conditions": conditions, "hostIP": host, "hostIPs": [{"ip": host}],
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": timestamp(self.start), "containerStatuses": statuses,
        })
        .as_object()
        .cloned()
        .unwrap_or_default();
        status.extend(fields);
        if !init_statuses.is_empty() {
            status.insert("initContainerStatuses".into(), json!(init_statuses));
        }
        if let Some(generation) = self.pod["metadata"]["generation"].as_i64() {
            status.insert("observedGeneration".into(), json!(generation));
        }
        let next = if ended {
            None
        } else {
            self.next.iter().copied().reduce(f64::min)
        };
        (Value::Object(status), next)
    }

    fn phase(&self, statuses: &[Value], init_done: bool, init_failed: bool) -> &'static str {
        let state = |s: &Value, k: &str| s["state"].get(k).is_some();
        let running = statuses.iter().filter(|s| state(s, "running")).count();
        let waiting = statuses
            .iter()
            .filter(|s| state(s, "waiting") && s["lastState"].as_object().is_none_or(Map::is_empty))
            .count();
        let stopped = statuses.len() - running - waiting;
        let all_ok =
            !statuses.is_empty() && statuses.iter().all(|s| s["state"]["terminated"]["exitCode"] == 0);
        if init_failed {
            "Failed"
        } else if !init_done || waiting > 0 || (running == 0 && stopped == 0) {
            "Pending"
        } else if running > 0 || self.restart_policy == "Always" {
            "Running"
        } else if all_ok {
            "Succeeded"
        } else if self.restart_policy == "Never" && statuses.iter().all(|s| state(s, "terminated")) {
            "Failed"
        } else {
            "Running"
        }
    }

    fn conditions(
        &self,
        statuses: &[Value],
        init_statuses: &[Value],
        pending_init: &[String],
        init_done: bool,
        ended: bool,
    ) -> Vec<Value> {
        let previous = self.pod["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let now = timestamp(self.now);
        let condition = |kind: &str, ok: bool, reason: Option<&str>, message: Option<String>| {
            let status = if ok { "True" } else { "False" };
            let before = previous.iter().find(|c| c["type"] == kind);
            let since = match before {
                Some(c) if c["status"] == status && c["lastTransitionTime"].is_string() => {
                    c["lastTransitionTime"].clone()
                }
                _ => json!(now),
            };
            let mut c =
                json!({"type": kind, "status": status, "lastProbeTime": null, "lastTransitionTime": since});
            if let Some(reason) = reason {
                c["reason"] = json!(reason);
            }
            if let Some(message) = message {
                c["message"] = json!(message);
            }
            c
        };
        let sidecars = self.pod["spec"]["initContainers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let unready: Vec<&str> = statuses
            .iter()
            .filter(|s| s["ready"] != true)
            .chain(
                init_statuses
                    .iter()
                    .zip(&sidecars)
                    .filter(|(s, c)| c["restartPolicy"] == "Always" && s["ready"] != true)
                    .map(|(s, _)| s),
            )
            .filter_map(|s| s["name"].as_str())
            .collect();
        let mut conditions = vec![
            condition("PodReadyToStartContainers", !ended, None, None),
            condition("PodScheduled", true, None, None),
        ];
        if ended {
            conditions.push(condition("Initialized", true, Some("PodCompleted"), None));
            conditions.push(condition("ContainersReady", false, Some("PodCompleted"), None));
            conditions.push(condition("Ready", false, Some("PodCompleted"), None));
            return conditions;
        }
        let message = format!("containers with unready status: [{}]", unready.join(" "));
        let (init_reason, init_message) = if init_done {
            (None, None)
        } else {
            (
                Some("ContainersNotInitialized"),
                Some(format!(
                    "containers with incomplete status: [{}]",
                    pending_init.join(" ")
                )),
            )
        };
        conditions.push(condition("Initialized", init_done, init_reason, init_message));
        let ok = unready.is_empty();
        let (reason, text) = if ok {
            (None, None)
        } else {
            (Some("ContainersNotReady"), Some(message))
        };
        conditions.push(condition("ContainersReady", ok, reason, text.clone()));
        let gate = self.pod["spec"]["readinessGates"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|g| {
                let kind = g["conditionType"].as_str()?;
                let met = previous
                    .iter()
                    .any(|c| c["type"] == kind && c["status"] == "True");
                (!met).then(|| kind.to_string())
            });
        conditions.push(match (ok, gate) {
            (false, _) => condition("Ready", false, reason, text),
            (true, Some(gate)) => condition(
                "Ready",
                false,
                Some("ReadinessGatesNotReady"),
                Some(format!(
                    "corresponding condition of pod readiness gate \"{gate}\" does not exist."
                )),
            ),
            (true, None) => condition("Ready", true, None, None),
        });
        conditions
    }
}
