//! A CustomResourceDefinition and objects of its kind in one configuration, with the real
//! engine (hashicorp/kubernetes #1367, #1917, #2673): the kind is unknown to the cluster at the
//! first plan, which plans the objects as written and warns; the apply creates the CRD, waits
//! for the server to serve the kind, then creates the objects. The next plan is empty, and one
//! destroy removes everything (objects first, as depends_on orders them). A kind nothing ever
//! serves is an apply error naming it and how long was waited; objects whose CRD was deleted
//! out of band count as deleted.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, gizmo_crd, quote, unique_name};

const KIND: &str = "Gizmo";
const PLURAL: &str = "gizmos";

/// Deletes the CustomResourceDefinition when dropped (best effort, without waiting), so a
/// failed run leaves no kind behind on a real cluster.
struct CrdCleanup<'a> {
    cluster: &'a Cluster,
    name: String,
}

impl Drop for CrdCleanup<'_> {
    fn drop(&mut self) {
        let _ = self.cluster.kubectl(&[
            "delete",
            "customresourcedefinition",
            &self.name,
            "--wait=false",
            "--ignore-not-found",
        ]);
    }
}

/// The CRD of group `group` (namespaced kind Gizmo with `spec.color` and `spec.size`, which
/// defaults to 3) and two Gizmos in `ns` that depend on it: red, and blue of size 5 in color
/// `blue`.
fn config(group: &str, ns: &str, blue: &str) -> String {
    let gizmo = |name: &str, spec: &str| {
        format!(
            "resource \"kubernetes_manifest\" \"{name}\" {{\n  depends_on = [kubernetes_manifest.crd]\n  \
             manifest = {{\n    apiVersion = \"{group}/v1\"\n    kind       = \"{KIND}\"\n    \
             metadata   = {{ name = \"{name}\", namespace = {} }}\n    spec       = {spec}\n  }}\n}}\n",
            quote(ns)
        )
    };
    let crd = gizmo_crd(
        group,
        r#"
        color = { type = "string" }
        size  = { type = "integer", default = 3 }
      "#,
    );
    format!(
        "{crd}\n{}\n{}",
        gizmo("red", "{ color = \"red\" }"),
        gizmo("blue", &format!("{{ color = {}, size = 5 }}", quote(blue)))
    )
}

fn label_of(value: &serde_json::Value) -> &serde_json::Value {
    &value["metadata"]["labels"]["tofu-estate"]
}

#[test]
fn a_crd_and_two_of_its_objects_apply_plan_empty_and_destroy_in_one_run_each() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "crd1");
    let estate = unique_name("est");
    let group = format!("{}.h4.example.com", unique_name("g"));
    let crd_name = format!("{PLURAL}.{group}");
    let _cleanup = CrdCleanup {
        cluster: &cluster,
        name: crd_name.clone(),
    };
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&config(&group, &ns.name, "blue"));

    // The kind is not served yet: planned from the configuration, with a warning.
    let out = work.run(&["plan", "-input=false"]);
    assert!(out.success(), "first plan:\n{out}");
    let flat = out.flat();
    assert!(
        flat.contains(&format!("Kind {KIND} of {group}/v1 is not served by the cluster"))
            && flat.contains("checked at apply"),
        "the first plan does not warn that the kind is checked at apply:\n{out}"
    );
    assert!(flat.contains("3 to add"), "{out}");

    let out = work.apply_ok("the CRD and its objects in one run");
    assert!(out.flat().contains("3 added"), "{out}");

    // All three carry the estate label; the server filled its default into red.
    let crd = cluster.get_json(&["customresourcedefinition", &crd_name]);
    assert_eq!(label_of(&crd), estate.as_str(), "{crd}");
    let resource = format!("{PLURAL}.{group}");
    for (name, size) in [("red", 3), ("blue", 5)] {
        let gizmo = cluster.get_json(&[&resource, name, "-n", &ns.name]);
        assert_eq!(label_of(&gizmo), estate.as_str(), "{gizmo}");
        assert_eq!(gizmo["spec"]["size"], size, "{gizmo}");
        assert_eq!(gizmo["kind"], KIND);
    }

    // Settled: the kind is known now, and the plan is empty.
    let out = work.plan_exit();
    assert_eq!(out.code, 0, "the plan after apply is not empty:\n{out}");

    // A known kind takes the usual path: an update, then an empty plan again.
    work.write(&config(&group, &ns.name, "green"));
    let out = work.plan_exit();
    assert_eq!(out.code, 2, "a changed color plans nothing:\n{out}");
    let out = work.apply_ok("a changed color");
    assert!(out.flat().contains("1 changed"), "{out}");
    let blue = cluster.get_json(&[&resource, "blue", "-n", &ns.name]);
    assert_eq!(blue["spec"]["color"], "green", "{blue}");
    let out = work.plan_exit();
    assert_eq!(out.code, 0, "the plan after the update is not empty:\n{out}");

    // One destroy removes the objects, then the CRD.
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
    assert!(out.flat().contains("3 destroyed"), "{out}");
    let gone = cluster.kubectl(&[
        "get",
        "customresourcedefinition",
        &crd_name,
        "--ignore-not-found",
        "-o",
        "name",
    ]);
    assert!(
        gone.success() && gone.stdout.trim().is_empty(),
        "the CRD is still there:\n{gone}"
    );
    let out = work.run(&["state", "list"]);
    assert!(
        out.success() && out.stdout.trim().is_empty(),
        "the state still holds resources:\n{out}"
    );
}

