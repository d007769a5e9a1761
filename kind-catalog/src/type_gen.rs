//! One type's catalog rows: hashicorp's attribute paths joined with its kind's OpenAPI fields by
//! spelling (or an override), each path's JSON field, shape and scalar type.

use crate::beyond::Rules;
use crate::inputs::{Node, Override, Row};
use crate::openapi::{Oas, OpenApi, server_default};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// Lower case without underscores: the spelling Terraform and JSON names share.
pub(crate) fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The JSON property a Terraform name spells, singular or plural.
pub(crate) fn spelled<'a>(name: &str, properties: &'a Map<String, Json>) -> Option<&'a str> {
    let base = fold(name);
    let mut forms = vec![base.clone(), format!("{base}s"), format!("{base}es")];
    if let Some(stem) = base.strip_suffix('y') {
        forms.push(format!("{stem}ies"));
    }
    if let Some(stem) = base.strip_suffix('s') {
        forms.push(stem.to_string());
    }
    forms
        .iter()
        .find_map(|f| properties.keys().find(|k| fold(k) == *f))
        .map(String::as_str)
}

/// The catalog scalar for a Terraform element type over a Kubernetes scalar.
pub(crate) fn scalar(tf: &str, oas: &str, json_name: &str) -> Option<&'static str> {
    Some(match (tf, oas) {
        ("string", "str") => "str",
        ("string", "intorstr") => "intorstr",
        ("string", "quantity") => "quantity",
        ("string", "bytes") => "b64",
        ("string", "int") if matches!(json_name, "mode" | "defaultMode") => "filemode",
        ("string", "int") => "intstr",
        ("string", "number") => "numstr",
        ("string", "bool") => "boolstr",
        ("number", "int") => "int",
        ("number", "number") => "number",
        ("bool", "bool") => "bool",
        _ => return None,
    })
}

/// The shape of an object field, marked `@attr` where hashicorp has a nested attribute
/// (`audit_annotations = [{ ... }]`, the plugin framework's `spec = { ... }`) and not a block.
pub(crate) fn nested(row: &Row, shape: &str) -> String {
    let attribute =
        row.shape == "nested_attribute" || (row.shape == "block_or_attribute" && row.collection == "single");
    if attribute {
        format!("{shape}@attr")
    } else {
        shape.to_string()
    }
}

/// One object level being joined: where its rows go and how they are spelled.
pub(crate) struct Level<'a> {
    /// The Terraform path of the object ("" at the root).
    pub(crate) parent: &'a str,
    /// The OpenAPI schema the properties belong to.
    pub(crate) owner: &'a str,
    /// Nested attributes (the plugin framework's types) rather than blocks.
    pub(crate) attr: bool,
    /// Inside a value server-side apply owns whole.
    pub(crate) atomic: bool,
    /// Inside a computed block (a status): what is generated there is computed too.
    pub(crate) computed: bool,
}

/// Generates the catalog for one type.
pub(crate) struct TypeGen<'a> {
    pub(crate) ty: &'a str,
    pub(crate) api: &'a OpenApi,
    pub(crate) overrides: &'a BTreeMap<(String, String), Override>,
    pub(crate) out: String,
    pub(crate) unmatched: Vec<String>,
    /// The paths hashicorp gives a default ([`facts`]).
    pub(crate) defaulted: BTreeSet<String>,
    /// What leaves a field beyond hashicorp's schema out ([`crate::beyond`]).
    pub(crate) rules: &'a Rules,
    /// A data source's: generated fields are computed.
    pub(crate) data: bool,
    /// The paths generated beyond hashicorp's schema.
    pub(crate) added: Vec<String>,
    /// The fields left out, with why.
    pub(crate) left: Vec<(String, String)>,
}

impl<'g> TypeGen<'g> {
    /// The override for `path`: its type's own first, then one for every type; a row's path
    /// matches the whole path or its end (`volume.rbd.rbd_pool` in any pod template), or only
    /// the whole path when written `=path` (a data source's top-level `metadata.labels`, not
    /// its listed objects' own).
    pub(crate) fn find_override(&self, path: &str) -> Option<&Override> {
        let matches = |key: &str| match key.strip_prefix('=') {
            Some(whole) => path == whole,
            None => path == key || path.ends_with(&format!(".{key}")),
        };
        [self.ty, "*"].iter().find_map(|ty| {
            self.overrides
                .iter()
                .find(|((t, key), _)| t == ty && matches(key))
                .map(|(_, o)| o)
        })
    }

    pub(crate) fn miss(&mut self, path: &str, why: impl std::fmt::Display) {
        self.unmatched.push(format!("{} {path}: {why}", self.ty));
    }

    pub(crate) fn emit(&mut self, node: &Node, json: &str, shape: &str, scalar: &str, doc: &str) {
        self.emit_with_default(node, json, shape, scalar, doc, None);
    }

