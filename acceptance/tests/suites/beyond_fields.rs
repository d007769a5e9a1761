//! The fields Kubernetes 1.36 serves beyond hashicorp/kubernetes 3.4.0 (`make catalog`
//! generates them from the server's OpenAPI: docs/beyond-3.4.0.md). One configuration writes
//! every one of them that a user sets; each must reach the object, read back into state, and
//! leave the next plan empty. A field the catalog gains without a value here fails the test,
//! so the list cannot outgrow its proof.

use std::collections::BTreeSet;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, beyond};
use serde_json::Value as Json;

/// The configuration (`fixtures/beyond-fields.tf`): a Deployment per pod-spec concern (no
/// replicas: only the API's validation and storage matter), and one object of every other type
/// with new fields.
fn config(ns: &str, id: &str) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/beyond-fields.tf"))
        .expect("the configuration");
    text.replace("__NS__", &quote(ns)).replace("__ID__", id)
}

/// The catalog's generated fields a user sets, as `(group, path)`: a pod template's and a Job
/// spec's fields once, whichever type holds them, and an init container's as a container's
/// (one OpenAPI schema, one generated subtree). The types beyond 3.4.0 have a test of their own
/// (`new_types.rs`).
fn generated_fields() -> BTreeSet<(String, String)> {
    let new_types = beyond::new_types();
    beyond::field_rows(&beyond::catalog(beyond::RESOURCES))
        .into_iter()
        .filter(|f| f.beyond && f.presence != "computed" && !new_types.contains(&f.type_name))
        .map(|f| canonical(&f.type_name, &f.path))
        .collect()
}

/// The group and path of a field of type `ty` (see [`generated_fields`]).
fn canonical(ty: &str, path: &str) -> (String, String) {
    let pod_spec = ["spec.job_template.spec.template.spec.", "spec.template.spec."];
    let (group, rest) = if let Some(rest) = pod_spec.iter().find_map(|p| path.strip_prefix(p)) {
        ("pod", rest)
    } else if let Some(rest) = path.strip_prefix("spec.job_template.spec.") {
        ("job", rest)
    } else if ty == "kubernetes_pod_v1" && path.starts_with("spec.") {
        ("pod", &path[5..])
    } else if ty == "kubernetes_job_v1" && path.starts_with("spec.") {
        ("job", &path[5..])
    } else {
        (ty, path)
    };
    let rest = rest.strip_prefix("init_").unwrap_or(rest);
    (group.to_string(), rest.to_string())
}

/// Whether `value` holds something at the Terraform `path` (blocks are lists: any element).
fn has_value(value: &Json, path: &[&str]) -> bool {
    match value {
        Json::Array(items) => items.iter().any(|i| has_value(i, path)),
        Json::Null => false,
        _ => match path.split_first() {
            None => !matches!(value, Json::String(s) if s.is_empty()),
            Some((head, rest)) => value.get(*head).is_some_and(|v| has_value(v, rest)),
        },
    }
}

#[test]
fn every_field_beyond_hashicorp_is_written_read_back_and_plans_nothing() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "beyond");
    let id = unique_name("beyond");
    let work = LiveDir::new(&id, cluster.kubeconfig());
    work.write(&config(&ns.name, &id));
    work.apply_ok("every field beyond hashicorp/kubernetes 3.4.0");

    // Read back: every generated field holds a value in some resource's state.
    let states = work.state_instances();
    let missing: Vec<String> = generated_fields()
        .into_iter()
        .filter(|(group, path)| {
            !states.values().filter(|i| i.managed).any(|instance| {
                let ty = instance.type_name.as_str();
                let attributes = &instance.stored["attributes"];
                let candidates: Vec<String> = match group.as_str() {
                    "pod" => [
                        "spec.template.spec.",
                        "spec.job_template.spec.template.spec.",
                        "spec.",
                    ]
                    .iter()
                    .flat_map(|p| [format!("{p}{path}"), format!("{p}init_{path}")])
                    .collect(),
                    "job" => vec![format!("spec.{path}"), format!("spec.job_template.spec.{path}")],
                    other if other == ty => vec![path.clone()],
                    _ => Vec::new(),
                };
                candidates.iter().any(|c| {
                    let parts: Vec<&str> = c.split('.').collect();
                    has_value(attributes, &parts)
                })
            })
        })
        .map(|(group, path)| format!("{group}: {path}"))
        .collect();
    assert!(
        missing.is_empty(),
        "generated fields with no value in state (add them to the configuration):\n  {}",
        missing.join("\n  ")
    );

    // Written: the objects hold them.
    let pod = cluster.get_json(&["deployment", "pod", "-n", &ns.name]);
    assert_eq!(pod["spec"]["template"]["spec"]["hostUsers"], false, "{pod}");
    assert_eq!(
        pod["spec"]["template"]["spec"]["schedulingGates"][0]["name"],
        "example.com/hold"
    );
    let containers = cluster.get_json(&["deployment", "containers", "-n", &ns.name]);
    let main = &containers["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(main["resizePolicy"][0]["restartPolicy"], "NotRequired", "{main}");
    assert_eq!(
        main["env"][0]["valueFrom"]["fileKeyRef"]["volumeName"], "envs",
        "{main}"
    );
    let service = cluster.get_json(&["service", "service", "-n", &ns.name]);
    assert_eq!(service["spec"]["trafficDistribution"], "PreferClose");
    let job = cluster.get_json(&["job", "job", "-n", &ns.name]);
    assert_eq!(
        job["spec"]["successPolicy"]["rules"][0]["succeededCount"], 1,
        "{job}"
    );

    // Data sources read them too. (A data source read in the apply that creates its object
    // reads its optional blocks empty: a second apply reads them.)
    work.apply_ok("the data sources again");
    assert_eq!(work.run(&["output", "-raw", "claim_class"]).stdout, "fast");
    assert_eq!(work.run(&["output", "-raw", "traffic"]).stdout, "PreferClose");

    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after apply is not empty:\n{next}");

    work.write("");
    work.apply_ok("destroy");
}
