//! A flaky API server (issue 29), through the fault proxy of `acceptance::fault_proxy` in front
//! of the cluster: an estate of 37 objects (a Namespace, ConfigMaps, Secrets, ServiceAccounts, a
//! Service, a Role and RoleBinding, a Deployment, two `generate_name` ConfigMaps) applies,
//! plans empty and destroys without a re-run at 20 % mixed faults (429, 5xx, connections broken
//! before and after forwarded writes) and at 50 % lost answers to `generate_name` creates,
//! ending with exactly the configured objects: no duplicate, no unlabelled or extra labelled
//! object. With the server gone mid-apply, the apply fails within its timeout with one error per
//! failed request naming the cause, and the next apply converges; the object a lost create left
//! is adopted, never doubled, and an object no state records is found with `terraform query`.
//! Each test prints the faults injected and the requests sent again.

use std::fs;
use std::io::Write as _;
use std::time::{Duration, Instant};

use acceptance::fault_proxy::{Fault, FaultPlan, FaultProxy, Scope};
use acceptance::hcl::{LiveDir, quote, rollout_wait, unique_name};
use acceptance::{Cluster, EngineOutput};
use serde_json::Value;

/// ConfigMaps, Secrets and ServiceAccounts of the estate (besides the rest).
const CONFIG_MAPS: usize = 20;
const SECRETS: usize = 8;
const SERVICE_ACCOUNTS: usize = 4;
/// The `generate_name` ConfigMaps.
const GENERATED: usize = 2;

/// The estate: namespace `ns` and everything in it.
fn estate_config(ns: &str, cluster: &Cluster) -> String {
    format!(
        r#"resource "kubernetes_namespace_v1" "ns" {{
  metadata {{
    name = {ns}
  }}
}}

locals {{
  ns = kubernetes_namespace_v1.ns.metadata[0].name
}}

resource "kubernetes_config_map_v1" "cm" {{
  count = {CONFIG_MAPS}
  metadata {{
    name      = "cm-${{count.index}}"
    namespace = local.ns
    labels    = {{ app = "flaky" }}
  }}
  data = {{ index = count.index }}
}}

resource "kubernetes_secret_v1" "secret" {{
  count = {SECRETS}
  metadata {{
    name      = "secret-${{count.index}}"
    namespace = local.ns
  }}
  data = {{ password = "p-${{count.index}}" }}
}}

resource "kubernetes_service_account_v1" "sa" {{
  count = {SERVICE_ACCOUNTS}
  metadata {{
    name      = "sa-${{count.index}}"
    namespace = local.ns
  }}
}}

resource "kubernetes_service_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
  }}
  spec {{
    selector = {{ app = "web" }}
    port {{
      port        = 80
      target_port = 8080
    }}
  }}
}}

resource "kubernetes_role_v1" "reader" {{
  metadata {{
    name      = "reader"
    namespace = local.ns
  }}
  rule {{
    api_groups = [""]
    resources  = ["configmaps"]
    verbs      = ["get", "list"]
  }}
}}

resource "kubernetes_role_binding_v1" "reader" {{
  metadata {{
    name      = "reader"
    namespace = local.ns
  }}
  role_ref {{
    api_group = "rbac.authorization.k8s.io"
    kind      = "Role"
    name      = kubernetes_role_v1.reader.metadata[0].name
  }}
  subject {{
    kind      = "ServiceAccount"
    name      = kubernetes_service_account_v1.sa[0].metadata[0].name
    namespace = local.ns
  }}
}}

