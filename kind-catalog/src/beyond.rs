//! Fields Kubernetes serves that hashicorp/kubernetes 3.4.0 has no attribute for ("beyond
//! 3.4.0"). At every object the catalog joins, the OpenAPI properties that no hashicorp
//! attribute claims become rows of their own, named in hashicorp's style, unless a rule here
//! leaves them out with its reason: read-only, deprecated, alpha or behind a feature gate the
//! server has off (`reference/feature-gates.tsv`, the server's own `kubernetes_feature_enabled`
//! metric), object metadata (the provider's shared block), or a row of
//! `provider-live/catalog/beyond.tsv`.

use crate::inputs::{Error, read};
use crate::openapi::{Oas, OpenApi, server_default};
use crate::type_gen::{TypeGen, spelled};
use serde_json::{Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// How a generated row's documentation starts: the docs and the schema say it is ours.
pub(crate) const MARK: &str = "Beyond hashicorp/kubernetes 3.4.0.";
const GATES: &str = "reference/feature-gates.tsv";
const EXCLUDED: &str = "provider-live/catalog/beyond.tsv";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The rules that leave a property out.
pub(crate) struct Rules {
    /// Feature gate name: (stage, enabled).
    gates: BTreeMap<String, (String, bool)>,
    /// (OpenAPI schema, property): why it is left out.
    excluded: BTreeMap<(String, String), String>,
    /// Types that get no fields beyond hashicorp's, with why.
    types: BTreeMap<String, String>,
    /// Terraform path endings left out, with why.
    paths: Vec<(String, String)>,
    /// GA kinds (`apps/v1/ReplicaSet`) with no type of their own, with why ([`crate::kinds`]).
    pub(crate) kinds: BTreeMap<String, String>,
}

impl Rules {
    pub(crate) fn load(root: &Path) -> Result<Rules, Error> {
        let mut gates = BTreeMap::new();
        for (i, line) in rows(&read(root, GATES)?) {
            let [name, stage, enabled] = line[..] else {
                return Err(columns(GATES, i, 3, line.len()));
            };
            gates.insert(name.to_string(), (stage.to_string(), enabled == "true"));
        }
        let (mut excluded, mut types, mut paths) = (BTreeMap::new(), BTreeMap::new(), Vec::new());
        let mut kinds = BTreeMap::new();
        for (i, line) in rows(&read(root, EXCLUDED)?) {
            let [what, name, reason] = line[..] else {
                return Err(columns(EXCLUDED, i, 3, line.len()));
            };
            let reason = reason.to_string();
            match what {
                "type" => drop(types.insert(name.to_string(), reason)),
                "path" => paths.push((name.to_string(), reason)),
                "kind" => drop(kinds.insert(name.to_string(), reason)),
                schema => drop(excluded.insert((schema.to_string(), name.to_string()), reason)),
            }
        }
        Ok(Rules {
            gates,
            excluded,
            types,
            paths,
            kinds,
        })
    }

    /// Why property `name` of the object schema `owner`, at Terraform `path` of type `ty`,
    /// stays out of the catalog, or `None`.
    pub(crate) fn left_out(
        &self,
        api: &OpenApi,
        at: (&str, &str),
        owner: &str,
        name: &str,
        schema: &Json,
    ) -> Option<String> {
        let (ty, path) = at;
        if let Some(reason) = self.types.get(ty) {
            return Some(reason.clone());
        }
        let ends = |suffix: &str| path == suffix || path.ends_with(&format!(".{suffix}"));
        if let Some((_, reason)) = self.paths.iter().find(|(suffix, _)| ends(suffix)) {
            return Some(reason.clone());
        }
        if owner == OBJECT_META {
            return Some("object metadata: the shared metadata block has hashicorp's fields".into());
        }
        let mut keep = false;
        if let Some(reason) = self.excluded.get(&(owner.to_string(), name.to_string())) {
            if let Some(gate) = reason.strip_prefix("gate:") {
                if let Some(off) = self.gate_off(gate) {
                    return Some(off);
                }
            } else if reason.starts_with("keep:") || reason.starts_with("required:") {
                keep = true;
            } else {
                return Some(reason.clone());
            }
        }
        let owner_schema = api.schemas.get(owner);
        let embedded = owner_schema.is_some_and(|s| s.pointer("/properties/metadata").is_some());
        if embedded && matches!(name, "apiVersion" | "kind" | "status") {
            return Some("type and status of an embedded object: the server's".into());
        }
        let resolved = api.resolve(schema);
        if schema.get("readOnly") == Some(&Json::Bool(true))
            || resolved.get("readOnly") == Some(&Json::Bool(true))
        {
            return Some("read-only".into());
        }
        let text = schema
            .get("description")
            .or_else(|| resolved.get("description"))
            .and_then(Json::as_str)
            .unwrap_or("");
        if text.contains("Deprecated") || text.contains("deprecated") {
            return Some("deprecated".into());
        }
        if keep {
            return None;
        }
        let named: Vec<(&String, &(String, bool))> = self
            .gates
            .iter()
            .filter(|(gate, _)| names_word(text, gate))
            .collect();
        if let Some(off) = named.iter().find_map(|(gate, _)| self.gate_off(gate)) {
            return Some(off);
        }
        let alpha = text.contains("(Alpha)")
            || text.to_lowercase().contains("alpha field")
            || text.to_lowercase().contains("alpha feature")
            || text.starts_with("Alpha");
        if alpha && named.is_empty() {
            return Some("alpha".into());
        }
        None
    }

    /// Whether a row of `beyond.tsv` makes property `name` of `owner` required: the API refuses
    /// an object without it although the OpenAPI does not list it.
    pub(crate) fn required(&self, owner: &str, name: &str) -> bool {
        self.excluded
            .get(&(owner.to_string(), name.to_string()))
            .is_some_and(|why| why.starts_with("required:"))
    }

    /// Why a field behind `gate` is left out: the gate is off (or unknown to the server).
    fn gate_off(&self, gate: &str) -> Option<String> {
        match self.gates.get(gate) {
            Some((_, true)) => None,
            Some((stage, false)) => Some(format!("feature gate {gate} ({stage}) is off by default")),
            None => Some(format!("feature gate {gate} is unknown to the server")),
        }
    }
}

/// Whether `text` names `word` as a whole word.
fn names_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// The non-comment lines of a TSV file, split, with their line numbers.
pub(crate) fn rows(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.split('\t').collect()))
}

