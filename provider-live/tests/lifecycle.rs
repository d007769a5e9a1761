//! The typed resources and `kubernetes_manifest` driven directly (no engine) against the
//! in-memory Kubernetes API server: create, read, no diff, update, drift, adopt, foreign and
//! unlabelled objects, the stale-plan guard, import, shared reads, delete.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube_test_server::{Options, TestServer};
use plugin_runtime::{
    ApplyRequest, Block, Diagnostics, ImportRequest, Nesting, PlanRequest, PlanResponse, Provider,
    ReadRequest, Resource, Severity, Value,
};
use provider_live::LiveProvider;
use provider_live::plan::conform;
use serde_json::{Value as Json, json};

struct Harness {
    _server: TestServer,
    _dir: tempfile::TempDir,
    provider_config: Value,
    client: kube::Client,
}

impl Harness {
    async fn start(estate: &str) -> Harness {
        let options = Options {
            users: vec![("getter".into(), Vec::new())],
            ..Options::default()
        };
        let server = TestServer::start(options);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        server.write_kubeconfig(&path, "admin").unwrap();
        let provider_config = conform(
            &LiveProvider::default().schema().block,
            Value::object([
                ("estate", Value::string(estate)),
                ("config_path", Value::string(path.to_str().unwrap())),
            ]),
        );
        let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig("admin")).unwrap();
        let kc = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(kc).unwrap();
        Harness {
            _server: server,
            _dir: dir,
            provider_config,
            client,
        }
    }

    /// The resource from a freshly configured provider: one engine run.
    async fn resource(&self, type_name: &str) -> Arc<dyn Resource> {
        self.resource_as(type_name, None).await
    }

    /// The resource from a provider using the kubeconfig context `context` (a user name).
    async fn resource_as(&self, type_name: &str, context: Option<&str>) -> Arc<dyn Resource> {
        let provider = LiveProvider::default();
        let mut config = self.provider_config.clone();
        if let Some(context) = context {
            config.set("config_context", Value::string(context));
        }
        let diags = provider.configure(&config).await;
        assert!(!diags.has_errors(), "{diags:?}");
        provider
            .resources()
            .into_iter()
            .find(|r| r.type_name() == type_name || r.aliases().contains(&type_name))
            .unwrap_or_else(|| panic!("no resource {type_name}"))
    }

    fn api(
        &self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let ar = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    fn config_maps(&self, ns: &str) -> Api<DynamicObject> {
        self.api("v1", "ConfigMap", "configmaps", Some(ns))
    }

    async fn live_cm(&self, ns: &str, name: &str) -> Option<Json> {
        self.config_maps(ns)
            .get_opt(name)
            .await
            .unwrap()
            .map(|o| serde_json::to_value(o).unwrap())
    }

    async fn kubectl_apply(&self, ns: &str, body: Json) {
        let obj: DynamicObject = serde_json::from_value(body).unwrap();
        self.config_maps(ns)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap();
    }

    /// Creates the config maps `cm-0000`, `cm-0001` ... numbered `numbers` in `ns` straight
    /// through the API (no provider), in estate `app`, each holding its number as `n`.
    async fn create_config_maps(&self, ns: &str, numbers: std::ops::Range<usize>) {
        for i in numbers {
            self.kubectl_apply(
                ns,
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("cm-{i:04}"), "labels": {"tofu-estate": "app"}},
                "data": {"n": i.to_string()}}),
            )
            .await;
        }
    }

    async fn kubectl_patch(&self, ns: &str, name: &str, patch: Json) {
        let pp = PatchParams {
            field_manager: Some("kubectl-patch".into()),
            ..Default::default()
        };
        self.config_maps(ns)
            .patch(name, &pp, &Patch::Merge(&patch))
            .await
            .unwrap();
    }

    /// Makes the next `count` requests on `resource` fail with `kind` (429, 500, ...).
    async fn inject_fault(&self, resource: &str, kind: &str, count: u32) {
        let body = serde_json::to_vec(&json!({"resource": resource, "kind": kind, "count": count})).unwrap();
        let req = http::Request::post("/_test/faults")
            .header("Content-Type", "application/json")
            .body(body)
            .unwrap();
        self.client.request_text(req).await.unwrap();
    }

    /// The request counters of the test server.
    async fn requests(&self) -> Vec<Json> {
        let req = http::Request::get("/_test/requests").body(Vec::new()).unwrap();
        let text = self.client.request_text(req).await.unwrap();
        let parsed: Json = serde_json::from_str(&text).unwrap();
        parsed["items"].as_array().cloned().unwrap_or_default()
    }

    /// Starts the request counters from zero.
    async fn reset_requests(&self) {
        let req = http::Request::delete("/_test/requests").body(Vec::new()).unwrap();
        self.client.request_text(req).await.unwrap();
    }

    /// The `verb` requests (`list`, `get`, `patch` ...) on config maps since the counters
    /// were last reset.
    async fn config_map_requests(&self, verb: &str) -> u64 {
        self.requests()
            .await
            .iter()
            .filter(|c| c["verb"] == verb && c["resource"] == "configmaps")
            .map(|c| c["count"].as_u64().unwrap_or(0))
            .sum()
    }
}