    pub(crate) fn emit_with_default(
        &mut self,
        node: &Node,
        json: &str,
        shape: &str,
        scalar: &str,
        doc: &str,
        default: Option<String>,
    ) {
        let presence = node.row.presence_with(&self.defaulted);
        self.row(&node.row.path, json, (shape, scalar, presence), default, doc);
    }

    /// One `field` row of the catalog: `kind` is its shape, scalar and presence columns.
    pub(crate) fn row(
        &mut self,
        path: &str,
        json: &str,
        kind: (&str, &str, &str),
        default: Option<String>,
        doc: &str,
    ) {
        let (shape, scalar, presence) = kind;
        let doc = if doc.is_empty() { "-" } else { doc };
        let default = default.unwrap_or_else(|| "-".to_string());
        let _ = writeln!(
            self.out,
            "field\t{}\t{path}\t{json}\t{shape}\t{scalar}\t{presence}\t{default}\t{doc}",
            self.ty
        );
    }

    /// The children of an object schema at `level`, hashicorp's and then the ones it lacks;
    /// `level.atomic` inside a value owned whole (server-side apply's `atomic` maps and lists),
    /// where the server's defaults count as the writer's.
    pub(crate) fn object(&mut self, level: &Level<'_>, nodes: &[Node], properties: &Map<String, Json>) {
        let claimed = self.children(nodes, properties, level.atomic);
        let taken = nodes.iter().map(|n| n.row.name().to_string()).collect();
        self.extras(level, properties, &claimed, &taken);
    }

    /// hashicorp's attributes at one level: the JSON properties they claim.
    fn children(&mut self, nodes: &[Node], properties: &Map<String, Json>, atomic: bool) -> BTreeSet<String> {
        nodes
            .iter()
            .flat_map(|node| self.node(node, properties, atomic))
            .collect()
    }

    /// A subtree Kubernetes has no field for; the scalar column keeps its Terraform shape
    /// (`block:list`, `attribute:set:string`) so the schema still has it.
    pub(crate) fn unsupported(&mut self, node: &Node, doc: &str) {
        let row = &node.row;
        let tf = if row.is_block() || !node.children.is_empty() {
            format!("block:{}", row.collection)
        } else {
            format!("attribute:{}:{}", row.collection, row.element)
        };
        self.emit(node, "!", "unsupported", &tf, doc);
        for child in &node.children {
            self.unsupported(
                child,
                "Part of a field Kubernetes does not have here: configuring it is an error.",
            );
        }
    }