resource "kubernetes_deployment_v1" "web" {{
  metadata {{
    name      = "web"
    namespace = local.ns
  }}
{rollout}  spec {{
    replicas = 1
    selector {{
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

resource "kubernetes_config_map_v1" "generated" {{
  count = {GENERATED}
  metadata {{
    generate_name = "gen-"
    namespace     = local.ns
  }}
  data = {{ index = count.index }}
}}
"#,
        ns = quote(ns),
        rollout = rollout_wait(cluster),
    )
}

/// Kinds the estate writes, the count of each it configures, and the objects Kubernetes puts
/// in every namespace by itself.
fn expected() -> Vec<(&'static str, usize, &'static [&'static str])> {
    vec![
        ("configmaps", CONFIG_MAPS + GENERATED, &["kube-root-ca.crt"]),
        ("secrets", SECRETS, &[]),
        ("serviceaccounts", SERVICE_ACCOUNTS, &["default"]),
        ("services", 1, &[]),
        ("roles", 1, &[]),
        ("rolebindings", 1, &[]),
        ("deployments", 1, &[]),
    ]
}

/// One scenario: the cluster, a fault proxy in front of it, the estate's working folder.
struct Flaky {
    cluster: Cluster,
    proxy: FaultProxy,
    work: LiveDir,
    ns: String,
    estate: String,
    _kubeconfig: tempfile::TempDir,
}

impl Flaky {
    fn start(prefix: &str, plan: FaultPlan) -> Flaky {
        let cluster = Cluster::start();
        let proxy = FaultProxy::start(cluster.kubeconfig(), plan);
        let kubeconfig = tempfile::tempdir().expect("a folder for the proxy's kubeconfig");
        let path = kubeconfig.path().join("proxy.kubeconfig");
        proxy.write_kubeconfig(&path);
        let estate = unique_name(prefix);
        let work = LiveDir::new(&estate, &path);
        let ns = unique_name(prefix);
        work.write(&estate_config(&ns, &cluster));
        Flaky {
            cluster,
            proxy,
            work,
            ns,
            estate,
            _kubeconfig: kubeconfig,
        }
    }

    /// Runs `step` and prints its time and what the proxy did meanwhile.
    fn step(&self, what: &str, step: impl FnOnce() -> EngineOutput) -> EngineOutput {
        self.proxy.reset_report();
        let started = Instant::now();
        let out = step();
        show(&format!(
            "[flaky] {} {what}: exit {} in {:.1} s; {}",
            self.estate,
            out.code,
            started.elapsed().as_secs_f64(),
            self.proxy.report()
        ));
        out
    }

    /// Apply, which must succeed the first time.
    fn apply(&self, what: &str) {
        let out = self.step(what, || self.work.apply());
        assert!(
            out.success(),
            "apply ({what}) did not converge in one run:\n{out}"
        );
    }

    /// A plan, which must find nothing to change.
    fn plan_empty(&self, what: &str) {
        let out = self.step(what, || self.work.plan_exit());
        assert_eq!(out.code, 0, "the plan ({what}) is not empty:\n{out}");
    }

    /// Destroy, which must succeed the first time and leave none of the estate's objects.
    fn destroy(&self) {
        let out = self.step("destroy", || {
            self.work
                .run(&["destroy", "-auto-approve", "-input=false", "-parallelism=4"])
        });
        assert!(out.success(), "destroy did not converge in one run:\n{out}");
        let selector = format!("tofu-estate={}", self.estate);
        let kinds = expected().iter().map(|(k, ..)| *k).collect::<Vec<_>>().join(",");
        let left = self
            .cluster
            .get_json(&[&kinds, "--all-namespaces", "-l", &selector]);
        assert_eq!(
            left["items"].as_array().map(Vec::len),
            Some(0),
            "destroy left objects of the estate:\n{left}"
        );
    }

    /// The namespace holds exactly the configured objects, each with the estate's label.
    fn exactly_the_configured_objects(&self) {
        for (kind, count, automatic) in expected() {
            let listed = self.cluster.get_json(&[kind, "-n", &self.ns]);
            let objects: Vec<&Value> = listed["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|o| {
                    let name = o["metadata"]["name"].as_str().unwrap_or_default();
                    !automatic.contains(&name)
                })
                .collect();
            let names: Vec<&str> = objects
                .iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap_or_default())
                .collect();
            assert_eq!(objects.len(), count, "{kind} in {}: {names:?}", self.ns);
            for object in &objects {
                assert_eq!(
                    object["metadata"]["labels"]["tofu-estate"], self.estate,
                    "{kind} {} lacks the estate's label",
                    object["metadata"]["name"]
                );
            }
        }
        let generated = self.cluster.get_json(&["configmaps", "-n", &self.ns]);
        let generated = generated["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("gen-"))
            })
            .count();
        assert_eq!(generated, GENERATED, "generate_name ConfigMaps in {}", self.ns);
    }
}

impl Drop for Flaky {
    fn drop(&mut self) {
        // Whatever the test's outcome: nothing left behind on a shared cluster.
        let _ = self.cluster.kubectl(&[
            "delete",
            "namespace",
            &self.ns,
            "--wait=false",
            "--ignore-not-found",
        ]);
    }
}

#[test]
fn twenty_percent_mixed_faults_converge_without_a_rerun() {
    let flaky = Flaky::start(
        "mixed",
        FaultPlan {
            rate: 0.2,
            faults: vec![
                Fault::Throttle,
                Fault::ServerError,
                Fault::ResetBefore,
                Fault::ResetAfter,
                Fault::TimeoutAfter,
            ],
            latency: Duration::from_millis(20),
            ..FaultPlan::none(29)
        },
    );
    flaky.apply("create");
    flaky.exactly_the_configured_objects();
    flaky.plan_empty("after create");
    flaky.destroy();
}

#[test]
fn half_the_generate_name_answers_lost_leave_no_duplicate() {
    let flaky = Flaky::start(
        "lost",
        FaultPlan {
            rate: 0.5,
            faults: vec![Fault::ResetAfter, Fault::TimeoutAfter],
            scope: Scope::GeneratedNames,
            ..FaultPlan::none(2929)
        },
    );
    flaky.apply("create");
    flaky.exactly_the_configured_objects();
    flaky.plan_empty("after create");
    flaky.destroy();
}

#[test]
fn a_server_gone_mid_apply_fails_clearly_and_the_next_apply_converges() {
    // The first generate_name create is forwarded, its answer lost, and the server gone.
    let flaky = Flaky::start(
        "gone",
        FaultPlan {
            down_after_generated: Some(1),
            ..FaultPlan::none(7)
        },
    );
    let started = Instant::now();
    let out = flaky.step("create, server gone", || flaky.work.apply());
    let took = started.elapsed();
    assert!(!out.success(), "the apply succeeded with the server gone:\n{out}");
    assert!(flaky.proxy.is_down(), "the server never went away:\n{out}");
    // Each request retries for at most 20 s; once one found the server unreachable, those after
    // it try once.
    assert!(took < Duration::from_secs(120), "the failing apply took {took:?}");
    let errors = error_summaries(&out);
    assert!(!errors.is_empty(), "no error:\n{out}");
    let stderr = &out.stderr;
    show(&format!(
        "[flaky] {} errors of the apply with the server gone ({took:?}):\n{stderr}",
        errors.len()
    ));
    let mut unique = errors.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), errors.len(), "an error repeated: {errors:#?}");
    let text = out.flat();
    assert!(
        text.contains("may have succeeded") && text.contains("tofu-create-token="),
        "the lost create does not say its outcome is unknown:\n{out}"
    );
    for cause in text.split("Error: ").skip(1) {
        assert!(
            cause.contains("Connection refused") || cause.contains("broke"),
            "an error without its root cause: {cause}"
        );
        assert!(cause.contains("Tried "), "an error without its tries: {cause}");
    }

    flaky.proxy.start_again();
    flaky.apply("create, server back");
    flaky.exactly_the_configured_objects();
    flaky.plan_empty("after the server came back");

    // An object of the estate that no state records (here: forgotten on purpose) is found by a
    // query that leaves out the uids the state records.
    let forgotten = flaky.work.state_values("kubernetes_config_map_v1.generated[1]");
    let forgotten = forgotten["metadata"][0]["name"]
        .as_str()
        .expect("the generated name")
        .to_string();
    let rm = flaky
        .work
        .run(&["state", "rm", "kubernetes_config_map_v1.generated[1]"]);
    assert!(rm.success(), "state rm:\n{rm}");
    let pull = flaky.work.run(&["state", "pull"]);
    assert!(pull.success(), "state pull:\n{pull}");
    fs::write(flaky.work.path().join("state.json"), &pull.stdout).expect("writing state.json");
    fs::write(
        flaky.work.path().join("orphans.tfquery.hcl"),
        orphans_query("kubernetes_config_map_v1", &flaky.ns),
    )
    .expect("writing the query");
    let query = flaky.step("query orphans", || flaky.work.run(&["query", "-no-color"]));
    assert!(query.success(), "query:\n{query}");
    let found: Vec<&str> = query
        .stdout
        .lines()
        .filter(|line| line.starts_with("list.kubernetes_config_map_v1.orphans "))
        .collect();
    assert_eq!(found.len(), 1, "not exactly the orphan: {found:#?}\n{query}");
    assert!(
        found[0].contains(&format!("{}/{forgotten}", flaky.ns)),
        "the orphan is not {forgotten}: {found:#?}"
    );
}

/// The query of the README: the estate's objects of `type_name` in `ns` that the state in
/// `state.json` does not record.
fn orphans_query(type_name: &str, ns: &str) -> String {
    format!(
        r#"locals {{
  state = jsondecode(file("state.json"))
  uids = compact(flatten([
    for r in local.state.resources : [
      for i in r.instances : try(i.attributes.metadata[0].uid, i.attributes.metadata.uid, "")
    ] if r.mode == "managed"
  ]))
}}

list "{type_name}" "orphans" {{
  provider = kubernetes
  config {{
    namespace    = {ns}
    exclude_uids = local.uids
  }}
}}
"#,
        ns = quote(ns)
    )
}

/// Prints `text` as lines of its own on the terminal, past the test harness's capture: the
/// figures are the point of the run.
fn show(text: &str) {
    let _ = std::io::stderr().write_all(format!("\n{text}\n").as_bytes());
}

/// The summaries of an engine run's errors, in order.
fn error_summaries(out: &EngineOutput) -> Vec<String> {
    out.combined()
        .lines()
        .filter_map(|line| {
            let line = line.trim_start_matches(['│', '╷', ' ']);
            line.strip_prefix("Error: ").map(str::to_string)
        })
        .collect()
}
