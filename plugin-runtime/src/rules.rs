//! Attribute rules: what an attribute does beyond its type and flags, declared on the schema
//! and applied by the runtime to every resource, as terraform-plugin-framework applies its
//! validators and plan modifiers. A provider declares them; it never re-implements them.
//!
//! - **Validators** check every known, non-null value when the engine validates a
//!   configuration (each element of a list or set of primitives); a failure names the path.
//! - **Constraints** between attributes (conflicts with, exactly one of, at least one of,
//!   required with) name other attributes by absolute paths with list indices, as SDKv2 writes
//!   them (`spec.0.selector`).
//! - A **default** is planned where the configuration leaves the attribute null. The protocol
//!   lets a provider fill in only computed attributes, so an attribute with a default is
//!   computed ([`Attribute::with_default`]).
//! - An **equivalence** keeps the prior value where the planned one means the same (`1Gi`
//!   and `1024Mi`): the engine accepts the prior in place of an equivalent configured value.
//!   A computed attribute is planned in the form the provider will read back, where known.
//! - **Replace**: a planned change of the attribute replaces the object; on a block, a change
//!   of its number of elements does.
//!
//! One rule holds for every map: a null element (a variable left null) is dropped from the
//! plan where the attribute is computed or the resource a legacy one (hashicorp's SDKv2 drops
//! it, and the engine accepts a legacy plan that differs from the configuration), and refused
//! at validation elsewhere, since the engine requires the plan of a non-computed attribute to
//! be its configuration.

use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics};
use crate::schema::{Attribute, Block, Nesting};
/// The rules' declaration lives with the schema that carries them; they are named here too.
pub use crate::schema::{Constraint, ConstraintKind, Equivalence, Rules, Validator};
use crate::types::Type;
use crate::value::Value;

fn is_set(value: &Value) -> bool {
    !value.is_null() && !matches!(value.plain(), Value::List(v) | Value::Set(v) if v.is_empty())
}

/// A list or set of primitives: validators check each element.
fn checks_elements(attribute: &Attribute) -> bool {
    attribute.nested.is_none() && matches!(attribute.ty, Type::List(_) | Type::Set(_))
}

/// The value at an SDK-style absolute path (`spec.0.selector`); `None` where it leads nowhere.
fn at_sdk_path<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(root, |value, step| match step.parse::<usize>() {
            Ok(i) => value.elements().get(i),
            Err(_) => match value.plain() {
                Value::Object(m) | Value::Map(m) => m.get(step),
                _ => None,
            },
        })
}

/// Every diagnostic the rules of `block` raise for `config` (validators, constraints, null
/// map elements of non-computed attributes unless `legacy`, whose plan drops them).
pub fn validate(block: &Block, config: &Value, legacy: bool) -> Diagnostics {
    let mut out = Diagnostics::new();
    let check = Check { root: config, legacy };
    check.block(block, config, &AttributePath::default(), &mut out);
    out
}

/// What every step of a validation shares: the whole configuration (constraints name absolute
/// paths) and whether null map elements are dropped rather than refused.
struct Check<'a> {
    root: &'a Value,
    legacy: bool,
}

