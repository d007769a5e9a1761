//! Schemas: what a provider, resource or data source accepts and stores.
//!
//! Built with small constructors so a resource's schema reads like its documentation:
//!
//! ```
//! use plugin_runtime::{Attribute, Block, Schema, Type};
//! let schema = Schema::new(0, Block::new("A ConfigMap.")
//!     .attribute(Attribute::computed("id", Type::String, "namespace/name"))
//!     .attribute(Attribute::optional("data", Type::map(Type::String), "Data.")));
//! assert_eq!(schema.block.attributes.len(), 2);
//! ```

use std::fmt;
use std::sync::Arc;

use crate::types::Type;
use crate::value::Value;

/// A versioned schema (the version drives state upgrades).
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// Bumped when stored state must be upgraded to read under this schema.
    pub version: i64,
    /// The top-level block: the resource's own attributes and blocks.
    pub block: Block,
}

/// How a nested block repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nesting {
    /// At most one, null when absent.
    Single,
    /// Exactly one, never null: absent means all attributes null.
    Group,
    /// Any number, in order.
    List,
    /// Any number, unordered and without duplicates.
    Set,
    /// Any number, each under a label (`block "key" { }`).
    Map,
}

/// A body of attributes and nested blocks: a whole schema, or what a nested block holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    /// Its attributes (`name = value`).
    pub attributes: Vec<Attribute>,
    /// Its nested blocks (`name { ... }`).
    pub blocks: Vec<NestedBlock>,
    /// Markdown.
    pub description: String,
    /// The engine warns when a configuration uses it.
    pub deprecated: bool,
}

/// One attribute: its type, who sets it, and the rules the runtime applies to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    /// The name configurations use.
    pub name: String,
    /// The type of its values.
    pub ty: Type,
    /// Markdown.
    pub description: String,
    /// The configuration must set it.
    pub required: bool,
    /// The configuration may set it.
    pub optional: bool,
    /// The provider sets it (alone, or when the configuration leaves it null if also optional).
    pub computed: bool,
    /// The engine hides its value in plans and output.
    pub sensitive: bool,
    /// The engine warns when a configuration sets it.
    pub deprecated: bool,
    /// Sent to the provider but never kept in plan or state (a password, say).
    pub write_only: bool,
    /// Set for a nested attribute (`rules = [{ ... }]`): its attributes, each with its own
    /// required/optional flags. `ty` is then the object type they make, nested as `nesting`.
    pub nested: Option<NestedAttributes>,
    /// Validators, default, replacement: what the runtime applies ([`crate::rules`]).
    pub rules: Rules,
}

/// The attributes of a nested attribute and how they nest (single, list, set or map).
#[derive(Clone, Debug, PartialEq)]
pub struct NestedAttributes {
    /// How the objects repeat.
    pub nesting: Nesting,
    /// The attributes of each object.
    pub attributes: Vec<Attribute>,
}

/// A nested block as its parent declares it: its name, body and how often it may appear.
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBlock {
    /// The block's name in configurations.
    pub type_name: String,
    /// What each instance holds.
    pub block: Block,
    /// How instances repeat.
    pub nesting: Nesting,
    /// Fewest instances allowed (0: no lower bound).
    pub min_items: i64,
    /// Most instances allowed (0: no upper bound).
    pub max_items: i64,
    /// A change of the number of elements replaces the object ([`crate::rules`]).
    pub replace: bool,
    /// An optional block the server fills in: a legacy resource's plan keeps the prior's
    /// elements where the configuration has none ([`crate::rules`]). Not in the protocol,
    /// whose blocks are never computed.
    pub computed: bool,
}

impl Schema {
    /// A schema at `version` with `block` as its body.
    pub fn new(version: i64, block: Block) -> Schema {
        Schema { version, block }
    }

    /// The object type of the whole schema, as values of it are encoded.
    pub fn value_type(&self) -> Type {
        self.block.value_type()
    }
}

impl Block {
    /// An empty block described by `description` (Markdown); add to it with the builders below.
    pub fn new(description: impl Into<String>) -> Block {
        Block {
            description: description.into(),
            ..Block::default()
        }
    }

    /// Adds an attribute.
    pub fn attribute(mut self, attribute: Attribute) -> Block {
        self.attributes.push(attribute);
        self
    }

    /// Adds a nested block.
    pub fn block(mut self, block: NestedBlock) -> Block {
        self.blocks.push(block);
        self
    }

