//! Field tables: one declaration per Kubernetes field drives a kind's schema, the object sent
//! to the API and the value read back from it. The tables come from the kind catalog
//! ([`crate::catalog`]); this module knows how each shape converts, and [`quantity`] how
//! resource quantities compare. It knows no kind: the kinds, data sources, patches and facts
//! all convert through it.
//!
//! A [`Field`] names the Terraform attribute (snake_case, as hashicorp/kubernetes spells it)
//! and the Kubernetes JSON field (camelCase, dotted when hashicorp flattened a level), says how
//! the value is shaped on each side ([`Shape`]) and whether it is required, optional or filled
//! in by the server ([`Presence`]). Kubernetes objects nest as hashicorp nests them: as blocks
//! of at most one element.
//!
//! Reading follows the rules that keep the next plan empty after an apply:
//! - what the prior value does not have (an optional attribute that is null, a block that is
//!   absent) stays out: the server's defaults and other writers' fields never become a diff,
//!   and the engine gets back exactly the nulls it planned;
//! - a value equal in meaning to the prior one keeps the prior's spelling ("8080" for 8080,
//!   "0644" for 420); a quantity reads as the server spells it (`500m` for `0.5`), as
//!   hashicorp's state holds it: the plan keeps that for an equal configured one (the rules'
//!   equivalence, on a legacy-SDK resource);
//! - a zero value the server omits (`0`, `false`, `""`, empty collections) keeps the prior's.
//!
//! Reading from no prior (an import, or a list item the prior did not have) reads everything.
//! [`read_full`] reads everything the server has, its defaults too: a data source reports the
//! live object as it is.

use plugin_runtime::{Attribute, Block, NestedBlock, Nesting, Type};
use serde_json::Value as Json;

mod field_path;
pub mod quantity;
mod read;
mod write;

pub use field_path::attribute_path;
pub use read::{read, read_full};
pub use write::write;

/// How one value is written on each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Str,
    Int,
    /// A Terraform number, a JSON number that may have a fraction.
    Number,
    Bool,
    /// A Terraform string holding a whole number (hashicorp's "nullable int"), a JSON integer.
    IntString,
    /// A Terraform string holding a number, a JSON number.
    NumString,
    /// A Terraform string holding "true" or "false", a JSON bool.
    BoolString,
    /// A Terraform string; JSON integer when it is a whole number, else a string ("http", "25%").
    IntOrString,
    /// A resource quantity string, compared by meaning.
    Quantity,
    /// A Terraform octal string ("0644"), a JSON integer (420).
    FileMode,
    /// A Terraform string naming a service port by number or name; JSON `{"number": 80}` or
    /// `{"name": "http"}` (networking/v1's backend port).
    PortRef,
    /// A Terraform string; JSON base64 of its bytes (a certificate in a status).
    Base64,
}