/// What the engine proposes: the config, with computed attributes the config leaves null
/// taken from the prior state.
fn proposed(block: &Block, prior: &Value, config: &Value) -> Value {
    let Value::Object(cfg) = config else {
        return config.clone();
    };
    let mut out = BTreeMap::new();
    for a in &block.attributes {
        let c = cfg.get(&a.name).cloned().unwrap_or_default();
        let v = if a.computed && c.is_null() {
            prior.get(&a.name).clone()
        } else {
            c
        };
        out.insert(a.name.clone(), v);
    }
    for b in &block.blocks {
        let c = cfg.get(&b.type_name).cloned().unwrap_or_default();
        let p = prior.get(&b.type_name);
        let v = match (b.nesting, c) {
            (Nesting::List, Value::List(items)) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, it)| proposed(&b.block, p.elements().get(i).unwrap_or(&Value::Null), it))
                    .collect(),
            ),
            (Nesting::Single, v @ Value::Object(_)) => proposed(&b.block, p, &v),
            (_, v) => v,
        };
        out.insert(b.type_name.clone(), v);
    }
    Value::Object(out)
}

/// One resource instance as the engine would drive it.
struct Instance<'h> {
    h: &'h Harness,
    resource: Arc<dyn Resource>,
    type_name: String,
    config: Value,
    state: Value,
    /// The state's private data (what the last refresh saw).
    private: Vec<u8>,
}

/// A namespace applied through the provider, as most tests start.
async fn namespace<'h>(h: &'h Harness, name: &str) -> Instance<'h> {
    let mut ns = Instance::new(
        h,
        "kubernetes_namespace",
        Value::object([("metadata", meta(name, None, Value::Null))]),
    )
    .await;
    ns.apply().await;
    ns
}

