//! The typed resources and `kubernetes_manifest` driven directly (no engine) against the
//! in-memory Kubernetes API server: create, read, no diff, update, drift, adopt, foreign and
//! unlabelled objects, the stale-plan guard, import, shared reads, delete.

#[path = "lifecycle/harness.rs"]
mod harness;
#[path = "lifecycle/shared_reads.rs"]
mod shared_reads;

use kube::api::{Patch, PatchParams};
use plugin_runtime::{ImportRequest, PlanResponse, Value};
use provider_live::conform;
use serde_json::json;

use harness::{Harness, Instance, config_map, errors, labels_of, meta, namespace, proposed};

#[tokio::test(flavor = "multi_thread")]
async fn config_map_lifecycle() {
    let h = Harness::start("app").await;
    let mut ns = namespace(&h, "shop").await;
    assert_eq!(ns.state.get("id"), &Value::string("shop"));
    assert_eq!(ns.state.get("estate"), &Value::string("app"));
    assert!(
        ns.no_diff().await,
        "namespace: server label kubernetes.io/metadata.name must not diff"
    );

    // Create: stamped, and the next plan is empty.
    let mut cm = Instance::new(
        &h,
        "kubernetes_config_map_v1",
        config_map("app-config", &[("k", "v")]),
    )
    .await;
    let plan = cm.apply().await;
    assert!(plan.diagnostics.is_empty());
    let live = h.live_cm("shop", "app-config").await.unwrap();
    assert_eq!(labels_of(&live), json!({"app": "web", "tofu-estate": "app"}));
    assert_eq!(cm.state.get("id"), &Value::string("shop/app-config"));
    assert_eq!(
        provider_live::metadata_of(&cm.state).get("labels"),
        &Value::string_map([("app", "web")])
    );
    assert!(cm.no_diff().await);

    // Update in place.
    cm.config = conform(
        &cm.resource.schema().block,
        config_map("app-config", &[("k", "v2")]),
    );
    let plan = cm.plan().await.unwrap();
    assert!(plan.requires_replace.is_empty());
    cm.apply_plan(&plan).await;
    assert_eq!(
        h.live_cm("shop", "app-config").await.unwrap()["data"],
        json!({"k": "v2"})
    );
    assert!(cm.no_diff().await);

    // Others' labels and annotations never diff; a changed configured value does.
    h.kubectl_patch(
        "shop",
        "app-config",
        json!({"metadata": {"labels": {"other": "x"},
        "annotations": {"kubectl.kubernetes.io/restartedAt": "now"}}}),
    )
    .await;
    assert!(cm.no_diff().await);
    h.kubectl_patch(
        "shop",
        "app-config",
        json!({"data": {"k": "drift", "extra": "e"}}),
    )
    .await;
    assert!(!cm.no_diff().await, "drift shows as a change");
    cm.apply().await;
    assert_eq!(
        h.live_cm("shop", "app-config").await.unwrap()["data"],
        json!({"k": "v2"}),
        "drift undone"
    );
    assert!(cm.no_diff().await);

    // Stale plan: the object moves between plan and apply. The engine plans again before
    // applying, with what the refresh saw.
    cm.config = conform(
        &cm.resource.schema().block,
        config_map("app-config", &[("k", "v3")]),
    );
    cm.next_run().await;
    cm.refresh().await;
    let plan = cm.plan().await.unwrap();
    h.kubectl_patch("shop", "app-config", json!({"data": {"k": "someone"}}))
        .await;
    cm.next_run().await;
    let err = errors(&cm.plan().await.unwrap_err());
    assert!(
        err.contains("The approved plan no longer matches the live system"),
        "{err}"
    );
    h.kubectl_patch("shop", "app-config", json!({"data": {"k": "v2"}}))
        .await;
    cm.next_run().await;
    assert_eq!(
        cm.plan().await.unwrap().planned_private,
        plan.planned_private,
        "applies once restored"
    );
    h.kubectl_patch("shop", "app-config", json!({"data": {"k": "someone"}}))
        .await;
    let d = cm.apply_plan(&plan).await;
    assert!(
        errors(&d).contains("The approved plan no longer matches the live system"),
        "{d:?}"
    );
    assert!(errors(&d).contains("shop/app-config"));
    assert_eq!(
        h.live_cm("shop", "app-config").await.unwrap()["data"],
        json!({"k": "someone"}),
        "untouched"
    );
    h.kubectl_patch("shop", "app-config", json!({"data": {"k": "v2"}}))
        .await;
    let d = cm.apply_plan(&plan).await;
    assert!(
        !d.has_errors(),
        "the same plan applies once the object is back: {d:?}"
    );
    assert_eq!(
        h.live_cm("shop", "app-config").await.unwrap()["data"],
        json!({"k": "v3"})
    );

    // Lost state: the create adopts our own object, with a warning at plan and at apply.
    let kept = cm.state.clone();
    cm.state = Value::Null;
    let plan = cm.plan().await.unwrap();
    assert!(plan.diagnostics.0.iter().any(|d| d.summary.contains("Adopting")));
    let d = cm.apply_plan(&plan).await;
    assert!(
        !d.has_errors() && d.0.iter().any(|d| d.summary.contains("Adopting")),
        "{d:?}"
    );
    assert_eq!(
        provider_live::metadata_of(&cm.state).get("uid"),
        provider_live::metadata_of(&kept).get("uid")
    );
    assert!(cm.no_diff().await);

    // Rename: replace.
    let mut renamed = config_map("app-config-2", &[("k", "v3")]);
    renamed = conform(&cm.resource.schema().block, renamed);
    cm.config = renamed;
    let plan = cm.plan().await.unwrap();
    assert_eq!(plan.requires_replace.len(), 1);

    // Delete.
    cm.config = conform(
        &cm.resource.schema().block,
        config_map("app-config", &[("k", "v3")]),
    );
    let d = cm.destroy().await;
    assert!(!d.has_errors(), "{d:?}");
    assert!(h.live_cm("shop", "app-config").await.is_none());
    // A deleted object reads as gone, and plans a create.
    cm.state = kept;
    cm.refresh().await;
    assert_eq!(cm.state, Value::Null);

    let d = ns.destroy().await;
    assert!(!d.has_errors(), "{d:?}");
    let namespaces = h.api("v1", "Namespace", "namespaces", None);
    assert!(
        namespaces.get_opt("shop").await.unwrap().is_none(),
        "namespace delete waits until gone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_and_unlabelled_objects() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    h.kubectl_apply(
        "shop",
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "theirs", "labels": {"tofu-estate": "network"}}, "data": {"k": "n"}}),
    )
    .await;
    h.kubectl_apply(
        "shop",
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "legacy", "labels": {"app": "web"}}, "data": {"k": "v"}}),
    )
    .await;

    // Another estate's object: refused at plan and at apply, untouched.
    let mut theirs = Instance::new(
        &h,
        "kubernetes_config_map",
        config_map("theirs", &[("k", "mine")]),
    )
    .await;
    let err = errors(&theirs.plan().await.unwrap_err());
    assert!(err.contains("network") && err.contains("shop/theirs"), "{err}");
    let forged = PlanResponse {
        planned_state: proposed(&theirs.resource.schema().block, &Value::Null, &theirs.config),
        ..Default::default()
    };
    let d = theirs.apply_plan(&forged).await;
    assert!(errors(&d).contains("network"), "{d:?}");
    assert_eq!(
        h.live_cm("shop", "theirs").await.unwrap()["data"],
        json!({"k": "n"})
    );

    // An unlabelled object: the create says to import it.
    let mut legacy = Instance::new(&h, "kubernetes_config_map", config_map("legacy", &[("k", "v")])).await;
    let err = errors(&legacy.plan().await.unwrap_err());
    assert!(
        err.contains("terraform import kubernetes_config_map.<name> \"shop/legacy\""),
        "{err}"
    );

    // Import, then the plan only stamps the estate.
    legacy.import("shop/legacy").await;
    legacy.refresh().await;
    assert_eq!(legacy.state.get("estate"), &Value::Null);
    let plan = legacy.plan().await.unwrap();
    let mut expected = legacy.state.clone();
    expected.set("estate", Value::string("app"));
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(Value::List(m)) = v.get_mut("metadata") {
            m[0].set("resource_version", Value::Null);
            m[0].set("generation", Value::Null);
        }
        v
    };
    assert_eq!(
        strip(&plan.planned_state),
        strip(&expected),
        "only the estate changes"
    );
    legacy.apply_plan(&plan).await;
    assert_eq!(
        labels_of(&h.live_cm("shop", "legacy").await.unwrap()),
        json!({"app": "web", "tofu-estate": "app"})
    );
    assert!(legacy.no_diff().await);

    // Never delete another estate's object, even one in state.
    let mut stolen = Instance::new(&h, "kubernetes_config_map", config_map("theirs", &[("k", "n")])).await;
    stolen.import("shop/theirs").await;
    let d = stolen.destroy().await;
    assert!(errors(&d).contains("network"), "{d:?}");
    assert!(h.live_cm("shop", "theirs").await.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn secret_and_service_account() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let mut secret = Instance::new(
        &h,
        "kubernetes_secret",
        Value::object([
            ("metadata", meta("creds", Some("shop"), Value::Null)),
            ("data", Value::string_map([("password", "hunter2")])),
        ]),
    )
    .await;
    let plan = secret.apply().await;
    assert_eq!(
        plan.planned_state.get("type"),
        &Value::string("Opaque"),
        "hashicorp's default, planned"
    );
    assert_eq!(secret.state.get("type"), &Value::string("Opaque"));
    assert!(secret.no_diff().await);

    let mut sa = Instance::new(
        &h,
        "kubernetes_service_account",
        Value::object([
            (
                "metadata",
                meta("app", Some("shop"), Value::string_map([("team", "shop")])),
            ),
            (
                "image_pull_secret",
                Value::Set(vec![Value::object([("name", Value::string("regcred"))])]),
            ),
        ]),
    )
    .await;
    sa.apply().await;
    assert!(sa.no_diff().await);
    let sas = h.api("v1", "ServiceAccount", "serviceaccounts", Some("shop"));
    let live = serde_json::to_value(sas.get("app").await.unwrap()).unwrap();
    assert_eq!(live["imagePullSecrets"], json!([{"name": "regcred"}]));
    assert_eq!(labels_of(&live)["tofu-estate"], json!("app"));
}