/// The shape of a field.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    One(Scalar),
    List(Scalar),
    Set(Scalar),
    Map(Scalar),
    /// A Kubernetes object: a block of at most one element.
    Object(&'static [Field]),
    /// A Kubernetes object as a block nested `single` (a Terraform object, not a list).
    Single(&'static [Field]),
    /// A Kubernetes array of objects: a repeated block.
    Array(&'static [Field]),
    /// A Kubernetes array of objects whose order does not matter: a block set.
    ArraySet(&'static [Field]),
    /// A setting that exists only in Terraform (`wait_for_rollout`): never sent, read back as
    /// configured.
    Local(Type0),
    /// A path hashicorp has and Kubernetes does not: in the schema, an error when configured.
    Unsupported(Unsupported),
}

/// The Terraform shape of an [`Shape::Unsupported`] path.
#[derive(Clone, Copy, Debug)]
pub enum Unsupported {
    Block(&'static [Field]),
    Attribute(Type0),
}

/// A plain Terraform type, `Copy` so tables stay static.
#[derive(Clone, Copy, Debug)]
pub enum Type0 {
    One(Scalar),
    List(Scalar),
    Set(Scalar),
    Map(Scalar),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presence {
    Required,
    Optional,
    /// Optional, and filled in by the server when not configured.
    OptionalComputed,
    /// Set by the server only; never sent.
    Computed,
}

/// One Kubernetes field as a Terraform attribute or block.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    /// The JSON field, dotted when hashicorp flattened levels (`service.name`); [`INLINE`] for
    /// a Terraform level whose fields are the enclosing object's.
    pub json: &'static str,
    pub shape: Shape,
    /// An object or array shown as a nested attribute (`spec = { ... }`) instead of a block.
    pub attribute: bool,
    /// What the API server fills in when nobody sets it (JSON text): an import leaves it out
    /// of an optional attribute, as the user never wrote it.
    pub server_default: Option<&'static str>,
    pub presence: Presence,
    pub doc: &'static str,
}

/// The `json` of a Terraform level with no Kubernetes level of its own (hashicorp's
/// `persistent_volume_source`, a webhook's `object_selector.label_selector`).
pub const INLINE: &str = "~";

impl Field {
    /// The fields of an object or array shape.
    fn object_fields(&self) -> Option<&'static [Field]> {
        match self.shape {
            Shape::Object(sub)
            | Shape::Single(sub)
            | Shape::Array(sub)
            | Shape::ArraySet(sub)
            | Shape::Unsupported(Unsupported::Block(sub)) => Some(sub),
            _ => None,
        }
    }

    /// The fields of a Terraform block (not a computed one or a nested attribute).
    fn block_fields(&self) -> Option<&'static [Field]> {
        if self.presence == Presence::Computed || self.attribute {
            return None;
        }
        self.object_fields()
    }

    fn is_block(&self) -> bool {
        self.block_fields().is_some()
    }
}

/// The schema block of a field table.
pub fn block(fields: &[Field], description: &str) -> Block {
    let mut block = Block::new(description);
    for field in fields {
        if let Some(sub) = field.block_fields() {
            let inner = self::block(sub, field.doc);
            let required = field.presence == Presence::Required;
            let nested = match (field.shape, required) {
                (Shape::Single(_), true) => NestedBlock::new(field.name, Nesting::Single, inner).items(1, 1),
                (Shape::Single(_), false) => NestedBlock::new(field.name, Nesting::Single, inner),
                (Shape::Object(_), true) => NestedBlock::exactly_one(field.name, inner),
                (Shape::Object(_), false) => NestedBlock::at_most_one(field.name, inner),
                (Shape::ArraySet(_), true) => NestedBlock::new(field.name, Nesting::Set, inner).items(1, 0),
                (Shape::ArraySet(_), false) => NestedBlock::new(field.name, Nesting::Set, inner),
                (_, true) => NestedBlock::new(field.name, Nesting::List, inner).items(1, 0),
                (_, false) => NestedBlock::new(field.name, Nesting::List, inner),
            };
            block = block.block(NestedBlock {
                computed: field.presence == Presence::OptionalComputed,
                ..nested
            });
        } else {
            block = block.attribute(attribute(field));
        }
    }
    block
}

/// A field as an attribute; objects and arrays configured as nested attributes carry their
/// own attributes' flags.
fn attribute(field: &Field) -> Attribute {
    let ty = value_type(field.shape);
    let mut attribute = match field.presence {
        Presence::Required => Attribute::required(field.name, ty, field.doc),
        Presence::Optional => Attribute::optional(field.name, ty, field.doc),
        Presence::OptionalComputed => Attribute::optional_computed(field.name, ty, field.doc),
        Presence::Computed => Attribute::computed(field.name, ty, field.doc),
    };
    // A quantity means what it weighs: `1Gi` is `1024Mi` ([`quantity::SameQuantity`]).
    if matches!(
        field.shape,
        Shape::One(Scalar::Quantity) | Shape::Map(Scalar::Quantity)
    ) {
        attribute.rules.equivalence = Some(std::sync::Arc::new(quantity::SameQuantity));
    }
    match (field.attribute, field.shape, field.object_fields()) {
        (true, shape, Some(sub)) if field.presence != Presence::Computed => {
            let nesting = match shape {
                Shape::Single(_) => Nesting::Single,
                Shape::ArraySet(_) => Nesting::Set,
                _ => Nesting::List,
            };
            attribute.nested(nesting, sub.iter().map(self::attribute).collect())
        }
        _ => attribute,
    }
}

fn scalar_type(scalar: Scalar) -> Type {
    match scalar {
        Scalar::Int | Scalar::Number => Type::Number,
        Scalar::Bool => Type::Bool,
        _ => Type::String,
    }
}

fn plain_type(ty: Type0) -> Type {
    match ty {
        Type0::One(s) => scalar_type(s),
        Type0::List(s) => Type::list(scalar_type(s)),
        Type0::Set(s) => Type::set(scalar_type(s)),
        Type0::Map(s) => Type::map(scalar_type(s)),
    }
}

fn object_type(sub: &[Field]) -> Type {
    Type::object(sub.iter().map(|f| (f.name, value_type(f.shape))))
}

fn value_type(shape: Shape) -> Type {
    match shape {
        Shape::One(s) => scalar_type(s),
        Shape::Local(ty) => plain_type(ty),
        Shape::List(s) => Type::list(scalar_type(s)),
        Shape::Set(s) => Type::set(scalar_type(s)),
        Shape::Map(s) => Type::map(scalar_type(s)),
        Shape::Single(sub) => object_type(sub),
        Shape::ArraySet(sub) => Type::set(object_type(sub)),
        Shape::Object(sub) | Shape::Array(sub) => Type::list(object_type(sub)),
        Shape::Unsupported(Unsupported::Block(sub)) => Type::list(object_type(sub)),
        Shape::Unsupported(Unsupported::Attribute(ty)) => plain_type(ty),
    }
}

/// The value at the dotted JSON path `json` of `live`, when it is there and not null.
fn lookup<'a>(live: &'a Json, json: &str) -> Option<&'a Json> {
    json.split('.')
        .try_fold(live, |at, part| at.get(part))
        .filter(|j| !j.is_null())
}

