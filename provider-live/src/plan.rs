//! Plan rules shared by every resource: which computed values are unknown, which changes
//! force a replace, and how an applied object's read-back settles a planned value.

use plugin_runtime::{AttributePath, Block, Nesting, PathStep, Value};

use crate::metadata;

/// Computed attributes that are null in the proposed state become unknown where the prior
/// state has nothing at that path (a create, a new block element). Where the prior has the
/// path, null stays null: the server left it unset and will again.
pub fn unknown_computed(block: &Block, proposed: &Value, prior: Option<&Value>) -> Value {
    let block = &*block.nested_as_blocks();
    let Value::Object(fields) = proposed else {
        return proposed.clone();
    };
    let prior = prior.filter(|p| !p.is_null());
    let mut out = fields.clone();
    for attribute in &block.attributes {
        let value = out.entry(attribute.name.clone()).or_insert(Value::Null);
        if attribute.computed && value.is_null() && prior.is_none() {
            *value = Value::unknown();
        }
    }
    for nested in &block.blocks {
        let Some(value) = out.get_mut(&nested.type_name) else {
            continue;
        };
        let prior_of = |name: &str| prior.map(|p| p.get(name));
        *value = match (nested.nesting, &*value) {
            (Nesting::Single | Nesting::Group, v) => {
                unknown_computed(&nested.block, v, prior_of(&nested.type_name))
            }
            (Nesting::List, Value::List(items)) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let p = prior_of(&nested.type_name).and_then(|p| p.elements().get(i));
                        unknown_computed(&nested.block, item, p)
                    })
                    .collect(),
            ),
            (Nesting::Set, Value::Set(items)) => Value::Set(
                items
                    .iter()
                    .map(|item| {
                        let p = prior_of(&nested.type_name)
                            .and_then(|p| p.elements().iter().find(|e| *e == item));
                        unknown_computed(&nested.block, item, p)
                    })
                    .collect(),
            ),
            (Nesting::Map, Value::Map(items)) => Value::Map(
                items
                    .iter()
                    .map(|(k, item)| {
                        let p = prior_of(&nested.type_name).and_then(|p| p.entries()?.get(k));
                        (k.clone(), unknown_computed(&nested.block, item, p))
                    })
                    .collect(),
            ),
            (_, v) => v.clone(),
        };
    }
    Value::Object(out)
}

/// The part of a planned value the user configured: computed attributes that are null in
/// the configuration become null again, and computed blocks it leaves out empty, so the
/// server-side-apply body claims only what the user set and fields other actors own (an
/// autoscaler's `replicas`) stay theirs.
pub fn configured_only(block: &Block, planned: &Value, config: &Value) -> Value {
    let block = &*block.nested_as_blocks();
    let Value::Object(fields) = planned else {
        return planned.clone();
    };
    let mut out = fields.clone();
    for attribute in &block.attributes {
        if attribute.computed && config.get(&attribute.name).is_null() {
            out.insert(attribute.name.clone(), Value::Null);
        }
    }
    for nested in &block.blocks {
        let Some(value) = out.get_mut(&nested.type_name) else {
            continue;
        };
        let config_of = config.get(&nested.type_name);
        // A computed block the configuration leaves out is the server's (a rolling update's
        // parameters under a strategy turned Recreate must not be sent back).
        if nested.computed && config_of.elements().is_empty() && matches!(&*value, Value::List(_)) {
            *value = Value::List(Vec::new());
            continue;
        }
        *value = match (nested.nesting, &*value) {
            (Nesting::Single | Nesting::Group, v) => configured_only(&nested.block, v, config_of),
            // Lists pair by index, as the engine itself does for proposed values.
            (Nesting::List, Value::List(items)) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let c = config_of.elements().get(i).unwrap_or(&Value::Null);
                        configured_only(&nested.block, item, c)
                    })
                    .collect(),
            ),
            (Nesting::Map, Value::Map(items)) => Value::Map(
                items
                    .iter()
                    .map(|(k, item)| {
                        let c = config_of.entries().and_then(|e| e.get(k)).unwrap_or(&Value::Null);
                        (k.clone(), configured_only(&nested.block, item, c))
                    })
                    .collect(),
            ),
            // A set element pairs with the configured element it extends: every value that
            // element sets, it has (what it adds is computed or defaulted).
            (Nesting::Set, Value::Set(items)) => Value::Set(
                items
                    .iter()
                    .map(|item| {
                        match config_of
                            .elements()
                            .iter()
                            .find(|c| extends(&nested.block, item, c))
                        {
                            Some(c) => configured_only(&nested.block, item, c),
                            None => item.clone(),
                        }
                    })
                    .collect(),
            ),
            (_, v) => v.clone(),
        };
    }
    Value::Object(out)
}