impl Check<'_> {
    fn block(&self, block: &Block, value: &Value, at: &AttributePath, out: &mut Diagnostics) {
        let block = &*block.nested_as_blocks();
        for attribute in &block.attributes {
            let v = value.get(&attribute.name);
            let path = at.clone().attribute(&attribute.name);
            self.attribute(attribute, v, &path, out);
        }
        for nested in &block.blocks {
            let v = value.get(&nested.type_name);
            let path = at.clone().attribute(&nested.type_name);
            match nested.nesting {
                Nesting::Single | Nesting::Group => self.block(&nested.block, v, &path, out),
                Nesting::List | Nesting::Set => {
                    for (i, element) in v.elements().iter().enumerate() {
                        // A set element has no index of its own; its position still tells users where.
                        self.block(&nested.block, element, &path.clone().index(i as i64), out);
                    }
                }
                Nesting::Map => {
                    for (k, element) in v.entries().into_iter().flatten() {
                        self.block(&nested.block, element, &path.clone().key(k), out);
                    }
                }
            }
        }
    }

    fn attribute(&self, attribute: &Attribute, value: &Value, path: &AttributePath, out: &mut Diagnostics) {
        if value.is_unknown() {
            return;
        }
        if matches!(attribute.ty, Type::Map(_)) && !attribute.computed && !self.legacy {
            for (key, element) in value.entries().into_iter().flatten() {
                if element.is_null() {
                    out.push(
                        Diagnostic::error(
                            format!("Invalid value for {path}"),
                            format!(
                                "The element {key:?} is null. Give it a value or leave the key out \
                             (for example with a conditional expression)."
                            ),
                        )
                        .at(path.clone().key(key)),
                    );
                }
            }
        }
        if !value.is_null() {
            let checked: Vec<(AttributePath, &Value)> = if checks_elements(attribute) {
                value
                    .elements()
                    .iter()
                    .enumerate()
                    .map(|(i, e)| (path.clone().index(i as i64), e))
                    .collect()
            } else {
                vec![(path.clone(), value)]
            };
            for (at, v) in checked {
                if v.is_null() || !v.is_wholly_known() {
                    continue;
                }
                for validator in &attribute.rules.validators {
                    if let Err(why) = validator.check_at(v, &at.sdk()) {
                        let diagnostic = if validator.names_the_path() {
                            let detail =
                                format!("Invalid value for {at}: expected {}.", validator.describe());
                            Diagnostic::error(why, detail)
                        } else {
                            Diagnostic::error(format!("Invalid value for {at}"), why)
                        };
                        out.push(diagnostic.at(at.clone()));
                    }
                }
            }
        }
        for constraint in &attribute.rules.constraints {
            check_constraint(constraint, self.root, value, path, out);
        }
    }
}

fn check_constraint(
    constraint: &Constraint,
    root: &Value,
    value: &Value,
    path: &AttributePath,
    out: &mut Diagnostics,
) {
    let others: Vec<Option<&Value>> = constraint.paths.iter().map(|p| at_sdk_path(root, p)).collect();
    if others.iter().flatten().any(|v| v.is_unknown()) {
        return;
    }
    let set: Vec<&str> = constraint
        .paths
        .iter()
        .zip(&others)
        .filter(|(_, v)| v.is_some_and(is_set))
        .map(|(p, _)| p.as_str())
        .collect();
    let listed = constraint.paths.join("`, `");
    let problem = match constraint.kind {
        ConstraintKind::ConflictsWith if is_set(value) && !set.is_empty() => Some(format!(
            "{path} cannot be set together with `{}`.",
            set.join("`, `")
        )),
        ConstraintKind::ExactlyOneOf if set.len() > 1 => Some(format!(
            "Only one of `{listed}` can be set; `{}` are.",
            set.join("`, `")
        )),
        ConstraintKind::ExactlyOneOf | ConstraintKind::AtLeastOneOf if set.is_empty() => {
            Some(format!("One of `{listed}` must be set."))
        }
        ConstraintKind::RequiredWith if is_set(value) && set.len() < constraint.paths.len() => {
            Some(format!("{path} requires `{listed}` to be set too."))
        }
        _ => None,
    };
    if let Some(detail) = problem {
        out.push(Diagnostic::error("Invalid combination of arguments", detail).at(path.clone()));
    }
}

/// The proposed new state with the rules applied: defaults where the configuration is null,
/// the prior's value where the configuration leaves an equivalent one to the provider (or, for
/// a `legacy` resource, writes an equivalent one), null map elements of computed attributes
/// dropped.
pub fn plan(block: &Block, config: &Value, prior: &Value, proposed: Value, legacy: bool) -> Value {
    plan_in(block, config, prior, proposed, legacy)
}