    /// Follows a dotted JSON path from an object's properties to the field it names.
    pub(crate) fn walk<'x>(
        api: &'x OpenApi,
        properties: &'x Map<String, Json>,
        json: &str,
    ) -> Option<&'x Json> {
        let mut props = properties;
        let mut parts = json.split('.').peekable();
        while let Some(part) = parts.next() {
            let schema = props.get(part)?;
            if parts.peek().is_none() {
                return Some(schema);
            }
            match api.classify(schema) {
                Oas::Object(p) => props = p,
                _ => return None,
            }
        }
        None
    }

    /// One hashicorp attribute's rows; the JSON properties of `properties` it stands for.
    pub(crate) fn node(&mut self, node: &Node, properties: &Map<String, Json>, atomic: bool) -> Vec<String> {
        let path = node.row.path.clone();
        let over = self.find_override(&path).cloned();
        let json = match &over {
            Some(o) => o.json.clone(),
            None => match spelled(node.row.name(), properties) {
                Some(j) => j.to_string(),
                None if node.row.is_block()
                    && !node.children.is_empty()
                    && node
                        .children
                        .iter()
                        .all(|c| spelled(c.row.name(), properties).is_some()) =>
                {
                    "~".to_string()
                }
                None => {
                    self.miss(&path, "no such field (add it to overrides.tsv)");
                    return Vec::new();
                }
            },
        };
        let doc_override = over.as_ref().and_then(|o| o.doc.clone());
        if json == "-" {
            // Exists only in Terraform (wait_for_* flags, auto_approve).
            let scalar = match node.row.element.as_str() {
                "bool" => "bool",
                "number" => "number",
                _ => "str",
            };
            let collection = match node.row.collection.as_str() {
                "simple" => "one",
                other => other,
            };
            let doc = doc_override.unwrap_or_default();
            self.emit(node, "-", "local", &format!("{collection}:{scalar}"), &doc);
            return Vec::new();
        }
        if json == "!" {
            // hashicorp has it, Kubernetes does not: in the schema, and an error when configured.
            let doc = doc_override.unwrap_or_default();
            self.unsupported(node, &doc);
            return Vec::new();
        }
        if json == "~" {
            // A Terraform level of its own whose fields are the enclosing object's.
            let doc = doc_override.unwrap_or_default();
            let shape = if node.row.collection == "single" {
                "single"
            } else {
                "object"
            };
            self.emit(node, "~", &nested(&node.row, shape), "-", &doc);
            return self
                .children(&node.children, properties, atomic)
                .into_iter()
                .collect();
        }
        if let Some(field) = json.strip_prefix('+') {
            // Another version's field that the kind's own code translates (behaviour/special.rs):
            // this version's OpenAPI lacks it, so overrides.tsv gives its scalar.
            let Some(scalar) = over.as_ref().and_then(|o| o.scalar.clone()) else {
                self.miss(&path, "a translated field (+) needs its scalar in overrides.tsv");
                return Vec::new();
            };
            self.emit(node, field, "one", &scalar, &doc_override.unwrap_or_default());
            return Vec::new();
        }
        let api: &'g OpenApi = self.api;
        let claimed = vec![json.split('.').next().unwrap_or(&json).to_string()];
        let Some(schema) = Self::walk(api, properties, &json) else {
            self.miss(&path, format!("no field {json:?} here"));
            return claimed;
        };
        let doc = doc_override.unwrap_or_else(|| api.description(schema));
        let has_object_children = !node.children.is_empty();
        if has_object_children {
            let (shape, element) = match api.classify(schema) {
                Oas::Object(p) => {
                    let shape = if node.row.collection == "single" {
                        "single"
                    } else {
                        "object"
                    };
                    (shape, Some(p))
                }
                Oas::Array(items) => {
                    let shape = if node.row.collection == "set" {
                        "arrayset"
                    } else {
                        "array"
                    };
                    match api.classify(items) {
                        Oas::Object(p) => (shape, Some(p)),
                        _ => (shape, None),
                    }
                }
                _ => ("object", None),
            };
            let Some(element) = element else {
                self.miss(&path, "a block here, but the Kubernetes field is not an object");
                return claimed;
            };
            // Inside an atomic value, an empty object may be the server's default
            // (`objectSelector: {}`).
            let default = atomic.then(|| "{}".to_string());
            self.emit_with_default(node, &json, &nested(&node.row, shape), "-", &doc, default);
            let owner = OpenApi::ref_name(schema)
                .or_else(|| schema.get("items").and_then(OpenApi::ref_name))
                .unwrap_or_default();
            let level = Level {
                parent: &path,
                owner,
                attr: nested(&node.row, "").ends_with("@attr"),
                atomic: atomic || api.is_atomic(schema),
                computed: node.row.presence() == "computed",
            };
            self.object(&level, &node.children, element);
            return claimed;
        }
        let tf = node.row.element.as_str();
        let name = json.rsplit('.').next().unwrap_or(&json);
        let forced = over.as_ref().and_then(|o| o.scalar.clone());
        let (shape, oas) = match (node.row.collection.as_str(), api.classify(schema)) {
            ("simple", _) if forced.is_some() => ("one", ""),
            ("simple", Oas::Scalar(s)) => ("one", s),
            ("list", Oas::Array(items)) | ("set", Oas::Array(items)) => match api.classify(items) {
                Oas::Scalar(s) => (node.row.collection.as_str(), s),
                _ => ("", ""),
            },
            ("map", Oas::Map(values)) => match api.classify(values) {
                Oas::Scalar(s) => ("map", s),
                Oas::Array(_) if tf == "string" => ("map", "str"),
                _ => ("", ""),
            },
            ("map", Oas::Any) | ("simple", Oas::Any) => (node.row.collection.as_str(), "str"),
            _ => ("", ""),
        };
        let shape = if shape == "simple" { "one" } else { shape };
        let scalar = forced.or_else(|| scalar(tf, oas, name).map(str::to_string));
        match (shape, scalar) {
            ("", _) => self.miss(
                &path,
                format!(
                    "Terraform {} of {tf} over a different Kubernetes shape",
                    node.row.collection
                ),
            ),
            (_, None) => self.miss(&path, format!("Terraform {tf} over Kubernetes {oas}")),
            (shape, Some(scalar)) => {
                // Only inside atomic values: elsewhere field ownership already tells the
                // server's defaults from the user's values.
                let default = (shape == "one" && atomic)
                    .then(|| server_default(schema))
                    .flatten();
                self.emit_with_default(node, &json, shape, &scalar, &doc, default)
            }
        }
        claimed
    }
}

/// Paths the provider's shared code owns for every kind.
pub(crate) fn is_common(path: &str) -> bool {
    path == "id"
        || path == "metadata"
        || path.starts_with("metadata.")
        || path == "timeouts"
        || path.starts_with("timeouts.")
}

/// A data source's own code has only `id`: its metadata is a field of the table.
pub(crate) fn is_data_common(path: &str) -> bool {
    path == "id"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_finds_plurals_and_acronyms() {
        let props: Map<String, Json> = ["containers", "clusterIP", "externalIPs", "policies", "fsType"]
            .iter()
            .map(|k| (k.to_string(), Json::Null))
            .collect();
        assert_eq!(spelled("container", &props), Some("containers"));
        assert_eq!(spelled("cluster_ip", &props), Some("clusterIP"));
        assert_eq!(spelled("external_ips", &props), Some("externalIPs"));
        assert_eq!(spelled("policy", &props), Some("policies"));
        assert_eq!(spelled("fs_type", &props), Some("fsType"));
        assert_eq!(spelled("nothing", &props), None);
    }
}
