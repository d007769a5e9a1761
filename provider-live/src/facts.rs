//! hashicorp/kubernetes 3.4.0's per-attribute behaviour as data: `catalog/facts.tsv`, generated
//! by `make catalog` from the facts recorded in `catalog/hashicorp/` (each with its source line
//! in hashicorp's code). [`annotate`] declares them on a type's schema as runtime rules
//! (`plugin_runtime::rules`): defaults, validators, replacements, equivalences and constraints
//! between attributes. The runtime applies them to every resource; no kind restates them.
//!
//! A type's rows are read the first time its schema is built, as the kind catalog's are.

mod validators;
mod versions;

pub use versions::{schema_version, state_upgrades};

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use plugin_runtime::rules::{Constraint, ConstraintKind, Rules};
use plugin_runtime::{Attribute, Block, NestedBlock, Nesting, Type, Value};

use crate::fields::quantity::SameQuantity;

const FACTS: &str = include_str!("../catalog/facts.tsv");

/// One fact of a type: `kind` is `default`, `reads_absent_as`, `computed_block`, `validate`, `force_new`,
/// `diff_suppress`, `conflicts_with`, `exactly_one_of`, `at_least_one_of`, `required_with`, or
/// `framework` (the type is a plugin-framework resource, not an SDKv2 one), `schema_version` or
/// `state_upgrade` ([`versions`]).
#[derive(Clone, Copy, Debug)]
pub struct Fact {
    pub path: &'static str,
    pub kind: &'static str,
    pub argument: &'static str,
    /// `file:line` in hashicorp's repository.
    pub source: &'static str,
}

/// Where each type's rows are in [`FACTS`] (they come grouped by type).
fn index() -> &'static HashMap<&'static str, &'static str> {
    static INDEX: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut out: HashMap<&'static str, (usize, usize)> = HashMap::new();
        let mut offset = 0;
        for line in FACTS.split_inclusive('\n') {
            let start = offset;
            offset += line.len();
            if line.starts_with('#') {
                continue;
            }
            let ty = line.split('\t').next().unwrap_or_default();
            out.entry(ty)
                .and_modify(|r| r.1 = offset)
                .or_insert((start, offset));
        }
        out.into_iter().map(|(ty, (a, b))| (ty, &FACTS[a..b])).collect()
    })
}

/// The facts of `type_name` (none for a type hashicorp states nothing about).
pub fn of(type_name: &str) -> Vec<Fact> {
    let Some(rows) = index().get(type_name) else {
        return Vec::new();
    };
    rows.lines()
        .filter_map(|line| {
            let mut cols = line.split('\t').skip(1);
            Some(Fact {
                path: cols.next()?,
                kind: cols.next()?,
                argument: cols.next()?,
                source: cols.next()?,
            })
        })
        .collect()
}

/// Where a fact lands in a schema.
enum Target<'b> {
    Attribute(&'b mut Attribute),
    Block(&'b mut NestedBlock),
}

/// The attribute or block at a dotted path (`spec.template.spec.container.port.protocol`).
fn find<'b>(block: &'b mut Block, path: &str) -> Option<Target<'b>> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    if let Some(attribute) = block.attributes.iter_mut().find(|a| a.name == head) {
        return match rest {
            None => Some(Target::Attribute(attribute)),
            Some(rest) => find_nested(&mut attribute.nested.as_mut()?.attributes, rest),
        };
    }
    let nested = block.blocks.iter_mut().find(|b| b.type_name == head)?;
    match rest {
        None => Some(Target::Block(nested)),
        Some(rest) => find(&mut nested.block, rest),
    }
}

/// The attribute at `path` among nested attributes.
fn find_nested<'b>(attributes: &'b mut [Attribute], path: &str) -> Option<Target<'b>> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let attribute = attributes.iter_mut().find(|a| a.name == head)?;
    match rest {
        None => Some(Target::Attribute(attribute)),
        Some(rest) => find_nested(&mut attribute.nested.as_mut()?.attributes, rest),
    }
}

