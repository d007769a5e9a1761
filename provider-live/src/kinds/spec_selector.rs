//! The label selector (`match_labels`, `match_expressions`) shared by Deployments,
//! NetworkPolicies and HPA metrics.

use super::spec_convert::{Field, Scalar, Shape};

const EXPRESSION: &[Field] = &[
    Field::optional(
        "key",
        "key",
        Shape::One(Scalar::Str),
        "The label key that the selector applies to.",
    ),
    Field::optional(
        "operator",
        "operator",
        Shape::One(Scalar::Str),
        "A key's relationship to a set of values: `In`, `NotIn`, `Exists` or `DoesNotExist`.",
    ),
    Field::optional(
        "values",
        "values",
        Shape::Set(Scalar::Str),
        "Values; non-empty for `In` and `NotIn`, empty for `Exists` and `DoesNotExist`.",
    ),
];

/// The fields of a `metav1.LabelSelector`.
pub const LABEL_SELECTOR: &[Field] = &[
    Field::optional(
        "match_expressions",
        "matchExpressions",
        Shape::Array(EXPRESSION),
        "A list of label selector requirements. The requirements are ANDed.",
    ),
    Field::optional(
        "match_labels",
        "matchLabels",
        Shape::Map(Scalar::Str),
        "A map of {key,value} pairs, each equivalent to an `In` expression with one value.",
    ),
];
