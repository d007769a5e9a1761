//! The comparison of a provider schema, in the engine's `providers schema -json` form, with the
//! reference's rows: the reference parsed, the schema flattened to paths, and the reports.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

/// At most this many mismatch lines in a failure message.
const MAX_LINES: usize = 300;

/// One reference row of one kind (`resource`, `data`, `ephemeral`).
#[derive(Debug, Clone)]
pub(crate) struct RefPath {
    pub(crate) path: String,
    /// `attribute`, `block`, `nested_attribute`, `computed_object` or `block_or_attribute`.
    pub(crate) shape: String,
    /// `simple`, `list`, `set`, `map` or `single`.
    pub(crate) collection: String,
    /// `string`, `number`, `bool`, `object` or `any`.
    pub(crate) element: String,
    /// `required`, `optional`, `optional,computed` or `computed,read-only`.
    pub(crate) flags: String,
}

impl RefPath {
    pub(crate) fn configurable(&self) -> bool {
        self.flags.split(',').any(|f| f == "required" || f == "optional")
    }

    pub(crate) fn required(&self) -> bool {
        self.flags.split(',').any(|f| f == "required")
    }

    pub(crate) fn expected(&self) -> String {
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
pub(crate) fn collection_text(collection: &str, element: &str) -> String {
    match (collection, element) {
        ("simple", element) => element.to_string(),
        (collection, "object") if collection != "single" => collection.to_string(),
        (collection, element) => format!("{collection}({element})"),
    }
}

/// The rows of one kind (`resource`, `data`, `ephemeral`) of the reference, by type, in file
/// order. The first line names the columns.
pub(crate) fn parse_reference(text: &str, of_kind: &str) -> Result<BTreeMap<String, Vec<RefPath>>, String> {
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
pub(crate) enum Node {
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
pub(crate) enum Kind {
    Block,
    NestedAttribute,
    Attribute,
}

impl Node {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Node::Block { .. } => Kind::Block,
            Node::Attribute { nested: Some(_), .. } => Kind::NestedAttribute,
            Node::Attribute { .. } | Node::Member { .. } => Kind::Attribute,
        }
    }

    /// (collection, element) in the reference's words.
    pub(crate) fn collection(&self) -> (String, String) {
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
    pub(crate) fn configurable(&self) -> bool {
        match self {
            Node::Block { .. } => true,
            Node::Attribute {
                required, optional, ..
            } => *required || *optional,
            Node::Member { configurable, .. } => *configurable,
        }
    }

    pub(crate) fn required(&self) -> bool {
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
    pub(crate) fn flags(&self) -> &'static str {
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

    pub(crate) fn found(&self) -> String {
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
pub(crate) fn type_text(ty: &Value) -> String {
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
pub(crate) fn type_collection(ty: &Value) -> (String, String) {
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
pub(crate) fn flatten(block: &Value) -> BTreeMap<String, Node> {
    let mut nodes = BTreeMap::new();
    flatten_block(block, "", &mut nodes);
    nodes
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

pub(crate) fn flatten_block(block: &Value, prefix: &str, nodes: &mut BTreeMap<String, Node>) {
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

pub(crate) fn flatten_attributes(attributes: &Value, prefix: &str, nodes: &mut BTreeMap<String, Node>) {
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
pub(crate) fn flatten_members(
    ty: &Value,
    prefix: &str,
    configurable: bool,
    nodes: &mut BTreeMap<String, Node>,
) {
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
pub(crate) fn same_shape(reference: &RefPath, node: &Node) -> bool {
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
pub(crate) fn same_shape_strict(reference: &RefPath, node: &Node) -> bool {
    if reference.shape != "computed_object" {
        return same_shape(reference, node);
    }
    let (collection, element) = node.collection();
    node.kind() == Kind::Attribute && collection == reference.collection && element == "object"
}

/// Compares every path of one type, read-only ones included, with its flags.
pub(crate) fn compare_type_strict(reference: &[RefPath], block: &Value) -> TypeReport {
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
pub(crate) struct TypeReport {
    pub(crate) configurable: usize,
    pub(crate) conforming: usize,
    /// `path: expected …, found …`, one per configurable path that does not conform, except
    /// those under a path already reported missing.
    pub(crate) mismatches: Vec<String>,
    pub(crate) read_only: usize,
    /// Read-only reference paths the provider does not have (not under a missing path).
    pub(crate) missing_read_only: Vec<String>,
}

/// Compares one type's reference rows with the provider's schema block of that type.
pub(crate) fn compare_type(reference: &[RefPath], block: &Value) -> TypeReport {
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
pub(crate) struct Conformance {
    pub(crate) types: usize,
    pub(crate) conforming_types: usize,
    pub(crate) configurable: usize,
    pub(crate) conforming: usize,
    /// Unserved pending types and their configurable paths, by issue.
    pub(crate) pending: BTreeMap<String, (usize, usize)>,
    /// `type path: expected …, found …` and `type: not served (…)`.
    pub(crate) mismatches: Vec<String>,
    pub(crate) read_only: usize,
    pub(crate) missing_read_only: Vec<String>,
}

impl Conformance {
    pub(crate) fn ok(&self) -> bool {
        self.mismatches.is_empty() && self.conforming == self.configurable
    }

    pub(crate) fn summary(&self) -> String {
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
    pub(crate) fn details(&self) -> String {
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

pub(crate) fn thousands(n: usize) -> String {
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
pub(crate) fn compare(
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
pub(crate) fn compare_strict(
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
pub(crate) struct Strict {
    pub(crate) what: String,
    pub(crate) types: usize,
    pub(crate) conforming_types: usize,
    pub(crate) paths: usize,
    pub(crate) conforming: usize,
    pub(crate) mismatches: Vec<String>,
}

impl Strict {
    pub(crate) fn ok(&self) -> bool {
        self.mismatches.is_empty() && self.conforming == self.paths && self.conforming_types == self.types
    }

    pub(crate) fn summary(&self) -> String {
        format!(
            "schema conformance: {} of {} {}, {} of {} paths with their flags",
            self.conforming_types,
            self.types,
            self.what,
            thousands(self.conforming),
            thousands(self.paths)
        )
    }

    pub(crate) fn details(&self) -> String {
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
pub(crate) type Signature = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
);

/// hashicorp/kubernetes 3.4.0's provider functions.
pub(crate) const FUNCTIONS: [Signature; 3] = [
    ("manifest_decode", &[("manifest", "string")], "dynamic"),
    ("manifest_decode_multi", &[("manifest", "string")], "dynamic"),
    ("manifest_encode", &[("manifest", "dynamic")], "string"),
];

/// Where the provider's `functions` differ from [`FUNCTIONS`], one line each.
pub(crate) fn compare_functions(functions: &serde_json::Map<String, Value>) -> Vec<String> {
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
