//! The kind catalog: which Kubernetes field every attribute of every typed resource of
//! `choudoufu/live` is, generated from two sources of truth instead of written by hand:
//!
//! - hashicorp/kubernetes 3.4.0's schema (`reference/hashicorp-kubernetes-3.4.0.paths.tsv`):
//!   the Terraform side, i.e. names, nesting, block or attribute, collection, element type,
//!   required/optional/computed;
//! - the OpenAPI v3 documents of a kube-apiserver v1.36 (`reference/openapi/`): the Kubernetes
//!   side, i.e. JSON field names, integer or string, quantities, int-or-string, arrays or objects.
//!
//! They are joined per resource type from the kind named in `provider-live/catalog/types.tsv`.
//! A Terraform name finds its JSON field by spelling (`container_port` is `containerPort`,
//! `cluster_ip` is `clusterIP`, the singular block `container` is the array `containers`);
//! the few that hashicorp renamed or flattened are listed in `overrides.tsv`. Anything that
//! neither finds is an error naming the path, so the catalog never guesses.
//!
//! The output, `provider-live/catalog/kinds.tsv`, is checked in; the provider reads it at
//! start-up and builds schemas, request bodies and state from it.
//!
//! The data sources read by name (`kubernetes_pod_v1`, `kubernetes_secret` ...) are made the
//! same way from the reference's `data` rows and `provider-live/catalog/data_types.tsv` into
//! `provider-live/catalog/data_sources.tsv` ([`generate_data_sources`]): there `metadata` is a
//! field like any other, since a data source's metadata flags are its own.

mod facts;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value as Json};

pub use facts::{BEHAVIOUR_DOC, FACTS_OUTPUT, generate_behaviour_doc, generate_facts};

/// Where the generated catalog goes, relative to the workspace root.
pub const OUTPUT: &str = "provider-live/catalog/kinds.tsv";
/// Where the generated data-source catalog goes, relative to the workspace root.
pub const DATA_OUTPUT: &str = "provider-live/catalog/data_sources.tsv";
const TYPES: &str = "provider-live/catalog/types.tsv";
const DATA_TYPES: &str = "provider-live/catalog/data_types.tsv";
const OVERRIDES: &str = "provider-live/catalog/overrides.tsv";
const REFERENCE: &str = "reference/hashicorp-kubernetes-3.4.0.paths.tsv";
const OPENAPI: &str = "reference/openapi";

/// Why the catalog cannot be generated.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: not JSON: {source}")]
    Json { path: String, source: serde_json::Error },
    #[error("{file}:{line}: {message}")]
    Input {
        file: &'static str,
        line: usize,
        message: String,
    },
    #[error("{} attribute paths have no Kubernetes field:\n  {}", .0.len(), .0.join("\n  "))]
    Unmatched(Vec<String>),
}

fn read(root: &Path, path: &str) -> Result<String, Error> {
    std::fs::read_to_string(root.join(path)).map_err(|source| Error::Read {
        path: path.to_string(),
        source,
    })
}

/// One row of the hashicorp schema.
#[derive(Clone, Debug)]
struct Row {
    path: String,
    shape: String,
    collection: String,
    element: String,
    flags: String,
}

impl Row {
    fn name(&self) -> &str {
        self.path.rsplit('.').next().unwrap_or(&self.path)
    }

    fn is_block(&self) -> bool {
        matches!(self.shape.as_str(), "block" | "block_or_attribute") || (self.shape == "nested_attribute")
    }

    /// The catalog's presence; an optional attribute hashicorp gives a default is planned by
    /// the provider, so it is computed too ("defaulted").
    fn presence_with(&self, defaulted: &BTreeSet<String>) -> &'static str {
        match self.presence() {
            "optional" if defaulted.contains(&self.path) => "defaulted",
            other => other,
        }
    }

    fn presence(&self) -> &'static str {
        match self.flags.as_str() {
            "required" => "required",
            "optional,computed" => "defaulted",
            f if f.starts_with("computed") => "computed",
            _ => "optional",
        }
    }
}

/// A type's rows as a tree.
#[derive(Debug)]
struct Node {
    row: Row,
    children: Vec<Node>,
}

fn tree(rows: &[Row], prefix: &str) -> Vec<Node> {
    let mut out: Vec<Node> = rows
        .iter()
        .filter(|r| match r.path.rsplit_once('.') {
            Some((parent, _)) => parent == prefix,
            None => prefix.is_empty(),
        })
        .map(|r| Node {
            row: r.clone(),
            children: tree(rows, &r.path),
        })
        .collect();
    out.sort_by(|a, b| a.row.name().cmp(b.row.name()));
    out
}

