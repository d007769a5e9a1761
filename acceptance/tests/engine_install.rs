//! Installation with the real engine, as a user does it: `terraform init` installs both providers
//! from the project's filesystem mirror (hashes recorded in the lock file, no dev_overrides),
//! `validate` and `providers schema -json` see both providers' schemas, and a bad `estate` fails
//! `validate` with an error pointing at that attribute.

use std::fs;
use std::path::Path;

use acceptance::{Engine, engine_info, mirror, paths};

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
    let engine = Engine::new(dir);
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
    let engine = Engine::new(dir.path());
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

    let lock = fs::read_to_string(dir.path().join(".terraform.lock.hcl")).expect("init writes the lock file");
    let mirror_dir = paths::dist_dir().join("mirror");
    let host = engine_info().registry_host();
    for type_name in mirror::PROVIDER_TYPES {
        let block = lock_block(&lock, &engine_info().provider_address(type_name));
        assert!(
            block.contains(&format!("version     = \"{}\"", mirror::VERSION)),
            "{block}"
        );
        // The locked hash is that of the mirror's archive: the engine checked what it installed.
        let archive = mirror::archive_path(&mirror_dir, host, type_name).expect("archive path");
        let h1 = mirror::archive_h1(&archive).expect("hash of the mirror's archive");
        assert!(
            block.contains(&format!("\"{h1}\"")),
            "{h1} of {} not locked:\n{block}",
            archive.display()
        );
    }

    // A second init in the same directory checks the installed packages against the lock file.
    let again = engine.init();
    assert!(again.success(), "second init failed:\n{again}");
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