fn columns(file: &'static str, line: usize, want: usize, found: usize) -> Error {
    Error::Input {
        file,
        line,
        message: format!("expected {want} tab-separated columns, found {found}"),
    }
}

/// hashicorp's spelling of a JSON name: snake case, acronyms one word (`hostIPC` is
/// `host_ipc`, `podIPs` is `pod_ips`).
pub(crate) fn snake(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        // An acronym's plural `s` stays with it: `IPs`, not `I_ps`.
        let plural_s = next == Some(&'s') && chars.get(i + 2).is_none_or(|c| c.is_uppercase());
        let starts_word = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()) && !plural_s)
            });
        if starts_word {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The singular of a snake-case plural, as hashicorp names a repeated block (`containers` is
/// `container`, `policies` is `policy`).
pub(crate) fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for ending in ["sses", "xes", "ches", "shes", "ases"] {
        if let Some(stem) = name.strip_suffix(ending) {
            return format!("{stem}{}", &ending[..ending.len() - 2]);
        }
    }
    match name.strip_suffix('s') {
        Some(stem) if !stem.ends_with('s') && !stem.ends_with('u') => stem.to_string(),
        _ => name.to_string(),
    }
}

/// Deeper than any built-in kind nests: a guard against recursive schemas.
const MAX_DEPTH: usize = 12;

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

impl TypeGen<'_> {
    /// The rows of the properties at `level` that no hashicorp attribute claims; `taken` are
    /// the Terraform names already used there.
    pub(crate) fn extras(
        &mut self,
        level: &Level<'_>,
        properties: &Map<String, Json>,
        claimed: &BTreeSet<String>,
        taken: &BTreeSet<String>,
    ) {
        let api = self.api;
        let required = required_of(api, api.schemas.get(level.owner));
        for (json, schema) in properties {
            if claimed.contains(json) {
                continue;
            }
            // The provider's own code has the root's type, metadata and status.
            if level.parent.is_empty()
                && matches!(json.as_str(), "apiVersion" | "kind" | "metadata" | "status")
            {
                continue;
            }
            let name = self.tf_name(json, schema, level.attr);
            let path = join(level.parent, &name);
            if taken.contains(&name) {
                self.left
                    .push((path, format!("hashicorp's `{name}` is another field")));
                continue;
            }
            self.field(level, &path, json, schema, required.contains(json.as_str()), 0);
        }
    }

    /// The field at `path` generated, or left out with why.
    fn field(
        &mut self,
        level: &Level<'_>,
        path: &str,
        json: &str,
        schema: &Json,
        required: bool,
        depth: usize,
    ) {
        match self
            .rules
            .left_out(self.api, (self.ty, path), level.owner, json, schema)
        {
            Some(reason) => self.left.push((path.to_string(), reason)),
            None => {
                let required = required || self.rules.required(level.owner, json);
                self.generate(level, path, json, schema, required, depth)
            }
        }
    }

    /// The Terraform name of a generated field: a repeated block is singular.
    fn tf_name(&self, json: &str, schema: &Json, attr: bool) -> String {
        let name = snake(json);
        let repeated_block = !attr
            && matches!(self.api.classify(schema), Oas::Array(items) if matches!(self.api.classify(items), Oas::Object(_)));
        if !repeated_block {
            return name;
        }
        let one = singular(&name);
        let mut properties = Map::new();
        properties.insert(json.to_string(), Json::Null);
        // Only a singular the catalog's own spelling finds again.
        if spelled(&one, &properties) == Some(json) {
            one
        } else {
            name
        }
    }

    /// The row of one generated field and, for an object, its fields'.
    fn generate(
        &mut self,
        level: &Level<'_>,
        path: &str,
        json: &str,
        schema: &Json,
        required: bool,
        depth: usize,
    ) {
        let api = self.api;
        let attr = if level.attr { "@attr" } else { "" };
        let doc = format!("{MARK} {}", api.description(schema));
        let class = api.classify(schema);
        let presence = if self.data || level.computed {
            "computed"
        } else if required {
            "required"
        } else if matches!(class, Oas::Scalar(_)) {
            // The server may fill it in when nobody sets it (a Job's `podReplacementPolicy`),
            // and the OpenAPI does not always say so: optional and computed, as hashicorp's own
            // such fields, so the server's value is never a diff.
            "defaulted"
        } else {
            "optional"
        };
        let list = if schema.get("x-kubernetes-list-type").and_then(Json::as_str) == Some("set") {
            "set"
        } else {
            "list"
        };
        let (shape, scalar, element) = match class {
            Oas::Scalar(s) => ("one".to_string(), generated_scalar(s, json), None),
            Oas::Array(items) => match api.classify(items) {
                Oas::Scalar(s) => (list.to_string(), generated_scalar(s, json), None),
                Oas::Object(p) => (format!("array{attr}"), "-", Some((p, items))),
                _ => {
                    return self
                        .left
                        .push((path.into(), "a list of lists: no hashicorp shape".into()));
                }
            },
            Oas::Map(values) => match api.classify(values) {
                Oas::Scalar(s) => ("map".to_string(), generated_scalar(s, json), None),
                _ => {
                    return self.left.push((
                        path.into(),
                        "a map of lists or objects: no hashicorp shape".into(),
                    ));
                }
            },
            Oas::Object(p) => {
                let shape = if level.attr { "single@attr" } else { "object" };
                (shape.to_string(), "-", Some((p, schema)))
            }
            Oas::Any => {
                return self
                    .left
                    .push((path.into(), "free-form JSON: no hashicorp shape".into()));
            }
        };
        if element.is_some() && depth >= MAX_DEPTH {
            return self.left.push((path.into(), "nested too deep".into()));
        }
        // Inside an atomic value the server's defaults count as the writer's: an empty object
        // (a webhook's or a binding's `objectSelector: {}`) and a scalar's OpenAPI default.
        let default = match (&element, shape.as_str()) {
            (Some(_), "object" | "single@attr") if level.atomic => Some("{}".to_string()),
            (None, "one") if level.atomic => server_default(schema),
            _ => None,
        };
        self.row(path, json, (&shape, scalar, presence), default, &doc);
        self.added.push(path.to_string());
        // `element` is the schema of the object itself (a list's items).
        let Some((properties, element)) = element else {
            return;
        };
        let owner = OpenApi::ref_name(element);
        let required = required_of(api, Some(element));
        let owner = owner.unwrap_or(level.owner).to_string();
        let inner = Level {
            parent: path,
            owner: &owner,
            attr: level.attr,
            atomic: level.atomic || api.is_atomic(schema),
            computed: level.computed,
        };
        for (child, child_schema) in properties {
            let child_path = join(path, &self.tf_name(child, child_schema, level.attr));
            let required = required.contains(child.as_str());
            self.field(&inner, &child_path, child, child_schema, required, depth + 1);
        }
    }
}

