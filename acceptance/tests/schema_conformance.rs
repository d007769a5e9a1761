//! Schema conformance with hashicorp/kubernetes 3.4.0 (issue 10): `terraform providers schema
//! -json` of the installed provider, compared with `reference/hashicorp-kubernetes-3.4.0.paths.tsv`.
//! Every resource type of the reference must be served, and every configurable path of it (flags
//! `required` or `optional`) must exist with the same shape: block or attribute, the same
//! collection and element type, and the same required-or-optional. Read-only reference paths are
//! only looked for (listed when missing, not failing); paths the provider has beyond the
//! reference (e.g. `estate`) are fine. The only types allowed to be missing are those in
//! [`PENDING`], each naming the issue that adds it.
//!
//! The test prints one line such as `schema conformance: 81 of 81 resource types, 12,000 of
//! 12,000 configurable paths` (with `(N types pending issue M: P paths)` while some are), and on
//! failure one line per mismatch (`type path: expected …, found …`).
//!
//! Data sources (the reference's `data` rows) and ephemeral resources (`ephemeral` rows) are
//! held to more: every path, read-only ones included, with its flags (`required`, `optional`,
//! `optional,computed`, `computed,read-only`), and none may be missing (`schema conformance: 27
//! of 27 data sources, 5,678 of 5,678 paths with their flags`). A `computed_object` is there an
//! attribute of type `list(object(...))`, computed only. The provider functions are compared
//! with hashicorp's three ([`FUNCTIONS`]): names, parameter names and types, return type.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::sync::OnceLock;

use acceptance::{Engine, paths};
use serde_json::Value;

/// The reference: one row per path of every type of hashicorp/kubernetes 3.4.0.
const REFERENCE: &str = "reference/hashicorp-kubernetes-3.4.0.paths.tsv";

/// The provider's address in `providers schema -json`.
const PROVIDER_ADDRESS: &str = "registry.terraform.io/choudoufu/live";

/// Resource types no one serves yet, each with the issue that will add it. A type listed here
/// but served is checked like any other.
const PENDING: [(&str, &str); 0] = [];

/// At most this many mismatch lines in a failure message.
const MAX_LINES: usize = 300;

// ---------------------------------------------------------------------------------------------
// The reference

/// One reference row of one kind (`resource`, `data`, `ephemeral`).
#[derive(Debug, Clone)]
struct RefPath {
    path: String,
    /// `attribute`, `block`, `nested_attribute`, `computed_object` or `block_or_attribute`.
    shape: String,
    /// `simple`, `list`, `set`, `map` or `single`.
    collection: String,
    /// `string`, `number`, `bool`, `object` or `any`.
    element: String,
    /// `required`, `optional`, `optional,computed` or `computed,read-only`.
    flags: String,
}

impl RefPath {
    fn configurable(&self) -> bool {
        self.flags.split(',').any(|f| f == "required" || f == "optional")
    }

    fn required(&self) -> bool {
        self.flags.split(',').any(|f| f == "required")
    }

    fn expected(&self) -> String {
        let shape = match self.shape.as_str() {
            "nested_attribute" => "nested attribute",
            "block_or_attribute" => "block or nested attribute",
            "computed_object" => "computed object",
            other => other,
        };
        format!(
            "{} {shape} {}",
            self.flags,
            collection_text(&self.collection, &self.element)
        )
    }
}

/// `string`, `list(string)`, `single(object)`, `list` (a block's nesting).
fn collection_text(collection: &str, element: &str) -> String {
    match (collection, element) {
        ("simple", element) => element.to_string(),
        (collection, "object") if collection != "single" => collection.to_string(),
        (collection, element) => format!("{collection}({element})"),
    }
}

/// The rows of one kind (`resource`, `data`, `ephemeral`) of the reference, by type, in file
/// order. The first line names the columns.
fn parse_reference(text: &str, of_kind: &str) -> Result<BTreeMap<String, Vec<RefPath>>, String> {
    let mut types: BTreeMap<String, Vec<RefPath>> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        let [kind, type_name, path, shape, collection, element, flags] = columns[..] else {
            return Err(format!(
                "line {}: expected 7 tab-separated columns, found {}",
                index + 1,
                columns.len()
            ));
        };
        if kind != of_kind {
            continue;
        }
        let known = |value: &str, allowed: &[&str], column: &str| {
            if allowed.contains(&value) {
                Ok(())
            } else {
                Err(format!("line {}: unknown {column} {value:?}", index + 1))
            }
        };
        known(
            shape,
            &[
                "attribute",
                "block",
                "nested_attribute",
                "computed_object",
                "block_or_attribute",
            ],
            "shape",
        )?;
        known(
            collection,
            &["simple", "list", "set", "map", "single"],
            "collection",
        )?;
        known(element, &["string", "number", "bool", "object", "any"], "element")?;
        known(
            flags,
            &["required", "optional", "optional,computed", "computed,read-only"],
            "flags",
        )?;
        types.entry(type_name.to_string()).or_default().push(RefPath {
            path: path.to_string(),
            shape: shape.to_string(),
            collection: collection.to_string(),
            element: element.to_string(),
            flags: flags.to_string(),
        });
    }
    Ok(types)
}