#[tokio::test(flavor = "multi_thread")]
async fn manifest_lifecycle() {
    let h = Harness::start("app").await;
    namespace(&h, "platform").await;
    let manifest = |value: &str| {
        Value::object([
            (
                "manifest",
                Value::from_json(&json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "handoff", "namespace": "platform"}, "data": {"k": value}})),
            ),
            (
                "field_manager",
                Value::List(vec![Value::object([("force_conflicts", Value::Bool(true))])]),
            ),
        ])
    };
    let mut m = Instance::new(&h, "kubernetes_manifest", manifest("v")).await;
    let plan = m.apply().await;
    assert!(plan.planned_state.get("object").is_unknown());
    let live = h.live_cm("platform", "handoff").await.unwrap();
    assert_eq!(labels_of(&live), json!({"tofu-estate": "app"}));
    assert_eq!(m.state.get("estate"), &Value::string("app"));
    assert!(m.no_diff().await);

    h.kubectl_patch("platform", "handoff", json!({"data": {"k": "drift"}}))
        .await;
    assert!(!m.no_diff().await);
    m.apply().await;
    assert!(m.no_diff().await);

    let imported = m
        .resource
        .import(ImportRequest {
            type_name: "kubernetes_manifest".into(),
            id: "apiVersion=v1,kind=ConfigMap,namespace=platform,name=handoff".into(),
        })
        .await
        .unwrap();
    assert_eq!(imported.imported[0].state.get("estate"), &Value::string("app"));

    let d = m.destroy().await;
    assert!(!d.has_errors(), "{d:?}");
    assert!(h.live_cm("platform", "handoff").await.is_none());

    // A kind the cluster does not serve yet (a CRD created in the same run) plans, and the
    // apply says what is missing.
    let widget = Value::object([
        (
            "manifest",
            Value::from_json(&json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w", "namespace": "platform"}})),
        ),
        // The apply waits that long for the kind to be served (the default is 10 minutes).
        (
            "timeouts",
            Value::List(vec![Value::object([("create", Value::string("1s"))])]),
        ),
    ]);
    let mut w = Instance::new(&h, "kubernetes_manifest", widget).await;
    let plan = w.plan().await.unwrap();
    assert!(plan.planned_state.get("object").is_unknown());
    let text = errors(&w.apply_plan(&plan).await);
    assert!(
        text.contains("Widget") && text.contains("example.com/v1"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn api_errors_are_retried_or_explained() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let mut cm = Instance::new(
        &h,
        "kubernetes_config_map",
        config_map("app-config", &[("k", "v")]),
    )
    .await;
    cm.apply().await;

    // 429 and 500 are retried: the refresh still succeeds.
    cm.next_run().await;
    h.inject_fault("configmaps", "429", 2).await;
    h.inject_fault("configmaps", "500", 1).await;
    cm.refresh().await;
    assert!(!cm.state.is_null());

    // The server's validation error names the object and the field.
    let mut bad = Instance::new(
        &h,
        "kubernetes_config_map",
        config_map("bad", &[("not a key!", "v")]),
    )
    .await;
    let plan = bad.plan().await.unwrap();
    let d = bad.apply_plan(&plan).await;
    let text = errors(&d);
    assert!(text.contains("shop/bad") && text.contains("data"), "{text}");
    assert_eq!(bad.state, Value::Null, "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn generate_name_creates_with_a_server_picked_name() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let metadata = Value::List(vec![Value::object([
        ("generate_name", Value::string("cfg-")),
        ("namespace", Value::string("shop")),
    ])]);
    let mut cm = Instance::new(
        &h,
        "kubernetes_config_map",
        Value::object([("metadata", metadata), ("data", Value::string_map([("k", "v")]))]),
    )
    .await;
    let plan = cm.apply().await;
    assert!(
        provider_live::metadata_of(&plan.planned_state)
            .get("name")
            .is_unknown()
    );
    let name = provider_live::metadata_of(&cm.state)
        .get("name")
        .as_str()
        .unwrap()
        .to_string();
    assert!(name.starts_with("cfg-") && name.len() > 4, "{name}");
    let live = h.live_cm("shop", &name).await.unwrap();
    // The create's token, by which a create whose answer was lost is found again.
    let token = labels_of(&live)["tofu-create-token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(token.len(), 20, "{token}");
    assert_eq!(
        labels_of(&live),
        json!({"tofu-estate": "app", "tofu-create-token": token})
    );
    assert!(cm.no_diff().await);
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_owned_by_another_manager_are_left_alone() {
    let h = Harness::start("app").await;
    namespace(&h, "shop").await;
    let labels = Value::string_map([("app", "web")]);
    let container = Value::object([
        ("name", Value::string("web")),
        ("image", Value::string("nginx:1.27")),
    ]);
    let spec = Value::object([
        (
            "selector",
            Value::List(vec![Value::object([("match_labels", labels.clone())])]),
        ),
        (
            "template",
            Value::List(vec![Value::object([
                (
                    "metadata",
                    Value::List(vec![Value::object([("labels", labels.clone())])]),
                ),
                (
                    "spec",
                    Value::List(vec![Value::object([("container", Value::List(vec![container]))])]),
                ),
            ])]),
        ),
    ]);
    let config = Value::object([
        ("metadata", meta("web", Some("shop"), Value::Null)),
        ("spec", Value::List(vec![spec])),
        ("wait_for_rollout", Value::Bool(false)),
    ]);
    let mut deploy = Instance::new(&h, "kubernetes_deployment", config).await;
    deploy.apply().await;
    assert!(deploy.no_diff().await);

    // An autoscaler takes over replicas.
    let deployments = h.api("apps/v1", "Deployment", "deployments", Some("shop"));
    let pp = PatchParams {
        field_manager: Some("hpa".into()),
        ..Default::default()
    };
    deployments
        .patch("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 4}})))
        .await
        .unwrap();
    assert!(
        deploy.no_diff().await,
        "replicas the config does not set never diff"
    );

    // A change to the config keeps the autoscaler's replicas.
    deploy.config = conform(&deploy.resource.schema().block, {
        let mut c = deploy.config.clone();
        c.set(
            "metadata",
            meta("web", Some("shop"), Value::string_map([("tier", "front")])),
        );
        c
    });
    deploy.next_run().await;
    deploy.refresh().await;
    deploy.apply().await;
    let live = serde_json::to_value(deployments.get("web").await.unwrap()).unwrap();
    assert_eq!(live["spec"]["replicas"], json!(4));
    assert_eq!(labels_of(&live), json!({"tier": "front", "tofu-estate": "app"}));
    assert!(deploy.no_diff().await);
}
