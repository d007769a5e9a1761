//! Actions (`action` blocks, Terraform 1.14+) with the real engine, on both servers: a
//! ConfigMap change restarts its Deployment (new pods, revision 2) and the Deployment's next
//! plan is empty; `-invoke` of a scale leaves no diff; a wait on a condition that becomes true,
//! and one that times out saying what the object had; a Job run from a CronJob that succeeds
//! and an inline one whose image fails, reported with the pod's reason and exit code; a restart
//! refused on another estate's Deployment (and made with `any_estate`); Ctrl-C ending a long
//! wait at once. Each asserts the progress lines the engine shows.

use std::time::{Duration, Instant};

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, EngineOutput, Feature, skip_without};

/// How long one engine run of these tests may take before it is killed.
const RUN_TIMEOUT: Duration = Duration::from_secs(240);

/// `terraform apply -invoke=action.<address>`, whatever its outcome.
fn invoke(work: &LiveDir, address: &str) -> EngineOutput {
    let target = format!("-invoke=action.{address}");
    work.run(&["apply", "-auto-approve", "-input=false", &target])
}

/// The engine's line for a progress message of action `address` run by `trigger` (`CLI` for
/// `-invoke`, else the resource address).
fn progress_line(address: &str, trigger: &str, message: &str) -> String {
    format!("Action action.{address} (triggered by {trigger}): {message}")
}

fn assert_shows(out: &EngineOutput, lines: &[String]) {
    let flat = out.flat();
    for line in lines {
        assert!(flat.contains(line), "no {line:?} in:\n{out}");
    }
}

/// Deployment `web` in `ns` with `replicas` (none: left to the server and the scale action).
fn deployment(ns: &str, replicas: Option<u32>) -> String {
    let replicas = replicas
        .map(|r| format!("    replicas = {r}\n"))
        .unwrap_or_default();
    format!(
        r#"resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = {ns}
  }}
  spec {{
{replicas}    selector {{
      match_labels = {{ app = "web" }}
    }}
    template {{
      metadata {{
        labels = {{ app = "web" }}
      }}
      spec {{
        container {{
          name  = "web"
          image = "nginx:1.27"
        }}
      }}
    }}
  }}
}}
"#,
        ns = quote(ns),
    )
}

