//! `kubernetes_horizontal_pod_autoscaler_v2` (autoscaling/v2 HorizontalPodAutoscaler): the
//! spec as hashicorp/kubernetes has it.
//!
//! The server defaults `minReplicas` to 1 and the metrics to CPU at 80 %, and fills in both
//! scaling directions once `behavior` is partly given (kube-golden 10-hpa); those defaults are
//! left out, or read into Optional+Computed attributes, so they never show as a diff.

use super::spec_convert::Scalar::{Int, Quantity, Str};
use super::spec_convert::Shape::{Array, Object, One};
use super::spec_convert::{Field, TableKind};
use super::spec_selector::LABEL_SELECTOR;
use crate::kind::{Behaviour, KindInfo};

static INFO: KindInfo = KindInfo {
    type_name: "kubernetes_horizontal_pod_autoscaler_v2",
    aliases: &[],
    api_version: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    namespaced: true,
    description: "A HorizontalPodAutoscaler scales a workload's replicas to keep its metrics on target.",
};

const TARGET: &[Field] = &[
    Field::optional(
        "average_utilization",
        "averageUtilization",
        One(Int),
        "Target average of the resource metric across the pods, as a percentage of their requests.",
    ),
    Field::optional(
        "average_value",
        "averageValue",
        One(Quantity),
        "Target average value across the pods (a quantity).",
    ),
    Field::required(
        "type",
        "type",
        One(Str),
        "`Utilization`, `Value` or `AverageValue`.",
    ),
    Field::optional(
        "value",
        "value",
        One(Quantity),
        "Target value of the metric (a quantity).",
    ),
];

const TARGET_FIELD: Field = Field::optional(
    "target",
    "target",
    Object(TARGET),
    "The target value for the metric.",
);

const METRIC_IDENTIFIER: &[Field] = &[
    Field::required("name", "name", One(Str), "Name of the metric."),
    Field::optional(
        "selector",
        "selector",
        Object(LABEL_SELECTOR),
        "Label selector scoping the metric.",
    ),
];

const METRIC_IDENTIFIER_FIELD: Field = Field::required(
    "metric",
    "metric",
    Object(METRIC_IDENTIFIER),
    "The metric, by name and selector.",
);

const RESOURCE_SOURCE: &[Field] = &[
    Field::required(
        "name",
        "name",
        One(Str),
        "Name of the resource, e.g. `cpu` or `memory`.",
    ),
    TARGET_FIELD,
];

const CONTAINER_RESOURCE_SOURCE: &[Field] = &[
    Field::required(
        "container",
        "container",
        One(Str),
        "Name of the container in the pods.",
    ),
    Field::required("name", "name", One(Str), "Name of the resource."),
    TARGET_FIELD,
];

const METRIC_SOURCE: &[Field] = &[METRIC_IDENTIFIER_FIELD, TARGET_FIELD];

const OBJECT_REFERENCE: &[Field] = &[
    Field::required(
        "api_version",
        "apiVersion",
        One(Str),
        "API version of the referent.",
    ),
    Field::required("kind", "kind", One(Str), "Kind of the referent."),
    Field::required("name", "name", One(Str), "Name of the referent."),
];

const OBJECT_SOURCE: &[Field] = &[
    Field::required(
        "described_object",
        "describedObject",
        Object(OBJECT_REFERENCE),
        "The object the metric describes.",
    ),
    METRIC_IDENTIFIER_FIELD,
    TARGET_FIELD,
];

const METRIC: &[Field] = &[
    Field::optional(
        "container_resource",
        "containerResource",
        Object(CONTAINER_RESOURCE_SOURCE),
        "A resource metric of one container in each pod.",
    ),
    Field::optional(
        "external",
        "external",
        Object(METRIC_SOURCE),
        "A metric not tied to any Kubernetes object.",
    ),
    Field::optional(
        "object",
        "object",
        Object(OBJECT_SOURCE),
        "A metric describing one Kubernetes object.",
    ),
    Field::optional(
        "pods",
        "pods",
        Object(METRIC_SOURCE),
        "A metric averaged over the pods.",
    ),
    Field::optional(
        "resource",
        "resource",
        Object(RESOURCE_SOURCE),
        "A resource metric (cpu, memory) of the pods.",
    ),
    Field::required(
        "type",
        "type",
        One(Str),
        "`ContainerResource`, `External`, `Object`, `Pods` or `Resource`.",
    ),
];

