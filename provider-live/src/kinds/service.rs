//! `kubernetes_service` (v1 Service): the spec as hashicorp/kubernetes has it, the computed
//! `status`, plus `wait_for_load_balancer` and `timeouts`.
//!
//! The server allocates cluster IPs and node ports and defaults type, session affinity,
//! IP families and traffic policies (kube-golden 07-service): all Optional+Computed.

use plugin_runtime::{AttributePath, Diagnostic, Value};
use serde_json::Value as Json;

use super::spec_convert::Scalar::{Bool, Int, IntOrString, Str};
use super::spec_convert::Shape::{Array, List, Map as MapOf, Object, One, Set};
use super::spec_convert::{Field, TableKind};
use super::spec_wait::{self, WaitFlag};
use crate::kind::{Behaviour, KindInfo};
use crate::objects::Readiness;
use crate::timeouts;

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_service",
    aliases: &["kubernetes_service_v1"],
    api_version: "v1",
    kind: "Service",
    plural: "services",
    namespaced: true,
    description: "A Service exposes a set of pods under one stable name and address.",
};

const WAIT_FOR_LOAD_BALANCER: &str = "wait_for_load_balancer";

const PORT: &[Field] = &[
    Field::optional(
        "app_protocol",
        "appProtocol",
        One(Str),
        "The application protocol for this port.",
    ),
    Field::optional(
        "name",
        "name",
        One(Str),
        "Name of the port, unique in the service.",
    ),
    Field::defaulted(
        "node_port",
        "nodePort",
        One(Int),
        "Port on each node for `NodePort` and `LoadBalancer` services; allocated when not set.",
    ),
    Field::required("port", "port", One(Int), "The port the service exposes."),
    Field::defaulted(
        "protocol",
        "protocol",
        One(Str),
        "`TCP` (the default), `UDP` or `SCTP`.",
    ),
    Field::defaulted(
        "target_port",
        "targetPort",
        One(IntOrString),
        "Number or name of the port on the pods; the same as `port` by default.",
    ),
];

const CLIENT_IP: &[Field] = &[Field::defaulted(
    "timeout_seconds",
    "timeoutSeconds",
    One(Int),
    "Seconds a `ClientIP` session sticks; 10800 by default.",
)];

const SESSION_AFFINITY_CONFIG: &[Field] = &[Field::optional(
    "client_ip",
    "clientIP",
    Object(CLIENT_IP),
    "Client IP based session affinity.",
)];

