//! choudoufu/live's provider-defined functions and ephemeral resources with the real engine.
//!
//! - `manifest_decode`, `manifest_decode_multi` and `manifest_encode` called in `locals`, their
//!   results asserted through outputs: the YAML's types kept, a round trip through text giving
//!   the same value, several documents, and bad YAML or a non-manifest refused with an error
//!   that names the parameter, the document and the line.
//! - An ephemeral `kubernetes_token_request_v1` token authenticating a second, aliased provider
//!   that creates a ConfigMap in the same run; the token reaches neither the state nor a saved
//!   plan (its `show -json`, its raw bytes, nor any file inside it).
//! - An ephemeral `kubernetes_certificate_signing_request_v1`: the request created, approved,
//!   signed by the cluster's signer for API clients (the controller manager's), its
//!   certificate handed to the configuration, and the request deleted again.

use std::io::Read as _;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use serde_json::{Value, json};

/// The root outputs of the state in `dir` (`output -json`), by name.
fn outputs(dir: &LiveDir) -> Value {
    let out = dir.run(&["output", "-json"]);
    assert!(out.success(), "output -json failed:\n{out}");
    let all: Value = serde_json::from_str(&out.stdout).expect("output -json prints JSON");
    let mut values = serde_json::Map::new();
    for (name, output) in all.as_object().into_iter().flatten() {
        values.insert(name.clone(), output["value"].clone());
    }
    Value::Object(values)
}

const FUNCTIONS: &str = r#"
locals {
  config_map = provider::kubernetes::manifest_decode(<<-EOT
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: settings
      labels:
        app: web
    data:
      port: "8080"
    replicas: 3
    ratio: 0.5
    enabled: true
    ports:
    - 80
    - name: https
    EOT
  )
  several = provider::kubernetes::manifest_decode_multi(<<-EOT
    ---
    apiVersion: v1
    kind: Namespace
    metadata:
      name: one
    ---
    ---
    apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: two
      namespace: one
    EOT
  )
  encoded       = provider::kubernetes::manifest_encode(local.config_map)
  encoded_multi = provider::kubernetes::manifest_encode(local.several)
}

output "config_map" {
  value = local.config_map
}

output "replicas_plus_one" {
  value = local.config_map.replicas + 1
}

output "encoded" {
  value = local.encoded
}

output "round_trip_equal" {
  value = provider::kubernetes::manifest_decode(local.encoded) == local.config_map
}

output "kinds" {
  value = [for m in local.several : m.kind]
}

output "encoded_multi" {
  value = local.encoded_multi
}

output "multi_round_trip_equal" {
  value = provider::kubernetes::manifest_decode_multi(local.encoded_multi) == local.several
}
"#;

