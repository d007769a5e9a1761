//! Existing estates move in (issue 37): a state written as hashicorp/kubernetes 3.x writes it
//! (its provider address, schema version 1 for Deployments and Services, version 0's shapes for
//! older ones, no `estate`, the SDK's private timeouts, objects without our label) goes through
//! `terraform state replace-provider`; the first plan changes nothing the user wrote and says
//! how many objects the next apply stamps with the estate label; after that apply every object
//! carries it and the plan is empty. And `moved` between a type's two names plans no change.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, quote, unique_name};
use acceptance::migration::{hashicorp, live};
use serde_json::{Value, json};

/// A Deployment with container resources (blocks in hashicorp's version 0, maps since).
fn deployment(name: &str, ns: &str) -> String {
    format!(
        r#"resource "kubernetes_deployment_v1" {name} {{
{meta}  spec {{
    selector {{
      match_labels = {{ app = {name} }}
    }}
    template {{
      metadata {{
        labels = {{ app = {name} }}
      }}
      spec {{
        container {{
          name  = "app"
          image = "registry.k8s.io/pause:3.10"
          resources {{
            limits   = {{ cpu = "100m", memory = "64Mi" }}
            requests = {{ cpu = "50m" }}
          }}
        }}
      }}
    }}
  }}
}}
"#,
        name = quote(name),
        meta = metadata(name, ns),
    )
}

fn service(name: &str, ns: &str) -> String {
    format!(
        r#"resource "kubernetes_service" {name} {{
{meta}  spec {{
    selector = {{ app = {name} }}
    port {{
      port        = 80
      target_port = "8080"
    }}
  }}
}}
"#,
        name = quote(name),
        meta = metadata(name, ns),
    )
}

fn config_map(type_name: &str, ns: &str) -> String {
    format!(
        "resource \"{type_name}\" \"conf\" {{\n{}  data = {{ greeting = \"hello\" }}\n}}\n",
        metadata("conf", ns)
    )
}

/// The objects of the estate, as `(kubectl resource, name)`.
const OBJECTS: [(&str, &str); 5] = [
    ("deployment", "web"),
    ("deployment", "old"),
    ("service", "web"),
    ("service", "old"),
    ("configmap", "conf"),
];

/// The SDK's private data of a resource with hashicorp's 10-minute timeouts.
fn sdk_private() -> String {
    use base64::Engine as _;
    let ten_minutes = 600_000_000_000u64;
    let private = json!({
        "e2bfb730-ecaa-11e6-8f88-34363bc7c4c0": {"create": ten_minutes, "update": ten_minutes, "delete": ten_minutes},
        "schema_version": "1"
    });
    base64::engine::general_purpose::STANDARD.encode(private.to_string())
}

/// Version 0 of a workload: each container's `resources` limits and requests as blocks.
fn to_v0_resources(attributes: &mut Value) {
    for container in attributes["spec"][0]["template"][0]["spec"][0]["container"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        for resources in container["resources"].as_array_mut().into_iter().flatten() {
            for key in ["limits", "requests"] {
                let map = resources[key].take();
                resources[key] = if map.as_object().is_some_and(|m| !m.is_empty()) {
                    json!([map])
                } else {
                    json!([])
                };
            }
        }
    }
}

/// Rewrites the state file as hashicorp/kubernetes 3.x writes it.
fn as_hashicorp_wrote_it(work: &LiveDir) {
    let path = work.path().join("terraform.tfstate");
    let mut state: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("state file")).expect("state JSON");
    for resource in state["resources"].as_array_mut().expect("resources") {
        resource["provider"] = json!(format!("provider[\"{}\"]", hashicorp()));
        let type_name = resource["type"].as_str().unwrap_or_default().to_string();
        let old = resource["name"] == "old";
        for instance in resource["instances"].as_array_mut().expect("instances") {
            let instance = instance.as_object_mut().expect("instance");
            instance.remove("identity");
            instance.remove("identity_schema_version");
            let attributes = &mut instance["attributes"];
            attributes.as_object_mut().expect("attributes").remove("estate");
            let versioned =
                type_name.starts_with("kubernetes_deployment") || type_name.starts_with("kubernetes_service");
            match (versioned, old) {
                (true, false) => instance.insert("schema_version".into(), json!(1)),
                (true, true) if type_name.starts_with("kubernetes_deployment") => {
                    to_v0_resources(attributes);
                    instance.insert("schema_version".into(), json!(0))
                }
                (true, true) => {
                    attributes["load_balancer_ingress"] = json!([]);
                    instance.insert("schema_version".into(), json!(0))
                }
                _ => instance.insert("schema_version".into(), json!(0)),
            };
            if type_name.starts_with("kubernetes_deployment") {
                instance.insert("private".into(), json!(sdk_private()));
            }
        }
    }
    std::fs::write(&path, serde_json::to_vec_pretty(&state).expect("JSON")).expect("state written");
}

