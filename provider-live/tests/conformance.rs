//! Conformance to hashicorp/kubernetes 3.4.0's per-attribute facts, proven per type through
//! the protocol layer (the tfplugin6 service in process, no engine) against the in-memory API
//! server. Every case comes from `catalog/facts.tsv`, read here at test time:
//!
//! - **validate**: a value the validator refuses, at the fact's path (the blocks down to it
//!   built from the schema), makes ValidateResourceConfig fail naming that path; a value it
//!   accepts raises no error there.
//! - **default**: a create whose configuration has the enclosing block but leaves the
//!   attribute out plans the default there.
//! - **force_new**: an update that changes the attribute (or the number of a block's
//!   elements) lists its path in `requires_replace`.
//!
//! A fact is skipped only for a reason kept as data ([`Skip`]). The per-type table goes to
//! stdout past the test harness's capture, so `scripts/test.sh` (`make test`) prints it.

#[path = "conformance/samples.rs"]
mod samples;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;

use kube_test_server::{Options, TestServer};
use plugin_runtime::ProviderService;
use plugin_runtime::proto::tfplugin6 as pb;
use plugin_runtime::proto::tfplugin6::provider_server::Provider as _;
use plugin_runtime::{Attribute, Block, Nesting, Provider, Type, Value, codec};
use provider_live::LiveProvider;
use provider_live::conform;
use serde_json::Value as Json;
use tonic::Request;

/// One row of `catalog/facts.tsv`.
struct Fact {
    ty: String,
    path: String,
    kind: String,
    argument: String,
    source: String,
}

fn facts() -> Vec<Fact> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/catalog/facts.tsv");
    let text = std::fs::read_to_string(file).expect("catalog/facts.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 5, "a malformed row: {line}");
            Fact {
                ty: cols[0].into(),
                path: cols[1].into(),
                kind: cols[2].into(),
                argument: cols[3].into(),
                source: cols[4].into(),
            }
        })
        .collect()
}

/// Why a fact cannot be checked the way this test checks it.
enum Skip {
    /// A difference from hashicorp the provider makes on purpose (`provider_live::DIFFERENCES`).
    Difference(&'static str),
    /// The schema leaves the configuration no way to omit the attribute.
    Required,
    /// The attribute is computed only: no configuration sets or omits it.
    ComputedOnly,
    /// A block the configuration must have once and at most once: its number of elements
    /// cannot change.
    FixedBlock,
    /// A computed block (hashicorp's `Computed: true`): leaving it out keeps the server's, so
    /// its number of elements never changes by the configuration alone.
    ComputedBlock,
}

impl Skip {
    fn reason(&self) -> &'static str {
        match self {
            Skip::Difference(why) => why,
            Skip::Required => "required in the schema: a configuration always sets it",
            Skip::ComputedOnly => "computed only: a configuration never sets it",
            Skip::FixedBlock => "a block required exactly once: its number of elements cannot change",
            Skip::ComputedBlock => "a computed block: leaving it out keeps the server's, as hashicorp's does",
        }
    }
}

/// What the walk to a fact's path passes: blocks (and nested attributes, as blocks), then the
/// attribute or block at the end.
enum Leaf<'b> {
    Attribute(&'b Attribute),
    Block(&'b plugin_runtime::NestedBlock),
}

/// The attribute or block at a dotted path.
fn locate<'b>(block: &'b Block, path: &str) -> Option<Leaf<'b>> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    if let Some(attribute) = block.attributes.iter().find(|a| a.name == head) {
        return match (rest, &attribute.nested) {
            (None, _) => Some(Leaf::Attribute(attribute)),
            (Some(rest), Some(nested)) => locate_nested(&nested.attributes, rest),
            (Some(_), None) => None,
        };
    }
    let nested = block.blocks.iter().find(|b| b.type_name == head)?;
    match rest {
        None => Some(Leaf::Block(nested)),
        Some(rest) => locate(&nested.block, rest),
    }
}

fn locate_nested<'b>(attributes: &'b [Attribute], path: &str) -> Option<Leaf<'b>> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let attribute = attributes.iter().find(|a| a.name == head)?;
    match (rest, &attribute.nested) {
        (None, _) => Some(Leaf::Attribute(attribute)),
        (Some(rest), Some(nested)) => locate_nested(&nested.attributes, rest),
        (Some(_), None) => None,
    }
}

