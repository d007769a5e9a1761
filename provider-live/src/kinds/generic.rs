//! Every type of the kind catalog as a [`Kind`]: its field table converts the object, and the
//! behaviour of its Kubernetes kind (waits, immutable fields) comes from [`crate::behaviour`].

use plugin_runtime::{AttributePath, Block, Diagnostic, Diagnostics, Value};
use serde_json::{Map, Value as Json};

use crate::catalog::Entry;
use crate::fields;
use crate::kind::{Behaviour, Kind, KindInfo};
use crate::readiness::ready_wait;
use crate::timeouts;

/// A catalog type with the behaviour of its kind.
pub struct CatalogKind {
    entry: &'static Entry,
    behaviour: Box<dyn Behaviour>,
}

impl CatalogKind {
    pub fn new(entry: &'static Entry, behaviour: Box<dyn Behaviour>) -> CatalogKind {
        CatalogKind { entry, behaviour }
    }
}

impl Kind for CatalogKind {
    fn info(&self) -> &'static KindInfo {
        &self.entry.info
    }

    /// Built afresh: the resources wrapping the kind keep their schemas (one copy fewer of
    /// every type's block in the process that answers GetProviderSchema).
    fn block(&self) -> Block {
        let block = fields::block(self.entry.fields(), self.entry.info.description);
        if self.entry.timeouts.is_empty() {
            block
        } else {
            block.block(timeouts::block(&self.entry.timeouts))
        }
    }

    fn to_object(&self, value: &Value) -> Result<Map<String, Json>, Diagnostics> {
        let mut object = fields::write(self.entry.fields(), value, &AttributePath::default())?;
        self.behaviour.complete(&mut object);
        Ok(object)
    }

    fn from_object(&self, object: &Json, prior: &Value) -> Value {
        let view = self.behaviour.read_view(object, prior);
        let (object, read_prior) = view.as_ref().map_or((object, prior), |(o, p)| (o, p));
        let mut value = fields::read(self.entry.fields(), object, read_prior);
        if !self.entry.timeouts.is_empty() {
            value.set("timeouts", ready_wait::read_timeouts(prior));
        }
        value
    }
}

#[async_trait::async_trait]
impl Behaviour for CatalogKind {
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        self.behaviour.wait_ready(client, object, planned).await
    }

    fn delete_wait(&self, resource: &Value) -> Option<std::time::Duration> {
        self.behaviour.delete_wait(resource)
    }

    fn local_once_ready(&self) -> bool {
        self.behaviour.local_once_ready()
    }

    fn immutable_paths(&self) -> Vec<AttributePath> {
        self.behaviour.immutable_paths()
    }

    fn complete(&self, object: &mut Map<String, Json>) {
        self.behaviour.complete(object)
    }

    fn unclaim(&self, object: &mut Json) {
        self.behaviour.unclaim(object)
    }

    fn imported(&self, object: &Json, state: &mut Value) {
        self.behaviour.imported(object, state)
    }

    fn read_view(&self, object: &Json, prior: &Value) -> Option<(Json, Value)> {
        self.behaviour.read_view(object, prior)
    }
}