/// The properties the object `schema` requires.
fn required_of<'s>(api: &'s OpenApi, schema: Option<&'s Json>) -> BTreeSet<&'s str> {
    schema
        .map(|s| api.resolve(s))
        .and_then(|s| s.get("required"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect()
}

/// The catalog scalar of a generated field: Kubernetes' own type, in Terraform's.
fn generated_scalar(oas: &str, json: &str) -> &'static str {
    match oas {
        "int" if matches!(json, "mode" | "defaultMode") => "filemode",
        "int" => "int",
        "number" => "number",
        "bool" => "bool",
        "quantity" => "quantity",
        "intorstr" => "intorstr",
        "bytes" => "b64",
        _ => "str",
    }
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_hashicorp() {
        assert_eq!(snake("hostIPC"), "host_ipc");
        assert_eq!(snake("podIPs"), "pod_ips");
        assert_eq!(snake("setHostnameAsFQDN"), "set_hostname_as_fqdn");
        assert_eq!(snake("storagePolicyID"), "storage_policy_id");
        assert_eq!(snake("nodeExpandSecretRef"), "node_expand_secret_ref");
        assert_eq!(snake("hostUsers"), "host_users");
        assert_eq!(singular("scheduling_gates"), "scheduling_gate");
        assert_eq!(singular("policies"), "policy");
        assert_eq!(singular("addresses"), "address");
        assert_eq!(singular("aliases"), "alias");
        assert_eq!(singular("resize_policy"), "resize_policy");
        assert_eq!(singular("status"), "status");
    }

    /// `keep:` keeps a GA field whose description names a gate that is off; `required:` makes a
    /// field the OpenAPI leaves optional required (both rows of `catalog/beyond.tsv`).
    #[test]
    fn keep_and_required_rows_override_the_gate_and_the_openapi() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let api = OpenApi::load(&root).expect("the OpenAPI");
        let mut rules = Rules::load(&root).expect("the rules");
        let owner = "io.k8s.api.resource.v1.CELDeviceSelector";
        let schema = api.schemas[owner]["properties"]["expression"].clone();
        let at = ("kubernetes_device_class_v1", "spec.selector.cel.expression");
        assert_eq!(rules.left_out(&api, at, owner, "expression", &schema), None);
        rules
            .excluded
            .remove(&(owner.to_string(), "expression".to_string()));
        let gated = rules.left_out(&api, at, owner, "expression", &schema);
        assert!(
            gated
                .as_deref()
                .is_some_and(|w| w.contains("DRAListTypeAttributes")),
            "{gated:?}"
        );
        let spec = "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicySpec";
        assert!(rules.required(spec, "reinvocationPolicy"));
        assert!(!required_of(&api, api.schemas.get(spec)).contains("reinvocationPolicy"));
        assert!(!rules.required(spec, "failurePolicy"));
    }

    #[test]
    fn a_gate_is_named_as_a_word() {
        assert!(names_word(
            "requires the PodLevelResources feature gate.",
            "PodLevelResources"
        ));
        assert!(!names_word(
            "requires the PodLevelResourcesX gate.",
            "PodLevelResources"
        ));
    }
}
