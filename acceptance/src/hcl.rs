//! Small writers for the configurations the live-provider tests and the plan benchmark give the
//! engine: the `terraform` and `provider "kubernetes"` blocks of an estate, string literals and
//! maps, unique lowercase names so tests sharing one cluster never collide, and the working
//! folder such a configuration is applied in ([`LiveDir`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{Cluster, Engine, EngineOutput, mirror};

/// The `terraform` block declaring provider-live under the local name `kubernetes`, and its
/// provider block for `estate` on the cluster of `kubeconfig`.
pub fn live_provider(estate: &str, kubeconfig: &Path) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    kubernetes = {{\n      source = \"choudoufu/live\"\n    }}\n  }}\n}}\n\n\
         provider \"kubernetes\" {{\n  estate      = {}\n  config_path = {}\n}}\n",
        quote(estate),
        quote(&kubeconfig.to_string_lossy())
    )
}

/// The `terraform` block declaring every published address ([`mirror::PROVIDERS`]) under its
/// local name (`kubernetes`, `kubectl`, `records`), the sources prefixed with `host` (e.g.
/// `localhost:8443/`), or short (`choudoufu/live`) without.
pub fn required_providers(host: &str) -> String {
    let lines: String = mirror::PROVIDERS
        .iter()
        .map(|a| {
            format!(
                "    {} = {{ source = \"{host}{}/{}\" }}\n",
                a.local_name,
                mirror::NAMESPACE,
                a.type_name
            )
        })
        .collect();
    format!("terraform {{\n  required_providers {{\n{lines}  }}\n}}\n")
}

/// A resource's `metadata` block naming `name` in namespace `ns`.
pub fn metadata(name: &str, ns: &str) -> String {
    format!(
        "  metadata {{\n    name      = {}\n    namespace = {}\n  }}\n",
        quote(name),
        quote(ns)
    )
}

/// A `kubernetes_manifest` named `crd` for the namespaced CustomResourceDefinition
/// `gizmos.<group>` (kind `Gizmo`, served and stored as `v1`) whose objects' `spec` has
/// `properties`, the HCL of its OpenAPI properties.
pub fn gizmo_crd(group: &str, properties: &str) -> String {
    format!(
        r#"resource "kubernetes_manifest" "crd" {{
  manifest = {{
    apiVersion = "apiextensions.k8s.io/v1"
    kind       = "CustomResourceDefinition"
    metadata   = {{ name = "gizmos.{group}" }}
    spec = {{
      group = "{group}"
      names = {{ plural = "gizmos", singular = "gizmo", kind = "Gizmo", listKind = "GizmoList" }}
      scope = "Namespaced"
      versions = [{{
        name    = "v1"
        served  = true
        storage = true
        schema = {{
          openAPIV3Schema = {{
            type = "object"
            properties = {{
              spec = {{ type = "object", properties = {{ {properties} }} }}
            }}
          }}
        }}
      }}]
    }}
  }}
}}
"#
    )
}

/// A `kubernetes_manifest` named `gizmo` for the Gizmo `g` in `ns` of [`gizmo_crd`]'s `group`,
/// with `spec`, the HCL of its object.
pub fn gizmo(group: &str, ns: &str, spec: &str) -> String {
    format!(
        r#"resource "kubernetes_manifest" "gizmo" {{
  manifest = {{
    apiVersion = "{group}/v1"
    kind       = "Gizmo"
    metadata   = {{ name = "g", namespace = {ns} }}
    spec       = {spec}
  }}
}}
"#,
        ns = quote(ns),
    )
}

/// A string literal, escaped for HCL (`${` and `%{` would start a template).
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.replace("${", "$${").replace("%{", "%%{") + "\""
}

/// A map of strings as an HCL object expression: `{ "k" = "v", ... }`.
pub fn string_map(entries: &[(&str, &str)]) -> String {
    let items: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{} = {}", quote(k), quote(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// A name no other test run on the same cluster uses: `prefix-<time and counter in base 36>`,
/// valid as a namespace or object name (lowercase, digits, '-').
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = u128::from(COUNTER.fetch_add(1, Ordering::Relaxed));
    // Distinct within a process through the counter, across processes through time and pid.
    let seed = (nanos / 1000) * 31 + u128::from(std::process::id()) * 1_000_003 + n * 7919;
    format!("{prefix}-{}", base36(seed % 36u128.pow(7)))
}

fn base36(mut n: u128) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("base-36 digits are ASCII")
}

/// A temporary working folder holding one estate's configuration (`main.tf`: the provider
/// block of [`live_provider`] plus a body), and the engine run in it.
pub struct LiveDir {
    dir: tempfile::TempDir,
    engine: Engine,
    provider: String,
}