/// The validators of one type by path, to fill required attributes with accepted values.
type Validators<'f> = BTreeMap<&'f str, &'f str>;

/// `json` as a value of type `ty` (numbers and strings converted into each other).
fn typed(ty: &Type, json: &Json) -> Value {
    match (ty, json) {
        (Type::String, Json::String(s)) => Value::string(s),
        (Type::String, other) => Value::string(other.to_string()),
        (Type::Number, Json::String(s)) => Value::int(s.parse().unwrap_or(-1)),
        (Type::Number, n) => Value::from_json(n),
        (Type::Bool, b) => Value::Bool(b.as_bool().unwrap_or(b == "true")),
        (Type::Map(inner), Json::Object(m)) => {
            Value::Map(m.iter().map(|(k, v)| (k.clone(), typed(inner, v))).collect())
        }
        (Type::List(inner), Json::Array(a)) => Value::List(a.iter().map(|v| typed(inner, v)).collect()),
        (Type::Set(inner), Json::Array(a)) => Value::Set(a.iter().map(|v| typed(inner, v)).collect()),
        // One element validated: a list or set of primitives holds it.
        (Type::List(inner), one) => Value::List(vec![typed(inner, one)]),
        (Type::Set(inner), one) => Value::Set(vec![typed(inner, one)]),
        (_, other) => Value::from_json(other),
    }
}

/// Two distinct values of `attribute` (accepted by its validator, where it has one).
fn two_values(attribute: &Attribute, validator: Option<&str>) -> (Value, Value) {
    let accepted = validator
        .and_then(samples::of)
        .map(|(_, accepted)| accepted)
        .unwrap_or_default();
    // A list or set of primitives: its elements' values, one element each.
    let scalar = match &attribute.ty {
        Type::List(inner) | Type::Set(inner) => inner.as_ref(),
        other => other,
    };
    let fallback: [Json; 2] = match scalar {
        Type::Number => [Json::from(1), Json::from(2)],
        Type::Bool => [Json::from(false), Json::from(true)],
        Type::Map(_) => [serde_json::json!({"a": "1"}), serde_json::json!({"a": "2"})],
        _ => [Json::from("conformance-a"), Json::from("conformance-b")],
    };
    let first = accepted.first().unwrap_or(&fallback[0]).clone();
    let second = accepted
        .iter()
        .find(|v| **v != first)
        .cloned()
        .unwrap_or_else(|| fallback.iter().find(|v| **v != first).unwrap().clone());
    (typed(&attribute.ty, &first), typed(&attribute.ty, &second))
}

/// The smallest configuration of `block` at `at`: required attributes set (to an accepted
/// value where a validator says what that is), required blocks present once.
fn base(block: &Block, at: &str, validators: &Validators) -> Value {
    let block = block.nested_as_blocks();
    let mut fields = BTreeMap::new();
    for attribute in block.attributes.iter().filter(|a| a.required) {
        let path = join(at, &attribute.name);
        let (value, _) = two_values(attribute, validators.get(path.as_str()).copied());
        fields.insert(attribute.name.clone(), value);
    }
    for nested in block.blocks.iter().filter(|b| b.min_items > 0) {
        let path = join(at, &nested.type_name);
        fields.insert(
            nested.type_name.clone(),
            one(nested, base(&nested.block, &path, validators)),
        );
    }
    if at == "metadata" && block.find_attribute("name").is_some() {
        fields.insert("name".into(), Value::string("conformance"));
    }
    Value::Object(fields)
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

/// A block's value holding the one element `element`.
fn one(nested: &plugin_runtime::NestedBlock, element: Value) -> Value {
    match nested.nesting {
        Nesting::List => Value::List(vec![element]),
        Nesting::Set => Value::Set(vec![element]),
        Nesting::Map => Value::Map([("conformance".to_string(), element)].into()),
        Nesting::Single | Nesting::Group => element,
    }
}

/// The first element of a block's value, made where there is none.
fn first_mut<'v>(
    nested: &plugin_runtime::NestedBlock,
    value: &'v mut Value,
    make: impl FnOnce() -> Value,
) -> &'v mut Value {
    let empty = match value.plain() {
        Value::List(v) | Value::Set(v) => v.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Null => true,
        _ => false,
    };
    if empty {
        *value = one(nested, make());
    }
    match value {
        Value::List(v) | Value::Set(v) => &mut v[0],
        Value::Map(m) => m.values_mut().next().unwrap(),
        other => other,
    }
}