#[test]
fn functions_decode_encode_and_name_bad_yaml() {
    let cluster = Cluster::start();
    let dir = LiveDir::new("functions", cluster.kubeconfig());
    dir.write(FUNCTIONS);
    dir.apply_ok("the functions");
    let out = outputs(&dir);

    // The YAML's own types: a quoted number stays a string, numbers and bools stay so, a
    // sequence of mixed items is a tuple.
    let config_map = &out["config_map"];
    assert_eq!(config_map["data"]["port"], json!("8080"));
    assert_eq!(config_map["replicas"], json!(3));
    assert_eq!(config_map["ratio"], json!(0.5));
    assert_eq!(config_map["enabled"], json!(true));
    assert_eq!(config_map["ports"], json!([80, {"name": "https"}]));
    assert_eq!(config_map["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(out["replicas_plus_one"], json!(4));

    let encoded = out["encoded"].as_str().expect("encoded text");
    assert!(encoded.starts_with("apiVersion: v1\n"), "{encoded}");
    assert!(encoded.contains("port: '8080'"), "{encoded}");
    assert_eq!(out["round_trip_equal"], json!(true));

    // The empty document is skipped; the encoded text has one document per manifest.
    assert_eq!(out["kinds"], json!(["Namespace", "ServiceAccount"]));
    let encoded_multi = out["encoded_multi"].as_str().expect("encoded text");
    assert_eq!(encoded_multi.matches("---\n").count(), 2, "{encoded_multi}");
    assert_eq!(out["multi_round_trip_equal"], json!(true));

    // An unchanged configuration plans nothing.
    let plan = dir.plan_exit();
    assert_eq!(plan.code, 0, "a second plan is empty:\n{plan}");

    // Bad YAML: an error for the parameter, naming the document and the line.
    dir.write(
        r#"
output "bad" {
  value = provider::kubernetes::manifest_decode_multi("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: [unclosed\n")
}
"#,
    );
    let bad = dir.run(&["plan", "-input=false"]);
    assert!(!bad.success(), "bad YAML must fail:\n{bad}");
    let text = bad.flat();
    assert!(
        text.contains("Invalid value for \"manifest\" parameter")
            && text.contains("invalid YAML in document 2")
            && text.contains("line 7"),
        "{bad}"
    );

    // A document that is no Kubernetes manifest, as hashicorp's functions refuse it.
    dir.write(
        r#"
output "bad" {
  value = provider::kubernetes::manifest_decode("apiVersion: v1\nmetadata:\n  name: a\n")
}
"#,
    );
    let not_manifest = dir.run(&["plan", "-input=false"]);
    assert!(
        !not_manifest.success(),
        "a non-manifest must fail:\n{not_manifest}"
    );
    assert!(
        not_manifest
            .flat()
            .contains("document 1 is not a Kubernetes manifest: missing field \"kind\""),
        "{not_manifest}"
    );
}

/// The API server URL and CA bundle (PEM) of the admin kubeconfig.
fn server_and_ca(cluster: &Cluster) -> (String, String) {
    let out = cluster.kubectl_ok(&["config", "view", "--raw", "--minify", "--flatten", "-o", "json"]);
    let config: Value = serde_json::from_str(&out.stdout).expect("kubectl config view prints JSON");
    let cluster_entry = &config["clusters"][0]["cluster"];
    let server = cluster_entry["server"]
        .as_str()
        .expect("a server URL")
        .to_string();
    let ca = cluster_entry["certificate-authority-data"]
        .as_str()
        .expect("the CA, flattened into the kubeconfig");
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD
        .decode(ca)
        .expect("base64 CA data");
    (server, String::from_utf8(ca).expect("a PEM CA bundle"))
}

/// Every file in a saved plan (a zip archive), decompressed, as one text.
fn plan_contents(plan: &[u8]) -> String {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(plan)).expect("a plan file is a zip archive");
    let mut all = String::new();
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).expect("a plan file entry");
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).expect("read a plan file entry");
        all.push_str(&String::from_utf8_lossy(&bytes));
    }
    all
}