impl LiveDir {
    /// A new folder for `estate` on the cluster of `kubeconfig`; `init` has run in it.
    pub fn new(estate: &str, kubeconfig: &Path) -> LiveDir {
        LiveDir::with_providers(live_provider(estate, kubeconfig))
    }

    /// [`LiveDir::new`] whose provider block also holds `settings` (HCL attribute lines).
    pub fn with_settings(estate: &str, kubeconfig: &Path, settings: &str) -> LiveDir {
        let provider = live_provider(estate, kubeconfig);
        let block = provider.trim_end().strip_suffix('}').expect("a provider block");
        LiveDir::with_providers(format!("{block}{settings}\n}}\n"))
    }

    /// A folder whose configuration declares provider-live as the kubectl providers' users do:
    /// `kubectl = { source = "choudoufu/kubectl" }`, its `provider "kubectl"` block naming the
    /// estate (plus `settings`, HCL attribute lines), so `kubectl_*` types need no `provider`
    /// argument.
    pub fn as_kubectl(estate: &str, kubeconfig: &Path, settings: &str) -> LiveDir {
        let live = live_provider(estate, kubeconfig);
        let block = live.trim_end().strip_suffix('}').expect("a provider block");
        LiveDir::with_providers(
            format!("{block}{settings}\n}}\n")
                .replace(
                    "kubernetes = {\n      source = \"choudoufu/live\"",
                    "kubectl = {\n      source = \"choudoufu/kubectl\"",
                )
                .replace("provider \"kubernetes\"", "provider \"kubectl\""),
        )
    }

    /// A folder declaring both addresses of provider-live, `kubernetes` (choudoufu/live) and
    /// `kubectl` (choudoufu/kubectl), each with a provider block for `estate`.
    pub fn live_and_kubectl(estate: &str, kubeconfig: &Path) -> LiveDir {
        let live = live_provider(estate, kubeconfig);
        let kubectl_block = live[live.find("provider \"kubernetes\"").expect("a provider block")..]
            .replace("provider \"kubernetes\"", "provider \"kubectl\"");
        let both = live.replacen(
            "  required_providers {\n",
            "  required_providers {\n    kubectl = {\n      source = \"choudoufu/kubectl\"\n    }\n",
            1,
        );
        LiveDir::with_providers(format!("{both}\n{kubectl_block}"))
    }

    /// [`LiveDir::new`] with choudoufu/records beside provider-live (local name `records`, the
    /// same estate and cluster).
    pub fn with_records(estate: &str, kubeconfig: &Path) -> LiveDir {
        let live = live_provider(estate, kubeconfig);
        let both = live.replacen(
            "  required_providers {\n",
            "  required_providers {\n    records = {\n      source = \"choudoufu/records\"\n    }\n",
            1,
        );
        let records = format!(
            "\nprovider \"records\" {{\n  estate      = {}\n  config_path = {}\n}}\n",
            quote(estate),
            quote(&kubeconfig.to_string_lossy())
        );
        LiveDir::with_providers(both + &records)
    }

    /// A new folder whose configuration starts with `provider` (the `terraform` block and the
    /// provider blocks); `init` has run in it.
    fn with_providers(provider: String) -> LiveDir {
        let dir = tempfile::tempdir().expect("a temporary working folder");
        let engine = Engine::new(dir.path());
        LiveDir::init_in(dir, engine, provider)
    }