/// `config` with `value` at `path` (`None`: the attribute left out, its enclosing blocks
/// present), each block on the way built from its [`base`] where missing.
fn place(block: &Block, config: &mut Value, at: &str, path: &str, value: Value, validators: &Validators) {
    let block = block.nested_as_blocks();
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let here = join(at, head);
    if let Some(nested) = block.find_block(head) {
        let mut slot = config.get(head).clone();
        match rest {
            Some(rest) => {
                let element = first_mut(nested, &mut slot, || base(&nested.block, &here, validators));
                place(&nested.block, element, &here, rest, value, validators);
            }
            None => slot = value,
        }
        config.set(head, slot);
    } else {
        config.set(head, value);
    }
}

/// The value at a dotted path, through the first element of each block.
fn at_path<'v>(value: &'v Value, path: &str) -> &'v Value {
    path.split('.').fold(value, |v, step| {
        let v = match v.plain() {
            Value::List(items) | Value::Set(items) => items.first().unwrap_or(&Value::Null),
            _ => v,
        };
        v.get(step)
    })
}

/// The attribute names of a protocol path, dotted (`spec.template.spec.container.name`).
fn names(path: &pb::AttributePath) -> String {
    use pb::attribute_path::step::Selector;
    path.steps
        .iter()
        .filter_map(|s| match &s.selector {
            Some(Selector::AttributeName(n)) => Some(n.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The value at a protocol path; null where it leads nowhere.
fn at_steps<'v>(value: &'v Value, path: &pb::AttributePath) -> &'v Value {
    use pb::attribute_path::step::Selector;
    path.steps.iter().fold(value, |v, step| match &step.selector {
        Some(Selector::AttributeName(n)) => v.get(n),
        Some(Selector::ElementKeyInt(i)) => v.elements().get(*i as usize).unwrap_or(&Value::Null),
        Some(Selector::ElementKeyString(k)) => v.entries().and_then(|e| e.get(k)).unwrap_or(&Value::Null),
        None => &Value::Null,
    })
}

/// Whether the engine keeps a `requires_replace` path: the planned value there differs from
/// the prior one, or is not known yet.
fn changes(prior: &Value, planned: &Value, path: &pb::AttributePath) -> bool {
    let after = at_steps(planned, path);
    !after.is_wholly_known() || at_steps(prior, path) != after
}

/// `value` with every unknown made null: a prior state holds no unknowns.
fn known(value: Value) -> Value {
    match value {
        Value::Unknown(_) => Value::Null,
        Value::List(v) => Value::List(v.into_iter().map(known).collect()),
        Value::Set(v) => Value::Set(v.into_iter().map(known).collect()),
        Value::Map(m) => Value::Map(m.into_iter().map(|(k, v)| (k, known(v))).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, known(v))).collect()),
        other => other,
    }
}

/// What the engine proposes for an update: the configuration, with computed attributes it
/// leaves null taken from the prior state.
fn proposed(block: &Block, prior: &Value, config: &Value) -> Value {
    let block = block.nested_as_blocks();
    let Value::Object(fields) = config.plain() else {
        return config.clone();
    };
    let mut out = fields.clone();
    for a in block.attributes.iter().filter(|a| a.computed) {
        if config.get(&a.name).is_null() {
            out.insert(a.name.clone(), prior.get(&a.name).clone());
        }
    }
    for b in &block.blocks {
        let before = prior.get(&b.type_name);
        let merged = match config.get(&b.type_name).plain() {
            Value::List(items) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        proposed(&b.block, before.elements().get(i).unwrap_or(&Value::Null), item)
                    })
                    .collect(),
            ),
            Value::Object(_) => proposed(&b.block, before, config.get(&b.type_name)),
            _ => continue,
        };
        out.insert(b.type_name.clone(), merged);
    }
    Value::Object(out)
}

