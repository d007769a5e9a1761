//! etcd compaction under a paged LIST (issue 47): kube-apiserver answers 410 Gone ("The provided
//! continue parameter is too old") to a `continue` token older than the last compaction, which
//! it runs every five minutes (with `--watch-cache=false`, lists read etcd). The fault proxy
//! compacts once before each step: the first LIST page after a first page gets the 410, on
//! either server.
//!
//! An estate with more objects of one kind than one page (520 ConfigMaps, pages of 500) plans
//! empty, `terraform query` lists each object once, and destroy leaves nothing: the paged LIST
//! starts again from the beginning, and the user sees none of it. Waits poll with GET and use
//! no watch, so they have no resourceVersion to lose.

use std::fs;
use std::io::Write;

use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use acceptance::{Cluster, Feature, skip_part_without};
use fault_proxy::{Fault, FaultPlan, FaultProxy, Scope};

/// More ConfigMaps than one LIST page holds.
const OBJECTS: usize = 520;

#[test]
fn a_paged_list_whose_continue_token_expired_starts_again_unseen() {
    let cluster = Cluster::start();
    let plan = FaultPlan {
        rate: 1.0,
        faults: vec![Fault::Compacted],
        scope: Scope::Every,
        ..FaultPlan::none(410)
    };
    let proxy = FaultProxy::start(cluster.kubeconfig(), plan);
    let dir = tempfile::tempdir().expect("a folder");
    let kubeconfig = dir.path().join("proxy.kubeconfig");
    proxy.write_kubeconfig(&kubeconfig);
    let ns = ScratchNamespace::create(&cluster, "compact");
    let work = LiveDir::new(&unique_name("compact"), &kubeconfig);
    work.write(&format!(
        "resource \"kubernetes_config_map_v1\" \"many\" {{\n  count = {OBJECTS}\n  metadata {{\n    \
         name      = \"many-${{count.index}}\"\n    namespace = {}\n  }}\n  data = {{ index = count.index }}\n}}\n",
        quote(&ns.name)
    ));
    let out = work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=20"]);
    assert!(out.success(), "the apply failed:\n{out}");

    proxy.reset_report();
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "the plan is not empty:\n{plan}");
    let expired = proxy.report().faults.get("Compacted").copied().unwrap_or(0);
    assert!(expired > 0, "no LIST page was answered 410: {}", proxy.report());
    say(&format!(
        "plan of {OBJECTS} ConfigMaps: {expired} pages answered 410 Gone, the list started again, \
         the plan is empty ({})",
        proxy.report()
    ));

    if !skip_part_without(Feature::Query, "the query over more objects than one page") {
        proxy.reset_report();
        let queries = format!(
            "list \"kubernetes_config_map_v1\" \"all\" {{\n  provider = kubernetes\n  limit    = 1000\n  \
             config {{\n    namespace = {}\n  }}\n}}\n",
            quote(&ns.name)
        );
        fs::write(work.path().join("all.tfquery.hcl"), queries).expect("the query file");
        let out = work.run(&["query", "-no-color"]);
        assert!(out.success(), "the query failed:\n{out}");
        let mut names: Vec<&str> = out
            .stdout
            .lines()
            .filter(|l| l.starts_with("list.kubernetes_config_map_v1.all "))
            .filter_map(|l| l.split_whitespace().find(|w| w.contains("/many-")))
            .collect();
        let found = names.len();
        names.sort();
        names.dedup();
        assert_eq!((found, names.len()), (OBJECTS, OBJECTS), "{out}");
        let expired = proxy.report().faults.get("Compacted").copied().unwrap_or(0);
        assert!(expired > 0, "no query page was answered 410: {}", proxy.report());
        fs::remove_file(work.path().join("all.tfquery.hcl")).expect("removing the query file");
    }

    work.write("");
    let out = work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=20"]);
    assert!(out.success(), "the destroy failed:\n{out}");
    let left = cluster.kubectl_ok(&[
        "get",
        "configmaps",
        "-n",
        &ns.name,
        "-l",
        "tofu-estate",
        "-o",
        "name",
    ]);
    assert!(left.stdout.trim().is_empty(), "left over: {}", left.stdout);
}

/// Prints past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "compaction: {line}");
}