    /// A folder `dir` whose configuration starts with `provider`, `engine` run in it; `init` has
    /// run.
    pub(crate) fn init_in(dir: tempfile::TempDir, engine: Engine, provider: String) -> LiveDir {
        let live = LiveDir {
            engine,
            provider,
            dir,
        };
        live.write("");
        let init = live.engine.init();
        assert!(init.success(), "init failed:\n{init}");
        live
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Replaces `main.tf` with the provider block followed by `body`.
    pub fn write(&self, body: &str) {
        let path = self.dir.path().join("main.tf");
        fs::write(&path, format!("{}\n{body}", self.provider))
            .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// Runs the engine with `args` (e.g. `["plan", "-detailed-exitcode"]`).
    pub fn run(&self, args: &[&str]) -> EngineOutput {
        self.engine.run(args)
    }

    /// `apply -auto-approve` with a modest parallelism, whatever its outcome.
    pub fn apply(&self) -> EngineOutput {
        self.engine
            .run(&["apply", "-auto-approve", "-input=false", "-parallelism=4"])
    }

    /// [`LiveDir::apply`], which must succeed; `what` says what it was for.
    pub fn apply_ok(&self, what: &str) -> EngineOutput {
        let out = self.apply();
        assert!(out.success(), "apply ({what}) failed:\n{out}");
        out
    }

    /// `plan -detailed-exitcode`: exit 0 when nothing would change, 2 when something would.
    pub fn plan_exit(&self) -> EngineOutput {
        self.engine
            .run(&["plan", "-input=false", "-detailed-exitcode", "-parallelism=4"])
    }

    /// The state's attribute values of the resource instance at `address` in the root module
    /// (e.g. `kubernetes_config_map_v1.a`, `kubernetes_config_map_v1.b[0]`); `Null` when absent.
    pub fn state_values(&self, address: &str) -> serde_json::Value {
        self.state_instance(address)["attributes"].take()
    }

    /// The resource instance at `address` as the state stores it (`attributes`, `identity`,
    /// `status` "tainted", ...); `Null` when absent.
    pub fn state_instance(&self, address: &str) -> serde_json::Value {
        self.state_instances()
            .remove(address)
            .map(|i| i.stored)
            .unwrap_or_default()
    }

    /// Every resource instance in the state, by address (`module.m.kubernetes_config_map_v1.a`,
    /// `kubernetes_secret_v1.b[0]`, `data.kubernetes_namespace_v1.c`). Read with `state pull`,
    /// which prints the state without starting a provider: 0.07 s of CPU against 0.26 s for
    /// `show -json`.
    pub fn state_instances(&self) -> BTreeMap<String, StateInstance> {
        state_instances(&self.engine)
    }
}

/// [`LiveDir::state_instances`] of the working folder `engine` runs in.
pub fn state_instances(engine: &Engine) -> BTreeMap<String, StateInstance> {
    let pull = engine.run(&["state", "pull"]);
    assert!(pull.success(), "state pull failed:\n{pull}");
    let state: serde_json::Value = serde_json::from_str(&pull.stdout)
        .unwrap_or_else(|e| panic!("state pull printed no JSON ({e}):\n{pull}"));
    let mut out = BTreeMap::new();
    for resource in state["resources"].as_array().into_iter().flatten() {
        let text = |key: &str| resource[key].as_str().unwrap_or_default().to_string();
        let module = resource["module"]
            .as_str()
            .map(|m| format!("{m}."))
            .unwrap_or_default();
        let data = if resource["mode"] == "data" { "data." } else { "" };
        let base = format!("{module}{data}{}.{}", text("type"), text("name"));
        for instance in resource["instances"].as_array().into_iter().flatten() {
            let key = match &instance["index_key"] {
                serde_json::Value::Null => String::new(),
                key => format!("[{key}]"),
            };
            out.insert(
                format!("{base}{key}"),
                StateInstance {
                    managed: resource["mode"] == "managed",
                    type_name: text("type"),
                    stored: instance.clone(),
                },
            );
        }
    }
    out
}

/// One resource instance of a state (see [`LiveDir::state_instances`]).
pub struct StateInstance {
    /// A managed resource, not a data source.
    pub managed: bool,
    pub type_name: String,
    /// The instance as the state stores it: `attributes`, `identity`, `status`, ...
    pub stored: serde_json::Value,
}

/// A namespace created for one test and deleted (without waiting) when dropped, also when the
/// test fails, so runs against a real cluster leave nothing behind.
pub struct ScratchNamespace<'a> {
    cluster: &'a Cluster,
    pub name: String,
}

impl<'a> ScratchNamespace<'a> {
    /// Creates a namespace named `<prefix>-<unique suffix>`.
    pub fn create(cluster: &'a Cluster, prefix: &str) -> ScratchNamespace<'a> {
        let name = unique_name(prefix);
        let out = cluster.kubectl(&["create", "namespace", &name]);
        assert!(out.success(), "kubectl create namespace {name}:\n{out}");
        ScratchNamespace { cluster, name }
    }
}

impl Drop for ScratchNamespace<'_> {
    fn drop(&mut self) {
        // Best effort: a failure here must not hide the test's own outcome.
        let _ = self.cluster.kubectl(&[
            "delete",
            "namespace",
            &self.name,
            "--wait=false",
            "--ignore-not-found",
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_and_templates() {
        assert_eq!(quote(r#"a"b\c ${x} %{y}"#), r#""a\"b\\c $${x} %%{y}""#);
        assert_eq!(string_map(&[("k", "v")]), r#"{ "k" = "v" }"#);
    }

    #[test]
    fn unique_names_are_valid_and_distinct() {
        let a = unique_name("live");
        let b = unique_name("live");
        assert_ne!(a, b);
        assert!(a.len() <= 12, "{a}");
        assert!(
            a.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{a}"
        );
    }
}