/// The attributes and blocks a plan's human output changes, other than what it may change:
/// the estate attribute and the object's resource version and generation (known after the
/// write). `show -json` cannot help: the plan file keeps the state as stored, at version 0,
/// which it refuses to render against the provider's version 1.
fn user_changes(plan: &str) -> Vec<String> {
    let actions = plan
        .split("Terraform will perform the following actions:")
        .nth(1)
        .unwrap_or_default();
    actions
        .lines()
        .map(str::trim_start)
        .filter(|l| {
            l.starts_with("~ ") || l.starts_with("+ ") || l.starts_with("- ") || l.starts_with("-/+ ")
        })
        .filter(|l| {
            let name = l.split_whitespace().nth(1).unwrap_or_default();
            !matches!(
                name,
                "estate" | "generation" | "resource_version" | "metadata" | "resource"
            )
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_state_hashicorp_wrote_moves_in_and_one_apply_stamps_the_estate() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "migrate");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    let body = [
        deployment("web", ns),
        deployment("old", ns),
        service("web", ns),
        service("old", ns),
        config_map("kubernetes_config_map", ns),
    ]
    .concat();
    work.write(&body);
    work.apply_ok("create");

    // hashicorp never labelled its objects.
    for (kind, name) in OBJECTS {
        cluster.kubectl_ok(&["label", kind, name, "-n", ns, "tofu-estate-"]);
    }
    as_hashicorp_wrote_it(&work);
    let replaced = work.run(&[
        "state",
        "replace-provider",
        "-auto-approve",
        &hashicorp(),
        &live(),
    ]);
    assert!(replaced.success(), "replace-provider failed:\n{replaced}");

    let plan = work.plan_exit();
    assert_eq!(plan.code, 2, "the first plan after replace-provider:\n{plan}");
    assert!(
        plan.stdout.contains("0 to add, 5 to change, 0 to destroy"),
        "{plan}"
    );
    let changed = user_changes(&plan.stdout);
    assert!(
        changed.is_empty(),
        "the plan changes what the user wrote:\n{}\n{plan}",
        changed.join("\n")
    );
    let said = plan.flat();
    let warning = format!("The next apply stamps the estate label tofu-estate={estate}");
    let warnings = said.matches(&warning).count();
    let folded = format!("and {} more similar warnings elsewhere", OBJECTS.len() - 1);
    assert!(
        warnings == OBJECTS.len() || (warnings == 1 && said.contains(&folded)),
        "the plan does not count the {} objects to stamp:\n{plan}",
        OBJECTS.len()
    );

    let applied = work.apply_ok("stamp");
    assert!(
        applied.stdout.contains("0 added, 5 changed, 0 destroyed"),
        "{applied}"
    );
    for (kind, name) in OBJECTS {
        let live = cluster.get_json(&[kind, name, "-n", ns]);
        assert_eq!(
            live["metadata"]["labels"]["tofu-estate"],
            estate.as_str(),
            "{kind}/{name}"
        );
    }
    let settled = work.plan_exit();
    assert_eq!(settled.code, 0, "not empty after the stamping apply:\n{settled}");

    // Another estate's object is refused by name, migrated state or not.
    cluster.kubectl_ok(&[
        "label",
        "configmap",
        "conf",
        "-n",
        ns,
        "tofu-estate=other",
        "--overwrite",
    ]);
    work.write(&body.replace("hello", "changed"));
    let refused = work.apply();
    assert!(
        !refused.success(),
        "another estate's object was written:\n{refused}"
    );
    assert!(
        refused.flat().contains("belongs to estate \"other\""),
        "{refused}"
    );
    cluster.kubectl_ok(&[
        "label",
        "configmap",
        "conf",
        "-n",
        ns,
        &format!("tofu-estate={estate}"),
        "--overwrite",
    ]);
}

#[test]
fn moved_between_a_types_two_names_plans_no_change() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "moved");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&config_map("kubernetes_config_map", ns));
    work.apply_ok("create");
    for (from, to) in [
        ("kubernetes_config_map", "kubernetes_config_map_v1"),
        ("kubernetes_config_map_v1", "kubernetes_config_map"),
    ] {
        work.write(&format!(
            "{}moved {{\n  from = {from}.conf\n  to   = {to}.conf\n}}\n",
            config_map(to, ns)
        ));
        let plan = work.plan_exit();
        assert!(plan.code != 1, "moved {from} -> {to} failed:\n{plan}");
        let said = plan.flat();
        assert!(
            said.contains(&format!("{from}.conf has moved to {to}.conf")),
            "{plan}"
        );
        assert!(said.contains("0 to add, 0 to change, 0 to destroy"), "{plan}");
        work.apply_ok("move");
        let settled = work.plan_exit();
        assert_eq!(
            settled.code, 0,
            "not empty after moving {from} -> {to}:\n{settled}"
        );
    }
}