/// The provider's service, configured against `server`.
async fn service(server: &TestServer, dir: &tempfile::TempDir) -> ProviderService {
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig, "admin").unwrap();
    let provider = Arc::new(LiveProvider::default());
    let config = conform(
        &provider.schema().block,
        Value::object([
            ("estate", Value::string("conformance")),
            ("config_path", Value::string(kubeconfig.to_str().unwrap())),
        ]),
    );
    let diags = provider.configure(&config).await;
    assert!(!diags.has_errors(), "{diags:?}");
    ProviderService::new(provider)
}

fn dynamic(value: &Value, ty: &Type) -> Option<pb::DynamicValue> {
    Some(pb::DynamicValue {
        msgpack: codec::encode_msgpack(value, ty).unwrap_or_else(|e| panic!("{e}: {value:?}")),
        json: Vec::new(),
    })
}

/// One resource type under test.
struct Subject<'s> {
    service: &'s ProviderService,
    type_name: &'s str,
    block: Block,
    ty: Type,
}

impl Subject<'_> {
    async fn validate(&self, config: &Value) -> Vec<pb::Diagnostic> {
        let request = pb::validate_resource_config::Request {
            type_name: self.type_name.into(),
            config: dynamic(&conform(&self.block, config.clone()), &self.ty),
            ..Default::default()
        };
        let response = self.service.validate_resource_config(Request::new(request)).await;
        response.unwrap().into_inner().diagnostics
    }

    async fn plan(&self, prior: &Value, config: &Value) -> pb::plan_resource_change::Response {
        let config = conform(&self.block, config.clone());
        let request = pb::plan_resource_change::Request {
            type_name: self.type_name.into(),
            prior_state: dynamic(prior, &self.ty),
            proposed_new_state: dynamic(&proposed(&self.block, prior, &config), &self.ty),
            config: dynamic(&config, &self.ty),
            ..Default::default()
        };
        let response = self.service.plan_resource_change(Request::new(request)).await;
        response.unwrap().into_inner()
    }

    fn planned(&self, response: &pb::plan_resource_change::Response) -> Value {
        let planned = response
            .planned_state
            .as_ref()
            .map(|d| d.msgpack.as_slice())
            .unwrap_or_default();
        codec::decode_msgpack(planned, &self.ty).unwrap_or(Value::Null)
    }
}