/// Suppressions that a kind implements itself, beyond an equivalence of two values.
const HANDLED_BY_KINDS: [&str; 1] = [
    // The Secret kind keeps `data` out of the write while a write-only revision is set.
    "suppressWhenWriteOnlyRevisionSet",
];

/// Declares one fact on `rules` (or on a block); `Err` says why it cannot be.
fn apply(fact: &Fact, target: Target<'_>) -> Result<(), String> {
    let constraint = |kind| -> Result<Constraint, String> {
        Ok(Constraint {
            kind,
            paths: serde_json::from_str(fact.argument).map_err(|e| e.to_string())?,
        })
    };
    let attribute = match target {
        Target::Block(block) if fact.kind == "force_new" => {
            block.replace = true;
            return Ok(());
        }
        Target::Block(block) if fact.kind == "computed_block" => {
            block.computed = true;
            return Ok(());
        }
        // Applied by reads: [`read_empty_absent`].
        Target::Block(_) if fact.kind == "empty_reads_absent" => return Ok(()),
        Target::Block(_) => return Err(format!("a {} fact on a block", fact.kind)),
        Target::Attribute(attribute) => attribute,
    };
    let rules: &mut Rules = &mut attribute.rules;
    match fact.kind {
        "default" | "reads_absent_as"
            if attribute.required || (attribute.computed && !attribute.optional) => {}
        // The top-level attribute hashicorp's read sets from a field the object may omit holds
        // the zero value then: planned and read back as a default that is never sent.
        "default" | "reads_absent_as" => {
            let json: serde_json::Value = serde_json::from_str(fact.argument).map_err(|e| e.to_string())?;
            attribute.set_default(Value::from_json(&json));
        }
        // Applied by an import: [`imported_values`].
        "imports_as" | "imports_absent_as" => {}
        "validate" => rules.validators.push(validators::parse(fact.argument)?),
        "force_new" => rules.replace = true,
        "diff_suppress" => match fact.argument {
            "suppressEquivalentResourceQuantity" => rules.equivalence = Some(Arc::new(SameQuantity)),
            name if HANDLED_BY_KINDS.contains(&name) => {}
            other => return Err(format!("unknown suppression {other:?}")),
        },
        "conflicts_with" => rules.constraints.push(constraint(ConstraintKind::ConflictsWith)?),
        "exactly_one_of" => rules.constraints.push(constraint(ConstraintKind::ExactlyOneOf)?),
        "at_least_one_of" => rules.constraints.push(constraint(ConstraintKind::AtLeastOneOf)?),
        "required_with" => rules.constraints.push(constraint(ConstraintKind::RequiredWith)?),
        other => return Err(format!("unknown fact {other:?}")),
    }
    Ok(())
}

/// Facts this provider does differently on purpose, by path: `(path, fact, why)`.
pub const DIFFERENCES: [(&str, &str, &str); 1] = [(
    "field_manager",
    "default",
    "The patch-style types default to `tofu-live-<estate>-<type>`, not `Terraform`: two types or \
     estates editing one object under one manager would remove each other's fields.",
)];

/// SDKv2 reads an unset primitive attribute inside a nested block as its zero value, so the
/// state hashicorp's users have holds `""`, `0` or `false` there: an optional attribute of a
/// block gets that as its default (never sent: Kubernetes drops zero values itself). The
/// top-level `metadata` and `timeouts` blocks are outside the kind's fields and keep nulls.
fn sdk_zero_defaults(block: &mut Block) {
    for nested in &mut block.blocks {
        if !matches!(nested.type_name.as_str(), "metadata" | "timeouts") {
            zero_defaults_in(&mut nested.block);
        }
    }
}

fn zero_defaults_in(block: &mut Block) {
    for attribute in &mut block.attributes {
        if attribute.required || attribute.computed || attribute.nested.is_some() {
            continue;
        }
        if let Some(zero) = sdk_zero(&attribute.ty) {
            attribute.set_default(zero);
        }
    }
    for nested in &mut block.blocks {
        zero_defaults_in(&mut nested.block);
    }
}

