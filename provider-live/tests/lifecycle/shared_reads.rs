//! Reads shared across instances: one LIST per kind and namespace for a refresh or an apply,
//! the rest of a collection listed after a few reads, paging through large listings, and GETs
//! where LIST is forbidden.

use super::harness::{Harness, Instance, config_map, errors, namespace, refresh_in_one_run};
use kube::api::{DynamicObject, PostParams};
use plugin_runtime::Value;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn reads_share_one_list_per_kind_and_namespace() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let mut maps = Vec::new();
    for name in ["a", "b", "c"] {
        let mut cm = Instance::new(&h, "kubernetes_config_map", config_map(name, &[("k", name)])).await;
        cm.apply().await;
        maps.push(cm);
    }
    h.reset_requests().await;
    refresh_in_one_run(&h, &mut maps).await;
    assert_eq!(h.config_map_requests("list").await, 1, "one LIST for three reads");
    assert_eq!(h.config_map_requests("get").await, 0, "no GET for listed objects");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_apply_lists_each_kind_and_namespace_once() {
    const MAPS: u64 = 20;
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    h.reset_requests().await;
    // The apply of a run: the engine plans each object again just before applying it, all
    // through the run's one provider.
    let run = h.resource("kubernetes_config_map").await;
    let mut maps = Vec::new();
    for i in 0..MAPS {
        let name = format!("cm-{i:02}");
        let mut cm = Instance::new(&h, "kubernetes_config_map", config_map(&name, &[("k", &name)])).await;
        cm.resource = run.clone();
        cm.apply().await;
        maps.push(cm);
    }
    for cm in &mut maps {
        let applied = cm.state.clone();
        cm.refresh().await;
        assert_eq!(cm.state, applied, "a read after the write shows the write");
    }
    // The first plan's LIST serves every later plan: a write does not forget it. The plans of
    // the first three objects read them with GET (a listing of the estate's objects does not
    // say whether an object of that name exists); from the fourth, one LIST of every object
    // not the estate's answers that. Each object is read with GET by the apply's guard and,
    // written in this run, by its refresh.
    assert_eq!(
        h.config_map_requests("list").await,
        2,
        "the estate's objects and the rest, each listed once for the whole apply"
    );
    assert_eq!(h.config_map_requests("get").await, 3 + 2 * MAPS);
    assert_eq!(h.config_map_requests("patch").await, MAPS, "one write each");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rest_of_a_collection_is_listed_after_a_few_reads_it_lacked() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    for (name, labels) in [
        ("legacy-0", json!({"app": "web"})),
        ("legacy-1", json!({})),
        ("theirs-0", json!({"tofu-estate": "network"})),
        ("theirs-1", json!({"tofu-estate": "network"})),
    ] {
        h.kubectl_apply(
            "shop",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}),
        )
        .await;
    }
    h.reset_requests().await;
    // One run plans six creates: three read with GET, the rest from the LIST of the rest,
    // which still finds the unlabelled and the other estate's objects.
    let run = h.resource("kubernetes_config_map").await;
    let mut refusals = Vec::new();
    for name in ["new-0", "new-1", "new-2", "legacy-1", "theirs-1", "new-3"] {
        let mut cm = Instance::new(&h, "kubernetes_config_map", config_map(name, &[("k", "v")])).await;
        cm.resource = run.clone();
        match cm.plan().await {
            Ok(_) => refusals.push(format!("{name}: planned")),
            Err(d) => refusals.push(format!("{name}: {}", errors(&d))),
        }
    }
    assert_eq!(h.config_map_requests("get").await, 3, "three reads with GET");
    assert_eq!(h.config_map_requests("list").await, 2, "ours, then the rest");
    assert!(
        refusals[0..3].iter().all(|r| r.ends_with("planned")),
        "{refusals:?}"
    );
    assert!(
        refusals[3].contains("terraform import kubernetes_config_map.<name> \"shop/legacy-1\""),
        "{refusals:?}"
    );
    assert!(
        refusals[4].contains("network") && refusals[4].contains("shop/theirs-1"),
        "{refusals:?}"
    );
    assert!(refusals[5].ends_with("planned"), "{refusals:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reads_page_through_a_large_listing() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let import = async |n: usize| {
        let name = format!("cm-{n:04}");
        let mut cm = Instance::new(&h, "kubernetes_config_map", config_map(&name, &[])).await;
        cm.import(&format!("shop/{name}")).await;
        cm
    };
    let holds = |cm: &Instance, n: &str| assert_eq!(cm.state.get("data"), &Value::string_map([("n", n)]));

    // 1000 objects read in two requests: pages hold at least 500. One read object is on the
    // first page, one on the second.
    h.create_config_maps("shop", 0..1000).await;
    let mut maps = vec![import(1).await, import(750).await];
    h.reset_requests().await;
    refresh_in_one_run(&h, &mut maps).await;
    assert_eq!(h.config_map_requests("list").await, 2, "1000 objects in 2 pages");
    assert_eq!(
        h.config_map_requests("get").await,
        0,
        "both came from the listing"
    );
    holds(&maps[0], "1");
    holds(&maps[1], "750");

    // One more makes a third page: pages hold at most 500.
    h.create_config_maps("shop", 1000..1001).await;
    maps.push(import(1000).await);
    h.reset_requests().await;
    refresh_in_one_run(&h, &mut maps).await;
    assert_eq!(h.config_map_requests("list").await, 3, "1001 objects in 3 pages");
    assert_eq!(
        h.config_map_requests("get").await,
        0,
        "all three came from the listing"
    );
    holds(&maps[2], "1000");
}

#[tokio::test(flavor = "multi_thread")]
async fn reads_fall_back_to_get_where_list_is_forbidden() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let mut cm = Instance::new(
        &h,
        "kubernetes_config_map",
        config_map("app-config", &[("k", "v")]),
    )
    .await;
    cm.apply().await;
    // `getter` may get config maps in shop, and nothing else.
    let roles = h.api("rbac.authorization.k8s.io/v1", "Role", "roles", Some("shop"));
    let role: DynamicObject = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role", "metadata": {"name": "get-cm"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}))
    .unwrap();
    roles.create(&PostParams::default(), &role).await.unwrap();
    let bindings = h.api(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "rolebindings",
        Some("shop"),
    );
    let binding: DynamicObject = serde_json::from_value(json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding", "metadata": {"name": "getter"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "get-cm"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "getter"}]}))
    .unwrap();
    bindings.create(&PostParams::default(), &binding).await.unwrap();

    let before = cm.state.clone();
    cm.resource = h.resource_as("kubernetes_config_map", Some("getter")).await;
    cm.refresh().await;
    assert_eq!(cm.state, before, "read through GET after the LIST was forbidden");
}