    /// Marks the block deprecated, so the engine warns where it is used.
    pub fn deprecated(mut self) -> Block {
        self.deprecated = true;
        self
    }

    /// The block with its nested attributes shown as nested blocks of the same nesting: value
    /// rules that walk blocks (plan modifiers, conforming a read-back) then cover them too.
    /// Borrowed when there are none.
    pub fn nested_as_blocks(&self) -> std::borrow::Cow<'_, Block> {
        if self.attributes.iter().all(|a| a.nested.is_none()) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut out = self.clone();
        out.attributes.retain(|a| a.nested.is_none());
        for a in self.attributes.iter() {
            if let Some(nested) = &a.nested {
                let inner = Block {
                    attributes: nested.attributes.clone(),
                    ..Block::new(a.description.clone())
                };
                out.blocks.push(NestedBlock::new(&a.name, nested.nesting, inner));
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// The attribute called `name`, if the block declares one.
    pub fn find_attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// The nested block called `name`, if the block declares one.
    pub fn find_block(&self, name: &str) -> Option<&NestedBlock> {
        self.blocks.iter().find(|b| b.type_name == name)
    }

    /// The object type implied by the attributes and nested blocks.
    pub fn value_type(&self) -> Type {
        let mut fields: Vec<(String, Type)> = self
            .attributes
            .iter()
            .map(|a| (a.name.clone(), a.ty.clone()))
            .collect();
        for b in &self.blocks {
            let inner = b.block.value_type();
            let ty = match b.nesting {
                Nesting::Single | Nesting::Group => inner,
                Nesting::List => Type::list(inner),
                Nesting::Set => Type::set(inner),
                Nesting::Map => Type::map(inner),
            };
            fields.push((b.type_name.clone(), ty));
        }
        Type::object(fields)
    }
}

impl Attribute {
    fn base(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            name: name.to_string(),
            ty,
            description: description.to_string(),
            required: false,
            optional: false,
            computed: false,
            sensitive: false,
            deprecated: false,
            write_only: false,
            nested: None,
            rules: Rules::default(),
        }
    }

    /// A nested attribute: `attributes` nested as `nesting`, its type derived from them.
    pub fn nested(mut self, nesting: Nesting, attributes: Vec<Attribute>) -> Attribute {
        let object = Type::object(attributes.iter().map(|a| (a.name.clone(), a.ty.clone())));
        self.ty = match nesting {
            Nesting::List => Type::list(object),
            Nesting::Set => Type::set(object),
            Nesting::Map => Type::map(object),
            Nesting::Single | Nesting::Group => object,
        };
        self.nested = Some(NestedAttributes { nesting, attributes });
        self
    }

    /// Set by the configuration, which must set it.
    pub fn required(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            required: true,
            ..Attribute::base(name, ty, description)
        }
    }

    /// Set by the configuration, or null.
    pub fn optional(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            optional: true,
            ..Attribute::base(name, ty, description)
        }
    }

    /// Set by the provider only.
    pub fn computed(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            computed: true,
            ..Attribute::base(name, ty, description)
        }
    }

    /// Optional, and filled in by the provider (or the server) when not set.
    pub fn optional_computed(name: &str, ty: Type, description: &str) -> Attribute {
        Attribute {
            optional: true,
            computed: true,
            ..Attribute::base(name, ty, description)
        }
    }

    /// Marks the value sensitive, so the engine hides it in plans and output.
    pub fn sensitive(mut self) -> Attribute {
        self.sensitive = true;
        self
    }

    /// Marks the attribute deprecated, so the engine warns where it is set.
    pub fn deprecated(mut self) -> Attribute {
        self.deprecated = true;
        self
    }
}

impl NestedBlock {
    /// A block nested as `nesting`, with no bounds on its count.
    pub fn new(type_name: &str, nesting: Nesting, block: Block) -> NestedBlock {
        NestedBlock {
            type_name: type_name.to_string(),
            block,
            nesting,
            min_items: 0,
            max_items: 0,
            replace: false,
            computed: false,
        }
    }

    /// A block that may appear once (list nesting with max 1, as hashicorp/kubernetes does).
    pub fn at_most_one(type_name: &str, block: Block) -> NestedBlock {
        NestedBlock {
            max_items: 1,
            ..NestedBlock::new(type_name, Nesting::List, block)
        }
    }