// ---------------------------------------------------------------------------------------------
// The provider's schema, flattened to paths

/// What the provider has at one path.
#[derive(Debug, Clone)]
enum Node {
    /// A nested block (`block_types`).
    Block { nesting: String, min_items: u64 },
    /// An attribute; `nested` is the nesting mode of a nested attribute (`nested_type`).
    Attribute {
        ty: Option<Value>,
        nested: Option<String>,
        required: bool,
        optional: bool,
        computed: bool,
    },
    /// A member of an attribute's object type: configurable when the attribute is, required
    /// unless the object type lists it as optional.
    Member {
        ty: Value,
        optional: bool,
        configurable: bool,
    },
}

/// Which shape family a node is, and its collection and element as the reference names them.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Block,
    NestedAttribute,
    Attribute,
}

impl Node {
    fn kind(&self) -> Kind {
        match self {
            Node::Block { .. } => Kind::Block,
            Node::Attribute { nested: Some(_), .. } => Kind::NestedAttribute,
            Node::Attribute { .. } | Node::Member { .. } => Kind::Attribute,
        }
    }

    /// (collection, element) in the reference's words.
    fn collection(&self) -> (String, String) {
        match self {
            Node::Block { nesting, .. } => (nesting.clone(), "object".to_string()),
            Node::Attribute {
                nested: Some(mode), ..
            } => (mode.clone(), "object".to_string()),
            Node::Attribute { ty: Some(ty), .. } | Node::Member { ty, .. } => type_collection(ty),
            Node::Attribute { ty: None, .. } => ("simple".to_string(), "none".to_string()),
        }
    }

    /// Whether a user may set it.
    fn configurable(&self) -> bool {
        match self {
            Node::Block { .. } => true,
            Node::Attribute {
                required, optional, ..
            } => *required || *optional,
            Node::Member { configurable, .. } => *configurable,
        }
    }

    fn required(&self) -> bool {
        match self {
            Node::Block { min_items, .. } => *min_items >= 1,
            Node::Attribute { required, .. } => *required,
            Node::Member {
                optional,
                configurable,
                ..
            } => *configurable && !optional,
        }
    }

    /// The flags in the reference's words.
    fn flags(&self) -> &'static str {
        match self {
            Node::Block { min_items, .. } if *min_items >= 1 => "required",
            Node::Block { .. } => "optional",
            Node::Attribute { required: true, .. } => "required",
            Node::Attribute {
                optional: true,
                computed: true,
                ..
            } => "optional,computed",
            Node::Attribute { optional: true, .. } => "optional",
            Node::Attribute { .. } => "computed,read-only",
            Node::Member {
                configurable: false, ..
            } => "computed,read-only",
            Node::Member { optional: true, .. } => "optional",
            Node::Member { .. } => "required",
        }
    }

    fn found(&self) -> String {
        let flags = if !self.configurable() {
            "computed (read-only)"
        } else if self.required() {
            "required"
        } else {
            match self {
                Node::Attribute { computed: true, .. } => "optional,computed",
                _ => "optional",
            }
        };
        match self {
            Node::Block { nesting, min_items } => {
                format!("{flags} block {nesting} (min_items {min_items})")
            }
            Node::Attribute {
                nested: Some(mode), ..
            } => format!("{flags} nested attribute {mode}"),
            Node::Attribute { ty, .. } => {
                format!(
                    "{flags} attribute {}",
                    ty.as_ref().map(type_text).unwrap_or_default()
                )
            }
            Node::Member { ty, .. } => format!("{flags} object member {}", type_text(ty)),
        }
    }
}