#[test]
fn an_ephemeral_token_configures_a_second_provider_and_is_never_stored() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "eph-token");
    let account = "writer";
    cluster.kubectl_ok(&["create", "serviceaccount", account, "-n", &ns.name]);
    cluster.kubectl_ok(&[
        "create",
        "role",
        "config-map-writer",
        "--verb=get,list,watch,create,update,patch,delete",
        "--resource=configmaps",
        "-n",
        &ns.name,
    ]);
    // Every token of this server starts with the same JWT header: the string looked for in
    // the state and the plan.
    let sample = cluster.kubectl_ok(&["create", "token", account, "-n", &ns.name]);
    let header = sample
        .stdout
        .trim()
        .split('.')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(header.len() > 10, "a JWT-shaped token: {}", sample.stdout);

    let (server, ca) = server_and_ca(&cluster);
    let dir = LiveDir::new("eph-token", cluster.kubeconfig());
    dir.write(&format!(
        r#"
ephemeral "kubernetes_token_request_v1" "writer" {{
  metadata {{
    name      = "{account}"
    namespace = {ns}
  }}
  spec {{
    expiration_seconds = 600
  }}
}}

provider "kubernetes" {{
  alias                  = "writer"
  estate                 = "eph-token"
  host                   = {server}
  cluster_ca_certificate = {ca}
  token                  = ephemeral.kubernetes_token_request_v1.writer.token
}}

resource "kubernetes_config_map_v1" "by_token" {{
  provider = kubernetes.writer
  metadata {{
    name      = "by-token"
    namespace = {ns}
  }}
  data = {{ written = "with an ephemeral token" }}
}}
"#,
        ns = quote(&ns.name),
        server = quote(&server),
        ca = quote(&ca),
    ));

    // Without a role binding the token's account may not write: the second provider really
    // authenticates with it.
    let refused = dir.apply();
    assert!(!refused.success(), "the account has no binding yet:\n{refused}");
    let account_user = format!("system:serviceaccount:{}:{account}", ns.name);
    assert!(refused.flat().contains(&account_user), "{refused}");

    cluster.kubectl_ok(&[
        "create",
        "rolebinding",
        "writer-writes",
        "--role=config-map-writer",
        &format!("--serviceaccount={}:{account}", ns.name),
        "-n",
        &ns.name,
    ]);
    let plan_file = dir.path().join("token.tfplan");
    let plan_arg = format!("-out={}", plan_file.display());
    let plan = dir.run(&["plan", "-input=false", &plan_arg]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let show = dir.run(&["show", "-json", &plan_file.to_string_lossy()]);
    assert!(show.success(), "show -json failed:\n{show}");
    assert!(
        show.stdout.contains("by-token"),
        "the plan creates the ConfigMap:\n{show}"
    );
    let raw = std::fs::read(&plan_file).expect("the saved plan");
    for (what, text) in [
        ("show -json of the saved plan", show.stdout.clone()),
        (
            "the saved plan's bytes",
            String::from_utf8_lossy(&raw).into_owned(),
        ),
        ("the files inside the saved plan", plan_contents(&raw)),
    ] {
        assert!(!text.contains(&header), "a token in {what}");
    }

    let applied = dir.run(&["apply", "-input=false", &plan_file.to_string_lossy()]);
    assert!(applied.success(), "applying the saved plan failed:\n{applied}");
    let config_map = cluster.get_json(&["configmap", "by-token", "-n", &ns.name]);
    assert_eq!(config_map["data"]["written"], "with an ephemeral token");
    assert_eq!(config_map["metadata"]["labels"]["tofu-estate"], "eph-token");

    let state = std::fs::read_to_string(dir.path().join("terraform.tfstate")).expect("the state file");
    assert!(state.contains("by-token"), "the state holds the ConfigMap");
    assert!(!state.contains(&header), "a token in terraform.tfstate");

    let again = dir.plan_exit();
    assert_eq!(again.code, 0, "nothing left to do:\n{again}");
    let destroyed = dir.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(destroyed.success(), "destroy failed:\n{destroyed}");
}

/// A certificate request (PEM) for a new key.
fn certificate_request() -> String {
    let key = rcgen::KeyPair::generate().expect("a key pair");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("certificate parameters");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "ephemeral-client");
    let request = params.serialize_request(&key).expect("a certificate request");
    request.pem().expect("PEM certificate request")
}

#[test]
fn an_ephemeral_certificate_is_requested_approved_signed_and_the_request_deleted() {
    let cluster = Cluster::start();
    let name = unique_name("eph-csr");
    let request = certificate_request();
    let dir = LiveDir::new("eph-csr", cluster.kubeconfig());
    let config = |condition: &str| {
        format!(
            r#"
ephemeral "kubernetes_certificate_signing_request_v1" "client" {{
  metadata {{
    name = {name}
  }}
  spec {{
    request     = {request}
    signer_name = "kubernetes.io/kube-apiserver-client"
    usages      = ["client auth"]
  }}
  lifecycle {{
    postcondition {{
      condition     = {condition}
      error_message = "the certificate is not the one the signer issued"
    }}
  }}
}}
"#,
            name = quote(&name),
            request = quote(&request),
        )
    };
    // A postcondition that cannot hold fails the run: the certificate really is checked.
    dir.write(&config(r#"self.certificate == "not the certificate""#));
    let wrong = dir.apply();
    assert!(!wrong.success(), "a wrong expectation must fail:\n{wrong}");
    assert!(
        wrong
            .flat()
            .contains("the certificate is not the one the signer issued"),
        "{wrong}"
    );
    dir.write(&config(
        r#"startswith(self.certificate, "-----BEGIN CERTIFICATE-----\n")"#,
    ));
    let right = dir.apply();
    assert!(right.success(), "the signed certificate is handed over:\n{right}");
    let left = cluster.kubectl_ok(&["get", "csr", &name, "--ignore-not-found", "-o", "name"]);
    assert_eq!(left.stdout.trim(), "", "the request is deleted once read");
    let state = std::fs::read_to_string(dir.path().join("terraform.tfstate")).unwrap_or_default();
    assert!(
        !state.contains("BEGIN CERTIFICATE"),
        "no certificate in the state"
    );
}