const SPEC: &[Field] = &[
    Field::defaulted(
        "allocate_load_balancer_node_ports",
        "allocateLoadBalancerNodePorts",
        One(Bool),
        "Whether node ports are allocated for a `LoadBalancer` service; true by default.",
    ),
    Field::defaulted(
        "cluster_ip",
        "clusterIP",
        One(Str),
        "The service's IP address; allocated when not set, `None` for a headless service.",
    ),
    Field::defaulted(
        "cluster_ips",
        "clusterIPs",
        List(Str),
        "The service's IP addresses, one per IP family.",
    ),
    Field::optional(
        "external_ips",
        "externalIPs",
        Set(Str),
        "IP addresses for which nodes also accept traffic for the service.",
    ),
    Field::optional(
        "external_name",
        "externalName",
        One(Str),
        "The DNS name an `ExternalName` service aliases.",
    ),
    Field::defaulted(
        "external_traffic_policy",
        "externalTrafficPolicy",
        One(Str),
        "`Cluster` or `Local` routing of external traffic.",
    ),
    Field::defaulted(
        "health_check_node_port",
        "healthCheckNodePort",
        One(Int),
        "Health check node port of a `LoadBalancer` service with the `Local` policy.",
    ),
    Field::defaulted(
        "internal_traffic_policy",
        "internalTrafficPolicy",
        One(Str),
        "`Cluster` (the default) or `Local`.",
    ),
    Field::defaulted(
        "ip_families",
        "ipFamilies",
        List(Str),
        "IP families of the service: `IPv4`, `IPv6`.",
    ),
    Field::defaulted(
        "ip_family_policy",
        "ipFamilyPolicy",
        One(Str),
        "`SingleStack` (the default), `PreferDualStack` or `RequireDualStack`.",
    ),
    Field::optional(
        "load_balancer_class",
        "loadBalancerClass",
        One(Str),
        "The load balancer implementation to use.",
    ),
    Field::optional(
        "load_balancer_ip",
        "loadBalancerIP",
        One(Str),
        "The IP a `LoadBalancer` service asks for.",
    ),
    Field::optional(
        "load_balancer_source_ranges",
        "loadBalancerSourceRanges",
        Set(Str),
        "Client CIDRs the load balancer accepts.",
    ),
    Field::optional("port", "ports", Array(PORT), "The ports the service exposes."),
    Field::optional(
        "publish_not_ready_addresses",
        "publishNotReadyAddresses",
        One(Bool),
        "Publish the addresses of pods that are not ready.",
    ),
    Field::optional(
        "selector",
        "selector",
        MapOf(Str),
        "Labels of the pods the service routes traffic to.",
    ),
    Field::defaulted(
        "session_affinity",
        "sessionAffinity",
        One(Str),
        "`None` (the default) or `ClientIP`.",
    ),
    Field::optional(
        "session_affinity_config",
        "sessionAffinityConfig",
        Object(SESSION_AFFINITY_CONFIG),
        "Session affinity settings.",
    )
    .server_default(r#"{"clientIP": {"timeoutSeconds": 10800}}"#),
    Field::optional(
        "traffic_distribution",
        "trafficDistribution",
        One(Str),
        "Preferred distribution of traffic to endpoints, e.g. `PreferSameZone`.",
    ),
    Field::defaulted(
        "type",
        "type",
        One(Str),
        "`ClusterIP` (the default), `NodePort`, `LoadBalancer` or `ExternalName`.",
    ),
];

const INGRESS: &[Field] = &[
    Field::computed(
        "hostname",
        "hostname",
        One(Str),
        "Host name of the load balancer.",
    ),
    Field::computed("ip", "ip", One(Str), "IP address of the load balancer."),
    Field::computed(
        "ip_mode",
        "ipMode",
        One(Str),
        "How traffic reaches the load balancer IP.",
    ),
];

const LOAD_BALANCER: &[Field] = &[Field::computed(
    "ingress",
    "ingress",
    Array(INGRESS),
    "Ingress points of the load balancer.",
)];

const STATUS: &[Field] = &[Field::computed(
    "load_balancer",
    "loadBalancer",
    Object(LOAD_BALANCER),
    "The load balancer's status.",
)];

const FIELDS: &[Field] = &[
    Field::required("spec", "spec", Object(SPEC), "Specification of the service."),
    Field::computed(
        "status",
        "status",
        Object(STATUS),
        "The service's most recently observed status.",
    ),
];

/// The Service kind.
pub struct Service;

impl TableKind for Service {
    const INFO: &'static KindInfo = &INFO;
    const FIELDS: &'static [Field] = FIELDS;
    const WAIT: Option<WaitFlag> = Some(WaitFlag {
        name: WAIT_FOR_LOAD_BALANCER,
        description: "Wait for a `LoadBalancer` service to get an address. Defaults to true.",
        operations: &["create"],
    });
}

#[async_trait::async_trait]
impl Behaviour for Service {
    // The API server refuses to move an allocated cluster IP.
    fn immutable_paths(&self) -> Vec<AttributePath> {
        vec![AttributePath::root("spec").index(0).attribute("cluster_ip")]
    }

    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if object["spec"]["type"] != "LoadBalancer" || !spec_wait::enabled(planned, WAIT_FOR_LOAD_BALANCER) {
            return Ok(None);
        }
        let timeout = timeouts::of(planned, "create", std::time::Duration::from_secs(600));
        spec_wait::poll(
            client,
            &INFO,
            object,
            timeout,
            "get a load balancer address",
            load_balancer_status,
        )
        .await
    }
}