fn errors(diagnostics: &[pb::Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}: {} (at {})",
                d.summary,
                d.detail,
                d.attribute.as_ref().map(names).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn is_error(d: &pb::Diagnostic) -> bool {
    d.severity == pb::diagnostic::Severity::Error as i32
}

/// Counts per type.
#[derive(Default)]
struct Tally {
    validators: usize,
    defaults: usize,
    force_new: usize,
    skipped: usize,
}

impl Subject<'_> {
    /// Checks one fact; `Ok(None)` when it held, `Ok(Some(skip))` when skipped, `Err` says
    /// how it failed.
    async fn check(&self, fact: &Fact, validators: &Validators<'_>) -> Result<Option<Skip>, String> {
        if let Some((_, _, why)) = provider_live::DIFFERENCES
            .iter()
            .find(|(path, kind, _)| *path == fact.path && *kind == fact.kind)
        {
            return Ok(Some(Skip::Difference(why)));
        }
        let leaf = locate(&self.block, &fact.path).ok_or("no such path in the schema")?;
        let root = base(&self.block, "", validators);
        match (fact.kind.as_str(), leaf) {
            ("validate", Leaf::Attribute(attribute)) => {
                self.refuses(fact, attribute, &root, validators).await
            }
            ("default", Leaf::Attribute(attribute)) => {
                self.defaults(fact, attribute, &root, validators).await
            }
            ("force_new", leaf) => self.replaces(fact, leaf, &root, validators).await,
            (kind, _) => Err(format!("a {kind} fact on a block")),
        }
    }

    /// A refused value is refused at the fact's path; accepted values are not.
    async fn refuses(
        &self,
        fact: &Fact,
        attribute: &Attribute,
        root: &Value,
        validators: &Validators<'_>,
    ) -> Result<Option<Skip>, String> {
        let (refused, accepted) = samples::of(&fact.argument).ok_or("no sample values for this validator")?;
        for value in refused {
            let mut config = root.clone();
            place(
                &self.block,
                &mut config,
                "",
                &fact.path,
                typed(&attribute.ty, &value),
                validators,
            );
            let got = self.validate(&config).await;
            let named = got
                .iter()
                .any(|d| is_error(d) && d.attribute.as_ref().map(names) == Some(fact.path.clone()));
            if !named {
                return Err(format!("{value} was not refused at the path: {}", errors(&got)));
            }
        }
        for value in &accepted {
            let mut config = root.clone();
            place(
                &self.block,
                &mut config,
                "",
                &fact.path,
                typed(&attribute.ty, value),
                validators,
            );
            let got = self.validate(&config).await;
            // Constraints between attributes (conflicts, required with) are not the
            // validator's: they have their own facts.
            let wrong: Vec<&pb::Diagnostic> = got
                .iter()
                .filter(|d| is_error(d) && d.attribute.as_ref().map(names) == Some(fact.path.clone()))
                .filter(|d| d.summary != "Invalid combination of arguments")
                .collect();
            if !wrong.is_empty() {
                return Err(format!("{value} was refused: {}", errors(&got)));
            }
        }
        Ok(None)
    }

    /// A create leaving the attribute out plans the default.
    async fn defaults(
        &self,
        fact: &Fact,
        attribute: &Attribute,
        root: &Value,
        validators: &Validators<'_>,
    ) -> Result<Option<Skip>, String> {
        if attribute.required {
            return Ok(Some(Skip::Required));
        }
        if attribute.computed && !attribute.optional {
            return Ok(Some(Skip::ComputedOnly));
        }
        let mut config = root.clone();
        place(&self.block, &mut config, "", &fact.path, Value::Null, validators);
        let response = self.plan(&Value::Null, &config).await;
        if response.diagnostics.iter().any(is_error) {
            return Err(format!("the plan failed: {}", errors(&response.diagnostics)));
        }
        let planned = self.planned(&response);
        let want: Json = serde_json::from_str(&fact.argument).map_err(|e| e.to_string())?;
        let got = at_path(&planned, &fact.path);
        if *got != typed(&attribute.ty, &want) {
            return Err(format!("planned {:?}, not the default {want}", got.to_json()));
        }
        Ok(None)
    }

    /// Changing the attribute (a block: its number of elements) replaces the object, as the
    /// engine keeps `requires_replace`; the same configuration again replaces nothing.
    async fn replaces(
        &self,
        fact: &Fact,
        leaf: Leaf<'_>,
        root: &Value,
        validators: &Validators<'_>,
    ) -> Result<Option<Skip>, String> {
        let (before, after) = match leaf {
            Leaf::Attribute(attribute) if attribute.computed && !attribute.optional => {
                return Ok(Some(Skip::ComputedOnly));
            }
            Leaf::Attribute(attribute) => {
                let (a, b) = two_values(attribute, validators.get(fact.path.as_str()).copied());
                let mut before = root.clone();
                place(&self.block, &mut before, "", &fact.path, a, validators);
                let mut after = root.clone();
                place(&self.block, &mut after, "", &fact.path, b, validators);
                (before, after)
            }
            Leaf::Block(nested) if nested.computed && nested.min_items == 0 => {
                return Ok(Some(Skip::ComputedBlock));
            }
            Leaf::Block(nested) => {
                let element = base(&nested.block, &fact.path, validators);
                let once = one(nested, element.clone());
                let other = match (nested.min_items, &once) {
                    (0, _) => Value::Null,
                    (_, Value::List(v)) if nested.max_items != 1 => Value::List(vec![v[0].clone(), element]),
                    _ => return Ok(Some(Skip::FixedBlock)),
                };
                let mut before = root.clone();
                place(&self.block, &mut before, "", &fact.path, once, validators);
                let mut after = root.clone();
                place(&self.block, &mut after, "", &fact.path, other, validators);
                (before, after)
            }
        };
        let created = self.plan(&Value::Null, &before).await;
        if created.diagnostics.iter().any(is_error) {
            return Err(format!(
                "the create plan failed: {}",
                errors(&created.diagnostics)
            ));
        }
        let prior = known(self.planned(&created));
        let response = self.plan(&prior, &after).await;
        if response.diagnostics.iter().any(is_error) {
            return Err(format!(
                "the update plan failed: {}",
                errors(&response.diagnostics)
            ));
        }
        let planned = self.planned(&response);
        let replaced: Vec<String> = response
            .requires_replace
            .iter()
            .filter(|p| changes(&prior, &planned, p))
            .map(names)
            .collect();
        if !replaced.contains(&fact.path) {
            return Err(format!("the engine would replace for {replaced:?} only"));
        }
        let again = self.plan(&prior, &before).await;
        let planned = self.planned(&again);
        let spurious: Vec<String> = again
            .requires_replace
            .iter()
            .filter(|p| changes(&prior, &planned, p))
            .map(names)
            .collect();
        if !spurious.is_empty() || again.diagnostics.iter().any(is_error) {
            return Err(format!(
                "an unchanged plan replaces for {spurious:?}: {}",
                errors(&again.diagnostics)
            ));
        }
        Ok(None)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_fact_holds_per_type() {
    let server = TestServer::start(Options::default());
    let dir = tempfile::tempdir().unwrap();
    let service = service(&server, &dir).await;
    let provider = LiveProvider::default();
    let resources: BTreeMap<&str, Block> = provider
        .resources()
        .into_iter()
        .flat_map(|r| {
            let block = r.schema().block;
            std::iter::once(r.type_name())
                .chain(r.aliases().iter().copied())
                .map(move |name| (name, block.clone()))
        })
        .collect();
    let facts = facts();
    let mut by_type: BTreeMap<&str, Vec<&Fact>> = BTreeMap::new();
    for fact in &facts {
        by_type.entry(&fact.ty).or_default().push(fact);
    }

    let mut tallies: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut skips: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (type_name, facts) in &by_type {
        let Some(block) = resources.get(type_name) else {
            failures.push(format!(
                "{type_name}: facts for a type the provider does not serve"
            ));
            continue;
        };
        let subject = Subject {
            service: &service,
            type_name,
            ty: block.value_type(),
            block: block.clone(),
        };
        let validators: Validators = facts
            .iter()
            .filter(|f| f.kind == "validate")
            .map(|f| (f.path.as_str(), f.argument.as_str()))
            .collect();
        let tally = tallies.entry(type_name).or_default();
        for fact in facts
            .iter()
            .filter(|f| matches!(f.kind.as_str(), "validate" | "default" | "force_new"))
        {
            match subject.check(fact, &validators).await {
                Ok(None) => match fact.kind.as_str() {
                    "validate" => tally.validators += 1,
                    "default" => tally.defaults += 1,
                    _ => tally.force_new += 1,
                },
                Ok(Some(skip)) => {
                    tally.skipped += 1;
                    *skips.entry(skip.reason()).or_default() += 1;
                }
                Err(why) => failures.push(format!(
                    "{type_name} {} {} {} ({}): {why}",
                    fact.path, fact.kind, fact.argument, fact.source
                )),
            }
        }
    }

    // Past the harness's capture: `make test` shows the table.
    let mut out = std::io::stdout().lock();
    let line = |out: &mut std::io::StdoutLock, cols: [&str; 5]| {
        writeln!(
            out,
            "conformance | {:<50} | {:>10} | {:>8} | {:>9} | {:>7}",
            cols[0], cols[1], cols[2], cols[3], cols[4]
        )
        .unwrap();
    };
    line(
        &mut out,
        ["type", "validators", "defaults", "force_new", "skipped"],
    );
    let mut total = Tally::default();
    for (type_name, t) in &tallies {
        let cells = [t.validators, t.defaults, t.force_new, t.skipped].map(|n| n.to_string());
        line(&mut out, [type_name, &cells[0], &cells[1], &cells[2], &cells[3]]);
        total.validators += t.validators;
        total.defaults += t.defaults;
        total.force_new += t.force_new;
        total.skipped += t.skipped;
    }
    writeln!(
        out,
        "conformance total: {} types, {} validators, {} defaults, {} force_new checked, {} skipped, {} failed",
        tallies.len(),
        total.validators,
        total.defaults,
        total.force_new,
        total.skipped,
        failures.len()
    )
    .unwrap();
    for (reason, n) in &skips {
        writeln!(out, "conformance skipped {n}: {reason}").unwrap();
    }
    drop(out);
    assert!(
        failures.is_empty(),
        "{} facts do not hold:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
