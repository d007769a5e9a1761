//! Fixtures for the records provider's acceptance tests: a producer estate that records outputs
//! of every kind, a reader estate that reads them with `terraform_estate_outputs`, and the
//! cluster-side looks the tests compare (records Secrets, snapshots).
//! Every name is unique per test, so tests can share one real cluster.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;

use serde_json::Value;

use crate::{Cluster, Engine};

/// The estate label every object of an estate carries, its recorded Secrets too.
pub const ESTATE_LABEL: &str = "tofu-estate";

/// The nested output, as the producer writes it in HCL and as `jsonencode` prints it.
pub const NESTED_HCL: &str = "{ a = { b = [1, 2] }, c = true }";
pub const NESTED_JSON: &str = r#"{"a":{"b":[1,2]},"c":true}"#;
/// An integer beyond 64 bits: it must keep every digit.
pub const BIG: &str = "123456789012345678901234567890";

/// The outputs the producer records: `values` first, then the one in `sensitive_values`.
pub const PLAIN_OUTPUTS: [&str; 6] = ["gateway_host", "namespace", "nested", "replicas", "ratio", "big"];
pub const SENSITIVE_OUTPUT: &str = "api_token";

/// A fresh lowercase hex tag (random per call), for estate and namespace names.
pub fn unique_tag() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    hasher.write_u32(std::process::id());
    format!("{:08x}", hasher.finish() as u32)
}

/// The namespace an estate's outputs are recorded in.
pub fn records_namespace(estate: &str) -> String {
    format!("tofu-records-{estate}")
}

/// The Secret name an output is recorded under (the provider's documented rule).
pub fn secret_name(output: &str) -> String {
    format!("output-{}", output.replace('_', "-"))
}

/// The `terraform` block: the records provider, and the live one as `kubernetes` when asked.
fn terraform_block(with_live: bool) -> String {
    let live = if with_live {
        "    kubernetes = { source = \"choudoufu/live\" }\n"
    } else {
        ""
    };
    format!(
        "terraform {{\n  required_providers {{\n{live}    records = {{ source = \"choudoufu/records\" }}\n  }}\n}}\n"
    )
}

/// A configuration of the records provider alone, for `estate`, with `body` after it.
pub fn records_only(estate: &str, body: &str) -> String {
    format!(
        "{}provider \"records\" {{\n  estate = \"{estate}\"\n}}\n\n{body}",
        terraform_block(false)
    )
}

/// A `records_outputs` resource recording string `values` (name, value), granting `readers`
/// (HCL entries such as `{ kind = "User", name = "restricted" }`), with `extra` lines inside.
pub fn outputs_resource(values: &[(&str, &str)], readers: &[String], extra: &str) -> String {
    let values: String = values
        .iter()
        .map(|(name, value)| format!("    {name} = \"{value}\"\n"))
        .collect();
    format!(
        "resource \"records_outputs\" \"this\" {{\n  values = {{\n{values}  }}\n  readers = [{}]\n{extra}}}\n",
        readers.join(", ")
    )
}

/// The producer estate: records every kind of output, and grants `readers` (User names).
pub struct Producer<'a> {
    pub estate: &'a str,
    pub gateway_host: &'a str,
    pub token: &'a str,
    pub readers: &'a [&'a str],
}

impl Producer<'_> {
    pub fn main_tf(&self) -> String {
        let readers: Vec<String> = self
            .readers
            .iter()
            .map(|user| format!("{{ kind = \"User\", name = \"{user}\" }}"))
            .collect();
        format!(
            "{terraform}\
             provider \"records\" {{\n  estate = \"{estate}\"\n}}\n\n\
             resource \"records_outputs\" \"this\" {{\n  \
               values = {{\n    \
                 gateway_host = \"{host}\"\n    \
                 namespace    = \"platform\"\n    \
                 nested       = {NESTED_HCL}\n    \
                 replicas     = 3\n    \
                 ratio        = 1.5\n    \
                 big          = {BIG}\n  \
               }}\n  \
               sensitive_values = {{\n    {SENSITIVE_OUTPUT} = \"{token}\"\n  }}\n  \
               readers = [{readers}]\n\
             }}\n",
            terraform = terraform_block(false),
            estate = self.estate,
            host = self.gateway_host,
            token = self.token,
            readers = readers.join(", "),
        )
    }
}

/// The reader estate: reads the producer's outputs, builds ConfigMap `app-config` in
/// `namespace` from them, and shows each as a root output.
pub struct Reader<'a> {
    pub estate: &'a str,
    pub producer: &'a str,
    pub namespace: &'a str,
    /// The outputs to read by name; `None` reads all (one list).
    pub names: Option<&'a [&'a str]>,
}