/// The uids of the live (not terminating) pods of Deployment `web` in `ns`.
fn web_pods(cluster: &Cluster, ns: &str) -> Vec<String> {
    let pods = cluster.get_json(&["pods", "-n", ns, "-l", "app=web"]);
    let items = pods["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .filter_map(|p| p["metadata"]["uid"].as_str().map(str::to_string))
        .collect()
}

/// The managers of `web`'s fields, each with the subresource it wrote through and the fields
/// it owns (`FieldsV1` as JSON text).
fn managers(cluster: &Cluster, ns: &str) -> Vec<(String, String, String)> {
    let out = cluster.kubectl(&[
        "get",
        "deployment",
        "web",
        "-n",
        ns,
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    assert!(out.success(), "kubectl get deployment:\n{out}");
    let live: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let entries = live["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    entries
        .iter()
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
            (text("manager"), text("subresource"), m["fieldsV1"].to_string())
        })
        .collect()
}

#[test]
fn a_config_map_change_restarts_its_deployment_and_the_next_plan_is_empty() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-rs");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let config = |greeting: &str| {
        format!(
            r#"resource "kubernetes_config_map_v1" "web" {{
  metadata {{
    name      = "web-config"
    namespace = {ns}
  }}
  data = {{ greeting = {greeting} }}
  lifecycle {{
    action_trigger {{
      events  = [after_update]
      actions = [action.kubernetes_rollout_restart.web]
    }}
  }}
}}

action "kubernetes_rollout_restart" "web" {{
  config {{
    kind      = "Deployment"
    name      = kubernetes_deployment_v1.web.metadata[0].name
    namespace = {ns}
    timeout   = "3m"
  }}
}}

{deployment}"#,
            ns = quote(ns),
            greeting = quote(greeting),
            deployment = deployment(ns, Some(2)),
        )
    };
    work.write(&config("hello"));
    let out = work.apply_ok("create");
    assert!(
        !out.flat().contains("Action started"),
        "a create ran the action:\n{out}"
    );
    let revision = |cluster: &Cluster| {
        let live = cluster.get_json(&["deployment", "web", "-n", ns]);
        live["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone()
    };
    assert_eq!(revision(&cluster), "1");
    let before = web_pods(&cluster, ns);

    work.write(&config("bye"));
    let out = work.apply_ok("the ConfigMap change");
    let trigger = "kubernetes_config_map_v1.web";
    assert_shows(
        &out,
        &[
            format!("Action started: action.kubernetes_rollout_restart.web (triggered by {trigger})"),
            progress_line("kubernetes_rollout_restart.web", trigger, "web: restarting"),
            progress_line(
                "kubernetes_rollout_restart.web",
                trigger,
                "web: rolled out, 2 of 2 updated, 2 available",
            ),
            "Actions: 1 invoked".to_string(),
        ],
    );
    // A new ReplicaSet rolled out, and none of the pods from before is left.
    assert_eq!(revision(&cluster), "2");
    let after = web_pods(&cluster, ns);
    assert_eq!(after.len(), before.len(), "before {before:?}, after {after:?}");
    assert!(
        after.iter().all(|uid| !before.contains(uid)),
        "before {before:?}, after {after:?}"
    );
    let live = cluster.get_json(&["deployment", "web", "-n", ns]);
    assert!(
        live["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].is_string(),
        "{live}"
    );
    let owners = managers(&cluster, ns);
    assert!(
        owners
            .iter()
            .any(|(manager, sub, fields)| manager == "tofu-live-rollout-restart"
                && sub.is_empty()
                && fields.contains("kubectl.kubernetes.io/restartedAt")),
        "{owners:?}"
    );
    let out = work.plan_exit();
    assert_eq!(
        out.code, 0,
        "the Deployment's plan after the restart is not empty:\n{out}"
    );
}

#[test]
fn an_invoked_scale_leaves_no_diff() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-sc");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        "{}\naction \"kubernetes_scale\" \"web\" {{\n  config {{\n    kind      = \"Deployment\"\n    \
         name      = \"web\"\n    namespace = {}\n    replicas  = 3\n  }}\n}}\n",
        deployment(ns, None),
        quote(ns)
    ));
    work.apply_ok("create");
    let out = invoke(&work, "kubernetes_scale.web");
    assert!(out.success(), "the scale failed:\n{out}");
    assert_shows(
        &out,
        &[
            progress_line("kubernetes_scale.web", "CLI", "web: scaling from 1 to 3 replicas"),
            progress_line(
                "kubernetes_scale.web",
                "CLI",
                "web: scaled to 3, 3 of 3 updated, 3 available",
            ),
        ],
    );
    assert!(!out.flat().contains("Warning"), "{out}");
    let live = cluster.get_json(&["deployment", "web", "-n", ns]);
    assert_eq!(live["spec"]["replicas"], 3);
    // The resource's manager does not own them (nobody does: the API server records no
    // manager for a scale of replicas nobody owned), so it never sets them back.
    let owners = managers(&cluster, ns);
    assert!(
        owners
            .iter()
            .all(|(manager, _, fields)| manager != "tofu-live" || !fields.contains("f:replicas")),
        "{owners:?}"
    );
    let out = work.plan_exit();
    assert_eq!(
        out.code, 0,
        "the Deployment's plan after the scale is not empty:\n{out}"
    );
}

