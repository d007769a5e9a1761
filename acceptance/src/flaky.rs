//! Issue 29's estate behind the fault proxy (the `fault-proxy` crate): 37 objects (a Namespace,
//! ConfigMaps, Secrets, ServiceAccounts, a Service, a Role and RoleBinding, a Deployment, and
//! ConfigMaps named by the server with `generate_name`) and the estate's recorded outputs (four
//! output Secrets and a reader's grant, through choudoufu/records), applied, planned and
//! destroyed through the proxy, with the checks that the cluster then holds exactly what is
//! configured. Shared by `tests/flaky_api.rs` and the `bench_flaky` measurement.

use std::io::Write as _;
use std::time::Instant;

use serde_json::Value;

use crate::hcl::{LiveDir, quote, unique_name};
use crate::{Cluster, EngineOutput};
use fault_proxy::{FaultPlan, FaultProxy};

/// ConfigMaps, Secrets and ServiceAccounts of the estate (besides the rest).
pub const CONFIG_MAPS: usize = 20;
pub const SECRETS: usize = 8;
pub const SERVICE_ACCOUNTS: usize = 4;
/// The `generate_name` ConfigMaps: as in issue 29's estate, and more where their lost answers are
/// the point.
pub const GENERATED: usize = 2;
pub const MANY_GENERATED: usize = 8;

/// Output Secrets the estate records, and the reader its grant names.
pub const OUTPUTS: usize = 4;
const READER: &str = "app-planner";

/// The estate: namespace `ns` and everything in it, with `generated` ConfigMaps named by the
/// server, and its recorded outputs (for [`LiveDir::with_records`]). Each `version` changes the
/// ConfigMaps' data, the Secrets' and an output's value.
pub fn estate_config(ns: &str, generated: usize, version: u32) -> String {
    format!(
        r#"resource "records_outputs" "this" {{
  values           = {{ namespace = local.ns, config_maps = {CONFIG_MAPS}, version = {version} }}
  sensitive_values = {{ token = "s3cret" }}
  readers          = [{{ kind = "User", name = "{READER}" }}]
}}

resource "kubernetes_namespace_v1" "ns" {{
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
  data = {{ index = count.index, version = {version} }}
}}

resource "kubernetes_secret_v1" "secret" {{
  count = {SECRETS}
  metadata {{
    name      = "secret-${{count.index}}"
    namespace = local.ns
  }}
  data = {{ password = "p-${{count.index}}-{version}" }}
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
  spec {{
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
  count = {generated}
  metadata {{
    generate_name = "gen-"
    namespace     = local.ns
  }}
  data = {{ index = count.index }}
}}
"#,
        ns = quote(ns),
    )
}

/// Kinds the estate writes, the count of each it configures (with `generated` ConfigMaps named
/// by the server), and the objects Kubernetes puts in every namespace by itself.
fn expected(generated: usize) -> Vec<(&'static str, usize, &'static [&'static str])> {
    vec![
        ("configmaps", CONFIG_MAPS + generated, &["kube-root-ca.crt"]),
        ("secrets", SECRETS, &[]),
        ("serviceaccounts", SERVICE_ACCOUNTS, &["default"]),
        ("services", 1, &[]),
        ("roles", 1, &[]),
        ("rolebindings", 1, &[]),
        ("deployments", 1, &[]),
    ]
}

/// One scenario: the cluster, a fault proxy in front of it, the estate's working folder. Its
/// namespace is deleted (without waiting) when it is dropped.
pub struct Flaky<'a> {
    pub cluster: &'a Cluster,
    pub proxy: FaultProxy,
    pub work: LiveDir,
    pub ns: String,
    pub estate: String,
    generated: usize,
    _kubeconfig: tempfile::TempDir,
}