/// A cty type in the engine's JSON, as HCL writes it: `list(string)`, `object({a=string})`.
fn type_text(ty: &Value) -> String {
    match ty {
        Value::String(name) => name.clone(),
        Value::Array(parts) => match (parts.first().and_then(Value::as_str), parts.get(1)) {
            (Some("object"), Some(Value::Object(members))) => {
                let optional: BTreeSet<&str> = parts
                    .get(2)
                    .and_then(Value::as_array)
                    .map(|names| names.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let members: Vec<String> = members
                    .iter()
                    .map(|(name, ty)| {
                        if optional.contains(name.as_str()) {
                            format!("{name}=optional({})", type_text(ty))
                        } else {
                            format!("{name}={}", type_text(ty))
                        }
                    })
                    .collect();
                format!("object({{{}}})", members.join(","))
            }
            (Some("tuple"), Some(Value::Array(items))) => {
                let items: Vec<String> = items.iter().map(type_text).collect();
                format!("tuple([{}])", items.join(","))
            }
            (Some(kind), Some(element)) => format!("{kind}({})", type_text(element)),
            _ => ty.to_string(),
        },
        other => other.to_string(),
    }
}

/// A type's (collection, element) in the reference's words: `string` is (simple, string),
/// `dynamic` (simple, any), `set(number)` (set, number), `list(object(…))` (list, object), an
/// object (single, object). Anything else has an element no reference row names.
fn type_collection(ty: &Value) -> (String, String) {
    let element = |ty: &Value| match ty {
        Value::String(name) if name == "dynamic" => "any".to_string(),
        Value::String(name) => name.clone(),
        Value::Array(parts) if parts.first().and_then(Value::as_str) == Some("object") => {
            "object".to_string()
        }
        other => type_text(other),
    };
    match ty {
        Value::Array(parts) => match (parts.first().and_then(Value::as_str), parts.get(1)) {
            (Some("object"), _) => ("single".to_string(), "object".to_string()),
            (Some(kind @ ("list" | "set" | "map")), Some(inner)) => (kind.to_string(), element(inner)),
            _ => ("other".to_string(), type_text(ty)),
        },
        simple => ("simple".to_string(), element(simple)),
    }
}

/// Every path of a schema block: attributes, nested blocks, the attributes of nested attributes
/// and the members of object-typed attributes, dot-joined.
fn flatten(block: &Value) -> BTreeMap<String, Node> {
    let mut nodes = BTreeMap::new();
    flatten_block(block, "", &mut nodes);
    nodes
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

fn flatten_block(block: &Value, prefix: &str, nodes: &mut BTreeMap<String, Node>) {
    flatten_attributes(&block["attributes"], prefix, nodes);
    if let Some(blocks) = block["block_types"].as_object() {
        for (name, nested) in blocks {
            let path = join(prefix, name);
            nodes.insert(
                path.clone(),
                Node::Block {
                    nesting: nested["nesting_mode"].as_str().unwrap_or("?").to_string(),
                    min_items: nested["min_items"].as_u64().unwrap_or(0),
                },
            );
            flatten_block(&nested["block"], &path, nodes);
        }
    }
}

fn flatten_attributes(attributes: &Value, prefix: &str, nodes: &mut BTreeMap<String, Node>) {
    let Some(attributes) = attributes.as_object() else {
        return;
    };
    for (name, attribute) in attributes {
        let path = join(prefix, name);
        let flag = |key: &str| attribute[key].as_bool().unwrap_or(false);
        let nested_type = &attribute["nested_type"];
        let node = Node::Attribute {
            ty: attribute.get("type").cloned(),
            nested: nested_type["nesting_mode"].as_str().map(str::to_string),
            required: flag("required"),
            optional: flag("optional"),
            computed: flag("computed"),
        };
        let configurable = node.configurable();
        nodes.insert(path.clone(), node);
        if nested_type.is_object() {
            flatten_attributes(&nested_type["attributes"], &path, nodes);
        } else if let Some(ty) = attribute.get("type") {
            flatten_members(ty, &path, configurable, nodes);
        }
    }
}

/// The members of an object type, also inside a list, set or map of objects.
fn flatten_members(ty: &Value, prefix: &str, configurable: bool, nodes: &mut BTreeMap<String, Node>) {
    let Some(parts) = ty.as_array() else {
        return;
    };
    match (parts.first().and_then(Value::as_str), parts.get(1)) {
        (Some("list" | "set" | "map"), Some(inner)) => flatten_members(inner, prefix, configurable, nodes),
        (Some("object"), Some(Value::Object(members))) => {
            let optional: BTreeSet<&str> = parts
                .get(2)
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            for (name, member) in members {
                let path = join(prefix, name);
                nodes.insert(
                    path.clone(),
                    Node::Member {
                        ty: member.clone(),
                        optional: optional.contains(name.as_str()),
                        configurable,
                    },
                );
                flatten_members(member, &path, configurable, nodes);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// The comparison

/// Whether `node` has the shape, collection and element the reference row names.
fn same_shape(reference: &RefPath, node: &Node) -> bool {
    let (collection, element) = node.collection();
    let kind = node.kind();
    let nested_attribute = || {
        matches!(kind, Kind::NestedAttribute | Kind::Attribute)
            && collection == reference.collection
            && element == "object"
    };
    match reference.shape.as_str() {
        "attribute" => {
            matches!(kind, Kind::Attribute | Kind::NestedAttribute)
                && ((collection == reference.collection && element == reference.element)
                    // `any` (a manifest) is the engine's `dynamic`, whole or as the element.
                    || (reference.element == "any" && collection == "simple" && element == "any"))
        }
        "nested_attribute" => nested_attribute(),
        "block" => kind == Kind::Block && collection == reference.collection,
        "block_or_attribute" => {
            (kind == Kind::Block && collection == reference.collection) || nested_attribute()
        }
        // Read-only: only looked for.
        "computed_object" => true,
        _ => false,
    }
}

/// [`same_shape`], and a `computed_object` must be an attribute of a list (or set) of objects:
/// the data sources' and ephemeral resources' stricter rule.
fn same_shape_strict(reference: &RefPath, node: &Node) -> bool {
    if reference.shape != "computed_object" {
        return same_shape(reference, node);
    }
    let (collection, element) = node.collection();
    node.kind() == Kind::Attribute && collection == reference.collection && element == "object"
}

/// Compares every path of one type, read-only ones included, with its flags.
fn compare_type_strict(reference: &[RefPath], block: &Value) -> TypeReport {
    let nodes = flatten(block);
    let mut report = TypeReport::default();
    let mut missing: BTreeSet<&str> = BTreeSet::new();
    for row in reference {
        report.configurable += 1;
        let under_missing = {
            let mut prefix = row.path.as_str();
            let mut found = false;
            while let Some((parent, _)) = prefix.rsplit_once('.') {
                found |= missing.contains(parent);
                prefix = parent;
            }
            found
        };
        let Some(node) = nodes.get(&row.path) else {
            missing.insert(&row.path);
            if !under_missing {
                report.mismatches.push(format!(
                    "{}: expected {}, found nothing",
                    row.path,
                    row.expected()
                ));
            }
            continue;
        };
        if same_shape_strict(row, node) && node.flags() == row.flags {
            report.conforming += 1;
        } else {
            report.mismatches.push(format!(
                "{}: expected {}, found {}",
                row.path,
                row.expected(),
                node.found()
            ));
        }
    }
    report
}

/// What the comparison of one resource type found.
#[derive(Debug, Default)]
struct TypeReport {
    configurable: usize,
    conforming: usize,
    /// `path: expected …, found …`, one per configurable path that does not conform, except
    /// those under a path already reported missing.
    mismatches: Vec<String>,
    read_only: usize,
    /// Read-only reference paths the provider does not have (not under a missing path).
    missing_read_only: Vec<String>,
}

/// Compares one type's reference rows with the provider's schema block of that type.
fn compare_type(reference: &[RefPath], block: &Value) -> TypeReport {
    let nodes = flatten(block);
    let mut report = TypeReport::default();
    let mut missing: BTreeSet<&str> = BTreeSet::new();
    let under_missing = |path: &str, missing: &BTreeSet<&str>| {
        let mut prefix = path;
        while let Some((parent, _)) = prefix.rsplit_once('.') {
            if missing.contains(parent) {
                return true;
            }
            prefix = parent;
        }
        false
    };
    for row in reference {
        let node = nodes.get(&row.path);
        if node.is_none() {
            missing.insert(&row.path);
        }
        if !row.configurable() {
            report.read_only += 1;
            if node.is_none() && !under_missing(&row.path, &missing) {
                report.missing_read_only.push(row.path.clone());
            }
            continue;
        }
        report.configurable += 1;
        let Some(node) = node else {
            if !under_missing(&row.path, &missing) {
                report.mismatches.push(format!(
                    "{}: expected {}, found nothing",
                    row.path,
                    row.expected()
                ));
            }
            continue;
        };
        let problem = if !same_shape(row, node) || !node.configurable() {
            true
        } else {
            node.required() != row.required()
        };
        if problem {
            report.mismatches.push(format!(
                "{}: expected {}, found {}",
                row.path,
                row.expected(),
                node.found()
            ));
        } else {
            report.conforming += 1;
        }
    }
    report
}

/// The whole comparison, printable.
#[derive(Debug, Default)]
struct Conformance {
    types: usize,
    conforming_types: usize,
    configurable: usize,
    conforming: usize,
    /// Unserved pending types and their configurable paths, by issue.
    pending: BTreeMap<String, (usize, usize)>,
    /// `type path: expected …, found …` and `type: not served (…)`.
    mismatches: Vec<String>,
    read_only: usize,
    missing_read_only: Vec<String>,
}

impl Conformance {
    fn ok(&self) -> bool {
        self.mismatches.is_empty() && self.conforming == self.configurable
    }

    fn summary(&self) -> String {
        let mut line = format!(
            "schema conformance: {} of {} resource types, {} of {} configurable paths",
            self.conforming_types,
            self.types,
            thousands(self.conforming),
            thousands(self.configurable),
        );
        let pending: Vec<String> = self
            .pending
            .iter()
            .map(|(issue, (types, paths))| {
                format!("{types} types pending {issue}: {} paths", thousands(*paths))
            })
            .collect();
        if !pending.is_empty() {
            let _ = write!(line, " ({})", pending.join("; "));
        }
        let _ = write!(
            line,
            "; read-only paths: {} of {} present",
            thousands(self.read_only - self.missing_read_only.len()),
            thousands(self.read_only)
        );
        line
    }

    /// The mismatches, at most [`MAX_LINES`] of them, then the missing read-only paths.
    fn details(&self) -> String {
        let mut text = String::new();
        for line in self.mismatches.iter().take(MAX_LINES) {
            let _ = writeln!(text, "  {line}");
        }
        if self.mismatches.len() > MAX_LINES {
            let _ = writeln!(text, "  … and {} more", self.mismatches.len() - MAX_LINES);
        }
        if !self.missing_read_only.is_empty() {
            let _ = writeln!(
                text,
                "read-only reference paths missing (not failing): {}",
                self.missing_read_only.len()
            );
            for line in self.missing_read_only.iter().take(MAX_LINES / 3) {
                let _ = writeln!(text, "  {line}");
            }
            if self.missing_read_only.len() > MAX_LINES / 3 {
                let _ = writeln!(
                    text,
                    "  … and {} more",
                    self.missing_read_only.len() - MAX_LINES / 3
                );
            }
        }
        text
    }
}

fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Compares every reference resource type with the provider's `resource_schemas`.
fn compare(
    reference: &BTreeMap<String, Vec<RefPath>>,
    resource_schemas: &serde_json::Map<String, Value>,
    pending: &[(&str, &str)],
) -> Conformance {
    let mut result = Conformance {
        types: reference.len(),
        ..Conformance::default()
    };
    for (type_name, rows) in reference {
        let configurable = rows.iter().filter(|row| row.configurable()).count();
        let Some(schema) = resource_schemas.get(type_name) else {
            if let Some((_, issue)) = pending.iter().find(|(name, _)| name == type_name) {
                let entry = result.pending.entry(issue.to_string()).or_default();
                entry.0 += 1;
                entry.1 += configurable;
            } else {
                result.configurable += configurable;
                result.read_only += rows.len() - configurable;
                result.mismatches.push(format!(
                    "{type_name}: expected the resource type ({configurable} configurable paths), found nothing"
                ));
            }
            continue;
        };
        let report = compare_type(rows, &schema["block"]);
        result.configurable += report.configurable;
        result.conforming += report.conforming;
        result.read_only += report.read_only;
        if report.mismatches.is_empty() {
            result.conforming_types += 1;
        }
        result
            .mismatches
            .extend(report.mismatches.iter().map(|line| format!("{type_name} {line}")));
        result.missing_read_only.extend(
            report
                .missing_read_only
                .iter()
                .map(|path| format!("{type_name} {path}")),
        );
    }
    result
}

/// Every reference type of one kind (`data`, `ephemeral`) against the provider's schemas of
/// that kind, every path with its flags; `what` names them in the summary.
fn compare_strict(
    reference: &BTreeMap<String, Vec<RefPath>>,
    schemas: &serde_json::Map<String, Value>,
    what: &str,
) -> Strict {
    let mut result = Strict {
        what: what.to_string(),
        types: reference.len(),
        ..Strict::default()
    };
    for (type_name, rows) in reference {
        result.paths += rows.len();
        let Some(schema) = schemas.get(type_name) else {
            result.mismatches.push(format!(
                "{type_name}: expected the type ({} paths), found nothing",
                rows.len()
            ));
            continue;
        };
        let report = compare_type_strict(rows, &schema["block"]);
        result.conforming += report.conforming;
        if report.mismatches.is_empty() {
            result.conforming_types += 1;
        }
        result
            .mismatches
            .extend(report.mismatches.iter().map(|line| format!("{type_name} {line}")));
    }
    result
}

/// The strict comparison of one kind of type, printable.
#[derive(Debug, Default)]
struct Strict {
    what: String,
    types: usize,
    conforming_types: usize,
    paths: usize,
    conforming: usize,
    mismatches: Vec<String>,
}

impl Strict {
    fn ok(&self) -> bool {
        self.mismatches.is_empty() && self.conforming == self.paths && self.conforming_types == self.types
    }

    fn summary(&self) -> String {
        format!(
            "schema conformance: {} of {} {}, {} of {} paths with their flags",
            self.conforming_types,
            self.types,
            self.what,
            thousands(self.conforming),
            thousands(self.paths)
        )
    }

    fn details(&self) -> String {
        let mut text = String::new();
        for line in self.mismatches.iter().take(MAX_LINES) {
            let _ = writeln!(text, "  {line}");
        }
        if self.mismatches.len() > MAX_LINES {
            let _ = writeln!(text, "  … and {} more", self.mismatches.len() - MAX_LINES);
        }
        text
    }
}

/// A provider function's signature: name, parameters (name, type), return type.
type Signature = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// hashicorp/kubernetes 3.4.0's provider functions.
const FUNCTIONS: [Signature; 3] = [
    ("manifest_decode", &[("manifest", "string")], "dynamic"),
    ("manifest_decode_multi", &[("manifest", "string")], "dynamic"),
    ("manifest_encode", &[("manifest", "dynamic")], "string"),
];

/// Where the provider's `functions` differ from [`FUNCTIONS`], one line each.
fn compare_functions(functions: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, parameters, returns) in FUNCTIONS {
        let Some(function) = functions.get(name) else {
            out.push(format!("{name}: expected the function, found nothing"));
            continue;
        };
        let expected: Vec<String> = parameters
            .iter()
            .map(|(parameter, ty)| format!("{parameter} {ty}"))
            .collect();
        let found: Vec<String> = function["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| format!("{} {}", p["name"].as_str().unwrap_or("?"), type_text(&p["type"])))
            .collect();
        if found != expected {
            out.push(format!(
                "{name}: expected parameters ({}), found ({})",
                expected.join(", "),
                found.join(", ")
            ));
        }
        if !function["variadic_parameter"].is_null() {
            out.push(format!("{name}: expected no variadic parameter, found one"));
        }
        let found = type_text(&function["return_type"]);
        if found != returns {
            out.push(format!("{name}: expected return type {returns}, found {found}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The tests

/// A line on the terminal even while the test harness captures output.
fn say(text: &str) {
    let mut stderr = std::io::stderr();
    let _ = writeln!(stderr, "{text}");
}

const CONFIG: &str =
    "terraform {\n  required_providers {\n    kubernetes = { source = \"choudoufu/live\" }\n  }\n}\n";

/// `providers schema -json` in a working folder initialised from the mirror, as a user runs
/// it: the provider's part, asked once for every test of this file.
fn provider_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a working directory");
        fs::write(dir.path().join("main.tf"), CONFIG).expect("write main.tf");
        let engine = Engine::new(dir.path());
        let init = engine.init();
        assert!(init.success(), "init failed:\n{init}");
        let schema = engine.run(&["providers", "schema", "-json"]);
        assert!(schema.success(), "providers schema -json failed:\n{schema}");
        let json: Value = serde_json::from_str(&schema.stdout)
            .unwrap_or_else(|e| panic!("providers schema -json printed no JSON ({e}):\n{schema}"));
        json["provider_schemas"][PROVIDER_ADDRESS].clone()
    })
}

/// One part of the provider's schema (`resource_schemas`, `data_source_schemas` ...); an
/// absent part is empty, so each missing type is reported.
fn provider_schemas(part: &str) -> serde_json::Map<String, Value> {
    provider_schema()[part].as_object().cloned().unwrap_or_default()
}

/// The reference rows of one kind (`resource`, `data`, `ephemeral`).
fn reference(kind: &str) -> BTreeMap<String, Vec<RefPath>> {
    let path = paths::workspace_root().join(REFERENCE);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse_reference(&text, kind).unwrap_or_else(|e| panic!("{REFERENCE}: {e}"))
}

#[test]
fn every_reference_resource_type_conforms() {
    let reference = reference("resource");
    assert_eq!(reference.len(), 81, "{REFERENCE}: resource types");
    for (name, _) in PENDING {
        assert!(
            reference.contains_key(name),
            "pending type {name} is not in {REFERENCE}"
        );
    }
    let schemas = provider_schemas("resource_schemas");
    let result = compare(&reference, &schemas, &PENDING);
    let summary = result.summary();
    say(&summary);
    assert!(
        result.ok(),
        "{summary}\n{} configurable paths do not conform to hashicorp/kubernetes 3.4.0 ({} lines):\n{}",
        thousands(result.configurable - result.conforming),
        result.mismatches.len(),
        result.details()
    );
    if !result.missing_read_only.is_empty() {
        say(&result.details());
    }
    let pending: usize = result.pending.values().map(|(types, _)| types).sum();
    assert_eq!(result.conforming_types + pending, result.types);
}

/// Every data source of the reference, every path with its flags (27 of 27).
#[test]
fn every_reference_data_source_conforms() {
    let reference = reference("data");
    assert_eq!(reference.len(), 27, "{REFERENCE}: data sources");
    let result = compare_strict(
        &reference,
        &provider_schemas("data_source_schemas"),
        "data sources",
    );
    let summary = result.summary();
    say(&summary);
    assert!(result.ok(), "{summary}\n{}", result.details());
}

/// Every ephemeral resource of the reference, every path with its flags (2 of 2).
#[test]
fn every_reference_ephemeral_resource_conforms() {
    let reference = reference("ephemeral");
    assert_eq!(reference.len(), 2, "{REFERENCE}: ephemeral resources");
    let schemas = provider_schemas("ephemeral_resource_schemas");
    let result = compare_strict(&reference, &schemas, "ephemeral resources");
    let summary = result.summary();
    say(&summary);
    assert!(result.ok(), "{summary}\n{}", result.details());
}

/// hashicorp's three provider functions, with their parameters and return types (3 of 3).
#[test]
fn every_provider_function_conforms() {
    let mismatches = compare_functions(&provider_schemas("functions"));
    let summary = format!(
        "schema conformance: {} of {} provider functions",
        FUNCTIONS.len()
            - mismatches
                .iter()
                .map(|m| m.split(':').next())
                .collect::<BTreeSet<_>>()
                .len(),
        FUNCTIONS.len()
    );
    say(&summary);
    assert!(mismatches.is_empty(), "{summary}\n  {}", mismatches.join("\n  "));
}

/// The strict comparison and the function comparison, on hand-made schemas.
#[test]
fn the_strict_comparison_checks_read_only_paths_and_flags() {
    let reference = parse_reference(
        "data\tkubernetes_thing\tid\tattribute\tsimple\tstring\toptional,computed\n\
         data\tkubernetes_thing\tmetadata\tblock\tlist\tobject\trequired\n\
         data\tkubernetes_thing\tmetadata.name\tattribute\tsimple\tstring\toptional,computed\n\
         data\tkubernetes_thing\tmetadata.uid\tattribute\tsimple\tstring\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.ip\tattribute\tsimple\tstring\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.port\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         data\tkubernetes_thing\tspec.port.number\tattribute\tsimple\tnumber\tcomputed,read-only\n\
         data\tkubernetes_other\tname\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_thing\tname\tattribute\tsimple\tstring\trequired\n",
        "data",
    )
    .expect("a valid reference snippet");
    assert_eq!(reference.len(), 2, "data rows only");
    let port = serde_json::json!(["list", ["object", { "number": "number" }]]);
    let good = serde_json::json!({ "kubernetes_thing": { "block": {
        "attributes": {
            "id": { "type": "string", "optional": true, "computed": true },
            "spec": { "type": ["list", ["object", { "ip": "string", "port": port }]], "computed": true }
        },
        "block_types": { "metadata": { "nesting_mode": "list", "min_items": 1, "block": {
            "attributes": {
                "name": { "type": "string", "optional": true, "computed": true },
                "uid": { "type": "string", "computed": true }
            }
        }}}
    }}});
    let result = compare_strict(&reference, good.as_object().expect("an object"), "data sources");
    assert_eq!(
        result.mismatches,
        ["kubernetes_other: expected the type (1 paths), found nothing"]
    );
    assert_eq!(
        result.summary(),
        "schema conformance: 1 of 2 data sources, 8 of 9 paths with their flags"
    );
    // A read-only path missing, a flag off (optional where optional,computed), a computed
    // object as a block: each fails.
    let bad = serde_json::json!({ "kubernetes_thing": { "block": {
        "attributes": { "id": { "type": "string", "optional": true } },
        "block_types": {
            "metadata": { "nesting_mode": "list", "min_items": 1, "block": {
                "attributes": { "name": { "type": "string", "optional": true, "computed": true } }
            }},
            "spec": { "nesting_mode": "list", "block": {
                "attributes": { "ip": { "type": "string", "computed": true } }
            }}
        }
    }}});
    let result = compare_strict(&reference, bad.as_object().expect("an object"), "data sources");
    assert_eq!(
        result.mismatches,
        [
            "kubernetes_other: expected the type (1 paths), found nothing",
            "kubernetes_thing id: expected optional,computed attribute string, found optional attribute string",
            "kubernetes_thing metadata.uid: expected computed,read-only attribute string, found nothing",
            "kubernetes_thing spec: expected computed,read-only computed object list, found optional block list (min_items 0)",
            "kubernetes_thing spec.port: expected computed,read-only computed object list, found nothing",
        ]
    );
    assert!(!result.ok());

    let functions = serde_json::json!({
        "manifest_decode": { "parameters": [{ "name": "manifest", "type": "string" }], "return_type": "dynamic" },
        "manifest_decode_multi": { "parameters": [{ "name": "yaml", "type": "string" }], "return_type": "dynamic" }
    });
    assert_eq!(
        compare_functions(functions.as_object().expect("an object")),
        [
            "manifest_decode_multi: expected parameters (manifest string), found (yaml string)",
            "manifest_encode: expected the function, found nothing",
        ]
    );
}

/// The comparison itself: a hand-made schema against a reference snippet.
#[test]
fn the_comparison_reports_each_kind_of_mismatch() {
    let reference = parse_reference(
        "# kind\ttype\tpath\tshape\tcollection\telement\tflags\n\
         resource\tkubernetes_thing\tid\tattribute\tsimple\tstring\toptional,computed\n\
         resource\tkubernetes_thing\tmetadata\tblock\tlist\tobject\trequired\n\
         resource\tkubernetes_thing\tmetadata.name\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_thing\tmetadata.uid\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\tmetadata.labels\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tports\tattribute\tlist\tnumber\toptional\n\
         resource\tkubernetes_thing\trule\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\trule.verbs\tattribute\tset\tstring\trequired\n\
         resource\tkubernetes_thing\tselector\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tselector.match_labels\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tspec\tblock_or_attribute\tsingle\tobject\trequired\n\
         resource\tkubernetes_thing\tspec.checks\tnested_attribute\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.checks.expression\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_thing\tspec.wait_for\tblock_or_attribute\tsingle\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.wait_for.fields\tattribute\tmap\tstring\toptional\n\
         resource\tkubernetes_thing\tmanifest\tattribute\tmap\tany\trequired\n\
         resource\tkubernetes_thing\tstatus\tcomputed_object\tlist\tobject\tcomputed,read-only\n\
         resource\tkubernetes_thing\tstatus.ip\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\tstatus.host\tattribute\tsimple\tstring\tcomputed,read-only\n\
         resource\tkubernetes_thing\ttimeouts\tblock\tsingle\tobject\toptional\n\
         resource\tkubernetes_thing\ttimeouts.create\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_other\tname\tattribute\tsimple\tstring\trequired\n\
         resource\tkubernetes_later\tname\tattribute\tsimple\tstring\trequired\n\
         data\tkubernetes_thing\tname\tattribute\tsimple\tstring\trequired\n",
        "resource",
    )
    .expect("a valid reference snippet");
    assert_eq!(reference.len(), 3, "resource rows only");
    let schemas = serde_json::json!({
        "kubernetes_thing": { "version": 0, "block": {
            "attributes": {
                "id": { "type": "string", "optional": true, "computed": true },
                "estate": { "type": "string", "computed": true },
                // Wrong collection: a set where the reference has a list.
                "ports": { "type": ["set", "number"], "optional": true },
                // Block vs attribute: `selector` is a block in the reference.
                "selector": { "type": ["list", ["object", { "match_labels": ["map", "string"] }, ["match_labels"]]],
                              "optional": true },
                "spec": { "required": true, "nested_type": { "nesting_mode": "single", "attributes": {
                    "checks": { "type": ["list", ["object", { "expression": "string" }]], "optional": true },
                    "wait_for": { "optional": true, "nested_type": { "nesting_mode": "single", "attributes": {
                        "fields": { "type": ["map", "string"], "optional": true }
                    }}}
                }}},
                "manifest": { "type": "dynamic", "required": true },
                "status": { "type": ["list", ["object", { "ip": "string" }]], "computed": true }
            },
            "block_types": {
                "metadata": { "nesting_mode": "list", "min_items": 1, "max_items": 1, "block": {
                    // `name` is missing; `labels` is required where the reference has optional.
                    "attributes": {
                        "uid": { "type": "string", "computed": true },
                        "labels": { "type": ["map", "string"], "required": true }
                    }
                }},
                "rule": { "nesting_mode": "list", "block": {
                    "attributes": { "verbs": { "type": ["set", "string"], "required": true } }
                }},
                "timeouts": { "nesting_mode": "single", "block": {
                    "attributes": { "create": { "type": "string", "optional": true } }
                }}
            }
        }}
        // `kubernetes_other` is not served and not pending; `kubernetes_later` is pending.
    });
    let result = compare(
        &reference,
        schemas.as_object().expect("an object"),
        &[("kubernetes_later", "issue 99")],
    );
    let expected = [
        "kubernetes_other: expected the resource type (1 configurable paths), found nothing",
        "kubernetes_thing metadata.name: expected optional attribute string, found nothing",
        "kubernetes_thing metadata.labels: expected optional attribute map(string), \
         found required attribute map(string)",
        "kubernetes_thing ports: expected optional attribute list(number), \
         found optional attribute set(number)",
        "kubernetes_thing selector: expected optional block list, \
         found optional attribute list(object({match_labels=optional(map(string))}))",
    ];
    assert_eq!(result.mismatches, expected, "{}", result.details());
    assert_eq!(result.missing_read_only, ["kubernetes_thing status.host"]);
    assert!(!result.ok());
    assert_eq!(
        result.summary(),
        "schema conformance: 0 of 3 resource types, 13 of 18 configurable paths \
         (1 types pending issue 99: 1 paths); read-only paths: 3 of 4 present"
    );

    // A missing block is one line, not one per path under it.
    let reference = parse_reference(
        "resource\tkubernetes_thing\tspec\tblock\tlist\tobject\trequired\n\
         resource\tkubernetes_thing\tspec.a\tattribute\tsimple\tstring\toptional\n\
         resource\tkubernetes_thing\tspec.b\tblock\tlist\tobject\toptional\n\
         resource\tkubernetes_thing\tspec.b.c\tattribute\tsimple\tnumber\toptional\n",
        "resource",
    )
    .expect("a valid reference snippet");
    let schemas = serde_json::json!({ "kubernetes_thing": { "block": { "attributes": {} } } });
    let result = compare(&reference, schemas.as_object().expect("an object"), &[]);
    assert_eq!(
        result.mismatches,
        ["kubernetes_thing spec: expected required block list, found nothing"]
    );
    assert_eq!(
        result.summary().split(';').next(),
        Some("schema conformance: 0 of 1 resource types, 0 of 4 configurable paths")
    );

    // And a schema that matches conforms.
    let schemas = serde_json::json!({ "kubernetes_thing": { "block": { "block_types": {
        "spec": { "nesting_mode": "list", "min_items": 1, "block": {
            "attributes": { "a": { "type": "string", "optional": true } },
            "block_types": { "b": { "nesting_mode": "list", "block": {
                "attributes": { "c": { "type": "number", "optional": true, "computed": true } }
            }}}
        }}
    }}}});
    let result = compare(&reference, schemas.as_object().expect("an object"), &[]);
    assert!(result.ok(), "{}", result.details());
    assert_eq!(
        result.summary(),
        "schema conformance: 1 of 1 resource types, 4 of 4 configurable paths; \
         read-only paths: 0 of 0 present"
    );
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(11234), "11,234");
    assert_eq!(thousands(1234567), "1,234,567");
}