impl Reader<'_> {
    pub fn main_tf(&self) -> String {
        let names = match self.names {
            Some(names) => {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                format!("  names    = [{}]\n", quoted.join(", "))
            }
            None => String::new(),
        };
        let outputs: String = PLAIN_OUTPUTS
            .iter()
            .map(|name| format!("output \"{name}\" {{\n  value = local.v.{name}\n}}\n"))
            .collect();
        format!(
            "{terraform}\
             provider \"kubernetes\" {{\n  estate = \"{estate}\"\n}}\n\
             provider \"records\" {{\n  estate = \"{estate}\"\n}}\n\n\
             data \"terraform_estate_outputs\" \"producer\" {{\n  \
               provider = records\n  \
               estate   = \"{producer}\"\n{names}}}\n\n\
             locals {{\n  v = data.terraform_estate_outputs.producer.values\n}}\n\n\
             resource \"kubernetes_config_map\" \"app\" {{\n  \
               metadata {{\n    name      = \"app-config\"\n    namespace = \"{namespace}\"\n  }}\n  \
               data = {{\n    \
                 gateway   = local.v.gateway_host\n    \
                 namespace = local.v.namespace\n    \
                 nested    = jsonencode(local.v.nested)\n    \
                 replicas  = tostring(local.v.replicas)\n    \
                 ratio     = tostring(local.v.ratio)\n    \
                 big       = tostring(local.v.big)\n    \
                 token     = data.terraform_estate_outputs.producer.sensitive_values.{SENSITIVE_OUTPUT}\n  \
               }}\n\
             }}\n\n\
             {outputs}\
             output \"{SENSITIVE_OUTPUT}\" {{\n  \
               value     = data.terraform_estate_outputs.producer.sensitive_values.{SENSITIVE_OUTPUT}\n  \
               sensitive = true\n\
             }}\n",
            terraform = terraform_block(true),
            estate = self.estate,
            producer = self.producer,
            namespace = self.namespace,
        )
    }
}

/// One estate's working directory and the engine in it.
pub struct Workdir {
    dir: tempfile::TempDir,
}

impl Workdir {
    pub fn new() -> Workdir {
        Workdir {
            dir: tempfile::tempdir().expect("a temporary working directory"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Replaces the configuration with `main_tf`.
    pub fn write(&self, main_tf: &str) {
        std::fs::write(self.dir.path().join("main.tf"), main_tf).expect("write main.tf");
    }

    /// The engine here, connecting as the identity of `kubeconfig`.
    pub fn engine(&self, kubeconfig: &Path) -> Engine {
        Engine::new(self.dir.path()).env("KUBE_CONFIG_PATH", &kubeconfig.to_string_lossy())
    }
}

impl Default for Workdir {
    fn default() -> Workdir {
        Workdir::new()
    }
}

pub use crate::engine::flat;

/// The output Secrets `estate` recorded (by the estate and output labels).
pub fn output_secrets(cluster: &Cluster, estate: &str) -> Vec<Value> {
    let selector = format!("{ESTATE_LABEL}={estate},tofu-records/output=true");
    let list = cluster.get_json(&["secrets", "-n", &records_namespace(estate), "-l", &selector]);
    list["items"].as_array().cloned().unwrap_or_default()
}

/// `kind/name` -> resourceVersion of the Secrets, Roles and RoleBindings in `namespace`.
pub fn snapshot(cluster: &Cluster, namespace: &str) -> BTreeMap<String, String> {
    let list = cluster.get_json(&["secrets,roles,rolebindings", "-n", namespace]);
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            let key = format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            (
                key,
                o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// A Secret's annotation `key`.
pub fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["annotations"][key].as_str()
}

/// Objects a test created with kubectl, or that its estates left behind when it failed
/// midway; deleted (without waiting) when the guard is dropped.
pub struct Cleanup<'a> {
    cluster: &'a Cluster,
    /// `(resource, name)`, cluster-scoped: namespaces take their content with them.
    objects: Vec<(String, String)>,
}

impl<'a> Cleanup<'a> {
    pub fn new(cluster: &'a Cluster) -> Cleanup<'a> {
        Cleanup {
            cluster,
            objects: Vec::new(),
        }
    }

    pub fn add(&mut self, resource: &str, name: &str) {
        self.objects.push((resource.to_string(), name.to_string()));
    }
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for (resource, name) in self.objects.iter().rev() {
            // Best effort: a failed cleanup must not hide the test's own failure.
            let _ = self
                .cluster
                .kubectl(&["delete", resource, name, "--ignore-not-found", "--wait=false"]);
        }
    }
}

/// Creates the objects of a YAML document with kubectl as the admin (sent as JSON, which
/// every server accepts).
pub fn kubectl_create(cluster: &Cluster, yaml: &str) {
    let file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("a temporary manifest file");
    std::fs::write(file.path(), yaml).expect("write the manifest");
    cluster.kubectl_ok(&["create", "-f", &file.path().to_string_lossy()]);
}