#[test]
fn a_wait_ends_when_its_condition_becomes_true_and_a_timeout_says_what_the_object_had() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-wt");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let wait = |name: &str, condition: &str, timeout: &str| {
        format!(
            "action \"kubernetes_wait\" \"{name}\" {{\n  config {{\n    api_version = \"v1\"\n    \
             kind        = \"Service\"\n    name        = \"svc\"\n    namespace   = {ns}\n    \
             timeout     = \"{timeout}\"\n    condition {{\n      type = \"{condition}\"\n    }}\n  }}\n}}\n",
            ns = quote(ns)
        )
    };
    work.write(&format!(
        "resource \"kubernetes_service_v1\" \"svc\" {{\n  metadata {{\n    name      = \"svc\"\n    \
         namespace = {}\n  }}\n  spec {{\n    selector = {{ app = \"svc\" }}\n    port {{\n      port = 80\n    \
         }}\n  }}\n}}\n\n{}\n{}",
        quote(ns),
        wait("ready", "Ready", "3m"),
        wait("degraded", "Degraded", "3s"),
    ));
    work.apply_ok("create");

    // Waiting: the Service has no conditions, until the test gives it one.
    let mut ready = work.engine().start(&[
        "apply",
        "-auto-approve",
        "-input=false",
        "-invoke=action.kubernetes_wait.ready",
    ]);
    let waiting = progress_line(
        "kubernetes_wait.ready",
        "CLI",
        "svc: no condition Ready (conditions: none)",
    );
    assert!(
        ready.wait_for_output(&waiting, Duration::from_secs(120)),
        "no {waiting:?} in:\n{}",
        ready.output_so_far()
    );
    let condition = r#"{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Test","message":"set by the test","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}"#;
    let patched = cluster.kubectl(&[
        "patch",
        "service",
        "svc",
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        condition,
    ]);
    assert!(
        patched.success(),
        "kubectl patch --subresource=status:\n{patched}"
    );
    let out = ready.finish(RUN_TIMEOUT, &"the wait for Ready");
    assert!(out.success(), "the wait for Ready failed:\n{out}");
    assert_shows(
        &out,
        &[progress_line(
            "kubernetes_wait.ready",
            "CLI",
            "svc: condition Ready=True",
        )],
    );

    let out = invoke(&work, "kubernetes_wait.degraded");
    assert!(
        !out.success(),
        "a wait for a condition that never comes succeeded:\n{out}"
    );
    let why = "no condition Degraded (conditions: Ready=True (Test))";
    assert_shows(
        &out,
        &[
            progress_line("kubernetes_wait.degraded", "CLI", &format!("svc: {why}")),
            format!("Timed out waiting for Service \"{ns}/svc\""),
            format!("did not meet condition Degraded=True ({why}) within 3s"),
        ],
    );
}

#[test]
fn a_job_run_from_a_cronjob_succeeds_and_a_failing_one_reports_its_pods() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-jb");
    let ns = ns.name.as_str();
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&format!(
        r#"resource "kubernetes_cron_job_v1" "report" {{
  metadata {{
    name      = "report"
    namespace = {ns}
  }}
  spec {{
    schedule = "0 0 1 1 *"
    suspend  = true
    job_template {{
      metadata {{
        labels = {{ app = "report" }}
      }}
      spec {{
        backoff_limit = 0
        template {{
          metadata {{}}
          spec {{
            restart_policy = "Never"
            container {{
              name  = "report"
              image = "busybox:1.36"
            }}
          }}
        }}
      }}
    }}
  }}
}}

action "kubernetes_job_run" "report" {{
  config {{
    namespace                  = {ns}
    from_cronjob               = kubernetes_cron_job_v1.report.metadata[0].name
    ttl_seconds_after_finished = 600
    timeout                    = "3m"
  }}
}}

action "kubernetes_job_run" "broken" {{
  config {{
    namespace = {ns}
    name      = "broken"
    timeout   = "3m"
    job_template = {{
      spec = {{
        backoffLimit = 0
        template = {{
          spec = {{
            restartPolicy = "Never"
            containers    = [{{ name = "main", image = "registry.example.com/fail:1" }}]
          }}
        }}
      }}
    }}
  }}
}}
"#,
        ns = quote(ns)
    ));
    work.apply_ok("the CronJob");

    let out = invoke(&work, "kubernetes_job_run.report");
    assert!(out.success(), "the Job run failed:\n{out}");
    let jobs = cluster.get_json(&[
        "jobs",
        "-n",
        ns,
        "-l",
        &format!("tofu-estate={estate},app=report"),
    ]);
    let items = jobs["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{jobs}");
    let job = &items[0];
    let name = job["metadata"]["name"].as_str().expect("a name");
    assert!(name.starts_with("report-"), "{name}");
    assert_eq!(
        job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
        "manual"
    );
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 600);
    assert_shows(
        &out,
        &[
            progress_line("kubernetes_job_run.report", "CLI", &format!("{name}: created")),
            progress_line(
                "kubernetes_job_run.report",
                "CLI",
                &format!("{name}: complete, 0 active, 1 of 1 succeeded"),
            ),
        ],
    );

    let out = invoke(&work, "kubernetes_job_run.broken");
    assert!(!out.success(), "a Job whose image fails succeeded:\n{out}");
    assert_shows(
        &out,
        &[
            progress_line("kubernetes_job_run.broken", "CLI", "broken: created"),
            progress_line("kubernetes_job_run.broken", "CLI", "broken: failed,"),
            format!("Job \"{ns}/broken\" failed"),
            "failed: BackoffLimitExceeded: Job has reached the specified backoff limit".to_string(),
            "container main: Error, exit code 1".to_string(),
        ],
    );
    let job = cluster.get_json(&["job", "broken", "-n", ns]);
    assert_eq!(job["metadata"]["labels"]["tofu-estate"], estate.as_str());
}

