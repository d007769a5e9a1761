//! Schema conformance with hashicorp/kubernetes 3.4.0 (issue 10): the provider's schema as the
//! engine's `providers schema -json` shows it ([`engine_json`], from GetProviderSchema of the
//! tfplugin6 service in process), compared with `reference/hashicorp-kubernetes-3.4.0.paths.tsv`.
//! Every resource type of the reference must be served, and every configurable path of it (flags
//! `required` or `optional`) must exist with the same shape: block or attribute, the same
//! collection and element type, and the same required-or-optional. Read-only reference paths are
//! only looked for (listed when missing, not failing); paths the provider has beyond the
//! reference (e.g. `estate`) are fine. The only types allowed to be missing are those in
//! [`PENDING`], each naming the issue that adds it.
//!
//! The test prints one line such as `schema conformance: 81 of 81 resource types, 12,000 of
//! 12,000 configurable paths` (with `(N types pending issue M: P paths)` while some are), and on
//! failure one line per mismatch (`type path: expected …, found …`).
//!
//! Data sources (the reference's `data` rows) and ephemeral resources (`ephemeral` rows) are
//! held to more: every path, read-only ones included, with its flags (`required`, `optional`,
//! `optional,computed`, `computed,read-only`), and none may be missing (`schema conformance: 27
//! of 27 data sources, 5,678 of 5,678 paths with their flags`). A `computed_object` is there an
//! attribute of type `list(object(...))`, computed only. The provider functions are compared
//! with hashicorp's three ([`FUNCTIONS`]): names, parameter names and types, return type.

#[path = "schema_conformance/compare.rs"]
mod compare;
#[path = "schema_conformance/engine_json.rs"]
mod engine_json;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;

use compare::{FUNCTIONS, RefPath, compare, compare_functions, compare_strict, parse_reference, thousands};
use serde_json::Value;

/// The reference: one row per path of every type of hashicorp/kubernetes 3.4.0.
const REFERENCE: &str = "reference/hashicorp-kubernetes-3.4.0.paths.tsv";

/// Resource types no one serves yet, each with the issue that will add it. A type listed here
/// but served is checked like any other.
const PENDING: [(&str, &str); 0] = [];

/// A line on the terminal even while the test harness captures output.
fn say(text: &str) {
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "{text}");
}

/// One part of the provider's schema (`resource_schemas`, `data_source_schemas` ...); an
/// absent part is empty, so each missing type is reported.
fn provider_schemas(part: &str) -> serde_json::Map<String, Value> {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(engine_json::provider_schema)[part]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// The reference rows of one kind (`resource`, `data`, `ephemeral`).
fn reference(kind: &str) -> BTreeMap<String, Vec<RefPath>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(REFERENCE);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_reference(&text, kind).unwrap_or_else(|e| panic!("{REFERENCE}: {e}"))
}

#[test]
fn every_reference_resource_type_conforms() {
    let reference = reference("resource");
    assert_eq!(reference.len(), 81, "{REFERENCE}: resource types");
    for (name, _) in PENDING {
        assert!(
            reference.contains_key(name),
            "pending type {name} is not in {REFERENCE}"
        );
    }
    let schemas = provider_schemas("resource_schemas");
    let result = compare(&reference, &schemas, &PENDING);
    let summary = result.summary();
    say(&summary);
    assert!(
        result.ok(),
        "{summary}\n{} configurable paths do not conform to hashicorp/kubernetes 3.4.0 ({} lines):\n{}",
        thousands(result.configurable - result.conforming),
        result.mismatches.len(),
        result.details()
    );
    if !result.missing_read_only.is_empty() {
        say(&result.details());
    }
    let pending: usize = result.pending.values().map(|(types, _)| types).sum();
    assert_eq!(result.conforming_types + pending, result.types);
}

/// Every data source of the reference, every path with its flags (27 of 27).
#[test]
fn every_reference_data_source_conforms() {
    let reference = reference("data");
    assert_eq!(reference.len(), 27, "{REFERENCE}: data sources");
    let result = compare_strict(
        &reference,
        &provider_schemas("data_source_schemas"),
        "data sources",
    );
    let summary = result.summary();
    say(&summary);
    assert!(result.ok(), "{summary}\n{}", result.details());
}

/// Every ephemeral resource of the reference, every path with its flags (2 of 2).
#[test]
fn every_reference_ephemeral_resource_conforms() {
    let reference = reference("ephemeral");
    assert_eq!(reference.len(), 2, "{REFERENCE}: ephemeral resources");
    let schemas = provider_schemas("ephemeral_resource_schemas");
    let result = compare_strict(&reference, &schemas, "ephemeral resources");
    let summary = result.summary();
    say(&summary);
    assert!(result.ok(), "{summary}\n{}", result.details());
}