impl<'a> Flaky<'a> {
    /// The estate with `generated` ConfigMaps named by the server, behind a proxy with `plan`.
    pub fn start(cluster: &'a Cluster, prefix: &str, generated: usize, plan: FaultPlan) -> Flaky<'a> {
        let proxy = FaultProxy::start(cluster.kubeconfig(), plan);
        let kubeconfig = tempfile::tempdir().expect("a folder for the proxy's kubeconfig");
        let path = kubeconfig.path().join("proxy.kubeconfig");
        proxy.write_kubeconfig(&path);
        let estate = unique_name(prefix);
        let work = LiveDir::with_records(&estate, &path);
        let ns = unique_name(prefix);
        work.write(&estate_config(&ns, generated, 1));
        Flaky {
            cluster,
            proxy,
            work,
            ns,
            estate,
            generated,
            _kubeconfig: kubeconfig,
        }
    }

    /// Runs `step` and prints its time and what the proxy did meanwhile.
    pub fn step(&self, what: &str, step: impl FnOnce() -> EngineOutput) -> EngineOutput {
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

    /// Rewrites the configuration as of `version`: every ConfigMap, Secret and an output change.
    pub fn change_to(&self, version: u32) {
        self.work.write(&estate_config(&self.ns, self.generated, version));
    }

    /// `apply`, whatever its outcome.
    pub fn apply(&self, what: &str) -> EngineOutput {
        self.step(what, || self.work.apply())
    }

    /// `plan -detailed-exitcode` (exit 0: nothing to change).
    pub fn plan(&self, what: &str) -> EngineOutput {
        self.step(what, || self.work.plan_exit())
    }

    /// `destroy`, whatever its outcome.
    pub fn destroy(&self) -> EngineOutput {
        self.step("destroy", || {
            self.work
                .run(&["destroy", "-auto-approve", "-input=false", "-parallelism=4"])
        })
    }

    /// The objects of the estate left anywhere in the cluster (after a destroy: none but the
    /// reader's grant, which a records destroy keeps by design).
    pub fn left(&self) -> Vec<String> {
        let selector = format!("tofu-estate={}", self.estate);
        let kinds = expected(0).iter().map(|(k, ..)| *k).collect::<Vec<_>>().join(",");
        let left = self
            .cluster
            .get_json(&[&kinds, "--all-namespaces", "-l", &selector]);
        let records = self.records_namespace();
        left["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| {
                let grant = matches!(o["kind"].as_str(), Some("Role" | "RoleBinding"))
                    && o["metadata"]["namespace"] == records.as_str();
                !grant
            })
            .map(|o| {
                format!(
                    "{} {}/{}",
                    o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]
                )
            })
            .collect()
    }

    /// Where the estate's outputs are recorded.
    fn records_namespace(&self) -> String {
        format!("tofu-records-{}", self.estate)
    }

    /// How many `generate_name` ConfigMaps beyond the configured ones the namespace holds.
    pub fn duplicates(&self) -> usize {
        let listed = self.cluster.get_json(&["configmaps", "-n", &self.ns]);
        let generated = names(&listed)
            .into_iter()
            .filter(|n| n.starts_with("gen-"))
            .count();
        generated.saturating_sub(self.generated)
    }

    /// Whether the namespace holds exactly the configured objects, each with the estate's
    /// label; else what differs.
    pub fn exactly_the_configured_objects(&self) -> Result<(), String> {
        for (kind, count, automatic) in expected(self.generated) {
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
            if objects.len() != count {
                return Err(format!("{count} {kind} configured, found {names:?}"));
            }
            if let Some(unlabelled) = objects
                .iter()
                .find(|o| o["metadata"]["labels"]["tofu-estate"] != self.estate.as_str())
            {
                return Err(format!(
                    "{kind} {} lacks the estate's label",
                    unlabelled["metadata"]["name"]
                ));
            }
        }
        if let n @ 1.. = self.duplicates() {
            return Err(format!("{n} generate_name ConfigMaps too many"));
        }
        // The recorded outputs: a Secret each and the estate's head, and one grant.
        let records = self.records_namespace();
        for (kind, count) in [("secrets", OUTPUTS + 1), ("roles", 1), ("rolebindings", 1)] {
            let selector = format!("tofu-estate={}", self.estate);
            let found = names(&self.cluster.get_json(&[kind, "-n", &records, "-l", &selector]));
            if found.len() != count {
                return Err(format!("{count} recorded {kind} configured, found {found:?}"));
            }
        }
        Ok(())
    }
}

impl Drop for Flaky<'_> {
    fn drop(&mut self) {
        // Whatever the test's outcome: nothing left behind on a shared cluster.
        let _ = self.cluster.kubectl(&[
            "delete",
            "namespace",
            &self.ns,
            &self.records_namespace(),
            "--wait=false",
            "--ignore-not-found",
        ]);
    }
}

/// The names of the objects of a `kubectl get -o json` list.
fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

/// Prints `text` as lines of its own on the terminal, past the test harness's capture: the
/// figures are the point of the run.
pub fn show(text: &str) {
    let _ = std::io::stderr().write_all(format!("\n{text}\n").as_bytes());
}
