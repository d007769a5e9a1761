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

/// The kubectl resource (`volumeattributesclasses.storage.k8s.io`) of every type, from the
/// catalog's `kind` rows.
fn resources() -> BTreeMap<String, String> {
    beyond::catalog(beyond::RESOURCES)
        .lines()
        .filter(|l| l.starts_with("kind\t"))
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            let group = cols.get(3)?.rsplit_once('/').map_or("", |(g, _)| g);
            let plural = cols.get(5)?;
            let resource = if group.is_empty() {
                plural.to_string()
            } else {
                format!("{plural}.{group}")
            };
            Some((cols.get(1)?.to_string(), resource))
        })
        .collect()
}

/// The kubectl arguments naming the object of a state instance (`resource name [-n ns]`).
fn target(resource: &str, attributes: &Value) -> Vec<String> {
    let meta = &attributes["metadata"][0];
    let mut args = vec![
        resource.to_string(),
        meta["name"].as_str().unwrap_or_default().to_string(),
    ];
    if let Some(ns) = meta["namespace"].as_str().filter(|n| !n.is_empty()) {
        args.extend(["-n".to_string(), ns.to_string()]);
    }
    args
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
    let resources = resources();
    let states: BTreeMap<String, (String, Value)> = work
        .state_instances()
        .into_iter()
        .filter(|(_, i)| i.managed)
        .map(|(a, i)| (a, (i.type_name, i.stored["attributes"].clone())))
        .collect();
    let new_types = beyond::new_types();
    let missing: Vec<&String> = new_types
        .iter()
        .filter(|t| !states.values().any(|(ty, _)| ty == *t))
        .collect();
    assert!(
        missing.is_empty(),
        "types with no object in the configuration: {missing:?}"
    );
    let estate = format!("newtypes-{id}");
    for (address, (ty, attributes)) in states.iter().filter(|(_, (t, _))| new_types.contains(t)) {
        let args = target(&resources[ty], attributes);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let object = cluster.get_json(&args);
        assert_eq!(
            object["metadata"]["labels"]["tofu-estate"], estate,
            "{address}: {object}"
        );
    }

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
    let imported_types: BTreeMap<&String, &(String, Value)> = states
        .iter()
        .filter(|(_, (t, _))| new_types.contains(t))
        .collect();
    let addresses: Vec<&str> = imported_types.keys().map(|a| a.as_str()).collect();
    let rm = work.run(&[&["state", "rm"][..], &addresses[..]].concat());
    assert!(rm.success(), "state rm:\n{rm}");
    let blocks: String = imported_types
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
            && out.stdout.contains(&format!(
                "Resources: {} imported, 0 added, 0 changed",
                imported_types.len()
            )),
        "not a pure import of {} objects:\n{out}",
        imported_types.len()
    );
    std::fs::remove_file(work.path().join("imports.tf")).expect("imports.tf");
    let after = work.state_instances();
    let differences: Vec<String> = imported_types
        .iter()
        .filter_map(|(a, (_, v))| {
            let imported = &after.get(*a)?.stored["attributes"];
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
    for (address, (ty, attributes)) in &imported_types {
        let args = target(&resources[ty], attributes);
        let args: Vec<&str> = ["get"]
            .into_iter()
            .chain(args.iter().map(String::as_str))
            .chain(["-o", "json"])
            .collect();
        let out = cluster.kubectl(&args);
        let held = serde_json::from_str::<Value>(&out.stdout)
            .is_ok_and(|o| o["metadata"]["deletionTimestamp"].is_string());
        assert!(
            held || (!out.success() && out.flat().contains("NotFound")),
            "{address} is still there after destroy:\n{out}"
        );
    }
}