/// Whether `type_name` is one of hashicorp's SDKv2 types (it has facts, and is no
/// plugin-framework one).
pub fn is_sdk_v2(type_name: &str) -> bool {
    index()
        .get(type_name)
        .is_some_and(|rows| !rows.contains("\tframework\t"))
}

/// A data source's `state` with its resource type's `reads_absent_as` values where the object
/// has none (a data source's read is its resource's). A resource gets them as defaults, which
/// its read fills in already.
pub fn read_absent_as(type_name: &str, state: &mut Value) {
    for fact in of(type_name).iter().filter(|f| f.kind == "reads_absent_as") {
        if let Ok(json) = serde_json::from_str(fact.argument) {
            let value = Value::from_json(&json);
            each_at(state, &fact.path.split('.').collect::<Vec<_>>(), &mut |v| {
                if v.is_null() {
                    *v = value.clone();
                }
            });
        }
    }
}

/// An import's `state` with its type's `imports_as` values (a claim's `wait_until_bound`), and
/// its `imports_absent_as` values where the object gave none (a ConfigMap's `data = {}`).
pub fn imported_values(type_name: &str, state: &mut Value) {
    for fact in of(type_name).iter() {
        let Ok(json) = serde_json::from_str(fact.argument) else {
            continue;
        };
        match fact.kind {
            "imports_as" => state.set(fact.path, Value::from_json(&json)),
            "imports_absent_as" if state.get(fact.path).is_null() => {
                state.set(fact.path, Value::from_json(&json))
            }
            _ => {}
        }
    }
}

/// `state` without the elements of its type's `empty_reads_absent` blocks that hold nothing
/// (a webhook's `namespace_selector {}`, a pod's `security_context {}`), as hashicorp's read
/// leaves them out: a data source's read, and a resource's import.
pub fn read_empty_absent(type_name: &str, state: &mut Value) {
    for fact in of(type_name).iter().filter(|f| f.kind == "empty_reads_absent") {
        each_at(state, &fact.path.split('.').collect::<Vec<_>>(), &mut drop_empty);
    }
}

/// Empties a block list when its one element holds only empty values.
fn drop_empty(child: &mut Value) {
    // SDKv2's zero values included: its flat state cannot tell them from unset.
    let holds_nothing = |v: &Value| match v.plain() {
        Value::Null => true,
        Value::List(l) | Value::Set(l) => l.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        _ => false,
    };
    if let Value::List(items) = child
        && items
            .iter()
            .all(|item| item.entries().is_some_and(|m| m.values().all(holds_nothing)))
    {
        items.clear();
    }
}

/// `state` as SDKv2 would hold it: every primitive left null inside a nested element read from
/// the object, computed ones included, holds its zero value (hashicorp's state has `0` for a
/// ClusterIP Service port's `node_port`). Set elements are left alone: the engine pairs them
/// with the configuration's by their whole value. Optional attributes get the same from
/// [`sdk_zero_defaults`] at plan; this covers what only a read fills.
pub fn sdk_read_zeros(block: &Block, state: &mut Value) {
    let block = block.nested_as_blocks();
    for nested in &block.blocks {
        if !matches!(nested.type_name.as_str(), "metadata" | "timeouts") {
            zeros_in(nested, state.get_mut(&nested.type_name));
        }
    }
    // Computed objects known only by their type (a data source's `spec`): their elements'
    // primitives too; a top-level primitive stays as read.
    if let Value::Object(fields) = state {
        for attribute in &block.attributes {
            if matches!(attribute.ty, Type::List(_) | Type::Map(_) | Type::Object(_))
                && let Some(value) = fields.get_mut(&attribute.name)
            {
                zeros_by_type(&attribute.ty, value);
            }
        }
    }
}

/// Calls `f` on the attribute at `path`, through every element of the lists (and objects) on
/// the way; a path the state lacks is left alone.
fn each_at(state: &mut Value, path: &[&str], f: &mut dyn FnMut(&mut Value)) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    let Value::Object(fields) = state else {
        return;
    };
    let Some(child) = fields.get_mut(*head) else {
        return;
    };
    match (rest.is_empty(), child) {
        (true, v) => f(v),
        (false, Value::List(items)) => items.iter_mut().for_each(|i| each_at(i, rest, f)),
        (false, v @ Value::Object(_)) => each_at(v, rest, f),
        _ => {}
    }
}

