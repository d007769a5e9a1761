//! `terraform query` with the real engine (issue 11): list resources find this estate's
//! objects by default, the unlabelled ones with `unlabelled = true`, and another estate's only
//! when it is named; `-generate-config-out` writes resource and import blocks that are
//! `terraform fmt`-clean and, applied, change nothing but the estate stamp of each unlabelled
//! object. Terraform-only: OpenTofu has no list resources.

use std::fs;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, EngineOutput, Feature, skip_without};

/// A typed ConfigMap resource of `name` in `ns`.
fn config_map(label: &str, ns: &str, name: &str) -> String {
    format!(
        "resource \"kubernetes_config_map_v1\" {} {{\n  metadata {{\n    name      = {}\n    \
         namespace = {}\n  }}\n  data = {{ k = \"v\" }}\n}}\n",
        quote(label),
        quote(name),
        quote(ns)
    )
}

/// A `list` block of ConfigMaps in `ns` with `extra` config lines.
fn list_block(label: &str, ns: &str, extra: &str) -> String {
    format!(
        "list \"kubernetes_config_map_v1\" {} {{\n  provider = kubernetes\n  config {{\n    \
         namespace = {}\n{extra}  }}\n}}\n",
        quote(label),
        quote(ns)
    )
}

/// Runs `terraform query` on exactly `queries` (as the only `.tfquery.hcl` file).
fn query(work: &LiveDir, queries: &str, extra: &[&str]) -> EngineOutput {
    fs::write(work.path().join("search.tfquery.hcl"), queries).expect("writing the query file");
    let mut args = vec!["query", "-no-color"];
    args.extend_from_slice(extra);
    let out = work.run(&args);
    assert!(out.success(), "query failed:\n{out}");
    out
}

/// Which of `names` a query printed for the list block at `address` (`type.label`).
fn listed(out: &EngineOutput, address: &str, names: &[&String]) -> Vec<String> {
    let prefix = format!("list.{address} ");
    let mut found: Vec<String> = names
        .iter()
        .filter(|name| {
            out.stdout
                .lines()
                .any(|line| line.starts_with(&prefix) && line.contains(&format!("/{name}")))
        })
        .map(|name| name.to_string())
        .collect();
    found.sort();
    found
}

/// Whether generated HCL sets `attribute` anywhere (`attribute = ...`, at any alignment).
fn sets(text: &str, attribute: &str) -> bool {
    text.lines().any(|line| {
        line.trim_start()
            .strip_prefix(attribute)
            .is_some_and(|rest| rest.trim_start().starts_with('='))
    })
}

