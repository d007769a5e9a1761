//! The actions driven directly (no engine) against the in-memory API server: a restart whose
//! write meets a changed object (409) reads it again and is made once, and one that keeps
//! meeting changes is refused with nothing written; a wait reports what is missing, through
//! the runtime's paced progress, until another writer makes it true.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_test_server::{Options, TestServer};
use plugin_runtime::{Action, Diagnostics, InvokeRequest, Progress, Provider, Value};
use provider_live::LiveProvider;
use provider_live::conform;
use serde_json::{Value as Json, json};

struct Harness {
    _server: TestServer,
    _dir: tempfile::TempDir,
    provider: LiveProvider,
    client: kube::Client,
}

impl Harness {
    /// A test server, and the provider configured for estate `app` on it.
    async fn start() -> Harness {
        let server = TestServer::start(Options::default());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        server.write_kubeconfig(&path, "admin").unwrap();
        let provider = LiveProvider::default();
        let config = conform(
            &provider.schema().block,
            Value::object([
                ("estate", Value::string("app")),
                ("config_path", Value::string(path.to_str().unwrap())),
            ]),
        );
        let diags = provider.configure(&config).await;
        assert!(!diags.has_errors(), "{diags:?}");
        let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig("admin")).unwrap();
        let kc = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap();
        Harness {
            _server: server,
            _dir: dir,
            provider,
            client: kube_estate::client_builder(&kc).unwrap().build(),
        }
    }

    /// Invokes action `type_name` with `config` (its attributes; the rest null), collecting its
    /// progress lines paced by `interval`.
    async fn invoke(&self, type_name: &str, config: Value, interval: Duration) -> (Diagnostics, Vec<String>) {
        let action: Arc<dyn Action> = self
            .provider
            .actions()
            .into_iter()
            .find(|a| a.type_name() == type_name)
            .unwrap_or_else(|| panic!("no action {type_name}"));
        let config = conform(&action.schema().block, config);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let progress = Progress::new(interval, move |line| sink.lock().unwrap().push(line));
        let request = InvokeRequest {
            type_name: type_name.into(),
            config,
        };
        let outcome = action.invoke(request, &progress).await;
        progress.flush();
        let lines = lines.lock().unwrap().clone();
        (outcome, lines)
    }

    fn api(&self, resource: &ApiResource) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), "default", resource)
    }

    async fn create(&self, resource: &ApiResource, body: Json) {
        let object: DynamicObject = serde_json::from_value(body).unwrap();
        self.api(resource)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }

    async fn get(&self, resource: &ApiResource, name: &str) -> Json {
        serde_json::to_value(self.api(resource).get(name).await.unwrap()).unwrap()
    }

    /// Makes the next `count` PATCH requests on `resource` fail with 409 Conflict.
    async fn conflicts(&self, resource: &str, count: u32) {
        let body = json!({"resource": resource, "kind": "conflict", "count": count, "verb": "patch"});
        let req = http::Request::post("/_test/faults")
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(&body).unwrap())
            .unwrap();
        self.client.request_text(req).await.unwrap();
    }
}

fn deployments() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&())
}

fn restarted_at(deployment: &Json) -> Json {
    deployment["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].clone()
}

#[tokio::test]
async fn a_restart_reads_again_after_one_conflict_and_gives_up_after_two() {
    let h = Harness::start().await;
    h.create(
        &deployments(),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"tofu-estate": "app"}},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}),
    )
    .await;
    let config = Value::object([
        ("kind", Value::string("Deployment")),
        ("name", Value::string("web")),
        ("wait", Value::Bool(false)),
    ]);

    h.conflicts("deployments", 1).await;
    let (outcome, lines) = h
        .invoke("kubernetes_rollout_restart", config.clone(), Duration::ZERO)
        .await;
    assert!(!outcome.has_errors(), "{outcome:?}");
    assert_eq!(
        lines,
        ["web: restarting", "web: restarted, not waiting for the rollout"]
    );
    let first = restarted_at(&h.get(&deployments(), "web").await);
    assert!(first.is_string(), "{first}");

    h.conflicts("deployments", 2).await;
    let (outcome, lines) = h
        .invoke("kubernetes_rollout_restart", config, Duration::ZERO)
        .await;
    assert!(outcome.has_errors(), "a restart that met two conflicts was made");
    assert!(
        outcome.0[0]
            .summary
            .starts_with("Conflicting change to Deployment"),
        "{outcome:?}"
    );
    assert!(lines.is_empty(), "{lines:?}");
    assert_eq!(restarted_at(&h.get(&deployments(), "web").await), first);
}

#[tokio::test]
async fn a_wait_reports_what_is_missing_until_another_writer_makes_it_true() {
    let h = Harness::start().await;
    let config_maps = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
    h.create(
        &config_maps,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flag"}, "data": {"ready": "no"}}),
    )
    .await;
    let api = h.api(&config_maps);
    let flip = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let patch = json!({"data": {"ready": "yes"}});
        api.patch("flag", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    });
    let config = Value::object([
        ("api_version", Value::string("v1")),
        ("kind", Value::string("ConfigMap")),
        ("name", Value::string("flag")),
        ("fields", Value::string_map([("data.ready", "yes")])),
        ("timeout", Value::string("1m")),
    ]);
    let (outcome, lines) = h.invoke("kubernetes_wait", config, Progress::INTERVAL).await;
    flip.await.unwrap();
    assert!(!outcome.has_errors(), "{outcome:?}");
    assert_eq!(
        lines,
        [
            "flag: data.ready is \"no\", wanted \"yes\"",
            "flag: data.ready = \"yes\""
        ]
    );
}