/// Whether `planned` holds every value `config` sets (at every depth): the element `config`
/// became once planned.
fn extends(block: &Block, planned: &Value, config: &Value) -> bool {
    let block = &*block.nested_as_blocks();
    block.attributes.iter().all(|a| {
        let c = config.get(&a.name);
        c.is_null() || planned.get(&a.name) == c
    }) && block.blocks.iter().all(|b| {
        let (p, c) = (planned.get(&b.type_name), config.get(&b.type_name));
        match b.nesting {
            Nesting::Single | Nesting::Group => c.is_null() || extends(&b.block, p, c),
            _ => {
                c.elements().len() == p.elements().len()
                    && c.elements()
                        .iter()
                        .all(|ce| p.elements().iter().any(|pe| extends(&b.block, pe, ce)))
            }
        }
    })
}

/// Fills what a value built from a live object leaves out: missing attributes become null,
/// missing list and set blocks empty, as the engine expects of a resource value. A nested
/// attribute (`spec = { ... }`) left out stays null: unlike a block, it can be, and an
/// optional one the configuration leaves out must be.
pub fn conform(block: &Block, value: Value) -> Value {
    let nested_attributes: Vec<&str> = block
        .attributes
        .iter()
        .filter(|a| a.nested.is_some())
        .map(|a| a.name.as_str())
        .collect();
    let block = &*block.nested_as_blocks();
    let Value::Object(mut fields) = value else {
        return value;
    };
    for attribute in &block.attributes {
        fields.entry(attribute.name.clone()).or_insert(Value::Null);
    }
    for nested in &block.blocks {
        let value = fields.remove(&nested.type_name).unwrap_or_default();
        let value = match (nested.nesting, value) {
            (_, Value::Null) if nested_attributes.contains(&nested.type_name.as_str()) => Value::Null,
            (Nesting::List, Value::Null) => Value::List(Vec::new()),
            (Nesting::Set, Value::Null) => Value::Set(Vec::new()),
            (Nesting::List, Value::List(items)) => {
                Value::List(items.into_iter().map(|i| conform(&nested.block, i)).collect())
            }
            (Nesting::Set, Value::Set(items)) => {
                Value::Set(items.into_iter().map(|i| conform(&nested.block, i)).collect())
            }
            (Nesting::Map, Value::Map(items)) => Value::Map(
                items
                    .into_iter()
                    .map(|(k, i)| (k, conform(&nested.block, i)))
                    .collect(),
            ),
            (_, v) => conform(&nested.block, v),
        };
        fields.insert(nested.type_name.clone(), value);
    }
    Value::Object(fields)
}

/// The server-maintained metadata that any write changes (`generation` only on kinds that
/// have one: ConfigMaps and Secrets never do, and read 0).
pub fn metadata_will_change(planned: &mut Value) {
    if let Some(meta) = metadata::of_mut(planned) {
        meta.set("resource_version", Value::unknown());
        if meta.get("generation").as_i64().is_some_and(|g| g > 0) {
            meta.set("generation", Value::unknown());
        }
    }
}

/// Changes to an object's identity replace it: `metadata[0].name`, `metadata[0].namespace`, and
/// `metadata[0].generate_name` when the name comes from it.
pub fn replace_paths(prior: &Value, planned: &Value) -> Vec<AttributePath> {
    let (before, after) = (metadata::of(prior), metadata::of(planned));
    let named = !after.get("name").is_unknown() && after.get("generate_name").is_null();
    let mut keys = vec!["name", "namespace"];
    if !named {
        keys.push("generate_name");
    }
    keys.into_iter()
        .filter(|k| {
            let (b, a) = (before.get(k), after.get(k));
            !a.is_unknown() && b != a
        })
        .map(|k| metadata::path_of(planned, k))
        .collect()
}

/// The paths among `immutable` whose value the plan changes. A value that is unknown in the
/// plan, or null before (set for the first time), is no change of an immutable field.
pub fn changed_paths(prior: &Value, planned: &Value, immutable: &[AttributePath]) -> Vec<AttributePath> {
    immutable
        .iter()
        .filter(|path| {
            let (before, after) = (at_path(prior, path), at_path(planned, path));
            !before.is_null() && after.is_wholly_known() && before != after
        })
        .cloned()
        .collect()
}

/// The value at `path`; null where the path leads nowhere.
fn at_path<'v>(value: &'v Value, path: &AttributePath) -> &'v Value {
    static NULL: Value = Value::Null;
    path.0
        .iter()
        .try_fold(value, |v, step| match step {
            PathStep::Attribute(name) | PathStep::Key(name) => Some(v.get(name)),
            PathStep::Index(i) => usize::try_from(*i).ok().and_then(|i| v.elements().get(i)),
        })
        .unwrap_or(&NULL)
}