fn load_balancer_status(service: &Json) -> Readiness {
    match service["status"]["loadBalancer"]["ingress"].as_array() {
        Some(ingress) if !ingress.is_empty() => Readiness::Ready,
        _ => Readiness::Waiting("no ingress address yet".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::kind::Kind;
    use crate::kinds::spec_convert::test_support::*;

    /// The Service of kube-golden 07-service step 1 (also the reference `gateway` shape).
    fn golden_config() -> Value {
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
        complete(FIELDS, &obj([("spec", list([spec]))]))
    }

    #[test]
    fn to_object_sends_only_what_is_configured() {
        let (request, _) = golden("07-service.json", 1);
        let sent = Service
            .to_object(&planned_create(FIELDS, &golden_config()))
            .unwrap();
        assert_eq!(Json::Object(sent), json!({"spec": request["spec"]}));
    }

    #[test]
    fn apply_then_refresh_has_no_diff() {
        let (_, response) = golden("07-service.json", 1);
        let config = golden_config();
        let state = Service.from_object(&response, &planned_create(FIELDS, &config));
        assert_eq!(diff(FIELDS, &config, &state), Vec::<String>::new());
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("cluster_ip"), &s("10.96.164.201"));
        assert_eq!(spec.get("type"), &s("ClusterIP"));
        assert_eq!(spec.get("ip_families"), &strings(["IPv4"]));
        assert_eq!(spec.get("port").elements()[0].get("protocol"), &s("TCP"));
        assert_eq!(spec.get("port").elements()[0].get("node_port"), &Value::Null);
        let status = &state.get("status").elements()[0];
        assert_eq!(
            status.get("load_balancer").elements()[0].get("ingress"),
            &list([])
        );
        assert_eq!(state.get(WAIT_FOR_LOAD_BALANCER), &Value::Bool(true));
        assert_eq!(Service.from_object(&response, &state), state, "refresh is stable");
    }

    #[test]
    fn target_port_defaults_to_port_and_names_stay_strings() {
        let (_, defaulted) = golden("07-service.json", 2);
        let spec = obj([
            ("selector", map([("app", "api")])),
            ("port", list([obj([("port", Value::int(9090))])])),
        ]);
        let config = complete(FIELDS, &obj([("spec", list([spec]))]));
        let state = Service.from_object(&defaulted, &planned_create(FIELDS, &config));
        assert_eq!(diff(FIELDS, &config, &state), Vec::<String>::new());
        assert_eq!(
            state.get("spec").elements()[0].get("port").elements()[0].get("target_port"),
            &s("9090")
        );

        let (_, named) = golden("07-service.json", 3);
        let state = Service.from_object(&named, &Value::Null);
        assert_eq!(
            state.get("spec").elements()[0].get("port").elements()[0].get("target_port"),
            &s("http-alt")
        );
    }

    #[test]
    fn import_reads_everything_but_defaults_absent_from_the_object() {
        let (_, response) = golden("07-service.json", 9);
        let state = Service.from_object(&response, &Value::Null);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("selector"), &map([("app", "web-ssa")]));
        assert_eq!(spec.get("session_affinity"), &s("None"));
        assert_eq!(spec.get("session_affinity_config"), &list([]));
        assert_eq!(Service.from_object(&response, &state), state);
    }

    #[test]
    fn client_ip_affinity_default_is_left_out() {
        let (_, mut response) = golden("07-service.json", 1);
        response["spec"]["sessionAffinity"] = json!("ClientIP");
        response["spec"]["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
        let mut config = golden_config();
        let Some(Value::List(specs)) = config.get_mut("spec") else {
            panic!()
        };
        specs[0].set("session_affinity", s("ClientIP"));
        let state = Service.from_object(&response, &planned_create(FIELDS, &config));
        assert_eq!(diff(FIELDS, &config, &state), Vec::<String>::new());
    }

    #[test]
    fn load_balancer_waits_for_an_ingress_address() {
        assert!(matches!(
            load_balancer_status(&json!({"status": {"loadBalancer": {}}})),
            Readiness::Waiting(_)
        ));
        let ready = json!({"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}});
        assert!(matches!(load_balancer_status(&ready), Readiness::Ready));
    }

    #[test]
    fn schema_matches_hashicorp_shapes() {
        let block = Service.block();
        let spec = block.find_block("spec").unwrap();
        assert_eq!((spec.min_items, spec.max_items), (1, 1));
        let cluster_ip = spec.block.find_attribute("cluster_ip").unwrap();
        assert!(cluster_ip.optional && cluster_ip.computed);
        assert!(spec.block.find_block("port").is_some());
        let status = block.find_attribute("status").unwrap();
        assert!(status.computed && !status.optional);
        assert!(
            block.find_attribute(WAIT_FOR_LOAD_BALANCER).is_some() && block.find_block("timeouts").is_some()
        );
    }
}
