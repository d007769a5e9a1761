//! The types beyond hashicorp/kubernetes 3.4.0: one for every GA kind the server lets a client
//! create that hashicorp has no type for (`provider-live/catalog/new_types.tsv`; `make catalog`
//! accounts for every kind of the server's discovery in docs/beyond-3.4.0.md). One configuration
//! (`fixtures/new-types.tf`) writes an object of each; each must be on the server as written,
//! labelled with the estate, do what it is for (the mutating policy labels a ConfigMap, the
//! validating one refuses a Secret), leave the next plan empty, import into an empty state as it
//! was, and go with destroy. A type the catalog gains without an object here fails the test.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::objects::{Target, described, kubectl_get, kubectl_target};
use acceptance::{Cluster, beyond, imports};
use serde_json::Value;

/// The configuration, for namespace `ns`, names ending in `id` and addresses in `10.250.<octet>.`.
fn config(ns: &str, id: &str, octet: u8) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/new-types.tf"))
        .expect("the configuration");
    text.replace("__NS__", &quote(ns))
        .replace("__ID__", id)
        .replace("__OCTET__", &octet.to_string())
}

#[test]
fn every_type_beyond_hashicorp_creates_works_plans_empty_imports_and_destroys() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "newtypes");
    let id = unique_name("nt").trim_start_matches("nt-").to_string();
    let octet = id.bytes().fold(0u8, |a, b| a.wrapping_mul(31).wrapping_add(b));
    let work = LiveDir::new(&format!("newtypes-{id}"), cluster.kubeconfig());
    work.write(&config(&ns.name, &id, octet));
    work.apply_ok("one object of every type beyond hashicorp/kubernetes 3.4.0");

    // Every type has an object, on the server with the estate's label.
    let new_types = beyond::new_types();
    let ours: BTreeMap<String, (String, Value)> = work
        .state_instances()
        .into_iter()
        .filter(|(_, i)| i.managed && new_types.contains(&i.type_name))
        .map(|(a, i)| (a, (i.type_name, i.stored["attributes"].clone())))
        .collect();
    let missing: Vec<&String> = new_types
        .iter()
        .filter(|t| !ours.values().any(|(ty, _)| ty == *t))
        .collect();
    assert!(
        missing.is_empty(),
        "types with no object in the configuration: {missing:?}"
    );
    let targets: Vec<Target> = ours.values().map(|(ty, v)| kubectl_target(ty, v)).collect();
    let live = kubectl_get(&cluster, &targets, false);
    assert_eq!(live.len(), targets.len(), "{targets:?}");
    let estate = format!("newtypes-{id}");
    let unlabelled: Vec<String> = live
        .iter()
        .filter(|o| o["metadata"]["labels"]["tofu-estate"] != estate.as_str())
        .map(described)
        .collect();
    assert!(unlabelled.is_empty(), "without the estate label: {unlabelled:?}");

    // As written.
    let class = cluster.get_json(&["volumeattributesclass", &format!("gold-{id}")]);
    assert_eq!(class["driverName"], "csi.example.com", "{class}");
    assert_eq!(class["parameters"]["iops"], "3000", "{class}");
    let address = cluster.get_json(&["ipaddress", &format!("10.250.{octet}.10")]);
    assert_eq!(address["spec"]["parentRef"]["name"], "owner", "{address}");
    let claim = cluster.get_json(&["resourceclaim", "one", "-n", &ns.name]);
    let requests = &claim["spec"]["devices"]["requests"];
    assert_eq!(
        requests[0]["exactly"]["tolerations"][0]["operator"], "Exists",
        "{claim}"
    );
    assert_eq!(
        requests[1]["firstAvailable"][1]["allocationMode"], "All",
        "{claim}"
    );
    let slice = cluster.get_json(&["resourceslice", &format!("gpus-{id}")]);
    assert_eq!(slice["spec"]["devices"][1]["name"], "gpu-1", "{slice}");
    let flows = cluster.get_json(&["flowschema", &format!("batch-{id}")]);
    assert_eq!(
        flows["spec"]["rules"][0]["subjects"][1]["serviceAccount"]["name"], "batch",
        "{flows}"
    );

    // What they are for: the mutating policy labels a ConfigMap created in the namespace (once
    // the server has loaded it), and the validating one refuses a Secret it does not like.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut attempt = 0;
    let stamped = loop {
        attempt += 1;
        let name = format!("probe-{attempt}");
        cluster.kubectl_ok(&["create", "configmap", &name, "-n", &ns.name]);
        let probe = cluster.get_json(&["configmap", &name, "-n", &ns.name]);
        if probe["metadata"]["labels"]["stamped-by"] == "platform" || Instant::now() > deadline {
            break probe;
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(
        stamped["metadata"]["labels"]["stamped-by"], "platform",
        "{stamped}"
    );
    let refused = loop {
        let out = cluster.kubectl(&["create", "secret", "generic", "db", "-n", &ns.name]);
        if !out.success() || Instant::now() > deadline {
            break out;
        }
        cluster.kubectl_ok(&["delete", "secret", "db", "-n", &ns.name]);
        std::thread::sleep(Duration::from_secs(2));
    };
    assert!(
        refused.flat().contains("a Secret's name starts with app-"),
        "the validating policy did not refuse:\n{refused}"
    );
    cluster.kubectl_ok(&["create", "secret", "generic", "app-db", "-n", &ns.name]);

    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after apply is not empty:\n{plan}");

    // Import into an empty state: the same state, an empty plan.
    let addresses: Vec<&str> = ours.keys().map(String::as_str).collect();
    let rm = work.run(&[&["state", "rm"][..], &addresses[..]].concat());
    assert!(rm.success(), "state rm:\n{rm}");
    let blocks: String = ours
        .iter()
        .map(|(a, (_, v))| {
            let id = v["id"].as_str().unwrap_or_default();
            format!("import {{\n  to = {a}\n  id = {}\n}}\n", quote(id))
        })
        .collect();
    std::fs::write(work.path().join("imports.tf"), blocks).expect("imports.tf");
    let out = work.run(&["apply", "-auto-approve"]);
    assert!(
        out.success()
            && out
                .stdout
                .contains(&format!("Resources: {} imported, 0 added, 0 changed", ours.len())),
        "not a pure import of {} objects:\n{out}",
        ours.len()
    );
    std::fs::remove_file(work.path().join("imports.tf")).expect("imports.tf");
    let after = work.state_instances();
    let differences: Vec<String> = ours
        .iter()
        .filter_map(|(a, (_, v))| {
            let imported = &after.get(a)?.stored["attributes"];
            (imports::comparable(v) != imports::comparable(imported))
                .then(|| format!("{a}:\n  applied  {v}\n  imported {imported}"))
        })
        .collect();
    assert!(
        differences.is_empty(),
        "imported states differ:\n{}",
        differences.join("\n")
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan after import is not empty:\n{plan}");

    // Destroy: every object goes, or is being deleted while a controller's finalizer holds it
    // (a class of volume attributes until no claim uses it, a range until no address is in it).
    let out = work.run(&["destroy", "-auto-approve"]);
    assert!(out.success(), "destroy failed:\n{out}");
    let remaining: Vec<String> = kubectl_get(&cluster, &targets, true)
        .iter()
        .filter(|o| !o["metadata"]["deletionTimestamp"].is_string())
        .map(described)
        .collect();
    assert!(remaining.is_empty(), "still there after destroy: {remaining:?}");
}