    /// A block that must appear exactly once (list nesting, min 1, max 1).
    pub fn exactly_one(type_name: &str, block: Block) -> NestedBlock {
        NestedBlock {
            min_items: 1,
            max_items: 1,
            ..NestedBlock::new(type_name, Nesting::List, block)
        }
    }

    /// Bounds the number of instances (0: unbounded).
    pub fn items(mut self, min: i64, max: i64) -> NestedBlock {
        self.min_items = min;
        self.max_items = max;
        self
    }
}

// What an attribute declares beyond its type and flags; `rules` applies it to every resource.

/// Checks one value; the message says what is allowed ("expected one of \"HTTP\", \"HTTPS\"").
pub trait Validator: Send + Sync {
    /// `Err` holds the message when `value` breaks the rule.
    fn check(&self, value: &Value) -> Result<(), String>;
    /// [`check`](Validator::check) where the message may name the attribute as SDKv2 writes
    /// its paths (`spec.0.template.0.spec.0.restart_policy`).
    fn check_at(&self, value: &Value, _sdk_path: &str) -> Result<(), String> {
        self.check(value)
    }
    /// The message of [`check_at`](Validator::check_at) is a whole sentence naming the path,
    /// shown as the diagnostic's summary (which the engine never wraps, as SDKv2's are).
    fn names_the_path(&self) -> bool {
        false
    }
    /// The rule in words, for documentation: "one of `HTTP`, `HTTPS`".
    fn describe(&self) -> String;
}

/// Whether a planned value means the same as the prior one.
pub trait Equivalence: Send + Sync {
    /// Whether `planned` differs from `prior` only in form, so the plan keeps `prior`.
    fn equivalent(&self, prior: &Value, planned: &Value) -> bool;
    /// The form the value will be read back in, where the provider knows it: a computed
    /// attribute is planned in that form, so that the state after apply is what a refresh
    /// reads. `None`: as configured.
    fn canonical(&self, _value: &Value) -> Option<Value> {
        None
    }
    /// The equivalence in words, for documentation.
    fn describe(&self) -> String;
}

/// How an attribute relates to others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    /// Not set together with any of the others.
    ConflictsWith,
    /// Exactly one of the listed paths (this attribute among them) is set.
    ExactlyOneOf,
    /// At least one of the listed paths is set.
    AtLeastOneOf,
    /// Set only together with all of the others.
    RequiredWith,
}

/// A constraint with the absolute paths it names (`spec.0.selector`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constraint {
    /// How the attribute relates to the paths.
    pub kind: ConstraintKind,
    /// The paths it names, this attribute's own among them where the kind says so.
    pub paths: Vec<String>,
}

/// The rules of one attribute.
#[derive(Clone, Default)]
pub struct Rules {
    /// The value planned when the configuration leaves the attribute null.
    pub default: Option<Value>,
    /// A change of the value replaces the object instead of updating it.
    pub replace: bool,
    /// Checks on configured values; each failure is an error at the attribute.
    pub validators: Vec<Arc<dyn Validator>>,
    /// When a planned value is the prior one in another form.
    pub equivalence: Option<Arc<dyn Equivalence>>,
    /// How the attribute relates to others.
    pub constraints: Vec<Constraint>,
}

impl Rules {
    /// Whether the attribute declares no rule at all.
    pub fn is_empty(&self) -> bool {
        self.default.is_none()
            && !self.replace
            && self.validators.is_empty()
            && self.equivalence.is_none()
            && self.constraints.is_empty()
    }
}

impl fmt::Debug for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rules")
            .field("default", &self.default)
            .field("replace", &self.replace)
            .field(
                "validators",
                &self.validators.iter().map(|v| v.describe()).collect::<Vec<_>>(),
            )
            .field("equivalence", &self.equivalence.as_ref().map(|e| e.describe()))
            .field("constraints", &self.constraints)
            .finish()
    }
}

/// Rules compare by what they say.
impl PartialEq for Rules {
    fn eq(&self, other: &Rules) -> bool {
        format!("{self:?}") == format!("{other:?}")
    }
}

impl Attribute {
    /// The attribute planned as `value` where the configuration leaves it null; it becomes
    /// computed, as the protocol requires of a value the provider fills in.
    pub fn with_default(mut self, value: Value) -> Attribute {
        self.set_default(value);
        self
    }

    /// [`Attribute::with_default`] on an attribute in place.
    pub fn set_default(&mut self, value: Value) {
        self.computed = true;
        self.rules.default = Some(value);
    }
}