/// hashicorp's three provider functions, with their parameters and return types (3 of 3).
#[test]
fn every_provider_function_conforms() {
    let mismatches = compare_functions(&provider_schemas("functions"));
    let summary = format!(
        "schema conformance: {} of {} provider functions",
        FUNCTIONS.len()
            - mismatches
                .iter()
                .map(|m| m.split(':').next())
                .collect::<BTreeSet<_>>()
                .len(),
        FUNCTIONS.len()
    );
    say(&summary);
    assert!(mismatches.is_empty(), "{summary}\n  {}", mismatches.join("\n  "));
}

/// The strict comparison and the function comparison, on hand-made schemas.
#[test]
fn the_strict_comparison_checks_read_only_paths_and_flags() {
    let reference = parse_reference(
        "data\tkubernetes_thing\tid\tattribute\tsimple\tstring\toptional,computed\n\
         data\tkubernetes_thing\tmetadata\tblock\tlist\tobject\trequired\n\
         data\tkubernetes_thing\tmetadata.name\tattribute\tsimple\tstring\toptional,computed\n\
         data\tkubernetes_thing\tmetadata.uid\tattribute\tsimple\tstring\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.ip\tattribute\tsimple\tstring\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.port\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.port.number\tattribute\tsimple\tnumber\tcomputed,read-only\n\
         data\tkubernetes_other\tname\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_thing\tname\tattribute\tsimple\tstring\trequired\n",
        "data",
    )
    .expect("a valid reference snippet");
    assert_eq!(reference.len(), 2, "data rows only");
    let port = serde_json::json!(["list", ["object", { "number": "number" }]]);
    let good = serde_json::json!({ "kubernetes_thing": { "block": {
        "attributes": {
            "id": { "type": "string", "optional": true, "computed": true },
            "spec": { "type": ["list", ["object", { "ip": "string", "port": port }]], "computed": true }
        },
        "block_types": { "metadata": { "nesting_mode": "list", "min_items": 1, "block": {
            "attributes": {
                "name": { "type": "string", "optional": true, "computed": true },
                "uid": { "type": "string", "computed": true }
            }
        }}}
    }}});
    let result = compare_strict(&reference, good.as_object().expect("an object"), "data sources");
    assert_eq!(
        result.mismatches,
        ["kubernetes_other: expected the type (1 paths), found nothing"]
    );
    assert_eq!(
        result.summary(),
        "schema conformance: 1 of 2 data sources, 8 of 9 paths with their flags"
    );
    // A read-only path missing, a flag off (optional where optional,computed), a computed
    // object as a block: each fails.
    let bad = serde_json::json!({ "kubernetes_thing": { "block": {
        "attributes": { "id": { "type": "string", "optional": true } },
        "block_types": {
            "metadata": { "nesting_mode": "list", "min_items": 1, "block": {
                "attributes": { "name": { "type": "string", "optional": true, "computed": true } }
            }},
            "spec": { "nesting_mode": "list", "block": {
                "attributes": { "ip": { "type": "string", "computed": true } }
            }}
        }
    }}});
    let result = compare_strict(&reference, bad.as_object().expect("an object"), "data sources");
    assert_eq!(
        result.mismatches,
        [
            "kubernetes_other: expected the type (1 paths), found nothing",
            "kubernetes_thing id: expected optional,computed attribute string, found optional attribute string",
            "kubernetes_thing metadata.uid: expected computed,read-only attribute string, found nothing",
            "kubernetes_thing spec: expected computed,read-only computed object list, found optional block list (min_items 0)",
            "kubernetes_thing spec.port: expected computed,read-only computed object list, found nothing",
        ]
    );
    assert!(!result.ok());

    let functions = serde_json::json!({
        "manifest_decode": { "parameters": [{ "name": "manifest", "type": "string" }], "return_type": "dynamic" },
        "manifest_decode_multi": { "parameters": [{ "name": "yaml", "type": "string" }], "return_type": "dynamic" }
    });
    assert_eq!(
        compare_functions(functions.as_object().expect("an object")),
        [
            "manifest_decode_multi: expected parameters (manifest string), found (yaml string)",
            "manifest_encode: expected the function, found nothing",
        ]
    );
}

