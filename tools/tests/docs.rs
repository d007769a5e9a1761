//! The registry documentation: `docs/` is what `make docs` generates from the current schemas
//! (stale pages fail here), every attribute, function and parameter has a description, there is
//! one page per resource, data source and ephemeral resource type and per function, and every
//! hand-written example passes the engine's `validate` (those of list resources and actions
//! only where the engine has them).

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use acceptance::hcl::required_providers;
use acceptance::{Engine, Feature, mirror, paths, skip_without};
use tools::docs::{self, catalog};

#[test]
fn docs_are_what_make_docs_generates() {
    let root = paths::workspace_root();
    let pages = docs::generate(&root).unwrap_or_else(|e| panic!("{e}"));
    let stale = docs::stale(&root.join("docs"), &pages).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        stale.is_empty(),
        "stale documentation pages {stale:?}: run `make docs` and commit the result"
    );
}

#[test]
fn every_attribute_and_block_has_a_description() {
    let missing = catalog::undescribed(&catalog::providers());
    assert!(
        missing.is_empty(),
        "{} without a description:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn one_page_per_type_and_function() {
    let docs_dir = paths::workspace_root().join("docs");
    let pages = |folder: &str| -> BTreeSet<String> {
        fs::read_dir(docs_dir.join(folder))
            .unwrap_or_else(|e| panic!("docs/{folder}: {e}"))
            .map(|entry| {
                entry
                    .expect("a directory entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    let providers = catalog::providers();
    let expected = |kind: catalog::Kind| -> BTreeSet<String> {
        let types = providers.iter().flat_map(|p| p.of_kind(kind));
        types.map(|t| format!("{}.md", t.type_name)).collect()
    };
    for kind in catalog::Kind::ALL {
        assert_eq!(pages(kind.folder()), expected(kind), "docs/{}", kind.folder());
    }
    let functions: BTreeSet<String> = (providers.iter().flat_map(|p| &p.functions))
        .map(|f| format!("{}.md", f.name))
        .collect();
    assert!(!functions.is_empty(), "choudoufu/live serves functions");
    assert_eq!(pages(catalog::FUNCTIONS_FOLDER), functions);
    for name in &functions {
        let page =
            fs::read_to_string(docs_dir.join(catalog::FUNCTIONS_FOLDER).join(name)).expect("a function page");
        for section in [
            "## Example Usage",
            "## Signature",
            "## Arguments",
            "## Return Type",
        ] {
            assert!(page.contains(section), "function {name} has no {section:?}");
        }
    }
    for name in &expected(catalog::Kind::Resource) {
        let page = fs::read_to_string(docs_dir.join("resources").join(name)).expect("a resource page");
        for section in [
            "## Example Usage",
            "## Argument Reference",
            "## Attribute Reference",
            "## Import",
        ] {
            assert!(page.contains(section), "{name} has no {section:?}");
        }
    }
}

/// Every example but those of list resources and actions, as a module of one configuration whose
/// provider blocks the index shows.
#[test]
fn every_example_passes_validate() {
    // List resources' examples are query files: `every_list_example_passes_validate_query`.
    let folders = (catalog::Kind::ALL.into_iter())
        .filter(|k| ![catalog::Kind::ListResource, catalog::Kind::Action].contains(k))
        .map(catalog::Kind::folder);
    let count = validate_examples(folders.chain([catalog::FUNCTIONS_FOLDER]));
    assert!(count >= 11, "only {count} examples");
}

/// Every action's example, apart: only Terraform has actions.
#[test]
fn every_action_example_passes_validate() {
    if skip_without(Feature::Actions) {
        return;
    }
    let count = validate_examples([catalog::Kind::Action.folder()]);
    assert!(count >= 4, "only {count} action examples");
}

/// The examples in `kind_folders` of `examples/`, each a module of one configuration, pass
/// `init` and `validate`; how many there were.
fn validate_examples<'a>(kind_folders: impl IntoIterator<Item = &'a str>) -> usize {
    let root = paths::workspace_root();
    let dir = tempfile::tempdir().expect("a working directory");
    let mut main: String = (mirror::PROVIDERS.iter())
        .map(|a| format!("provider \"{}\" {{\n  estate = \"example\"\n}}\n\n", a.local_name))
        .collect();
    let mut count = 0;
    for kind_folder in kind_folders {
        let folder = root.join(docs::EXAMPLES).join(kind_folder);
        for entry in fs::read_dir(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display())) {
            let example = entry.expect("a directory entry").path();
            // A resource and a data source may share a type name: the module names the kind too.
            let name = format!(
                "{}_{}",
                kind_folder.replace('-', "_"),
                example.file_name().expect("a folder name").to_string_lossy()
            );
            let module = dir.path().join(&name);
            let variables = copy_tf_files(&example, &module);
            fs::write(module.join("versions.tf"), required_providers("")).expect("write versions.tf");
            main.push_str(&format!("\nmodule \"{name}\" {{\n  source = \"./{name}\"\n"));
            // An example's input variables (strings, in the examples) get a value.
            for variable in variables {
                main.push_str(&format!("  {variable} = \"example\"\n"));
            }
            main.push_str("}\n");
            count += 1;
        }
    }
    init_and_validate(dir.path(), &main, &["validate"]);
    count
}

/// Every list resource's example as its page shows it, in one root module's query files.
#[test]
fn every_list_example_passes_validate_query() {
    if skip_without(Feature::Query) {
        return;
    }
    let root = paths::workspace_root();
    let dir = tempfile::tempdir().expect("a working directory");
    let mut count = 0;
    for provider in catalog::providers() {
        for doc in provider.of_kind(catalog::Kind::ListResource) {
            let example = docs::list_example(&root, &provider, doc)
                .unwrap_or_else(|e| panic!("{}: {e}", doc.type_name));
            let file = dir.path().join(format!("{}.tfquery.hcl", doc.type_name));
            fs::write(&file, example).expect("write a query file");
            count += 1;
        }
    }
    assert!(count >= 70, "only {count} list resources");
    let main = "provider \"kubernetes\" {\n  estate = \"example\"\n}\n";
    init_and_validate(dir.path(), main, &["validate", "-query"]);
}

/// Writes `main` after the required providers as the root module in `dir`, then `init` and
/// `validate` (with `args`) must pass.
fn init_and_validate(dir: &Path, main: &str, validate: &[&str]) {
    fs::write(dir.join("main.tf"), format!("{}\n{main}", required_providers(""))).expect("write main.tf");
    let engine = Engine::new(dir);
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    let validate = engine.run(validate);
    assert!(validate.success(), "an example does not validate:\n{validate}");
}

/// Copies the `.tf` files of an example and returns the input variables they declare.
fn copy_tf_files(from: &Path, to: &Path) -> Vec<String> {
    let declaration = regex::Regex::new(r#"(?m)^variable "([a-z_0-9]+)""#).expect("a valid pattern");
    let mut variables = Vec::new();
    fs::create_dir_all(to).expect("create the module folder");
    for entry in fs::read_dir(from).expect("read the example folder") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "tf") {
            let text = fs::read_to_string(&path).expect("read an example");
            variables.extend(declaration.captures_iter(&text).map(|c| c[1].to_string()));
            fs::write(to.join(path.file_name().expect("a file name")), text).expect("copy an example");
        }
    }
    variables
}