/// The merged `components.schemas` of every OpenAPI document.
struct OpenApi {
    schemas: Map<String, Json>,
}

const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// What a Kubernetes field holds.
enum Oas<'a> {
    Scalar(&'static str),
    Array(&'a Json),
    Map(&'a Json),
    Object(&'a Map<String, Json>),
    Any,
}

impl OpenApi {
    fn load(root: &Path) -> Result<OpenApi, Error> {
        let mut schemas = Map::new();
        let dir = root.join(OPENAPI);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|source| Error::Read {
                path: OPENAPI.to_string(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let path = file.display().to_string();
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            let doc: Json = serde_json::from_str(&text).map_err(|source| Error::Json { path, source })?;
            if let Some(s) = doc.pointer("/components/schemas").and_then(Json::as_object) {
                schemas.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        Ok(OpenApi { schemas })
    }

    /// The referenced schema's name, through `$ref` or a one-element `allOf`.
    fn ref_name(schema: &Json) -> Option<&str> {
        let reference = schema
            .get("$ref")
            .or_else(|| schema.pointer("/allOf/0/$ref"))?
            .as_str()?;
        reference.rsplit('/').next()
    }

    fn resolve<'a>(&'a self, schema: &'a Json) -> &'a Json {
        match Self::ref_name(schema).and_then(|n| self.schemas.get(n)) {
            Some(target) => self.resolve(target),
            None => schema,
        }
    }

    fn classify<'a>(&'a self, schema: &'a Json) -> Oas<'a> {
        match Self::ref_name(schema) {
            Some(INT_OR_STRING) => return Oas::Scalar("intorstr"),
            Some(QUANTITY) => return Oas::Scalar("quantity"),
            _ => {}
        }
        let schema = self.resolve(schema);
        if schema.get("format").and_then(Json::as_str) == Some("int-or-string")
            || schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true))
        {
            return Oas::Scalar("intorstr");
        }
        match schema.get("type").and_then(Json::as_str) {
            Some("integer") => Oas::Scalar("int"),
            Some("number") => Oas::Scalar("number"),
            Some("boolean") => Oas::Scalar("bool"),
            // Go []byte: base64 in JSON, the text itself in Terraform (PEM requests, CA bundles).
            Some("string") if schema.get("format").and_then(Json::as_str) == Some("byte") => {
                Oas::Scalar("bytes")
            }
            Some("string") => Oas::Scalar("str"),
            Some("array") => schema.get("items").map(Oas::Array).unwrap_or(Oas::Any),
            _ => {
                if let Some(p) = schema.get("properties").and_then(Json::as_object) {
                    Oas::Object(p)
                } else if let Some(a) = schema.get("additionalProperties") {
                    Oas::Map(a)
                } else {
                    Oas::Any
                }
            }
        }
    }

    /// Whether server-side apply owns the field's value whole: an atomic list, or an object
    /// (or the objects of a list) whose type is an atomic map.
    fn is_atomic(&self, schema: &Json) -> bool {
        let atomic = |s: &Json, key: &str| s.get(key).and_then(Json::as_str) == Some("atomic");
        if atomic(schema, "x-kubernetes-list-type") || atomic(schema, "x-kubernetes-map-type") {
            return true;
        }
        let resolved = self.resolve(schema);
        if atomic(resolved, "x-kubernetes-map-type") {
            return true;
        }
        resolved
            .get("items")
            .is_some_and(|items| atomic(self.resolve(items), "x-kubernetes-map-type"))
    }

    fn description(&self, schema: &Json) -> String {
        let text = schema
            .get("description")
            .or_else(|| self.resolve(schema).get("description"))
            .and_then(Json::as_str)
            .unwrap_or("");
        first_sentence(text)
    }
}

/// The first sentence of an OpenAPI description, on one line.
fn first_sentence(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat
        .char_indices()
        .find(|&(i, c)| c == '.' && flat[i + 1..].starts_with(' '))
        .map(|(i, _)| i + 1)
        .unwrap_or(flat.len());
    let mut out = flat[..end].to_string();
    if out.len() > 240 {
        let cut = out
            .char_indices()
            .take_while(|(i, _)| *i < 237)
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// The value the API server fills in for a scalar field nobody set, as JSON text: the
/// OpenAPI `default` where it is not Go's zero value, else a `defaults to "v1"` or
/// `Default is "*"` in the description.
fn server_default(schema: &Json) -> Option<String> {
    let zero = |v: &Json| match v {
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        _ => true,
    };
    if let Some(value) = schema.get("default").filter(|v| !zero(v)) {
        return Some(value.to_string());
    }
    let text = schema.get("description").and_then(Json::as_str)?;
    let lower = text.to_lowercase();
    let at = ["defaults to \"", "default is \""]
        .iter()
        .find_map(|phrase| lower.find(phrase).map(|i| i + phrase.len()))?;
    let end = text[at..].find('"')?;
    Some(Json::from(&text[at..at + end]).to_string())
}

/// A hand-made mapping for a path spelling cannot find (`overrides.tsv`).
#[derive(Clone, Debug)]
struct Override {
    json: String,
    scalar: Option<String>,
    doc: Option<String>,
}

/// `overrides.tsv`: `type-or-*  path  json  scalar-or--  doc-or--`; a json of `+field` is a
/// field of another version of the kind that the provider translates.
fn overrides(text: &str) -> Result<BTreeMap<(String, String), Override>, Error> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [ty, path, json, scalar, doc] = cols[..] else {
            return Err(Error::Input {
                file: OVERRIDES,
                line: i + 1,
                message: format!("expected 5 tab-separated columns, found {}", cols.len()),
            });
        };
        let opt = |s: &str| (s != "-").then(|| s.to_string());
        out.insert(
            (ty.to_string(), path.to_string()),
            Override {
                json: json.to_string(),
                scalar: opt(scalar),
                doc: opt(doc),
            },
        );
    }
    Ok(out)
}

/// One resource type of `types.tsv`.
struct TypeRow {
    name: String,
    aliases: String,
    api_version: String,
    kind: String,
    plural: String,
    scope: String,
    schema: String,
}

/// The rows of `types.tsv` or `data_types.tsv` (`file`, for errors).
fn types(file: &'static str, text: &str) -> Result<Vec<TypeRow>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [name, aliases, api_version, kind, plural, scope, schema] = cols[..] else {
            return Err(Error::Input {
                file,
                line: i + 1,
                message: format!("expected 7 tab-separated columns, found {}", cols.len()),
            });
        };
        out.push(TypeRow {
            name: name.into(),
            aliases: aliases.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
            scope: scope.into(),
            schema: schema.into(),
        });
    }
    Ok(out)
}

/// The hashicorp rows of every type of one kind of row (`resource`, `data`).
fn reference(text: &str, kind: &str) -> BTreeMap<String, Vec<Row>> {
    let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in text.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [k, ty, path, shape, collection, element, flags] = cols[..]
            && k == kind
        {
            out.entry(ty.to_string()).or_default().push(Row {
                path: path.into(),
                shape: shape.into(),
                collection: collection.into(),
                element: element.into(),
                flags: flags.into(),
            });
        }
    }
    out
}

/// Lower case without underscores: the spelling Terraform and JSON names share.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The JSON property a Terraform name spells, singular or plural.
fn spelled<'a>(name: &str, properties: &'a Map<String, Json>) -> Option<&'a str> {
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
fn scalar(tf: &str, oas: &str, json_name: &str) -> Option<&'static str> {
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
fn nested(row: &Row, shape: &str) -> String {
    let attribute =
        row.shape == "nested_attribute" || (row.shape == "block_or_attribute" && row.collection == "single");
    if attribute {
        format!("{shape}@attr")
    } else {
        shape.to_string()
    }
}