/// Helpers for the kinds' tests: golden transcripts, hand-built values, and the engine's
/// "is there a diff" rule.
#[cfg(test)]
pub mod test_support {
    use super::read::*;
    use super::write::*;
    use super::*;
    use plugin_runtime::{AttributePath, Value};

    /// The request and response bodies of one step of a kube-golden transcript (the in-repo
    /// copy in `acceptance/kube-golden/`).
    pub fn golden(file: &str, step: usize) -> (Json, Json) {
        let path = format!("{}/../acceptance/kube-golden/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let doc: Json = serde_json::from_str(&text).expect("golden JSON");
        let s = &doc["steps"][step];
        (s["body"].clone(), s["response"]["body"].clone())
    }

    pub fn s(text: &str) -> Value {
        Value::string(text)
    }

    pub fn obj<const N: usize>(attributes: [(&str, Value); N]) -> Value {
        Value::object(attributes)
    }

    /// A list of blocks (or of plain values).
    pub fn list<const N: usize>(elements: [Value; N]) -> Value {
        Value::List(elements.into())
    }

    pub fn strings<const N: usize>(items: [&str; N]) -> Value {
        Value::List(items.iter().map(|t| s(t)).collect())
    }

    pub fn map<const N: usize>(entries: [(&str, &str); N]) -> Value {
        Value::string_map(entries)
    }

    /// Sends the configuration as golden `step` of `file` did, reads the answer back without
    /// a diff, and checks a refresh of that state is stable. Returns the state.
    pub fn golden_round_trip(fields: &[Field], file: &str, step: usize, config: &Value) -> Value {
        let (request, response) = golden(file, step);
        let planned = planned_create(fields, config);
        let sent = write(fields, &planned, &AttributePath::default()).unwrap();
        assert_eq!(Json::Object(sent), serde_json::json!({"spec": request["spec"]}));
        let state = read(fields, &response, &planned);
        assert_eq!(diff(fields, config, &state), Vec::<String>::new());
        assert_eq!(read(fields, &response, &state), state, "refresh is stable");
        state
    }

    /// A field, for hand-made tables in tests.
    pub const fn field(name: &'static str, json: &'static str, shape: Shape, presence: Presence) -> Field {
        Field {
            name,
            json,
            shape,
            presence,
            attribute: false,
            server_default: None,
            doc: "A test field.",
        }
    }

    /// A configuration value as the engine sends it: every attribute present (null when not
    /// set) and every block a list.
    pub fn complete(fields: &[Field], partial: &Value) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|f| {
                    let v = partial.get(f.name);
                    let full = match f.block_fields() {
                        Some(sub) => Value::List(v.elements().iter().map(|e| complete(sub, e)).collect()),
                        None => v.clone(),
                    };
                    (f.name.to_string(), full)
                })
                .collect(),
        )
    }

    /// The planned value of a create: computed attributes not configured are unknown.
    pub fn planned_create(fields: &[Field], config: &Value) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|f| {
                    let v = config.get(f.name);
                    let planned = if let Some(sub) = f.block_fields() {
                        Value::List(v.elements().iter().map(|e| planned_create(sub, e)).collect())
                    } else if v.is_null()
                        && f.presence != Presence::Optional
                        && f.presence != Presence::Required
                    {
                        Value::unknown()
                    } else {
                        v.clone()
                    };
                    (f.name.to_string(), planned)
                })
                .collect(),
        )
    }

    /// Where a plan of `config` against `state` would show a change, as the engine decides
    /// it: configured values must match, unconfigured non-computed ones must be null, and
    /// block counts must agree. Empty when the plan is empty.
    pub fn diff(fields: &[Field], config: &Value, state: &Value) -> Vec<String> {
        let mut out = Vec::new();
        diff_into(fields, config, state, "", &mut out);
        out
    }

    fn diff_into(fields: &[Field], config: &Value, state: &Value, at: &str, out: &mut Vec<String>) {
        for f in fields {
            let path = format!("{at}.{}", f.name);
            let (c, s) = (config.get(f.name), state.get(f.name));
            if s.is_unknown() || !s.is_wholly_known() {
                out.push(format!("{path}: unknown in state"));
                continue;
            }
            if let Some(sub) = f.block_fields() {
                // A computed block the configuration leaves out is planned as read.
                if f.presence == Presence::OptionalComputed && c.elements().is_empty() {
                    continue;
                }
                if c.elements().len() != s.elements().len() {
                    out.push(format!(
                        "{path}: {} blocks configured, {} in state",
                        c.elements().len(),
                        s.elements().len()
                    ));
                    continue;
                }
                for (i, (ce, se)) in c.elements().iter().zip(s.elements()).enumerate() {
                    diff_into(sub, ce, se, &format!("{path}[{i}]"), out);
                }
            } else if c.is_null() {
                if matches!(f.presence, Presence::Optional | Presence::Required) && !s.is_null() {
                    out.push(format!("{path}: not configured but {s:?} in state"));
                }
            } else if !same_value(f.shape, c, s) {
                out.push(format!("{path}: configured {c:?}, state {s:?}"));
            }
        }
    }

    /// Equal, or (quantities) equal in meaning: what the plan of a legacy-SDK resource keeps.
    fn same_value(shape: Shape, a: &Value, b: &Value) -> bool {
        let same_quantity = |x: &Value, y: &Value| match (x.as_str(), y.as_str()) {
            (Some(x), Some(y)) => quantity::same(x, y),
            _ => x == y,
        };
        match (shape, a, b) {
            (Shape::One(Scalar::Quantity), _, _) => same_quantity(a, b),
            (Shape::Map(Scalar::Quantity), Value::Map(x), Value::Map(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| same_quantity(v, w)))
            }
            (_, Value::Set(x), Value::Set(y)) => x.len() == y.len() && x.iter().all(|v| y.contains(v)),
            _ => a == b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read::*;
    use super::test_support::*;
    use super::write::*;
    use super::*;
    use plugin_runtime::{AttributePath, Value};
    use serde_json::json;

    use Presence::{Optional, OptionalComputed as Defaulted, Required};

    static INNER: &[Field] = &[
        field("name", "name", Shape::One(Scalar::Str), Required),
        field("protocol", "protocol", Shape::One(Scalar::Str), Defaulted),
    ];
    static FIELDS: &[Field] = &[
        field("cpu", "cpu", Shape::One(Scalar::Quantity), Optional),
        field("limits", "limits", Shape::Map(Scalar::Quantity), Optional),
        field(
            "target_port",
            "targetPort",
            Shape::One(Scalar::IntOrString),
            Optional,
        ),
        field("replicas", "replicas", Shape::One(Scalar::IntString), Defaulted),
        field("mode", "defaultMode", Shape::One(Scalar::FileMode), Optional),
        field("delay", "initialDelaySeconds", Shape::One(Scalar::Int), Optional),
        field("values", "values", Shape::Set(Scalar::Str), Optional),
        field("port", "ports", Shape::Array(INNER), Optional),
        field("strategy", "strategy", Shape::Object(INNER), Optional),
        field("backend", "service.port", Shape::One(Scalar::PortRef), Optional),
        field("local", "-", Shape::Local(Type0::One(Scalar::Bool)), Optional),
    ];

    fn config() -> Value {
        complete(
            FIELDS,
            &obj([
                ("cpu", s("0.5")),
                ("limits", map([("memory", "1024Mi"), ("cpu", "2")])),
                ("target_port", s("8080")),
                ("mode", s("0644")),
                ("delay", Value::int(0)),
                ("values", Value::Set(vec![s("b"), s("a")])),
                ("port", list([obj([("name", s("http"))])])),
            ]),
        )
    }

    #[test]
    fn writes_camel_case_json_of_configured_fields_only() {
        let out = write(
            FIELDS,
            &planned_create(FIELDS, &config()),
            &AttributePath::default(),
        )
        .unwrap();
        assert_eq!(
            Json::Object(out),
            json!({
                "cpu": "0.5", "limits": {"cpu": "2", "memory": "1024Mi"}, "targetPort": 8080,
                "defaultMode": 420, "initialDelaySeconds": 0, "values": ["b", "a"],
                "ports": [{"name": "http"}]
            })
        );
    }

    #[test]
    fn reads_back_the_configured_spelling_when_the_server_canonicalises_except_quantities() {
        let live = json!({
            "cpu": "500m", "limits": {"cpu": "2", "memory": "1Gi"}, "targetPort": 8080, "defaultMode": 420,
            "values": ["a", "b"], "ports": [{"name": "http", "protocol": "TCP"}], "replicas": 1,
            "strategy": {"name": "RollingUpdate", "protocol": "TCP"}
        });
        let state = read(FIELDS, &live, &planned_create(FIELDS, &config()));
        assert_eq!(diff(FIELDS, &config(), &state), Vec::<String>::new());
        assert_eq!(
            state.get("cpu"),
            &s("500m"),
            "the server's spelling of a quantity"
        );
        assert_eq!(state.get("limits").get("memory"), &s("1Gi"));
        assert_eq!(state.get("delay"), &Value::int(0), "omitted zero keeps the prior");
        assert_eq!(state.get("replicas"), &s("1"));
        assert_eq!(state.get("port").elements()[0].get("protocol"), &s("TCP"));
        assert_eq!(state.get("strategy"), &list([]), "server default left out");
        assert_eq!(read(FIELDS, &live, &state), state, "a refresh changes nothing");
    }

    #[test]
    fn reads_real_changes_and_non_default_blocks() {
        let live = json!({"cpu": "1", "limits": {"cpu": "2"}, "strategy": {"name": "Recreate"}});
        let state = read(FIELDS, &live, &config());
        assert_eq!(state.get("cpu"), &s("1"));
        assert_eq!(state.get("limits"), &map([("cpu", "2")]));
        assert_eq!(state.get("target_port"), &Value::Null);
        assert_eq!(state.get("port"), &list([]));
        assert_eq!(
            state.get("strategy"),
            &list([]),
            "a block the prior lacks stays out"
        );
        // cpu, limits, target_port, mode, values, port; the omitted zero delay is no diff.
        assert_eq!(diff(FIELDS, &config(), &state).len(), 6);
    }

    #[test]
    fn import_reads_from_nothing() {
        let live = json!({"targetPort": "http", "defaultMode": 493, "strategy": {"name": "RollingUpdate", "protocol": "TCP"}});
        let state = read(FIELDS, &live, &Value::Null);
        assert_eq!(state.get("target_port"), &s("http"));
        assert_eq!(state.get("mode"), &s("0755"));
        assert_eq!(
            state.get("strategy").elements().len(),
            1,
            "no prior: everything is read"
        );
    }

    #[test]
    fn a_full_read_keeps_the_servers_defaults_and_every_label() {
        static META: &[Field] = &[field("labels", "labels", Shape::Map(Scalar::Str), Optional)];
        static TABLE: &[Field] = &[
            Field {
                server_default: Some("\"Cluster\""),
                ..field("policy", "policy", Shape::One(Scalar::Str), Optional)
            },
            field("meta", "metadata", Shape::Object(META), Optional),
        ];
        let live =
            json!({"policy": "Cluster", "metadata": {"labels": {"controller-uid": "u", "app": "web"}}});
        let imported = read(TABLE, &live, &Value::Null);
        assert_eq!(
            imported.get("policy"),
            &Value::Null,
            "an import leaves the default out"
        );
        let full = read_full(TABLE, &live);
        assert_eq!(full.get("policy"), &s("Cluster"));
        assert_eq!(
            full.get("meta").elements()[0].get("labels"),
            &map([("app", "web"), ("controller-uid", "u")])
        );
    }

    #[test]
    fn flattened_ports_and_terraform_only_settings() {
        let planned = complete(
            FIELDS,
            &obj([("backend", s("http")), ("local", Value::Bool(false))]),
        );
        let sent = write(FIELDS, &planned, &AttributePath::default()).unwrap();
        assert_eq!(Json::Object(sent), json!({"service": {"port": {"name": "http"}}}));
        let state = read(FIELDS, &json!({"service": {"port": {"number": 80}}}), &planned);
        assert_eq!(state.get("backend"), &s("80"));
        assert_eq!(state.get("local"), &Value::Bool(false), "read back as configured");
    }

    #[test]
    fn bad_values_are_errors_at_their_path() {
        let bad = obj([
            ("cpu", s("lots")),
            ("replicas", s("two")),
            ("mode", s("rw")),
            ("limits", map([("memory", "1 GB")])),
        ]);
        let err = write(
            FIELDS,
            &complete(FIELDS, &bad),
            &AttributePath::root("spec").index(0),
        )
        .unwrap_err();
        let paths: Vec<String> = err
            .0
            .iter()
            .map(|d| d.attribute.clone().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "spec[0].cpu",
                "spec[0].limits[\"memory\"]",
                "spec[0].replicas",
                "spec[0].mode"
            ]
        );
        assert!(
            err.0[0].detail.contains("\"lots\" is not a Kubernetes quantity"),
            "{}",
            err.0[0].detail
        );
    }

    #[test]
    fn schema_nests_objects_as_blocks_of_one() {
        let b = block(FIELDS, "Test.");
        assert_eq!(b.find_block("strategy").unwrap().max_items, 1);
        assert_eq!(b.find_block("port").unwrap().max_items, 0);
        let replicas = b.find_attribute("replicas").unwrap();
        assert!(replicas.optional && replicas.computed && replicas.ty == Type::String);
        assert_eq!(b.find_attribute("values").unwrap().ty, Type::set(Type::String));
    }
}
