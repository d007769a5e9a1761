//! `kubernetes_network_policy` (networking.k8s.io/v1 NetworkPolicy): the spec as
//! hashicorp/kubernetes has it.
//!
//! The server fills `policyTypes` ([Ingress], or [Ingress, Egress] when egress rules exist)
//! and defaults port protocols to TCP (kube-golden 11-networkpolicy): both Optional+Computed.

use super::spec_convert::Scalar::{Int, IntOrString, Str};
use super::spec_convert::Shape::{Array, List, Object, One};
use super::spec_convert::{Field, TableKind};
use super::spec_selector::LABEL_SELECTOR;
use crate::kind::{Behaviour, KindInfo};

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_network_policy",
    aliases: &["kubernetes_network_policy_v1"],
    api_version: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    namespaced: true,
    description: "A NetworkPolicy says which traffic may reach, and leave, the pods it selects.",
};

const PORT: &[Field] = &[
    Field::optional(
        "end_port",
        "endPort",
        One(Int),
        "Last port of a range starting at `port`.",
    ),
    Field::optional("port", "port", One(IntOrString), "Number or name of the port."),
    Field::defaulted(
        "protocol",
        "protocol",
        One(Str),
        "`TCP` (the default), `UDP` or `SCTP`.",
    ),
];

const IP_BLOCK: &[Field] = &[
    Field::optional("cidr", "cidr", One(Str), "A CIDR such as \"10.0.0.0/8\"."),
    Field::optional("except", "except", List(Str), "CIDRs inside `cidr` to leave out."),
];

const PEER: &[Field] = &[
    Field::optional(
        "ip_block",
        "ipBlock",
        Object(IP_BLOCK),
        "Addresses the traffic may come from or go to.",
    ),
    Field::optional(
        "namespace_selector",
        "namespaceSelector",
        Object(LABEL_SELECTOR),
        "Namespaces whose pods are selected; all namespaces when empty.",
    ),
    Field::optional(
        "pod_selector",
        "podSelector",
        Object(LABEL_SELECTOR),
        "Pods selected, in the policy's namespace unless `namespace_selector` is set.",
    ),
];

const INGRESS_RULE: &[Field] = &[
    Field::optional(
        "from",
        "from",
        Array(PEER),
        "Sources allowed; any source when none are listed.",
    ),
    Field::optional(
        "ports",
        "ports",
        Array(PORT),
        "Ports allowed; all ports when none are listed.",
    ),
];

const EGRESS_RULE: &[Field] = &[
    Field::optional(
        "ports",
        "ports",
        Array(PORT),
        "Ports allowed; all ports when none are listed.",
    ),
    Field::optional(
        "to",
        "to",
        Array(PEER),
        "Destinations allowed; any destination when none are listed.",
    ),
];

const SPEC: &[Field] = &[
    Field::optional(
        "egress",
        "egress",
        Array(EGRESS_RULE),
        "Outgoing traffic allowed from the selected pods.",
    ),
    Field::optional(
        "ingress",
        "ingress",
        Array(INGRESS_RULE),
        "Incoming traffic allowed to the selected pods.",
    ),
    Field::required(
        "pod_selector",
        "podSelector",
        Object(LABEL_SELECTOR),
        "The pods the policy applies to; an empty block selects every pod in the namespace.",
    ),
    Field::defaulted(
        "policy_types",
        "policyTypes",
        List(Str),
        "`Ingress` and/or `Egress`; by default Ingress, plus Egress when egress rules are given.",
    ),
];

const FIELDS: &[Field] = &[Field::required(
    "spec",
    "spec",
    Object(SPEC),
    "Specification of the network policy.",
)];

/// The NetworkPolicy kind.
pub struct NetworkPolicy;

impl TableKind for NetworkPolicy {
    const INFO: &'static KindInfo = &INFO;
    const FIELDS: &'static [Field] = FIELDS;
}

impl Behaviour for NetworkPolicy {}

#[cfg(test)]
mod tests {
    use plugin_runtime::Value;
    use serde_json::json;

    use super::*;
    use crate::kind::Kind;
    use crate::kinds::spec_convert::test_support::*;

    fn config(spec: Value) -> Value {
        complete(FIELDS, &obj([("spec", list([spec]))]))
    }

    fn round_trip(step: usize, config: &Value) -> Value {
        golden_round_trip(&NetworkPolicy, "11-networkpolicy.json", step, config)
    }

    /// Ingress only from one namespace, as the reference estate's `default_deny` has it.
    #[test]
    fn ingress_from_a_namespace() {
        let namespace = obj([(
            "match_labels",
            map([("kubernetes.io/metadata.name", "ingress-nginx")]),
        )]);
        let c = config(obj([
            (
                "pod_selector",
                list([obj([("match_labels", map([("app", "web")]))])]),
            ),
            (
                "ingress",
                list([obj([(
                    "from",
                    list([obj([("namespace_selector", list([namespace]))])]),
                )])]),
            ),
        ]));
        let state = round_trip(1, &c);
        assert_eq!(
            state.get("spec").elements()[0].get("policy_types"),
            &strings(["Ingress"])
        );
    }

    #[test]
    fn egress_ports_and_ip_blocks() {
        let port = |p: &str, protocol: Option<&str>| obj([("port", s(p)), ("protocol", protocol.into())]);
        let ip_block = obj([("cidr", s("10.0.0.0/8")), ("except", strings(["10.1.0.0/16"]))]);
        let c = config(obj([
            ("pod_selector", list([obj([])])),
            ("ingress", list([obj([("ports", list([port("8080", None)]))])])),
            (
                "egress",
                list([obj([
                    ("to", list([obj([("ip_block", list([ip_block]))])])),
                    ("ports", list([port("53", Some("UDP")), port("https", None)])),
                ])]),
            ),
        ]));
        let state = round_trip(2, &c);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("policy_types"), &strings(["Ingress", "Egress"]));
        let ports = spec.get("egress").elements()[0].get("ports");
        assert_eq!(ports.elements()[1].get("port"), &s("https"));
        assert_eq!(ports.elements()[1].get("protocol"), &s("TCP"));
    }

    #[test]
    fn deny_all_keeps_its_empty_pod_selector() {
        let c = config(obj([("pod_selector", list([obj([])]))]));
        round_trip(3, &c);
        let (_, response) = golden("11-networkpolicy.json", 3);
        let imported = NetworkPolicy.from_object(&response, &Value::Null);
        assert_eq!(
            imported.get("spec").elements()[0]
                .get("pod_selector")
                .elements()
                .len(),
            1
        );
        assert_eq!(diff(FIELDS, &c, &imported), Vec::<String>::new());
    }

    #[test]
    fn an_empty_namespace_selector_survives_import() {
        let (_, mut response) = golden("11-networkpolicy.json", 1);
        response["spec"]["ingress"][0]["from"][0]["namespaceSelector"] = json!({});
        let state = NetworkPolicy.from_object(&response, &Value::Null);
        let peer = &state.get("spec").elements()[0].get("ingress").elements()[0]
            .get("from")
            .elements()[0];
        assert_eq!(
            peer.get("namespace_selector").elements().len(),
            1,
            "{{}} selects every namespace"
        );
    }
}