fn zeros_in(nested: &NestedBlock, value: Option<&mut Value>) {
    let Some(value) = value else {
        return;
    };
    let elements: Vec<&mut Value> = match (nested.nesting, value) {
        (Nesting::List, Value::List(items)) => items.iter_mut().collect(),
        (Nesting::Map, Value::Map(items)) => items.values_mut().collect(),
        (Nesting::Single | Nesting::Group, v @ Value::Object(_)) => vec![v],
        _ => return,
    };
    let block = nested.block.nested_as_blocks();
    for element in elements {
        for attribute in &block.attributes {
            if let Some(v) = element.get_mut(&attribute.name) {
                zeros_by_type(&attribute.ty, v);
            }
        }
        for inner in &block.blocks {
            zeros_in(inner, element.get_mut(&inner.type_name));
        }
    }
}

/// [`zeros_in`] for a value known only by its type (a computed object a data source reads):
/// a null primitive becomes its zero, and list, map and object values are walked.
fn zeros_by_type(ty: &Type, value: &mut Value) {
    match (ty, value) {
        (Type::List(inner), Value::List(items)) => items.iter_mut().for_each(|i| zeros_by_type(inner, i)),
        (Type::Map(inner), Value::Map(items)) => items.values_mut().for_each(|i| zeros_by_type(inner, i)),
        (Type::Object(fields), Value::Object(values)) => {
            for (name, t) in fields {
                if let Some(v) = values.get_mut(name) {
                    zeros_by_type(t, v);
                }
            }
        }
        (ty, value) if value.is_null() => {
            if let Some(zero) = sdk_zero(ty) {
                *value = zero;
            }
        }
        _ => {}
    }
}

/// The value SDKv2 reads for an unset primitive of type `ty`; `None` for any other type.
fn sdk_zero(ty: &Type) -> Option<Value> {
    match ty {
        Type::String => Some(Value::string("")),
        Type::Number => Some(Value::int(0)),
        Type::Bool => Some(Value::Bool(false)),
        _ => None,
    }
}

