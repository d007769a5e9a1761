//! Installation with the real engine, as a user does it: `terraform init` installs both providers
//! from the archives of the project's filesystem mirror (hashes recorded in the lock file, no
//! dev_overrides; the other suites install the same binaries from the unpacked layout),
//! `validate` and `providers schema -json` see both providers' schemas, and a bad `estate` fails
//! `validate` with an error pointing at that attribute. provider-live's second address,
//! `choudoufu/kubectl`, installs beside `choudoufu/live` without a warning and takes the kubectl
//! providers' provider block.

use std::fs;
use std::path::Path;

use acceptance::hcl::{quote, required_providers, unique_name};
use acceptance::{Cluster, Engine, EngineOutput, engine_info, mirror, paths};

/// A fresh working copy of `examples/providers` with `estate = "example"` replaced by `estate`.
fn workdir_with_estate(estate: &str) -> tempfile::TempDir {
    let source = fs::read_to_string(paths::workspace_root().join("examples/providers/main.tf"))
        .expect("examples/providers/main.tf");
    assert_eq!(
        source.matches("estate = \"example\"").count(),
        2,
        "both provider blocks name the estate"
    );
    let dir = tempfile::tempdir().expect("temporary working directory");
    fs::write(
        dir.path().join("main.tf"),
        source.replace("estate = \"example\"", &format!("estate = {estate:?}")),
    )
    .expect("write main.tf");
    dir
}

fn initialised(dir: &Path) -> Engine {
    let engine = Engine::new(dir).from_archives();
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    engine
}

/// The `provider "<address>" { ... }` block of a lock file.
fn lock_block<'a>(lock: &'a str, address: &str) -> &'a str {
    let start = lock
        .find(&format!("provider \"{address}\""))
        .unwrap_or_else(|| panic!("{address} is not in the lock file:\n{lock}"));
    let block = &lock[start..];
    &block[..block.find("\n}").map_or(block.len(), |end| end + 2)]
}

#[test]
fn init_installs_both_providers_from_the_mirror_and_locks_their_hashes() {
    let dir = workdir_with_estate("example");
    let engine = Engine::new(dir.path()).from_archives();
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    let out = init.combined();
    for source in ["choudoufu/live", "choudoufu/records"] {
        assert!(
            out.contains(&format!("Installing {source} v{}", mirror::VERSION)),
            "{source} not installed:\n{out}"
        );
    }
    assert!(
        !out.contains("development overrides"),
        "installed through dev_overrides:\n{out}"
    );

    assert_locked_from_the_mirror(dir.path(), &["live", "records"]);

    // A second init in the same directory checks the installed packages against the lock file.
    let again = engine.init();
    assert!(again.success(), "second init failed:\n{again}");
}

/// The lock file in `dir` holds each of `types` at this version with the hash of the mirror's
/// archive: the engine checked what it installed.
fn assert_locked_from_the_mirror(dir: &Path, types: &[&str]) {
    let lock = fs::read_to_string(dir.join(".terraform.lock.hcl")).expect("init writes the lock file");
    let mirror_dir = paths::dist_dir().join("mirror");
    let host = engine_info().registry_host();
    for type_name in types {
        let block = lock_block(&lock, &engine_info().provider_address(type_name));
        // Aligned with `constraints` when the configuration has one, so spaces vary.
        let flat = block.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(&format!("version = \"{}\"", mirror::VERSION)),
            "{block}"
        );
        let archive = mirror::archive_path(&mirror_dir, host, type_name).expect("archive path");
        let h1 = mirror::archive_h1(&archive).expect("hash of the mirror's archive");
        assert!(
            block.contains(&format!("\"{h1}\"")),
            "{h1} of {} not locked:\n{block}",
            archive.display()
        );
    }
}

/// The summaries of the warnings the engine printed but the one a filesystem mirror always
/// brings (its lock file holds this platform's hashes only).
fn warnings(output: &EngineOutput) -> Vec<String> {
    let text = output.combined();
    // Without colour a diagnostic starts `Warning: `, boxed in `│ ` otherwise.
    let lines = text.lines().map(|l| l.trim_start_matches(['│', ' ']));
    let summaries = lines.filter_map(|l| l.strip_prefix("Warning: "));
    summaries
        .filter(|s| *s != "Incomplete lock file information for providers")
        .map(str::to_string)
        .collect()
}