/// The value an apply reports: what the plan promised wherever it was known, the object's
/// read-back wherever it was unknown. A later refresh shows any real difference as drift,
/// instead of the engine failing the apply as inconsistent.
pub fn settle(planned: &Value, observed: &Value) -> Value {
    if planned.is_wholly_known() {
        return planned.clone();
    }
    match (planned, observed) {
        (Value::Object(p), Value::Object(o)) => Value::Object(
            p.iter()
                .map(|(k, v)| (k.clone(), settle(v, o.get(k).unwrap_or(&Value::Null))))
                .collect(),
        ),
        (Value::Map(p), Value::Map(o)) if p.keys().eq(o.keys()) => {
            Value::Map(p.iter().map(|(k, v)| (k.clone(), settle(v, &o[k]))).collect())
        }
        (Value::List(p), Value::List(o)) if p.len() == o.len() => {
            Value::List(p.iter().zip(o).map(|(p, o)| settle(p, o)).collect())
        }
        _ => observed.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_runtime::{Attribute, NestedBlock, Type};

    fn schema() -> Block {
        Block::new("r")
            .attribute(Attribute::computed("id", Type::String, ""))
            .attribute(Attribute::optional_computed("type", Type::String, ""))
            .attribute(Attribute::optional("data", Type::map(Type::String), ""))
            .block(NestedBlock::exactly_one(
                "metadata",
                Block::new("m")
                    .attribute(Attribute::optional_computed("name", Type::String, ""))
                    .attribute(Attribute::computed("uid", Type::String, "")),
            ))
    }

    fn resource(id: Value, ty: Value, name: &str, uid: Value) -> Value {
        Value::object([
            ("id", id),
            ("type", ty),
            ("data", Value::Null),
            (
                "metadata",
                Value::List(vec![Value::object([("name", Value::string(name)), ("uid", uid)])]),
            ),
        ])
    }

    #[test]
    fn create_makes_null_computed_values_unknown() {
        let proposed = resource(Value::Null, Value::Null, "a", Value::Null);
        let got = unknown_computed(&schema(), &proposed, None);
        assert!(got.get("id").is_unknown());
        assert!(got.get("type").is_unknown());
        assert!(got.get("data").is_null(), "optional-only stays null");
        assert!(metadata::of(&got).get("uid").is_unknown());
        assert_eq!(metadata::of(&got).get("name"), &Value::string("a"));
    }

    #[test]
    fn new_set_and_single_block_elements_get_unknowns_and_known_ones_do_not() {
        let inner = Block::new("i")
            .attribute(Attribute::optional("name", Type::String, ""))
            .attribute(Attribute::optional_computed("port", Type::Number, ""));
        let block = Block::new("r")
            .block(NestedBlock::new("set", Nesting::Set, inner.clone()))
            .block(NestedBlock::new("one", Nesting::Single, inner));
        let element = |name: &str| Value::object([("name", Value::string(name)), ("port", Value::Null)]);
        let prior = Value::object([("set", Value::Set(vec![element("a")])), ("one", Value::Null)]);
        let proposed = Value::object([
            ("set", Value::Set(vec![element("a"), element("b")])),
            ("one", element("c")),
        ]);
        let got = unknown_computed(&block, &proposed, Some(&prior));
        let set = got.get("set").elements();
        assert_eq!(set[0], element("a"), "the element the prior has keeps its null");
        assert!(set[1].get("port").is_unknown());
        assert!(got.get("one").get("port").is_unknown());
    }

    #[test]
    fn update_keeps_nulls_the_prior_has() {
        let prior = resource(Value::string("x"), Value::Null, "a", Value::string("u"));
        let got = unknown_computed(&schema(), &prior, Some(&prior));
        assert_eq!(got, prior);
    }

    #[test]
    fn name_change_replaces_and_label_change_does_not() {
        let prior = resource(Value::string("a"), Value::Null, "a", Value::string("u"));
        let renamed = resource(Value::string("a"), Value::Null, "b", Value::string("u"));
        assert_eq!(
            replace_paths(&prior, &renamed),
            vec![AttributePath::root("metadata").index(0).attribute("name")]
        );
        assert!(replace_paths(&prior, &prior).is_empty());
    }

    #[test]
    fn settle_fills_unknowns_only() {
        let planned = resource(Value::string("a"), Value::unknown(), "a", Value::unknown());
        let observed = resource(
            Value::string("zzz"),
            Value::string("Opaque"),
            "a",
            Value::string("u"),
        );
        let got = settle(&planned, &observed);
        assert_eq!(got.get("id"), &Value::string("a"));
        assert_eq!(got.get("type"), &Value::string("Opaque"));
        assert_eq!(metadata::of(&got).get("uid"), &Value::string("u"));
    }

    #[test]
    fn conform_fills_missing_attributes_and_blocks() {
        let got = conform(&schema(), Value::object([("id", Value::string("a"))]));
        assert_eq!(got.get("type"), &Value::Null);
        assert_eq!(got.get("metadata"), &Value::List(Vec::new()));
    }

    #[test]
    fn conform_keeps_a_nested_attribute_left_out_null() {
        let rule = Attribute::optional("rules", Type::String, "")
            .nested(Nesting::List, vec![Attribute::optional("name", Type::String, "")]);
        let block = Block::new("r").attribute(rule);
        let got = conform(&block, Value::object(Vec::<(String, Value)>::new()));
        assert_eq!(got.get("rules"), &Value::Null);
        let items = Value::List(vec![Value::object(Vec::<(String, Value)>::new())]);
        let got = conform(&block, Value::object([("rules", items)]));
        assert_eq!(got.get("rules").elements()[0].get("name"), &Value::Null);
    }

    #[test]
    fn metadata_computed_fields_become_unknown_on_change() {
        let mut planned = resource(Value::string("a"), Value::Null, "a", Value::string("u"));
        metadata_will_change(&mut planned);
        assert!(metadata::of(&planned).get("resource_version").is_unknown());
        assert_eq!(metadata::of(&planned).get("uid"), &Value::string("u"));
    }

    #[test]
    fn configured_only_drops_computed_values_the_config_leaves_out() {
        let planned = Value::object([
            ("id", Value::string("ns/a")),
            ("type", Value::string("Opaque")),
            ("data", Value::string_map([("k", "v")])),
            (
                "metadata",
                Value::List(vec![Value::object([
                    ("name", Value::string("a")),
                    ("uid", Value::string("u-1")),
                ])]),
            ),
        ]);
        let config = Value::object([
            ("data", Value::string_map([("k", "v")])),
            (
                "metadata",
                Value::List(vec![Value::object([("name", Value::string("a"))])]),
            ),
        ]);
        let kept = configured_only(&schema(), &planned, &config);
        assert_eq!(kept.get("type"), &Value::Null, "server default is not claimed");
        assert_eq!(kept.get("id"), &Value::Null);
        assert_eq!(kept.get("data"), planned.get("data"));
        let meta = &kept.get("metadata").elements()[0];
        assert_eq!(
            meta.get("name"),
            &Value::string("a"),
            "configured computed value is kept"
        );
        assert_eq!(meta.get("uid"), &Value::Null);
    }

    #[test]
    fn configured_only_pairs_set_elements_with_what_they_extend() {
        let element = Block::new("e")
            .attribute(Attribute::optional("ip", Type::String, ""))
            .attribute(Attribute::optional_computed("node", Type::String, ""));
        let block = Block::new("r").block(NestedBlock::new("address", Nesting::Set, element));
        let address = |ip: &str, node: Value| Value::object([("ip", Value::string(ip)), ("node", node)]);
        let planned = Value::object([(
            "address",
            Value::Set(vec![
                address("a", Value::string("")),
                address("b", Value::string("n1")),
            ]),
        )]);
        let config = Value::object([(
            "address",
            Value::Set(vec![address("b", Value::string("n1")), address("a", Value::Null)]),
        )]);
        let kept = configured_only(&block, &planned, &config);
        assert_eq!(
            kept.get("address").elements(),
            [address("a", Value::Null), address("b", Value::string("n1"))],
            "the defaulted node of a is not the user's"
        );
    }

    #[test]
    fn a_changed_immutable_field_replaces_but_a_first_value_does_not() {
        let path = AttributePath::root("spec").index(0).attribute("cluster_ip");
        let with =
            |ip: Value| Value::object([("spec", Value::List(vec![Value::object([("cluster_ip", ip)])]))]);
        let prior = with(Value::string("10.96.0.10"));
        assert_eq!(
            changed_paths(
                &prior,
                &with(Value::string("10.96.0.11")),
                std::slice::from_ref(&path)
            ),
            vec![path.clone()]
        );
        assert!(changed_paths(&prior, &prior, std::slice::from_ref(&path)).is_empty());
        assert!(changed_paths(&prior, &with(Value::unknown()), std::slice::from_ref(&path)).is_empty());
        assert!(changed_paths(&with(Value::Null), &with(Value::string("10.96.0.11")), &[path]).is_empty());
    }
}