/// Declares the facts of `type_name` on its schema `block`. Returns what could not be declared
/// (a path the schema lacks, an unreadable argument), each with the fact's source; a test keeps
/// that empty for every type.
pub fn annotate(type_name: &str, block: &mut Block) -> Vec<String> {
    let mut problems = Vec::new();
    let facts = of(type_name);
    for fact in &facts {
        // Facts of the whole type or of its stored state, not of an attribute's rules.
        if matches!(fact.kind, "framework" | "schema_version" | "state_upgrade") {
            continue;
        }
        if DIFFERENCES
            .iter()
            .any(|(path, kind, _)| *path == fact.path && *kind == fact.kind)
        {
            continue;
        }
        let outcome = match find(block, fact.path) {
            Some(target) => apply(fact, target),
            None => Err("no such attribute in the schema".to_string()),
        };
        if let Err(why) = outcome {
            problems.push(format!(
                "{type_name} {} {} ({}): {why}",
                fact.path, fact.kind, fact.source
            ));
        }
    }
    if !facts.is_empty() && !facts.iter().any(|f| f.kind == "framework") {
        sdk_zero_defaults(block);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_types_facts_are_its_own() {
        let facts = of("kubernetes_deployment_v1");
        assert!(facts.iter().any(|f| f.path == "spec.template.spec.dns_policy"
            && f.kind == "default"
            && f.argument == "\"ClusterFirst\""
            && f.source.starts_with("kubernetes/schema_pod_spec.go:")));
        assert!(of("kubernetes_no_such_type").is_empty());
    }

    #[test]
    fn a_read_holds_sdk_zero_values_inside_elements_but_not_in_sets() {
        let condition = Type::list(Type::object([("serving", Type::Bool)]));
        let endpoint = Block::new("e")
            .attribute(Attribute::computed("hostname", Type::String, ""))
            .attribute(Attribute::computed("condition", condition, ""));
        let block = Block::new("r")
            .attribute(Attribute::optional("immutable", Type::Bool, ""))
            .attribute(Attribute::computed(
                "status",
                Type::list(Type::object([("ip", Type::String)])),
                "",
            ))
            .block(NestedBlock::new("endpoint", Nesting::List, endpoint.clone()))
            .block(NestedBlock::new("tagged", Nesting::Set, endpoint));
        let element = || {
            Value::object([
                ("hostname", Value::Null),
                (
                    "condition",
                    Value::List(vec![Value::object([("serving", Value::Null)])]),
                ),
            ])
        };
        let mut state = Value::object([
            ("immutable", Value::Null),
            ("status", Value::List(vec![Value::object([("ip", Value::Null)])])),
            ("endpoint", Value::List(vec![element()])),
            ("tagged", Value::Set(vec![element()])),
        ]);
        read_absent_as("kubernetes_secret_v1", &mut state);
        sdk_read_zeros(&block, &mut state);
        assert_eq!(
            state.get("immutable"),
            &Value::Bool(false),
            "the type's reads_absent_as fact"
        );
        assert_eq!(state.get("status").elements()[0].get("ip"), &Value::string(""));
        let read = &state.get("endpoint").elements()[0];
        assert_eq!(read.get("hostname"), &Value::string(""));
        assert_eq!(
            read.get("condition").elements()[0].get("serving"),
            &Value::Bool(false)
        );
        assert_eq!(
            state.get("tagged").elements()[0],
            element(),
            "a set element is its identity"
        );
    }

    #[test]
    fn every_fact_fits_its_types_schema() {
        use plugin_runtime::Provider as _;
        let provider = crate::LiveProvider::default();
        let mut problems = Vec::new();
        let mut served = Vec::new();
        for resource in provider.resources() {
            for name in std::iter::once(resource.type_name()).chain(resource.aliases().iter().copied()) {
                problems.extend(annotate(name, &mut resource.schema().block));
                served.push(name);
            }
        }
        assert!(
            problems.is_empty(),
            "{} facts do not fit:\n{}",
            problems.len(),
            problems.join("\n")
        );
        let without: Vec<&&str> = served
            .iter()
            // hashicorp's facts are of its types; the manifests and the kubectl providers'
            // types declare theirs with their schemas.
            .filter(|t| of(t).is_empty() && **t != "kubernetes_manifest" && !t.starts_with("kubectl_"))
            .collect();
        assert!(without.is_empty(), "types without facts: {without:?}");
    }

    #[test]
    fn a_webhooks_empty_selectors_read_as_no_block() {
        let selector = |labels: Value| {
            Value::List(vec![Value::object([
                ("match_labels", labels),
                ("match_expressions", Value::List(vec![])),
            ])])
        };
        let webhook = Value::object([
            ("name", Value::string("w")),
            ("namespace_selector", selector(Value::Map(Default::default()))),
            ("object_selector", selector(Value::string_map([("app", "x")]))),
        ]);
        let mut state = Value::object([("webhook", Value::List(vec![webhook]))]);
        read_empty_absent("kubernetes_mutating_webhook_configuration_v1", &mut state);
        let read = &state.get("webhook").elements()[0];
        assert_eq!(read.get("namespace_selector"), &Value::List(vec![]));
        assert_eq!(
            read.get("object_selector").elements().len(),
            1,
            "a selector that selects stays"
        );
    }

    #[test]
    fn a_claims_import_waits_until_bound_as_hashicorps_importer_sets_it() {
        let mut state = Value::object([("wait_until_bound", Value::Null)]);
        imported_values("kubernetes_persistent_volume_claim_v1", &mut state);
        assert_eq!(state.get("wait_until_bound"), &Value::Bool(true));
        let mut other = Value::object([("wait_for_rollout", Value::Null)]);
        imported_values("kubernetes_deployment_v1", &mut other);
        assert_eq!(other.get("wait_for_rollout"), &Value::Null);
    }
}