/// The catalog's tables against what a real API server answered (kube-golden transcripts).
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog;
    use crate::fields::test_support::*;

    fn kind(type_name: &str) -> CatalogKind {
        let entry = catalog::entry(type_name).unwrap_or_else(|| panic!("{type_name}"));
        CatalogKind::new(entry, crate::behaviour::of(&entry.info))
    }

    fn deployment_config(replicas: Value) -> Value {
        let mut web = obj([("name", s("web")), ("image", s("nginx:1.27.0"))]);
        web.set(
            "port",
            list([obj([("name", s("http")), ("container_port", Value::int(8080))])]),
        );
        web.set(
            "env",
            list([obj([("name", s("MODE")), ("value", s("production"))])]),
        );
        web.set(
            "resources",
            list([obj([
                ("requests", map([("cpu", "0.1"), ("memory", "128Mi")])),
                ("limits", map([("cpu", "0.5"), ("memory", "1024Mi")])),
            ])]),
        );
        let mut sidecar = obj([("name", s("sidecar")), ("image", s("busybox:latest"))]);
        sidecar.set("command", strings(["sh", "-c", "sleep 3600"]));
        let spec = obj([
            ("replicas", replicas),
            ("selector", list([obj([("match_labels", map([("app", "web")]))])])),
            (
                "template",
                list([obj([
                    ("metadata", list([obj([("labels", map([("app", "web")]))])])),
                    ("spec", list([obj([("container", list([web, sidecar]))])])),
                ])]),
            ),
        ]);
        let fields = catalog::entry("kubernetes_deployment_v1").unwrap().fields();
        complete(fields, &obj([("spec", list([spec]))]))
    }

    #[test]
    fn a_deployment_round_trips_through_a_real_server_without_a_diff() {
        let fields = catalog::entry("kubernetes_deployment_v1").unwrap().fields();
        let state = golden_round_trip(fields, "09-deployment.json", 1, &deployment_config(s("2")));
        let spec = &state.get("spec").elements()[0];
        assert_eq!(
            spec.get("strategy").elements()[0].get("type"),
            &s("RollingUpdate"),
            "the server's strategy, as hashicorp's state holds it (a computed block)"
        );
        assert_eq!(spec.get("replicas"), &s("2"));
        let container = &spec.get("template").elements()[0].get("spec").elements()[0]
            .get("container")
            .elements()[0];
        assert_eq!(
            container.get("resources").elements()[0]
                .get("limits")
                .get("memory"),
            &s("1Gi"),
            "the server's spelling of the configured 1024Mi, as hashicorp's state holds it"
        );
        let deployment = kind("kubernetes_deployment_v1");
        let sent = deployment.to_object(&deployment_config(Value::Null)).unwrap();
        assert!(
            sent["spec"].get("replicas").is_none(),
            "an autoscaler owns replicas"
        );
        assert_eq!(deployment.immutable_paths()[0].to_string(), "spec[0].selector");
    }

    #[test]
    fn a_service_round_trips_and_reads_its_status() {
        let fields = catalog::entry("kubernetes_service_v1").unwrap().fields();
        let spec = obj([
            ("selector", map([("app", "web")])),
            (
                "port",
                list([obj([
                    ("name", s("http")),
                    ("port", Value::int(80)),
                    ("target_port", s("8080")),
                ])]),
            ),
        ]);
        let config = complete(fields, &obj([("spec", list([spec]))]));
        let state = golden_round_trip(fields, "07-service.json", 1, &config);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("cluster_ip"), &s("10.96.164.201"));
        assert_eq!(
            spec.get("type"),
            &s("ClusterIP"),
            "hashicorp's default, planned when not configured, reads back"
        );
        let status = &state.get("status").elements()[0];
        assert_eq!(
            status.get("load_balancer").elements()[0].get("ingress"),
            &list([])
        );
    }

    #[test]
    fn terraform_only_settings_and_timeouts_are_in_the_schema_and_never_sent() {
        let stateful_set = kind("kubernetes_stateful_set_v1");
        let block = stateful_set.block();
        assert!(block.find_attribute("wait_for_rollout").is_some());
        assert!(block.find_block("timeouts").is_some());
        let value = Value::object([("wait_for_rollout", Value::Bool(false))]);
        assert_eq!(Json::Object(stateful_set.to_object(&value).unwrap()), json!({}));
    }

    #[test]
    fn fields_kubernetes_lacks_are_errors_naming_the_path() {
        let pod = kind("kubernetes_pod_v1");
        let fields = catalog::entry("kubernetes_pod_v1").unwrap().fields();
        let volume = obj([("name", s("data")), ("local", list([obj([("path", s("/mnt"))])]))]);
        let config = complete(
            fields,
            &obj([(
                "spec",
                list([obj([
                    (
                        "container",
                        list([obj([("name", s("app")), ("image", s("nginx"))])]),
                    ),
                    ("volume", list([volume])),
                ])]),
            )]),
        );
        let err = pod.to_object(&config).unwrap_err();
        let d = &err.0[0];
        assert_eq!(
            d.attribute.clone().unwrap().to_string(),
            "spec[0].volume[0].local"
        );
        assert!(
            d.detail.contains("Not available in a pod's volume"),
            "{}",
            d.detail
        );
    }
}
