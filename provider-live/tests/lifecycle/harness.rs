//! How these tests drive the provider as the engine would: a [`Harness`] (test server,
//! provider, kube client), one resource [`Instance`] through plan, apply, read and import,
//! and the small object builders and checks the tests share.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube_test_server::{Options, TestServer};
use plugin_runtime::{
    ApplyRequest, Block, Diagnostics, ImportRequest, Nesting, PlanRequest, PlanResponse, Provider,
    ReadRequest, Resource, Severity, Value,
};
use provider_live::LiveProvider;
use provider_live::conform;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) struct Harness {
    pub(super) _server: TestServer,
    pub(super) _dir: tempfile::TempDir,
    pub(super) provider_config: Value,
    pub(super) client: kube::Client,
}

impl Harness {
    pub(super) async fn start(estate: &str) -> Harness {
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
        let client = kube_estate::client_builder(&kc).unwrap().build();
        Harness {
            _server: server,
            _dir: dir,
            provider_config,
            client,
        }
    }

    /// The resource from a freshly configured provider: one engine run.
    pub(super) async fn resource(&self, type_name: &str) -> Arc<dyn Resource> {
        self.resource_as(type_name, None).await
    }

    /// The resource from a provider using the kubeconfig context `context` (a user name).
    pub(super) async fn resource_as(&self, type_name: &str, context: Option<&str>) -> Arc<dyn Resource> {
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

    pub(super) fn api(
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

    pub(super) fn config_maps(&self, ns: &str) -> Api<DynamicObject> {
        self.api("v1", "ConfigMap", "configmaps", Some(ns))
    }

    pub(super) async fn live_cm(&self, ns: &str, name: &str) -> Option<Json> {
        self.config_maps(ns)
            .get_opt(name)
            .await
            .unwrap()
            .map(|o| serde_json::to_value(o).unwrap())
    }

    pub(super) async fn kubectl_apply(&self, ns: &str, body: Json) {
        let obj: DynamicObject = serde_json::from_value(body).unwrap();
        self.config_maps(ns)
            .create(&PostParams::default(), &obj)
            .await
            .unwrap();
    }

    /// Creates the config maps `cm-0000`, `cm-0001` ... numbered `numbers` in `ns` straight
    /// through the API (no provider), in estate `app`, each holding its number as `n`.
    pub(super) async fn create_config_maps(&self, ns: &str, numbers: std::ops::Range<usize>) {
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

    pub(super) async fn kubectl_patch(&self, ns: &str, name: &str, patch: Json) {
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
    pub(super) async fn inject_fault(&self, resource: &str, kind: &str, count: u32) {
        let body = serde_json::to_vec(&json!({"resource": resource, "kind": kind, "count": count})).unwrap();
        let req = http::Request::post("/_test/faults")
            .header("Content-Type", "application/json")
            .body(body)
            .unwrap();
        self.client.request_text(req).await.unwrap();
    }

    /// The request counters of the test server.
    pub(super) async fn requests(&self) -> Vec<Json> {
        let req = http::Request::get("/_test/requests").body(Vec::new()).unwrap();
        let text = self.client.request_text(req).await.unwrap();
        let parsed: Json = serde_json::from_str(&text).unwrap();
        parsed["items"].as_array().cloned().unwrap_or_default()
    }

    /// Starts the request counters from zero.
    pub(super) async fn reset_requests(&self) {
        let req = http::Request::delete("/_test/requests").body(Vec::new()).unwrap();
        self.client.request_text(req).await.unwrap();
    }

    /// The `verb` requests (`list`, `get`, `patch` ...) on config maps since the counters
    /// were last reset.
    pub(super) async fn config_map_requests(&self, verb: &str) -> u64 {
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
pub(super) fn proposed(block: &Block, prior: &Value, config: &Value) -> Value {
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
pub(super) struct Instance<'h> {
    pub(super) h: &'h Harness,
    pub(super) resource: Arc<dyn Resource>,
    pub(super) type_name: String,
    pub(super) config: Value,
    pub(super) state: Value,
    /// The state's private data (what the last refresh saw).
    pub(super) private: Vec<u8>,
}

/// A namespace applied through the provider, as most tests start.
pub(super) async fn namespace<'h>(h: &'h Harness, name: &str) -> Instance<'h> {
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
pub(super) async fn refresh_in_one_run(h: &Harness, instances: &mut [Instance<'_>]) {
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
    pub(super) async fn new(h: &'h Harness, type_name: &str, config: Value) -> Instance<'h> {
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
    pub(super) async fn next_run(&mut self) {
        self.resource = self.h.resource(&self.type_name).await;
    }

    pub(super) async fn plan(&self) -> Result<PlanResponse, Diagnostics> {
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

    pub(super) async fn apply_plan(&mut self, plan: &PlanResponse) -> Diagnostics {
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
    pub(super) async fn apply(&mut self) -> PlanResponse {
        let plan = self.plan().await.unwrap_or_else(|d| panic!("plan failed: {d:?}"));
        let d = self.apply_plan(&plan).await;
        assert!(!d.has_errors(), "apply failed: {d:?}");
        plan
    }

    /// `terraform import` of the object `id` names.
    pub(super) async fn import(&mut self, id: &str) {
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

    pub(super) async fn refresh(&mut self) {
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
    pub(super) async fn no_diff(&mut self) -> bool {
        self.next_run().await;
        self.refresh().await;
        let plan = self.plan().await.unwrap();
        plan.planned_state == self.state && plan.requires_replace.is_empty()
    }

    pub(super) async fn destroy(&mut self) -> Diagnostics {
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
pub(super) fn assert_consistent(planned: &Value, applied: &Value, legacy: bool) {
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

pub(super) fn meta(name: &str, namespace: Option<&str>, labels: Value) -> Value {
    let mut m = Value::object([("name", Value::string(name)), ("labels", labels)]);
    if let Some(ns) = namespace {
        m.set("namespace", Value::string(ns));
    }
    Value::List(vec![m])
}

pub(super) fn config_map(name: &str, data: &[(&str, &str)]) -> Value {
    Value::object([
        (
            "metadata",
            meta(name, Some("shop"), Value::string_map([("app", "web")])),
        ),
        ("data", Value::string_map(data.iter().copied())),
    ])
}

pub(super) fn labels_of(object: &Json) -> Json {
    object["metadata"]["labels"].clone()
}

pub(super) fn errors(d: &Diagnostics) -> String {
    d.0.iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect()
}