/// The comparison itself: a hand-made schema against a reference snippet.
#[test]
fn the_comparison_reports_each_kind_of_mismatch() {
    let reference = parse_reference(
        "# kind\ttype\tpath\tshape\tcollection\telement\tflags\n\
         resource\tkubernetes_thing\tid\tattribute\tsimple\tstring\toptional,computed\n\
         resource\tkubernetes_thing\tmetadata\tblock\tlist\tobject\trequired\n\
         resource\tkubernetes_thing\tmetadata.name\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_thing\tmetadata.uid\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\tmetadata.labels\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tports\tattribute\tlist\tnumber\toptional\n\
         resource\tkubernetes_thing\trule\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\trule.verbs\tattribute\tset\tstring\trequired\n\
         resource\tkubernetes_thing\tselector\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tselector.match_labels\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tspec\tblock_or_attribute\tsingle\tobject\trequired\n\
         resource\tkubernetes_thing\tspec.checks\tnested_attribute\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.checks.expression\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_thing\tspec.wait_for\tblock_or_attribute\tsingle\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.wait_for.fields\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tmanifest\tattribute\tmap\tany\trequired\n\
         resource\tkubernetes_thing\tstatus\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         resource\tkubernetes_thing\tstatus.ip\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\tstatus.host\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\ttimeouts\tblock\tsingle\tobject\toptional\n\
         resource\tkubernetes_thing\ttimeouts.create\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_other\tname\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_later\tname\tattribute\tsimple\tstring\trequired\n\
         data\tkubernetes_thing\tname\tattribute\tsimple\tstring\trequired\n",
        "resource",
    )
    .expect("a valid reference snippet");
    assert_eq!(reference.len(), 3, "resource rows only");
    let schemas = serde_json::json!({
        "kubernetes_thing": { "version": 0, "block": {
            "attributes": {
                "id": { "type": "string", "optional": true, "computed": true },
                "estate": { "type": "string", "computed": true },
                // Wrong collection: a set where the reference has a list.
                "ports": { "type": ["set", "number"], "optional": true },
                // Block vs attribute: `selector` is a block in the reference.
                "selector": { "type": ["list", ["object", { "match_labels": ["map", "string"] }, ["match_labels"]]],
                              "optional": true },
                "spec": { "required": true, "nested_type": { "nesting_mode": "single", "attributes": {
                    "checks": { "type": ["list", ["object", { "expression": "string" }]], "optional": true },
                    "wait_for": { "optional": true, "nested_type": { "nesting_mode": "single", "attributes": {
                        "fields": { "type": ["map", "string"], "optional": true }
                    }}}
                }}},
                "manifest": { "type": "dynamic", "required": true },
                "status": { "type": ["list", ["object", { "ip": "string" }]], "computed": true }
            },
            "block_types": {
                "metadata": { "nesting_mode": "list", "min_items": 1, "max_items": 1, "block": {
                    // `name` is missing; `labels` is required where the reference has optional.
                    "attributes": {
                        "uid": { "type": "string", "computed": true },
                        "labels": { "type": ["map", "string"], "required": true }
                    }
                }},
                "rule": { "nesting_mode": "list", "block": {
                    "attributes": { "verbs": { "type": ["set", "string"], "required": true } }
                }},
                "timeouts": { "nesting_mode": "single", "block": {
                    "attributes": { "create": { "type": "string", "optional": true } }
                }}
            }
        }}
        // `kubernetes_other` is not served and not pending; `kubernetes_later` is pending.
    });
    let result = compare(
        &reference,
        schemas.as_object().expect("an object"),
        &[("kubernetes_later", "issue 99")],
    );
    let expected = [
        "kubernetes_other: expected the resource type (1 configurable paths), found nothing",
        "kubernetes_thing metadata.name: expected optional attribute string, found nothing",
        "kubernetes_thing metadata.labels: expected optional attribute map(string), \
         found required attribute map(string)",
        "kubernetes_thing ports: expected optional attribute list(number), \
         found optional attribute set(number)",
        "kubernetes_thing selector: expected optional block list, \
         found optional attribute list(object({match_labels=optional(map(string))}))",
    ];
    assert_eq!(result.mismatches, expected, "{}", result.details());
    assert_eq!(result.missing_read_only, ["kubernetes_thing status.host"]);
    assert!(!result.ok());
    assert_eq!(
        result.summary(),
        "schema conformance: 0 of 3 resource types, 13 of 18 configurable paths \
         (1 types pending issue 99: 1 paths); read-only paths: 3 of 4 present"
    );

    // A missing block is one line, not one per path under it.
    let reference = parse_reference(
        "resource\tkubernetes_thing\tspec\tblock\tlist\tobject\trequired\n\
         resource\tkubernetes_thing\tspec.a\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_thing\tspec.b\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.b.c\tattribute\tsimple\tnumber\toptional\n",
        "resource",
    )
    .expect("a valid reference snippet");
    let schemas = serde_json::json!({ "kubernetes_thing": { "block": { "attributes": {} } } });
    let result = compare(&reference, schemas.as_object().expect("an object"), &[]);
    assert_eq!(
        result.mismatches,
        ["kubernetes_thing spec: expected required block list, found nothing"]
    );
    assert_eq!(
        result.summary().split(';').next(),
        Some("schema conformance: 0 of 1 resource types, 0 of 4 configurable paths")
    );

    // And a schema that matches conforms.
    let schemas = serde_json::json!({ "kubernetes_thing": { "block": { "block_types": {
        "spec": { "nesting_mode": "list", "min_items": 1, "block": {
            "attributes": { "a": { "type": "string", "optional": true } },
            "block_types": { "b": { "nesting_mode": "list", "block": {
                "attributes": { "c": { "type": "number", "optional": true, "computed": true } }
            }}}
        }}
    }}}});
    let result = compare(&reference, schemas.as_object().expect("an object"), &[]);
    assert!(result.ok(), "{}", result.details());
    assert_eq!(
        result.summary(),
        "schema conformance: 1 of 1 resource types, 4 of 4 configurable paths; \
         read-only paths: 0 of 0 present"
    );
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(11234), "11,234");
    assert_eq!(thousands(1234567), "1,234,567");
}