/// Refreshes every instance (all of one resource type) in one engine run: one provider,
/// whose read cache they share.
async fn refresh_in_one_run(h: &Harness, instances: &mut [Instance<'_>]) {
    let Some(first) = instances.first() else {
        return;
    };
    let run = h.resource(&first.type_name).await;
    for instance in instances {
        instance.resource = run.clone();
        instance.refresh().await;
        assert!(!instance.state.is_null(), "{} is gone", instance.type_name);
    }
}

impl<'h> Instance<'h> {
    async fn new(h: &'h Harness, type_name: &str, config: Value) -> Instance<'h> {
        let resource = h.resource(type_name).await;
        let config = conform(&resource.schema().block, config);
        let d = resource.validate(&config);
        assert!(!d.has_errors(), "{d:?}");
        Instance {
            h,
            resource,
            type_name: type_name.into(),
            config,
            state: Value::Null,
            private: Vec::new(),
        }
    }

    /// A new engine run (a new provider process, with its own read cache).
    async fn next_run(&mut self) {
        self.resource = self.h.resource(&self.type_name).await;
    }

    async fn plan(&self) -> Result<PlanResponse, Diagnostics> {
        let schema = self.resource.schema();
        self.resource
            .plan(PlanRequest {
                type_name: self.type_name.clone(),
                prior_state: self.state.clone(),
                // As the server does before the resource plans.
                proposed_new_state: plugin_runtime::rules::plan(
                    &schema.block,
                    &self.config,
                    &self.state,
                    proposed(&schema.block, &self.state, &self.config),
                    self.resource.legacy_type_system(),
                ),
                config: self.config.clone(),
                prior_private: self.private.clone(),
            })
            .await
    }

    async fn apply_plan(&mut self, plan: &PlanResponse) -> Diagnostics {
        let response = self
            .resource
            .apply(ApplyRequest {
                type_name: self.type_name.clone(),
                prior_state: self.state.clone(),
                planned_state: plan.planned_state.clone(),
                config: self.config.clone(),
                planned_private: plan.planned_private.clone(),
            })
            .await;
        if !response.diagnostics.has_errors() {
            let legacy = self.resource.legacy_type_system();
            assert_consistent(&plan.planned_state, &response.new_state, legacy);
        }
        self.state = response.new_state;
        self.private = response.private;
        response.diagnostics
    }

    /// plan + apply, asserting no errors.
    async fn apply(&mut self) -> PlanResponse {
        let plan = self.plan().await.unwrap_or_else(|d| panic!("plan failed: {d:?}"));
        let d = self.apply_plan(&plan).await;
        assert!(!d.has_errors(), "apply failed: {d:?}");
        plan
    }

    /// `terraform import` of the object `id` names.
    async fn import(&mut self, id: &str) {
        let imported = self
            .resource
            .import(ImportRequest {
                type_name: self.type_name.clone(),
                id: id.into(),
            })
            .await
            .unwrap();
        self.state = imported.imported[0].state.clone();
    }

    async fn refresh(&mut self) {
        let r = self
            .resource
            .read(ReadRequest {
                type_name: self.type_name.clone(),
                current_state: self.state.clone(),
                private: vec![],
            })
            .await
            .unwrap();
        self.state = r.new_state;
        self.private = r.private;
    }

    /// Refresh, then plan: true when the plan changes nothing.
    async fn no_diff(&mut self) -> bool {
        self.next_run().await;
        self.refresh().await;
        let plan = self.plan().await.unwrap();
        plan.planned_state == self.state && plan.requires_replace.is_empty()
    }

    async fn destroy(&mut self) -> Diagnostics {
        let response = self
            .resource
            .apply(ApplyRequest {
                type_name: self.type_name.clone(),
                prior_state: self.state.clone(),
                planned_state: Value::Null,
                config: Value::Null,
                planned_private: vec![],
            })
            .await;
        self.state = response.new_state;
        response.diagnostics
    }
}

/// The engine's check: every known planned value comes back unchanged. For a `legacy` (SDKv2
/// drop-in) resource the engine only logs a difference; here it may fill a computed block the
/// plan left empty, and nothing else.
fn assert_consistent(planned: &Value, applied: &Value, legacy: bool) {
    match (planned, applied) {
        (Value::Unknown(_), _) => {}
        (Value::List(p), Value::List(_)) if legacy && p.is_empty() => {}
        (Value::Object(p), Value::Object(a)) | (Value::Map(p), Value::Map(a)) => {
            assert_eq!(
                p.keys().collect::<Vec<_>>(),
                a.keys().collect::<Vec<_>>(),
                "keys differ"
            );
            for (k, v) in p {
                assert_consistent(v, &a[k], legacy);
            }
        }
        (Value::List(p), Value::List(a)) | (Value::Set(p), Value::Set(a)) => {
            assert_eq!(p.len(), a.len(), "{planned:?} vs {applied:?}");
            p.iter().zip(a).for_each(|(p, a)| assert_consistent(p, a, legacy));
        }
        _ => assert_eq!(planned, applied, "inconsistent result"),
    }
}

fn meta(name: &str, namespace: Option<&str>, labels: Value) -> Value {
    let mut m = Value::object([("name", Value::string(name)), ("labels", labels)]);
    if let Some(ns) = namespace {
        m.set("namespace", Value::string(ns));
    }
    Value::List(vec![m])
}

fn config_map(name: &str, data: &[(&str, &str)]) -> Value {
    Value::object([
        (
            "metadata",
            meta(name, Some("shop"), Value::string_map([("app", "web")])),
        ),
        ("data", Value::string_map(data.iter().copied())),
    ])
}

fn labels_of(object: &Json) -> Json {
    object["metadata"]["labels"].clone()
}

fn errors(d: &Diagnostics) -> String {
    d.0.iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}

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
        provider_live::metadata::of(&cm.state).get("labels"),
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
        provider_live::metadata::of(&cm.state).get("uid"),
        provider_live::metadata::of(&kept).get("uid")
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
        provider_live::metadata::of(&plan.planned_state)
            .get("name")
            .is_unknown()
    );
    let name = provider_live::metadata::of(&cm.state)
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