/// A configuration of the kubectl providers after its switch: `kubectl = { source =
/// "choudoufu/kubectl" }` beside `choudoufu/live` and `choudoufu/records`, its provider block with
/// the kubectl providers' own attributes and `estate`. `init` installs every address from the
/// mirror with no warning (two addresses, not one under two local names) and locks each;
/// `validate` passes without a warning; `plan` connects through the block and plans a
/// `kubernetes_config_map_v1` with `provider = kubectl` under the kubectl address.
#[test]
fn the_kubectl_address_installs_beside_live_and_takes_the_kubectl_providers_block() {
    let cluster = Cluster::start();
    let estate = unique_name("kubectl");
    let main = format!(
        "{}\nprovider \"kubectl\" {{\n  estate            = {}\n  apply_retry_count = 2\n  \
         load_config_file  = true\n  lazy_load         = false\n  config_path       = {}\n}}\n\n\
         resource \"kubernetes_config_map_v1\" \"switched\" {{\n  provider = kubectl\n  metadata {{\n    \
         name      = {}\n    namespace = \"default\"\n  }}\n  data = {{ from = \"kubectl\" }}\n}}\n",
        required_providers(""),
        quote(&estate),
        quote(&cluster.kubeconfig().to_string_lossy()),
        quote(&estate),
    );
    let dir = tempfile::tempdir().expect("temporary working directory");
    fs::write(dir.path().join("main.tf"), main).expect("write main.tf");
    let engine = Engine::new(dir.path()).from_archives();
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    assert_eq!(warnings(&init), Vec::<String>::new(), "init warned:\n{init}");
    assert_locked_from_the_mirror(dir.path(), &mirror::PROVIDER_TYPES);

    let validate = engine.run(&["validate"]);
    assert!(validate.success(), "validate failed:\n{validate}");
    assert_eq!(
        warnings(&validate),
        Vec::<String>::new(),
        "validate warned:\n{validate}"
    );

    let (plan, summary) = engine.plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let summary = summary.expect("a saved plan");
    assert_eq!(summary.count("create"), 1, "{:?}", summary.changes);
    let change = &summary.raw["resource_changes"][0];
    assert_eq!(change["address"], "kubernetes_config_map_v1.switched");
    assert_eq!(
        change["provider_name"],
        engine_info().provider_address("kubectl"),
        "planned by the kubectl address"
    );
}

#[test]
fn validate_and_schema_show_both_providers() {
    let dir = workdir_with_estate("example");
    let engine = initialised(dir.path());
    let validate = engine.run(&["validate"]);
    assert!(validate.success(), "validate failed:\n{validate}");

    let schema = engine.run(&["providers", "schema", "-json"]);
    assert!(schema.success(), "providers schema failed:\n{schema}");
    let schema: serde_json::Value = serde_json::from_str(&schema.stdout).expect("schema JSON");
    let (live, records) = (
        engine_info().provider_address("live"),
        engine_info().provider_address("records"),
    );
    for address in [&live, &records] {
        let provider = &schema["provider_schemas"][address];
        let estate = &provider["provider"]["block"]["attributes"]["estate"];
        assert_eq!(
            estate["type"], "string",
            "{address}: provider attribute estate:\n{provider:#}"
        );
        assert_eq!(estate["required"], true, "{address}: estate is required");
    }
    let resources = &schema["provider_schemas"][&live]["resource_schemas"];
    for kind in ["kubernetes_config_map", "kubernetes_namespace"] {
        assert!(resources.get(kind).is_some(), "{live} has no resource {kind}");
    }
    let data_sources = &schema["provider_schemas"][&records]["data_source_schemas"];
    assert!(
        data_sources.get("terraform_estate_outputs").is_some(),
        "{records} has no data source terraform_estate_outputs"
    );
}

#[test]
fn a_bad_estate_fails_validate_naming_the_attribute() {
    let dir = workdir_with_estate("Bad_Estate!");
    let engine = initialised(dir.path());
    let validate = engine.run(&["validate"]);
    assert!(
        !validate.success(),
        "validate accepted estate \"Bad_Estate!\":\n{validate}"
    );
    let out = validate.combined();
    // The engine quotes the offending line when the diagnostic carries the attribute's path.
    for provider in ["kubernetes", "records"] {
        assert!(
            out.contains(&format!("in provider \"{provider}\"")),
            "no error for provider {provider}:\n{out}"
        );
    }
    assert_eq!(
        out.matches("estate = \"Bad_Estate!\"").count(),
        2,
        "errors do not point at `estate`:\n{out}"
    );
}