/// A manifest of `Gizmo` in `group/v2`, a version its definition does not serve, beside that
/// definition (which serves `v1`), with a create timeout of `timeout`.
fn unserved_version_config(group: &str, ns: &str, timeout: &str) -> String {
    format!(
        "{}resource \"kubernetes_manifest\" \"orphan\" {{\n  manifest = {{\n    apiVersion = \"{group}/v2\"\n    \
         kind       = \"{KIND}\"\n    metadata   = {{ name = \"lost\", namespace = {} }}\n  }}\n  \
         timeouts {{\n    create = \"{timeout}\"\n  }}\n  depends_on = [kubernetes_manifest.crd]\n}}\n",
        gizmo_crd(group, ""),
        quote(ns)
    )
}

/// A kind whose definition exists but does not serve the manifest's version will never be
/// served: the apply fails at once, naming the versions it serves, instead of waiting out
/// `timeouts.create` (a kind no definition defines at all: others_configs.rs).
#[test]
fn a_version_its_definition_does_not_serve_is_an_apply_error_naming_the_served_ones() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "crd2");
    let estate = unique_name("est");
    let group = format!("{}.h4.example.com", unique_name("none"));
    let _cleanup = CrdCleanup {
        cluster: &cluster,
        name: format!("{PLURAL}.{group}"),
    };
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&unserved_version_config(&group, &ns.name, "10m"));

    let out = work.apply();
    assert!(
        !out.success(),
        "an apply of a version nothing serves succeeded:\n{out}"
    );
    let flat = out.flat();
    assert!(
        flat.contains(&format!("Kind {KIND} of {group}/v2 is not served by the cluster"))
            && flat.contains(&format!("serves versions {group}/v1, not \"{group}/v2\"")),
        "the error does not name the kind and the versions served:\n{out}"
    );
    assert!(
        !flat.contains("waited"),
        "the apply waited for the version:\n{out}"
    );
    let out = work.plan_exit();
    assert_eq!(out.code, 2, "the failed object is still to be created:\n{out}");
    let out = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "destroy:\n{out}");
}

#[test]
fn objects_whose_crd_was_deleted_count_as_deleted_on_refresh_and_destroy() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "crd3");
    let estate = unique_name("est");
    let group = format!("{}.h4.example.com", unique_name("gone"));
    let crd_name = format!("{PLURAL}.{group}");
    let _cleanup = CrdCleanup {
        cluster: &cluster,
        name: crd_name.clone(),
    };
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&config(&group, &ns.name, "blue"));
    work.apply_ok("the CRD and its objects");

    // Out of band, the CRD goes, and its objects with it.
    let deleted = cluster.kubectl(&["delete", "customresourcedefinition", &crd_name]);
    assert!(deleted.success(), "kubectl delete:\n{deleted}");

    // A refresh finds all three gone (no error for the kind it cannot find) ...
    let out = work.plan_exit();
    assert_eq!(out.code, 2, "the plan after the CRD's deletion:\n{out}");
    assert!(out.flat().contains("3 to add"), "{out}");
    // ... and a destroy that does not refresh deletes nothing and succeeds.
    let out = work.run(&["destroy", "-auto-approve", "-input=false", "-refresh=false"]);
    assert!(out.success(), "destroy without refresh:\n{out}");
    assert!(out.flat().contains("3 destroyed"), "{out}");
}
