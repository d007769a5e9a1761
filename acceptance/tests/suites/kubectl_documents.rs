//! The kubectl providers' documents data sources under `choudoufu/kubectl`, read by the real engine
//! from the working directory: `kubectl_path_documents` over a folder of multi-document YAML
//! templates (vars, sensitive_vars that never show, a `for` directive that makes documents, a
//! comment-only document skipped), `kubectl_file_documents` and `kubectl_filename_list`; then the
//! errors: an undefined template variable is named with its file, and
//! `kubectl_kustomize_documents` refuses with what to do instead.

use std::fs;

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, quote, unique_name};
use serde_json::{Value, json};

const CONFIG_MAPS: &str = "%{ for name in split(\",\", names) ~}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${namespace}
data:
  greeting: ${upper(greeting)}
  literal: \"$${not_a_variable}\"
%{ endfor ~}
";

const SECRET_AND_NAMESPACE: &str = "apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: ${namespace}
stringData:
  password: ${password}
---
# only a comment
---
apiVersion: v1
kind: Namespace
metadata:
  name: ${namespace}
";

const INLINE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: two\n  namespace: web\n";

const SECRET_VALUE: &str = "hunter2-never-shown";

fn documents_config() -> String {
    format!(
        r#"data "kubectl_path_documents" "docs" {{
  pattern = "${{path.module}}/manifests/*.yaml"
  vars = {{
    names     = "alpha,beta"
    namespace = "shop"
    greeting  = "hello"
    password  = "overridden"
  }}
  sensitive_vars = {{
    password = "{SECRET_VALUE}"
  }}
}}

data "kubectl_file_documents" "inline" {{
  content = {inline}
}}

data "kubectl_filename_list" "files" {{
  pattern = "manifests/*.yaml"
}}

output "documents" {{
  value = data.kubectl_path_documents.docs.documents
  sensitive = true
}}

output "path_keys" {{
  value = keys(data.kubectl_path_documents.docs.manifests)
}}

output "alpha" {{
  value = data.kubectl_path_documents.docs.manifests["/api/v1/namespaces/shop/configmaps/alpha"]
}}

output "path_id_is_the_documents_hash" {{
  value = data.kubectl_path_documents.docs.id == sha256(join("", data.kubectl_path_documents.docs.documents))
}}

output "file" {{
  value = {{
    id        = data.kubectl_file_documents.inline.id
    documents = data.kubectl_file_documents.inline.documents
    keys      = keys(data.kubectl_file_documents.inline.manifests)
  }}
}}

output "files" {{
  value = {{
    matches   = data.kubectl_filename_list.files.matches
    basenames = data.kubectl_filename_list.files.basenames
  }}
}}
"#,
        inline = quote(INLINE)
    )
}

#[test]
fn documents_data_sources_read_folders_of_templated_yaml() {
    let cluster = Cluster::start();
    let estate = unique_name("kdoc");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let manifests = work.path().join("manifests");
    fs::create_dir_all(&manifests).expect("the manifests folder");
    fs::write(manifests.join("a-config-maps.yaml"), CONFIG_MAPS).expect("write");
    fs::write(manifests.join("b-secret.yaml"), SECRET_AND_NAMESPACE).expect("write");
    fs::write(manifests.join("notes.txt"), "not matched").expect("write");
    work.write(&documents_config());

    let out = work.apply_ok("read the documents");
    assert!(
        !out.combined().contains(SECRET_VALUE),
        "a sensitive variable shows:\n{out}"
    );
    let outputs = work.run(&["output", "-json"]);
    assert!(outputs.success(), "{outputs}");
    let outputs: Value = serde_json::from_str(&outputs.stdout).expect("outputs as JSON");
    let value = |name: &str| outputs[name]["value"].clone();

    // Two documents from the `for`, then the Secret and the Namespace; the comment is skipped.
    let documents = value("documents");
    let documents: Vec<&str> = documents
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(documents.len(), 4, "{documents:?}");
    assert!(
        documents[0].starts_with("---\napiVersion: v1\nkind: ConfigMap"),
        "raw text: {documents:?}"
    );
    assert!(
        documents[1].starts_with("apiVersion: v1\nkind: ConfigMap") && documents[1].contains("name: beta")
    );
    assert!(
        documents[2].contains(&format!("password: {SECRET_VALUE}")),
        "sensitive_vars win: {documents:?}"
    );
    assert!(
        documents[3].ends_with("kind: Namespace\nmetadata:\n  name: shop"),
        "{documents:?}"
    );
    assert_eq!(
        value("path_keys"),
        json!([
            "/api/v1/namespaces/shop",
            "/api/v1/namespaces/shop/configmaps/alpha",
            "/api/v1/namespaces/shop/configmaps/beta",
            "/api/v1/namespaces/shop/secrets/creds"
        ])
    );
    assert_eq!(
        value("alpha"),
        "apiVersion: v1\ndata:\n  greeting: HELLO\n  literal: ${not_a_variable}\nkind: ConfigMap\nmetadata:\n  name: alpha\n  namespace: shop\n"
    );
    assert_eq!(value("path_id_is_the_documents_hash"), true);

    let file = value("file");
    assert_eq!(file["documents"].as_array().map(Vec::len), Some(2), "{file}");
    assert_eq!(
        file["keys"],
        json!([
            "/api/v1/configmaps/one",
            "/apis/apps/v1/namespaces/web/deployments/two"
        ])
    );
    assert_eq!(
        file["id"].as_str().map(str::len),
        Some(64),
        "a sha256 in hex: {file}"
    );
    assert_eq!(
        value("files"),
        json!({
            "matches": ["manifests/a-config-maps.yaml", "manifests/b-secret.yaml"],
            "basenames": ["a-config-maps.yaml", "b-secret.yaml"]
        })
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the next plan reads the same:\n{plan}");
}

#[test]
fn undefined_variables_and_kustomize_are_refused_with_what_to_do() {
    let cluster = Cluster::start();
    let estate = unique_name("kdoc");
    let work = LiveDir::as_kubectl(&estate, cluster.kubeconfig(), "");
    let folder = work.path().join("templates");
    fs::create_dir_all(&folder).expect("the templates folder");
    fs::write(
        folder.join("x.yaml"),
        "kind: ConfigMap\nmetadata:\n  name: ${missing}\n",
    )
    .expect("write");

    work.write(
        "data \"kubectl_path_documents\" \"docs\" {\n  pattern = \"templates/*.yaml\"\n  vars = { other = \"x\" }\n}\n",
    );
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    let text = out.flat();
    assert!(!out.success(), "an undefined variable is an error:\n{out}");
    assert!(
        text.contains("there is no variable named \"missing\"") && text.contains("templates/x.yaml"),
        "the message names the variable and the file:\n{out}"
    );

    work.write("data \"kubectl_kustomize_documents\" \"k\" {\n  target = \"overlays/prod\"\n}\n");
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    assert!(
        !out.success() && out.flat().contains("No kustomization at target"),
        "a target without a kustomization is named first:\n{out}"
    );
    let overlay = work.path().join("overlays/prod");
    fs::create_dir_all(&overlay).expect("the overlay folder");
    fs::write(overlay.join("kustomization.yaml"), "resources: []\n").expect("write");
    let out = work.run(&["plan", "-input=false", "-no-color"]);
    let text = out.flat();
    assert!(!out.success(), "kustomize refuses:\n{out}");
    assert!(
        text.contains("kubectl_kustomize_documents is not supported")
            && text.contains("kustomize build")
            && text.contains("kubectl_file_documents"),
        "the refusal says what to do instead:\n{out}"
    );
}