fn plan_in(block: &Block, config: &Value, prior: &Value, proposed: Value, legacy: bool) -> Value {
    let block = &*block.nested_as_blocks();
    let Value::Object(mut fields) = proposed else {
        return proposed;
    };
    for attribute in &block.attributes {
        let value = fields.entry(attribute.name.clone()).or_insert(Value::Null);
        let configured = config.get(&attribute.name);
        let before = prior.get(&attribute.name);
        if let Some(default) = &attribute.rules.default
            && configured.is_null()
            && !attribute.required
        {
            // A prior object saved without the attribute (by a version that knew no default)
            // means the default already: it stays null, until its next refresh fills it in.
            let unsaved = !prior.is_null() && before.is_null();
            *value = if unsaved { Value::Null } else { default.clone() };
            continue;
        }
        // The legacy SDK reads an unset value as its zero ("", 0, false, empty): a state it
        // wrote holds `generate_name = ""` where the configuration says nothing. That is no
        // change (and no replacement), so the plan keeps it.
        if legacy && configured.is_null() && value.is_null() && !attribute.computed && before.is_zero() {
            *value = before.clone();
            continue;
        }
        // SDKv2 reads `""` configured for a computed string without a default as unset (its
        // schema.finalizeDiff): the prior value stays, and without one the provider's value is
        // awaited. A default `""` is a value like any other.
        if legacy
            && attribute.computed
            && attribute.rules.default.is_none()
            && matches!(configured.plain(), Value::String(s) if s.is_empty())
        {
            *value = if before.is_null() {
                Value::unknown()
            } else {
                before.clone()
            };
            continue;
        }
        // A null element is no entry (hashicorp's SDKv2 drops it when it reads the
        // configuration), so an equivalent map is compared without it.
        if matches!(attribute.ty, Type::Map(_))
            && (attribute.computed || legacy)
            && let Value::Map(entries) = value
        {
            entries.retain(|_, v| !v.is_null());
        }
        // A configured value is planned exactly as written: both engines refuse a plan that
        // differs from a non-null configuration, equivalent or not, unless the resource is a
        // legacy one. Otherwise only a value the configuration leaves to the provider may keep
        // the prior's form or take the server's.
        if let Some(equivalence) = &attribute.rules.equivalence
            && (configured.is_null() || legacy)
            && !value.is_null()
            && value.is_wholly_known()
        {
            if !before.is_null() && before.is_wholly_known() && equivalence.equivalent(before, value) {
                *value = before.clone();
            } else if attribute.computed
                && configured.is_null()
                && let Some(canonical) = equivalence.canonical(value)
            {
                *value = canonical;
            }
        }
    }
    for nested in &block.blocks {
        let Some(value) = fields.remove(&nested.type_name) else {
            continue;
        };
        let configured = config.get(&nested.type_name);
        let before = prior.get(&nested.type_name);
        // The legacy SDK planned a computed block the configuration leaves out as it was.
        if legacy && nested.computed && configured.elements().is_empty() && !before.elements().is_empty() {
            fields.insert(nested.type_name.clone(), before.clone());
            continue;
        }
        let planned = match (nested.nesting, value) {
            (Nesting::Single | Nesting::Group, v) => plan_in(&nested.block, configured, before, v, legacy),
            (Nesting::List, Value::List(items)) => Value::List(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let c = configured.elements().get(i).unwrap_or(&Value::Null);
                        let p = before.elements().get(i).unwrap_or(&Value::Null);
                        plan_in(&nested.block, c, p, item, legacy)
                    })
                    .collect(),
            ),
            // Set elements pair with nothing by position: a default fills what is null.
            (Nesting::Set, Value::Set(items)) => Value::Set(
                items
                    .into_iter()
                    .map(|item| {
                        let c = item.clone();
                        plan_in(&nested.block, &c, &Value::Null, item, legacy)
                    })
                    .collect(),
            ),
            (Nesting::Map, Value::Map(items)) => Value::Map(
                items
                    .into_iter()
                    .map(|(k, item)| {
                        let c = configured
                            .entries()
                            .and_then(|e| e.get(&k))
                            .unwrap_or(&Value::Null);
                        let p = before.entries().and_then(|e| e.get(&k)).unwrap_or(&Value::Null);
                        let planned = plan_in(&nested.block, c, p, item, legacy);
                        (k, planned)
                    })
                    .collect(),
            ),
            (_, v) => v,
        };
        fields.insert(nested.type_name.clone(), planned);
    }
    Value::Object(fields)
}

/// `config` with the defaults `keep` accepts filled in where it is null, inside the blocks it
/// has: what the provider sends where the user wrote nothing.
pub fn with_defaults(block: &Block, config: &Value, keep: &dyn Fn(&Value) -> bool) -> Value {
    let block = &*block.nested_as_blocks();
    let Value::Object(fields) = config.plain() else {
        return config.clone();
    };
    let mut out = fields.clone();
    for attribute in &block.attributes {
        if let Some(default) = &attribute.rules.default
            && config.get(&attribute.name).is_null()
            && keep(default)
        {
            out.insert(attribute.name.clone(), default.clone());
        }
    }
    for nested in &block.blocks {
        let Some(value) = out.get_mut(&nested.type_name) else {
            continue;
        };
        let inner = &nested.block;
        *value = match value.plain() {
            Value::List(items) => Value::List(items.iter().map(|i| with_defaults(inner, i, keep)).collect()),
            Value::Set(items) => Value::Set(items.iter().map(|i| with_defaults(inner, i, keep)).collect()),
            Value::Map(items) if nested.nesting == Nesting::Map => Value::Map(
                items
                    .iter()
                    .map(|(k, i)| (k.clone(), with_defaults(inner, i, keep)))
                    .collect(),
            ),
            Value::Object(_) => with_defaults(inner, value, keep),
            _ => continue,
        };
    }
    Value::Object(out)
}