const POLICY: &[Field] = &[
    Field::required(
        "period_seconds",
        "periodSeconds",
        One(Int),
        "Window of time for which the policy holds.",
    ),
    Field::required("type", "type", One(Str), "`Pods` or `Percent`."),
    Field::required("value", "value", One(Int), "The change the policy permits."),
];

/// The fields of a scaling rule whose policies the server fills in with `policies_default`.
macro_rules! scaling_rules {
    ($policies_default:literal) => {
        &[
            Field::optional(
                "policy",
                "policies",
                Array(POLICY),
                "Policies that may be used when scaling.",
            )
            .server_default($policies_default),
            Field::defaulted(
                "select_policy",
                "selectPolicy",
                One(Str),
                "`Max` (the default), `Min` or `Disabled`.",
            ),
            Field::defaulted(
                "stabilization_window_seconds",
                "stabilizationWindowSeconds",
                One(Int),
                "Seconds of past recommendations to consider; 0 up and 300 down by default.",
            ),
        ]
    };
}

const SCALE_UP: &[Field] = scaling_rules!(
    r#"[{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]"#
);
const SCALE_DOWN: &[Field] = scaling_rules!(r#"[{"type": "Percent", "value": 100, "periodSeconds": 15}]"#);

const BEHAVIOR: &[Field] = &[
    Field::optional(
        "scale_down",
        "scaleDown",
        Object(SCALE_DOWN),
        "Scaling policy for scaling down.",
    )
    .server_default(
        r#"{"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}"#,
    ),
    Field::optional(
        "scale_up",
        "scaleUp",
        Object(SCALE_UP),
        "Scaling policy for scaling up.",
    )
    .server_default(
        r#"{"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}"#,
    ),
];

const SCALE_TARGET_REF: &[Field] = &[
    Field::optional(
        "api_version",
        "apiVersion",
        One(Str),
        "API version of the referent.",
    ),
    Field::required(
        "kind",
        "kind",
        One(Str),
        "Kind of the referent, e.g. `Deployment`.",
    ),
    Field::required("name", "name", One(Str), "Name of the referent."),
];

const SPEC: &[Field] = &[
    Field::optional("behavior", "behavior", Object(BEHAVIOR), "Scaling behaviour in both directions."),
    Field::required("max_replicas", "maxReplicas", One(Int), "Upper limit for the number of pods."),
    Field::optional("metric", "metrics", Array(METRIC), "Metrics to scale on; 80 % average CPU when none are set.")
        .server_default(
            r#"[{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]"#,
        ),
    Field::defaulted("min_replicas", "minReplicas", One(Int), "Lower limit for the number of pods; 1 by default."),
    Field::required("scale_target_ref", "scaleTargetRef", Object(SCALE_TARGET_REF), "The workload to scale."),
];

const FIELDS: &[Field] = &[Field::required(
    "spec",
    "spec",
    Object(SPEC),
    "Behaviour of the autoscaler.",
)];

/// The autoscaling/v2 HorizontalPodAutoscaler kind.
pub struct HorizontalPodAutoscalerV2;

impl TableKind for HorizontalPodAutoscalerV2 {
    const INFO: &'static KindInfo = &INFO;
    const FIELDS: &'static [Field] = FIELDS;
}

impl Behaviour for HorizontalPodAutoscalerV2 {}

#[cfg(test)]
mod tests {
    use plugin_runtime::Value;
    use serde_json::json;

    use super::*;
    use crate::kind::Kind;
    use crate::kinds::spec_convert::test_support::*;

    fn target_ref() -> Value {
        list([obj([
            ("api_version", s("apps/v1")),
            ("kind", s("Deployment")),
            ("name", s("web")),
        ])])
    }

    fn config(spec: Value) -> Value {
        complete(FIELDS, &obj([("spec", list([spec]))]))
    }

    /// Sends the configuration as golden `step` did, and reads the answer back without a diff.
    fn round_trip(step: usize, config: &Value) -> Value {
        golden_round_trip(&HorizontalPodAutoscalerV2, "10-hpa.json", step, config)
    }

    #[test]
    fn cpu_utilization_target_as_the_reference_estate_has_it() {
        let cpu = obj([
            ("type", s("Resource")),
            (
                "resource",
                list([obj([
                    ("name", s("cpu")),
                    (
                        "target",
                        list([obj([
                            ("type", s("Utilization")),
                            ("average_utilization", Value::int(70)),
                        ])]),
                    ),
                ])]),
            ),
        ]);
        let c = config(obj([
            ("scale_target_ref", target_ref()),
            ("min_replicas", Value::int(1)),
            ("max_replicas", Value::int(5)),
            ("metric", list([cpu])),
        ]));
        round_trip(2, &c);
    }

    #[test]
    fn server_defaults_of_a_minimal_autoscaler_are_not_a_diff() {
        let c = config(obj([
            ("scale_target_ref", target_ref()),
            ("max_replicas", Value::int(3)),
        ]));
        let state = round_trip(4, &c);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("min_replicas"), &Value::int(1));
        assert_eq!(spec.get("metric"), &list([]), "default cpu 80 % left out");
    }

    #[test]
    fn partly_given_behavior_is_filled_without_a_diff() {
        let memory = obj([
            ("type", s("Resource")),
            (
                "resource",
                list([obj([
                    ("name", s("memory")),
                    (
                        "target",
                        list([obj([("type", s("AverageValue")), ("average_value", s("512Mi"))])]),
                    ),
                ])]),
            ),
        ]);
        let behavior = obj([(
            "scale_down",
            list([obj([("stabilization_window_seconds", Value::int(120))])]),
        )]);
        let c = config(obj([
            ("scale_target_ref", target_ref()),
            ("min_replicas", Value::int(2)),
            ("max_replicas", Value::int(10)),
            ("metric", list([memory])),
            ("behavior", list([behavior])),
        ]));
        let state = round_trip(5, &c);
        let behavior = &state.get("spec").elements()[0].get("behavior").elements()[0];
        assert_eq!(behavior.get("scale_up"), &list([]));
        let down = &behavior.get("scale_down").elements()[0];
        assert_eq!(down.get("select_policy"), &s("Max"));
        assert_eq!(down.get("policy"), &list([]));
    }

    #[test]
    fn import_gives_back_what_was_configured() {
        let (_, minimal) = golden("10-hpa.json", 4);
        let state = HorizontalPodAutoscalerV2.from_object(&minimal, &Value::Null);
        assert_eq!(state.get("spec").elements()[0].get("metric"), &list([]));

        let (_, with_behavior) = golden("10-hpa.json", 5);
        let state = HorizontalPodAutoscalerV2.from_object(&with_behavior, &Value::Null);
        let behavior = &state.get("spec").elements()[0].get("behavior").elements()[0];
        assert_eq!(behavior.get("scale_up"), &list([]));
        assert_eq!(
            behavior.get("scale_down").elements()[0].get("stabilization_window_seconds"),
            &Value::int(120)
        );
        assert_eq!(behavior.get("scale_down").elements()[0].get("policy"), &list([]));
    }

    #[test]
    fn quantities_keep_the_configured_spelling() {
        let (_, mut response) = golden("10-hpa.json", 5);
        response["spec"]["metrics"][0]["resource"]["target"]["averageValue"] = json!("512Mi");
        let memory = |v: &str| {
            obj([
                ("type", s("Resource")),
                (
                    "resource",
                    list([obj([
                        ("name", s("memory")),
                        (
                            "target",
                            list([obj([("type", s("AverageValue")), ("average_value", s(v))])]),
                        ),
                    ])]),
                ),
            ])
        };
        let c = config(obj([
            ("scale_target_ref", target_ref()),
            ("max_replicas", Value::int(10)),
            ("metric", list([memory("0.5Gi")])),
        ]));
        let state = HorizontalPodAutoscalerV2.from_object(&response, &planned_create(FIELDS, &c));
        let metric = &state.get("spec").elements()[0].get("metric").elements()[0];
        assert_eq!(
            metric.get("resource").elements()[0].get("target").elements()[0].get("average_value"),
            &s("0.5Gi")
        );
    }
}