#[test]
fn a_restart_of_another_estates_deployment_is_refused_unless_any_estate() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-es");
    let ns = ns.name.as_str();
    let owner = unique_name("own");
    let owning = LiveDir::new(&owner, cluster.kubeconfig());
    owning.write(&deployment(ns, Some(1)));
    owning.apply_ok("the owner's Deployment");

    let other = LiveDir::new(&unique_name("oth"), cluster.kubeconfig());
    let restart = |any_estate: bool| {
        format!(
            "action \"kubernetes_rollout_restart\" \"web\" {{\n  config {{\n    kind       = \"Deployment\"\n    \
             name       = \"web\"\n    namespace  = {}\n    any_estate = {any_estate}\n    timeout    = \"3m\"\n  }}\n}}\n",
            quote(ns)
        )
    };
    other.write(&restart(false));
    let out = invoke(&other, "kubernetes_rollout_restart.web");
    assert!(
        !out.success(),
        "another estate's Deployment was restarted:\n{out}"
    );
    assert_shows(
        &out,
        &[
            format!("Deployment \"{ns}/web\" belongs to estate \"{owner}\""),
            "Set any_estate = true".to_string(),
        ],
    );
    let restarted_at = |cluster: &Cluster| {
        let live = cluster.get_json(&["deployment", "web", "-n", ns]);
        live["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].clone()
    };
    assert!(restarted_at(&cluster).is_null(), "the refused restart wrote");

    other.write(&restart(true));
    let out = invoke(&other, "kubernetes_rollout_restart.web");
    assert!(out.success(), "the restart with any_estate failed:\n{out}");
    assert_shows(
        &out,
        &[progress_line(
            "kubernetes_rollout_restart.web",
            "CLI",
            "web: rolled out, 1 of 1 updated, 1 available",
        )],
    );
    assert!(restarted_at(&cluster).is_string());
    let out = owning.plan_exit();
    assert_eq!(
        out.code, 0,
        "the owner's plan after the restart is not empty:\n{out}"
    );
}

#[test]
fn ctrl_c_ends_a_long_wait_at_once() {
    if skip_without(Feature::Actions) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "act-cc");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_config_map_v1\" \"flag\" {{\n  metadata {{\n    name      = \"flag\"\n    \
         namespace = {ns}\n  }}\n  data = {{ ready = \"no\" }}\n}}\n\naction \"kubernetes_wait\" \"flag\" {{\n  \
         config {{\n    api_version = \"v1\"\n    kind        = \"ConfigMap\"\n    name        = \"flag\"\n    \
         namespace   = {ns}\n    fields      = {{ \"data.ready\" = \"yes\" }}\n    timeout     = \"10m\"\n  }}\n}}\n",
        ns = quote(ns)
    ));
    work.apply_ok("create");
    let mut wait = work.engine().start(&[
        "apply",
        "-auto-approve",
        "-input=false",
        "-invoke=action.kubernetes_wait.flag",
    ]);
    let waiting = progress_line(
        "kubernetes_wait.flag",
        "CLI",
        "flag: data.ready is \"no\", wanted \"yes\"",
    );
    assert!(
        wait.wait_for_output(&waiting, Duration::from_secs(120)),
        "no {waiting:?} in:\n{}",
        wait.output_so_far()
    );
    let interrupted = Instant::now();
    wait.interrupt();
    let out = wait.finish(Duration::from_secs(60), &"the interrupted wait");
    let took = interrupted.elapsed();
    assert!(!out.success(), "an interrupted wait succeeded:\n{out}");
    assert!(
        took < Duration::from_secs(20),
        "the engine took {took:?} to end after Ctrl-C:\n{out}"
    );
    assert_shows(
        &out,
        &[
            format!("Stopped waiting for ConfigMap \"{ns}/flag\""),
            "The run was interrupted (Ctrl-C) while waiting".to_string(),
            "Nothing was changed.".to_string(),
        ],
    );
}