#[test]
fn query_finds_the_estate_and_adopts_unlabelled_objects() {
    if skip_without(Feature::Query) {
        return;
    }
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "query");
    let (mine, kept, other_cm, loose_a, loose_b) = (
        unique_name("mine"),
        unique_name("kept"),
        unique_name("theirs"),
        unique_name("loose"),
        unique_name("loose"),
    );
    for name in [&loose_a, &loose_b] {
        let out = cluster.kubectl(&["create", "configmap", name, "-n", &ns.name, "--from-literal=k=v"]);
        assert!(out.success(), "kubectl create configmap {name}:\n{out}");
    }
    let other_estate = unique_name("other");
    let other = LiveDir::new(&other_estate, cluster.kubeconfig());
    other.write(&config_map("theirs", &ns.name, &other_cm));
    other.apply_ok("the other estate's ConfigMap");

    let estate = unique_name("estate");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let body = config_map("mine", &ns.name, &mine);
    // `kept` carries this estate's label but is in no state (as after a lost state).
    work.write(&format!("{body}{}", config_map("kept", &ns.name, &kept)));
    work.apply_ok("this estate's ConfigMaps");
    let out = work.run(&["state", "rm", "kubernetes_config_map_v1.kept"]);
    assert!(out.success(), "state rm:\n{out}");
    work.write(&body);

    let all = [&mine, &kept, &other_cm, &loose_a, &loose_b];
    let queries = [
        list_block("own", &ns.name, ""),
        list_block("loose", &ns.name, "    unlabelled = true\n"),
        list_block(
            "theirs",
            &ns.name,
            &format!("    estate = {}\n", quote(&other_estate)),
        ),
    ]
    .concat();
    let out = query(&work, &queries, &[]);
    let mut own = vec![mine.clone(), kept.clone()];
    own.sort();
    assert_eq!(listed(&out, "kubernetes_config_map_v1.own", &all), own, "{out}");
    let mut loose = vec![loose_a.clone(), loose_b.clone()];
    loose.sort();
    assert_eq!(
        listed(&out, "kubernetes_config_map_v1.loose", &all),
        loose,
        "{out}"
    );
    assert_eq!(
        listed(&out, "kubernetes_config_map_v1.theirs", &all),
        vec![other_cm.clone()],
        "{out}"
    );

    // Generated configuration for the unlabelled objects (the cluster's own unlabelled
    // `kube-root-ca.crt` in every namespace is left out by a field selector) and for `kept`.
    let adopt = [
        list_block(
            "loose",
            &ns.name,
            "    unlabelled     = true\n    field_selector = \"metadata.name!=kube-root-ca.crt\"\n",
        ),
        list_block(
            "kept",
            &ns.name,
            &format!(
                "    field_selector = {}\n",
                quote(&format!("metadata.name={kept}"))
            ),
        ),
    ]
    .concat();
    query(&work, &adopt, &["-generate-config-out=adopted.tf"]);
    fs::remove_file(work.path().join("search.tfquery.hcl")).expect("removing the query file");
    let generated = work.path().join("adopted.tf");
    let text = fs::read_to_string(&generated).expect("generated configuration");
    let fmt = work.run(&["fmt", "-check", "-diff", "adopted.tf"]);
    assert!(
        fmt.success(),
        "generated configuration is not fmt-clean:\n{fmt}\n{text}"
    );
    for name in [&loose_a, &loose_b, &kept] {
        assert!(
            text.contains(&quote(name)),
            "{name} is not in the generated configuration:\n{text}"
        );
    }
    for attribute in ["uid", "resource_version", "generation", "estate", "id"] {
        assert!(
            !sets(&text, attribute),
            "the generated configuration sets read-only {attribute:?}:\n{text}"
        );
    }
    // The engine names the provider by its type (`live`); this configuration's local name for
    // it is `kubernetes`.
    fs::write(&generated, text.replace("= live\n", "= kubernetes\n")).expect("rewriting adopted.tf");

    let (plan, summary) = work.engine().plan_json(&[]);
    let summary = summary.unwrap_or_else(|| panic!("no plan written:\n{plan}"));
    let mut updated: Vec<(String, Vec<String>)> = summary
        .changes
        .iter()
        .filter(|(_, actions)| actions.iter().any(|a| a != "no-op"))
        .cloned()
        .collect();
    updated.sort();
    let update = vec!["update".to_string()];
    assert_eq!(
        updated,
        vec![
            ("kubernetes_config_map_v1.loose_0".to_string(), update.clone()),
            ("kubernetes_config_map_v1.loose_1".to_string(), update),
        ],
        "the adoption plan is not one update per unlabelled object:\n{plan}"
    );
    let kept_change = summary.raw["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == "kubernetes_config_map_v1.kept_0")
        .unwrap_or_else(|| panic!("no import of {kept}:\n{plan}"));
    assert!(kept_change["change"]["importing"].is_object(), "{kept_change}");
    for change in summary.raw["resource_changes"].as_array().into_iter().flatten() {
        if change["address"].as_str().is_some_and(|a| a.contains(".loose_")) {
            let (before, after) = (&change["change"]["before"], &change["change"]["after"]);
            assert!(before["estate"].is_null(), "{change}");
            assert_eq!(after["estate"], estate.as_str(), "{change}");
            assert_eq!(
                before["data"], after["data"],
                "the adoption changes data: {change}"
            );
            assert!(
                change["change"]["importing"].is_object(),
                "not an import: {change}"
            );
        }
    }
    work.apply_ok("adopt the unlabelled ConfigMaps");
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "plan after the adoption is not empty:\n{again}");
    for name in [&loose_a, &loose_b] {
        let live = cluster.get_json(&["configmap", name, "-n", &ns.name]);
        assert_eq!(
            live["metadata"]["labels"]["tofu-estate"],
            estate.as_str(),
            "{live}"
        );
    }

    // Now this estate's: the default listing finds them all, typed or as manifests.
    let manifests = format!(
        "list \"kubernetes_manifest\" \"own\" {{\n  provider = kubernetes\n  config {{\n    \
         api_version = \"v1\"\n    kind        = \"ConfigMap\"\n    namespace   = {}\n  }}\n}}\n",
        quote(&ns.name)
    );
    let out = query(
        &work,
        &format!("{}{manifests}", list_block("own", &ns.name, "")),
        &[],
    );
    let mut ours = vec![mine.clone(), kept.clone(), loose_a.clone(), loose_b.clone()];
    ours.sort();
    assert_eq!(listed(&out, "kubernetes_config_map_v1.own", &all), ours, "{out}");
    assert_eq!(listed(&out, "kubernetes_manifest.own", &all), ours, "{out}");
    fs::remove_file(work.path().join("search.tfquery.hcl")).expect("removing the query file");

    // `limit` stops the listing after that many objects.
    let first = format!(
        "list \"kubernetes_config_map_v1\" \"first\" {{\n  provider = kubernetes\n  limit    = 1\n  \
         config {{\n    namespace  = {}\n    unlabelled = true\n  }}\n}}\n",
        quote(&ns.name)
    );
    let out = query(&work, &first, &[]);
    let lines = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("list.kubernetes_config_map_v1.first"))
        .count();
    assert_eq!(lines, 1, "limit = 1 listed {lines} objects:\n{out}");
    fs::remove_file(work.path().join("search.tfquery.hcl")).expect("removing the query file");

    // An identity that may not list is told which verb, resource and namespace it lacks.
    let restricted = LiveDir::new(&estate, &cluster.kubeconfig_for("restricted"));
    fs::write(
        restricted.path().join("search.tfquery.hcl"),
        list_block("own", &ns.name, ""),
    )
    .expect("writing the query file");
    let refused = restricted.run(&["query", "-no-color"]);
    assert!(!refused.success(), "a restricted identity listed:\n{refused}");
    assert!(
        refused.flat().contains(&format!(
            "Not allowed to list configmaps in namespace \"{}\"",
            ns.name
        )) && refused.flat().contains("the `list` verb"),
        "the refusal does not name the verb, resource and namespace:\n{refused}"
    );

    let destroy = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(destroy.success(), "destroy failed:\n{destroy}");
    let destroy = other.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(
        destroy.success(),
        "destroy of the other estate failed:\n{destroy}"
    );
}