/// The paths whose planned change replaces the object (the engine keeps those that differ):
/// every replace attribute present before or after, every replace block whose number of
/// elements changes, and a set block holding any replace rule, which changes whole.
pub fn replace_paths(block: &Block, prior: &Value, planned: &Value) -> Vec<AttributePath> {
    let mut out = Vec::new();
    if !prior.is_null() && !planned.is_null() {
        replace_in(block, prior, planned, &AttributePath::default(), &mut out);
    }
    out
}

fn has_replace(block: &Block) -> bool {
    let block = &*block.nested_as_blocks();
    block.attributes.iter().any(|a| a.rules.replace)
        || block.blocks.iter().any(|b| b.replace || has_replace(&b.block))
}

fn replace_in(
    block: &Block,
    prior: &Value,
    planned: &Value,
    at: &AttributePath,
    out: &mut Vec<AttributePath>,
) {
    let block = &*block.nested_as_blocks();
    for attribute in block.attributes.iter().filter(|a| a.rules.replace) {
        out.push(at.clone().attribute(&attribute.name));
    }
    for nested in &block.blocks {
        let (before, after) = (prior.get(&nested.type_name), planned.get(&nested.type_name));
        let path = at.clone().attribute(&nested.type_name);
        if nested.replace && before.elements().len() != after.elements().len() {
            out.push(path.clone());
        }
        if !has_replace(&nested.block) {
            continue;
        }
        match nested.nesting {
            Nesting::Single | Nesting::Group => {
                if !before.is_null() || !after.is_null() {
                    replace_in(&nested.block, before, after, &path, out);
                }
            }
            Nesting::List => {
                let count = before.elements().len().max(after.elements().len());
                for i in 0..count {
                    let b = before.elements().get(i).unwrap_or(&Value::Null);
                    let a = after.elements().get(i).unwrap_or(&Value::Null);
                    replace_in(&nested.block, b, a, &path.clone().index(i as i64), out);
                }
            }
            Nesting::Set => out.push(path),
            Nesting::Map => {
                let keys: std::collections::BTreeSet<&String> = before
                    .entries()
                    .into_iter()
                    .chain(after.entries())
                    .flat_map(|m| m.keys())
                    .collect();
                for k in keys {
                    let b = before.get(k);
                    let a = after.get(k);
                    replace_in(&nested.block, b, a, &path.clone().key(k), out);
                }
            }
        }
    }
    out.dedup_by(|a, b| a == b);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::schema::NestedBlock;

    struct OneOf(&'static [&'static str]);

    impl Validator for OneOf {
        fn check(&self, value: &Value) -> Result<(), String> {
            match value.as_str() {
                Some(s) if self.0.contains(&s) => Ok(()),
                _ => Err(format!("expected one of {:?}", self.0)),
            }
        }
        fn describe(&self) -> String {
            format!("one of {:?}", self.0)
        }
    }

    struct SameIgnoringCase;

    impl Equivalence for SameIgnoringCase {
        fn equivalent(&self, a: &Value, b: &Value) -> bool {
            a.as_str().map(str::to_lowercase) == b.as_str().map(str::to_lowercase)
        }
        fn describe(&self) -> String {
            "case-insensitive".into()
        }
    }

    struct ElementsIgnoringCase;

    impl Equivalence for ElementsIgnoringCase {
        fn equivalent(&self, a: &Value, b: &Value) -> bool {
            let lower = |v: &Value| {
                v.entries().map(|e| {
                    e.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().map(str::to_lowercase)))
                        .collect::<Vec<_>>()
                })
            };
            lower(a) == lower(b)
        }
        fn describe(&self) -> String {
            "case-insensitive elements".into()
        }
    }

    fn schema() -> Block {
        let mut scheme = Attribute::optional("scheme", Type::String, "").with_default(Value::string("HTTP"));
        scheme.rules.validators.push(Arc::new(OneOf(&["HTTP", "HTTPS"])));
        let mut image = Attribute::optional("image", Type::String, "");
        image.rules.replace = true;
        image.rules.equivalence = Some(Arc::new(SameIgnoringCase));
        let mut modes = Attribute::optional("modes", Type::list(Type::String), "");
        modes.rules.validators.push(Arc::new(OneOf(&["a", "b"])));
        let mut name = Attribute::optional("name", Type::String, "");
        name.rules.constraints.push(Constraint {
            kind: ConstraintKind::ConflictsWith,
            paths: vec!["generate_name".into()],
        });
        Block::new("r")
            .attribute(name)
            .attribute(Attribute::optional("generate_name", Type::String, ""))
            .attribute(Attribute::optional("labels", Type::map(Type::String), ""))
            .attribute(Attribute::optional_computed(
                "limits",
                Type::map(Type::String),
                "",
            ))
            .block(NestedBlock::new(
                "probe",
                Nesting::List,
                Block::new("p")
                    .attribute(scheme)
                    .attribute(image)
                    .attribute(modes),
            ))
    }

    fn probe(fields: Vec<(&str, Value)>) -> Value {
        Value::object([("probe", Value::List(vec![Value::object(fields)]))])
    }

    #[test]
    fn validators_name_the_path_and_check_each_element_of_a_list() {
        let config = probe(vec![
            ("scheme", Value::string("FTP")),
            ("modes", Value::List(vec![Value::string("a"), Value::string("z")])),
        ]);
        let got = validate(&schema(), &config, false);
        let paths: Vec<String> = got
            .0
            .iter()
            .map(|d| d.attribute.clone().unwrap().to_string())
            .collect();
        assert_eq!(paths, ["probe[0].scheme", "probe[0].modes[1]"]);
        assert!(got.0[0].detail.contains("HTTPS"), "{}", got.0[0].detail);
        let unknown = probe(vec![("scheme", Value::unknown())]);
        assert!(
            validate(&schema(), &unknown, false).is_empty(),
            "unknown values wait for apply"
        );
    }

    #[test]
    fn constraints_and_null_map_elements_are_refused_at_validation() {
        let both = Value::object([
            ("name", Value::string("a")),
            ("generate_name", Value::string("a-")),
        ]);
        let got = validate(&schema(), &both, false);
        assert_eq!(got.0.len(), 1);
        assert!(got.0[0].detail.contains("generate_name"), "{}", got.0[0].detail);
        let null_label = Value::object([("labels", Value::Map([("app".to_string(), Value::Null)].into()))]);
        let got = validate(&schema(), &null_label, false);
        assert_eq!(got.0[0].attribute.clone().unwrap().to_string(), "labels[\"app\"]");
        let null_limit = Value::object([("limits", Value::Map([("cpu".to_string(), Value::Null)].into()))]);
        assert!(
            validate(&schema(), &null_limit, false).is_empty(),
            "a computed map drops it at plan"
        );
        assert!(
            validate(&schema(), &null_label, true).is_empty(),
            "a legacy resource drops it at plan, as hashicorp's SDKv2 does"
        );
    }

    #[test]
    fn a_legacy_plan_drops_null_elements_before_comparing_equivalent_maps() {
        let mut block = schema();
        block.attributes[3].rules.equivalence = Some(Arc::new(ElementsIgnoringCase));
        let map = |entries: &[(&str, Value)]| {
            Value::Map(entries.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
        };
        let prior = Value::object([("limits", map(&[("memory", Value::string("1536mi"))]))]);
        let config = Value::object([
            (
                "labels",
                map(&[("app", Value::string("a")), ("team", Value::Null)]),
            ),
            (
                "limits",
                map(&[("cpu", Value::Null), ("memory", Value::string("1536Mi"))]),
            ),
        ]);
        let planned = plan(&block, &config, &prior, config.clone(), true);
        assert_eq!(planned.get("labels"), &map(&[("app", Value::string("a"))]));
        assert_eq!(
            planned.get("limits"),
            prior.get("limits"),
            "an equal map is no change because a null element sits beside it"
        );
    }

    #[test]
    fn plan_fills_defaults_keeps_configured_values_and_drops_null_elements() {
        let block = schema();
        let config = Value::object([
            (
                "probe",
                Value::List(vec![Value::object([("image", Value::string("NGINX"))])]),
            ),
            ("limits", Value::Map([("cpu".to_string(), Value::Null)].into())),
        ]);
        let prior = probe(vec![
            ("image", Value::string("nginx")),
            ("scheme", Value::string("HTTPS")),
        ]);
        let planned = plan(&block, &config, &prior, config.clone(), false);
        let element = &planned.get("probe").elements()[0];
        assert_eq!(
            element.get("scheme"),
            &Value::string("HTTP"),
            "the default, not the prior"
        );
        assert_eq!(
            element.get("image"),
            &Value::string("NGINX"),
            "a configured value as written, though the prior is equivalent"
        );
        assert_eq!(planned.get("limits"), &Value::Map(Default::default()));
        assert!(
            block.blocks[0].block.find_attribute("scheme").unwrap().computed,
            "a default makes the attribute computed"
        );
        let legacy = plan(&block, &config, &prior, config.clone(), true);
        assert_eq!(
            legacy.get("probe").elements()[0].get("image"),
            &Value::string("nginx"),
            "a legacy resource keeps the prior's equivalent form, as the legacy SDK's suppression did"
        );
    }

    #[test]
    fn a_legacy_plan_reads_an_empty_computed_string_as_unset() {
        let block = Block::new("r").attribute(Attribute::optional_computed("replicas", Type::String, ""));
        let config = Value::object([("replicas", Value::string(""))]);
        let prior = Value::object([("replicas", Value::string("3"))]);
        let planned = plan(&block, &config, &prior, config.clone(), true);
        assert_eq!(
            planned.get("replicas"),
            &Value::string("3"),
            "the prior value stays"
        );
        let created = plan(&block, &config, &Value::Null, config.clone(), true);
        assert!(
            created.get("replicas").is_unknown(),
            "without a prior, the provider's value"
        );
        let strict = plan(&block, &config, &prior, config.clone(), false);
        assert_eq!(
            strict.get("replicas"),
            &Value::string(""),
            "only a legacy resource"
        );
        let defaulted = Block::new("r").attribute(
            Attribute::optional_computed("medium", Type::String, "").with_default(Value::string("")),
        );
        let config = Value::object([("medium", Value::string(""))]);
        let planned = plan(&defaulted, &config, &config, config.clone(), true);
        assert_eq!(
            planned.get("medium"),
            &Value::string(""),
            "a default \"\" is a value"
        );
    }

    #[test]
    fn a_legacy_plan_keeps_the_zero_value_the_sdk_wrote_for_an_unset_attribute() {
        let prior = Value::object([
            ("generate_name", Value::string("")),
            ("labels", Value::Map(Default::default())),
            ("name", Value::string("a")),
        ]);
        let config = Value::object([("name", Value::string("a"))]);
        let planned = plan(&schema(), &config, &prior, config.clone(), true);
        assert_eq!(planned.get("generate_name"), &Value::string(""));
        assert_eq!(planned.get("labels"), &Value::Map(Default::default()));
        let strict = plan(&schema(), &config, &prior, config.clone(), false);
        assert!(strict.get("generate_name").is_null(), "only a legacy resource");
        let set = Value::object([("generate_name", Value::string("g-"))]);
        let planned = plan(
            &schema(),
            &Value::Null,
            &set,
            Value::object([("name", Value::string("a"))]),
            true,
        );
        assert!(
            planned.get("generate_name").is_null(),
            "a value that is not zero is a change"
        );
    }

    #[test]
    fn defaults_fill_a_configuration_where_kept() {
        let config = probe(vec![("image", Value::string("nginx"))]);
        let all = with_defaults(&schema(), &config, &|_| true);
        assert_eq!(
            all.get("probe").elements()[0].get("scheme"),
            &Value::string("HTTP")
        );
        let none = with_defaults(&schema(), &config, &|_| false);
        assert_eq!(none, config);
    }

    #[test]
    fn replace_paths_cover_both_sides_of_a_list() {
        let prior = probe(vec![("image", Value::string("a"))]);
        let planned = Value::object([(
            "probe",
            Value::List(vec![
                Value::object([("image", Value::string("a"))]),
                Value::object([("image", Value::string("b"))]),
            ]),
        )]);
        let paths = replace_paths(&schema(), &prior, &planned);
        let shown: Vec<String> = paths.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["probe[0].image", "probe[1].image"]);
        assert!(
            replace_paths(&schema(), &Value::Null, &planned).is_empty(),
            "a create"
        );
    }
}
