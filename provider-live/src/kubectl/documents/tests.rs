//! The documents data sources read without an engine: reference/kubectl-providers.md §5.3 to §5.6.

use plugin_runtime::{Diagnostic, ReadDataRequest};

use super::*;

async fn read(source: &dyn DataSource, config: Value) -> Result<Value, Diagnostic> {
    let request = ReadDataRequest {
        type_name: source.type_name().to_string(),
        config,
    };
    source
        .read(request)
        .await
        .map(|r| r.state)
        .map_err(|d| d.0.into_iter().next().expect("a diagnostic"))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .elements()
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

fn at(d: &Diagnostic) -> String {
    d.attribute.as_ref().map(|p| p.sdk()).unwrap_or_default()
}

const CONTENT: &str = "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n\
                       ---\n# nothing\n---\nkind: Namespace\napiVersion: v1\nmetadata:\n  name: shop\n";

#[tokio::test]
async fn file_documents_split_content_and_key_manifests_by_path() {
    let state = read(
        &file::FileDocuments,
        Value::object([("content", Value::string(CONTENT))]),
    )
    .await
    .expect("reads");
    assert_eq!(state.get("id").as_str(), Some(sha256_hex(CONTENT).as_str()));
    let documents = strings(state.get("documents"));
    assert_eq!(documents.len(), 2);
    assert!(
        documents[0].starts_with("---\napiVersion: apps/v1"),
        "the first keeps its `---`: {documents:?}"
    );
    assert_eq!(
        documents[1],
        "kind: Namespace\napiVersion: v1\nmetadata:\n  name: shop"
    );
    let manifests = state.get("manifests").entries().expect("a map");
    let keys: Vec<&String> = manifests.keys().collect();
    assert_eq!(
        keys,
        [
            "/api/v1/namespaces/shop",
            "/apis/apps/v1/namespaces/shop/deployments/web"
        ]
    );
    assert_eq!(
        manifests["/api/v1/namespaces/shop"].as_str(),
        Some("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n")
    );
}

#[tokio::test]
async fn file_documents_refuse_duplicates_and_bad_documents_at_content() {
    let twice = "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n";
    let d = read(
        &file::FileDocuments,
        Value::object([("content", Value::string(twice))]),
    )
    .await
    .expect_err("a duplicate");
    assert_eq!(at(&d), "content");
    assert_eq!(
        d.summary,
        "duplicate manifest found with id: /api/v1/configmaps/a"
    );
    assert!(d.detail.contains("document 1"), "{}", d.detail);
    for (bad, expected) in [
        ("kind: A\n---\n- x\n", "document 2"),
        ("kind: A\n---\nmetadata: {}\n", "Object 'Kind' is missing"),
    ] {
        let d = read(
            &file::FileDocuments,
            Value::object([("content", Value::string(bad))]),
        )
        .await
        .expect_err(bad);
        assert_eq!(
            (at(&d).as_str(), d.summary.as_str()),
            ("content", "Invalid YAML document")
        );
        assert!(d.detail.contains(expected), "{}", d.detail);
    }
}

/// A folder of templated YAML files, and the path documents' configuration over it.
fn folder(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a folder");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    dir
}

fn path_config(dir: &tempfile::TempDir, vars: &[(&str, &str)], sensitive: &[(&str, &str)]) -> Value {
    Value::object([
        (
            "pattern",
            Value::string(format!("{}/*.yaml", dir.path().display())),
        ),
        ("vars", Value::string_map(vars.iter().copied())),
        ("sensitive_vars", Value::string_map(sensitive.iter().copied())),
    ])
}

#[tokio::test]
async fn path_documents_render_each_file_then_split_in_file_order() {
    let dir = folder(&[
        (
            "b.yaml",
            "kind: Secret\napiVersion: v1\nmetadata: {name: creds}\nstringData: {password: \"${password}\"}\n",
        ),
        (
            "a.yaml",
            "%{ for n in split(\",\", names) ~}\n---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: ${n}, namespace: ${ns}}\n%{ endfor ~}\n",
        ),
        ("c.txt", "not matched"),
    ]);
    // (`y` would be the boolean true: YAML 1.1.)
    let config = path_config(
        &dir,
        &[("names", "x,z"), ("ns", "plain"), ("password", "visible")],
        &[("password", "hidden")],
    );
    let state = read(&path::PathDocuments, config).await.expect("reads");
    let documents = strings(state.get("documents"));
    assert_eq!(documents.len(), 3);
    assert!(
        documents[0].contains("name: x") && documents[1].contains("name: z"),
        "{documents:?}"
    );
    assert!(
        documents[2].contains("password: \"hidden\""),
        "sensitive_vars win: {documents:?}"
    );
    assert_eq!(
        state.get("id").as_str(),
        Some(sha256_hex(documents.concat()).as_str())
    );
    let manifests = state.get("manifests").entries().expect("a map");
    assert!(
        manifests.contains_key("/api/v1/namespaces/plain/configmaps/z"),
        "{manifests:?}"
    );
    assert!(manifests.contains_key("/api/v1/secrets/creds"), "{manifests:?}");
    assert_eq!(state.get("disable_template"), &Value::Bool(false));
}

#[tokio::test]
async fn path_documents_defaults_and_disabled_templates() {
    let dir = folder(&[(
        "a.yaml",
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {x: \"${literal}\"}\n",
    )]);
    let config = Value::object([
        (
            "pattern",
            Value::string(format!("{}/*.yaml", dir.path().display())),
        ),
        ("disable_template", Value::Bool(true)),
    ]);
    let state = read(&path::PathDocuments, config).await.expect("reads");
    assert!(strings(state.get("documents"))[0].contains("${literal}"));
    assert_eq!(state.get("vars"), &Value::Map(BTreeMap::new()));
    assert_eq!(state.get("sensitive_vars"), &Value::Map(BTreeMap::new()));
    let none = Value::object([(
        "pattern",
        Value::string(format!("{}/none/*.yaml", dir.path().display())),
    )]);
    let state = read(&path::PathDocuments, none)
        .await
        .expect("no match is no error");
    assert!(state.get("documents").elements().is_empty());
    assert_eq!(state.get("id").as_str(), Some(sha256_hex("").as_str()));
}

#[tokio::test]
async fn path_documents_errors_name_the_file_and_never_a_sensitive_value() {
    let dir = folder(&[("a.yaml", "kind: ConfigMap\nmetadata: {name: ${missing}}\n")]);
    let d = read(&path::PathDocuments, path_config(&dir, &[], &[]))
        .await
        .expect_err("undefined");
    assert_eq!(at(&d), "pattern");
    assert!(
        d.detail.contains("a.yaml") && d.detail.contains("\"missing\""),
        "{}",
        d.detail
    );

    let dir = folder(&[
        (
            "a.yaml",
            "kind: ConfigMap\napiVersion: v1\nmetadata: {name: ${token}}\n",
        ),
        (
            "b.yaml",
            "kind: ConfigMap\napiVersion: v1\nmetadata: {name: ${token}}\n",
        ),
    ]);
    let d = read(
        &path::PathDocuments,
        path_config(&dir, &[], &[("token", "s3cr3t")]),
    )
    .await
    .expect_err("duplicate");
    assert!(
        d.detail.contains("b.yaml, document 1") && d.detail.contains("a.yaml, document 1"),
        "{}",
        d.detail
    );
    assert!(!format!("{d:?}").contains("s3cr3t"), "{d:?}");

    let dir = folder(&[("a.yaml", "kind: ConfigMap\n---\nkind: [\n")]);
    let d = read(&path::PathDocuments, path_config(&dir, &[], &[]))
        .await
        .expect_err("bad YAML");
    assert!(
        d.detail.contains("a.yaml: document 2: invalid YAML"),
        "{}",
        d.detail
    );

    let bad = Value::object([("pattern", Value::string("[".to_string()))]);
    let d = read(&path::PathDocuments, bad).await.expect_err("bad pattern");
    assert_eq!(
        (at(&d).as_str(), d.summary.as_str()),
        ("pattern", "Invalid pattern")
    );
}

#[tokio::test]
async fn filename_list_matches_sorted_with_basenames() {
    let dir = folder(&[("b.yaml", ""), ("a.yaml", ""), ("c.txt", "")]);
    let pattern = format!("{}/*.yaml", dir.path().display());
    let state = read(
        &filename_list::FilenameList,
        Value::object([("pattern", Value::string(&pattern))]),
    )
    .await
    .expect("reads");
    let matches = strings(state.get("matches"));
    let root = dir.path().display().to_string();
    assert_eq!(matches, [format!("{root}/a.yaml"), format!("{root}/b.yaml")]);
    assert_eq!(strings(state.get("basenames")), ["a.yaml", "b.yaml"]);
    let id = sha256_hex(format!("0{root}/a.yaml1{root}/b.yaml"));
    assert_eq!(state.get("id").as_str(), Some(id.as_str()));
}

#[tokio::test]
async fn kustomize_checks_its_settings_and_target_then_refuses_saying_what_to_do_instead() {
    let dir = tempfile::tempdir().expect("a folder");
    let target = dir.path().display().to_string();
    let config = |target: &str| Value::object([("target", Value::string(target))]);
    let missing = read(
        &kustomize::KustomizeDocuments,
        config(&format!("{target}/nowhere")),
    )
    .await
    .expect_err("no folder");
    assert_eq!(at(&missing), "target");
    assert_eq!(missing.summary, "No kustomization at target");
    assert!(missing.detail.contains("no such file"), "{}", missing.detail);
    let empty = read(&kustomize::KustomizeDocuments, config(&target))
        .await
        .expect_err("no kustomization");
    assert!(empty.detail.contains("not found"), "{}", empty.detail);

    std::fs::write(dir.path().join("kustomization.yaml"), "resources: []\n").expect("written");
    let d = read(&kustomize::KustomizeDocuments, config(&target))
        .await
        .expect_err("refuses");
    assert_eq!(at(&d), "target");
    assert!(
        d.detail.contains("kustomize build") && d.detail.contains("kubectl_file_documents"),
        "{}",
        d.detail
    );

    let bad = Value::object([
        ("target", Value::string(&target)),
        ("load_restrictor", Value::string("bogus")),
    ]);
    let invalid = kustomize::KustomizeDocuments.validate(&bad).0;
    assert_eq!(invalid.iter().map(at).collect::<Vec<_>>(), ["load_restrictor"]);
    let ok = Value::object([("load_restrictor", Value::string("none"))]);
    assert!(kustomize::KustomizeDocuments.validate(&ok).is_empty());
}