/// Generates the catalog for one type.
struct TypeGen<'a> {
    ty: &'a str,
    api: &'a OpenApi,
    overrides: &'a BTreeMap<(String, String), Override>,
    out: String,
    unmatched: Vec<String>,
    /// The paths hashicorp gives a default ([`facts`]).
    defaulted: BTreeSet<String>,
}

impl<'g> TypeGen<'g> {
    /// The override for `path`: its type's own first, then one for every type; a row's path
    /// matches the whole path or its end (`volume.rbd.rbd_pool` in any pod template), or only
    /// the whole path when written `=path` (a data source's top-level `metadata.labels`, not
    /// its listed objects' own).
    fn find_override(&self, path: &str) -> Option<&Override> {
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

    fn miss(&mut self, path: &str, why: impl std::fmt::Display) {
        self.unmatched.push(format!("{} {path}: {why}", self.ty));
    }

    fn emit(&mut self, node: &Node, json: &str, shape: &str, scalar: &str, doc: &str) {
        self.emit_with_default(node, json, shape, scalar, doc, None);
    }

    fn emit_with_default(
        &mut self,
        node: &Node,
        json: &str,
        shape: &str,
        scalar: &str,
        doc: &str,
        default: Option<String>,
    ) {
        let doc = if doc.is_empty() { "-" } else { doc };
        let default = default.unwrap_or_else(|| "-".to_string());
        let _ = writeln!(
            self.out,
            "field\t{}\t{}\t{json}\t{shape}\t{scalar}\t{}\t{default}\t{doc}",
            self.ty,
            node.row.path,
            node.row.presence_with(&self.defaulted)
        );
    }

    /// The children of an object schema; `atomic` inside a value owned whole (server-side
    /// apply's `atomic` maps and lists), where the server's defaults count as the writer's.
    fn object(&mut self, nodes: &[Node], properties: &Map<String, Json>, atomic: bool) {
        for node in nodes {
            self.node(node, properties, atomic);
        }
    }

    /// A subtree Kubernetes has no field for; the scalar column keeps its Terraform shape
    /// (`block:list`, `attribute:set:string`) so the schema still has it.
    fn unsupported(&mut self, node: &Node, doc: &str) {
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
    fn walk<'x>(api: &'x OpenApi, properties: &'x Map<String, Json>, json: &str) -> Option<&'x Json> {
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

    fn node(&mut self, node: &Node, properties: &Map<String, Json>, atomic: bool) {
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
                    return;
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
            return;
        }
        if json == "!" {
            // hashicorp has it, Kubernetes does not: in the schema, and an error when configured.
            let doc = doc_override.unwrap_or_default();
            self.unsupported(node, &doc);
            return;
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
            self.object(&node.children, properties, atomic);
            return;
        }
        if let Some(field) = json.strip_prefix('+') {
            // Another version's field that the kind's own code translates (kinds/special.rs):
            // this version's OpenAPI lacks it, so overrides.tsv gives its scalar.
            let Some(scalar) = over.as_ref().and_then(|o| o.scalar.clone()) else {
                self.miss(&path, "a translated field (+) needs its scalar in overrides.tsv");
                return;
            };
            self.emit(node, field, "one", &scalar, &doc_override.unwrap_or_default());
            return;
        }
        let api: &'g OpenApi = self.api;
        let Some(schema) = Self::walk(api, properties, &json) else {
            self.miss(&path, format!("no field {json:?} here"));
            return;
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
                return;
            };
            // Inside an atomic value, an empty object may be the server's default
            // (`objectSelector: {}`).
            let default = atomic.then(|| "{}".to_string());
            self.emit_with_default(node, &json, &nested(&node.row, shape), "-", &doc, default);
            let atomic = atomic || api.is_atomic(schema);
            self.object(&node.children, element, atomic);
            return;
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
    }
}

/// Paths the provider's shared code owns for every kind.
fn is_common(path: &str) -> bool {
    path == "id"
        || path == "metadata"
        || path.starts_with("metadata.")
        || path == "timeouts"
        || path.starts_with("timeouts.")
}

/// A data source's own code has only `id`: its metadata is a field of the table.
fn is_data_common(path: &str) -> bool {
    path == "id"
}

const HEADER: &str = "# kind\ttype\taliases\tapi_version\tkind\tplural\tscope\tid\tmetadata\ttimeouts\tdescription\n\
     # field\ttype\tpath\tjson (- Terraform only, ~ no level of its own)\tshape\tscalar\tpresence\tserver default (JSON)\tdoc\n";

/// The whole catalog, as the text of `kinds.tsv`.
pub fn generate(root: &Path) -> Result<String, Error> {
    let head = "# GENERATED by `make catalog` (kind-catalog) from reference/ and provider-live/catalog/{types,overrides}.tsv: do not edit.\n";
    catalog(root, TYPES, "resource", is_common, head)
}

/// The data-source catalog, as the text of `data_sources.tsv`.
pub fn generate_data_sources(root: &Path) -> Result<String, Error> {
    let head = "# GENERATED by `make catalog` (kind-catalog) from reference/ and provider-live/catalog/{data_types,overrides}.tsv: do not edit.\n";
    catalog(root, DATA_TYPES, "data", is_data_common, head)
}

/// The catalog of the types `types_file` lists, from the reference rows of kind `row_kind`;
/// `common` names the paths the provider's code owns rather than the table.
fn catalog(
    root: &Path,
    types_file: &'static str,
    row_kind: &str,
    common: fn(&str) -> bool,
    head: &str,
) -> Result<String, Error> {
    let api = OpenApi::load(root)?;
    let facts = facts::expand(root)?;
    let overrides = overrides(&read(root, OVERRIDES)?)?;
    let reference = reference(&read(root, REFERENCE)?, row_kind);
    let mut out = format!("{head}{HEADER}");
    let mut unmatched = Vec::new();
    for (line, ty) in types(types_file, &read(root, types_file)?)?.iter().enumerate() {
        let input = |message: String| Error::Input {
            file: types_file,
            line: line + 1,
            message,
        };
        let Some(rows) = reference.get(&ty.name) else {
            return Err(input(format!(
                "{} is not a {row_kind} type of the reference",
                ty.name
            )));
        };
        // An alias shares the row only when hashicorp's schema is the same.
        let same = |other: &Vec<Row>| {
            other.len() == rows.len()
                && other.iter().zip(rows).all(|(a, b)| {
                    (&a.path, &a.shape, &a.collection, &a.element, &a.flags)
                        == (&b.path, &b.shape, &b.collection, &b.element, &b.flags)
                })
        };
        if let Some(alias) = ty
            .aliases
            .split(',')
            .filter(|a| *a != "-")
            .find(|a| !reference.get(*a).is_some_and(same))
        {
            return Err(input(format!("{alias} has not the schema of {}", ty.name)));
        }
        let Some(root_schema) = api.schemas.get(&ty.schema) else {
            return Err(input(format!("no OpenAPI schema {}", ty.schema)));
        };
        let flags = |path: &str| rows.iter().find(|r| r.path == path).map(|r| r.flags.clone());
        let metadata: Vec<String> = rows
            .iter()
            .filter_map(|r| {
                r.path
                    .strip_prefix("metadata.")
                    .map(|p| format!("{p}:{}", r.presence()))
            })
            .collect();
        let timeouts: Vec<&str> = rows
            .iter()
            .filter_map(|r| r.path.strip_prefix("timeouts."))
            .collect();
        let metadata_block = rows
            .iter()
            .find(|r| r.path == "metadata")
            .map(|r| format!("{}:{}", r.collection, r.presence()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "kind\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}|{}\t{}\t{}",
            ty.name,
            ty.aliases,
            ty.api_version,
            ty.kind,
            ty.plural,
            ty.scope,
            flags("id").unwrap_or_default().replace(",read-only", ""),
            metadata_block,
            metadata.join(","),
            if timeouts.is_empty() {
                "-".to_string()
            } else {
                timeouts.join(",")
            },
            api.description(root_schema),
        );
        let own: Vec<Row> = rows.iter().filter(|r| !common(&r.path)).cloned().collect();
        let Oas::Object(properties) = api.classify(root_schema) else {
            return Err(input(format!("{} is not an object schema", ty.schema)));
        };
        // Data sources take no defaults: their arguments only select.
        let defaulted = facts
            .by_type
            .get(&ty.name)
            .filter(|_| row_kind == "resource")
            .into_iter()
            .flatten()
            .filter(|f| matches!(f.fact.as_str(), "default" | "reads_absent_as" | "computed_block"))
            .map(|f| f.path.clone())
            .collect();
        let mut generator = TypeGen {
            defaulted,
            ty: &ty.name,
            api: &api,
            overrides: &overrides,
            out: String::new(),
            unmatched: Vec::new(),
        };
        generator.object(&tree(&own, ""), properties, false);
        out.push_str(&generator.out);
        unmatched.extend(generator.unmatched);
    }
    if unmatched.is_empty() {
        Ok(out)
    } else {
        Err(Error::Unmatched(unmatched))
    }
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

    #[test]
    fn the_checked_in_catalog_is_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let generated = generate(&root).unwrap_or_else(|e| panic!("{e}"));
        let current = std::fs::read_to_string(root.join(OUTPUT)).unwrap_or_default();
        assert!(
            current == generated,
            "{OUTPUT} is out of date: run `make catalog`"
        );
        let generated = generate_data_sources(&root).unwrap_or_else(|e| panic!("{e}"));
        let current = std::fs::read_to_string(root.join(DATA_OUTPUT)).unwrap_or_default();
        assert!(
            current == generated,
            "{DATA_OUTPUT} is out of date: run `make catalog`"
        );
        let generated = generate_facts(&root).unwrap_or_else(|e| panic!("{e}"));
        let current = std::fs::read_to_string(root.join(FACTS_OUTPUT)).unwrap_or_default();
        assert!(
            current == generated,
            "{FACTS_OUTPUT} is out of date: run `make catalog`"
        );
        let generated = generate_behaviour_doc(&root).unwrap_or_else(|e| panic!("{e}"));
        let current = std::fs::read_to_string(root.join(BEHAVIOUR_DOC)).unwrap_or_default();
        assert!(
            current == generated,
            "{BEHAVIOUR_DOC} is out of date: run `make catalog`"
        );
    }
}
