//! Fields Kubernetes serves that hashicorp/kubernetes 3.4.0 has no attribute for ("beyond
//! 3.4.0"). At every object the catalog joins, the OpenAPI properties that no hashicorp
//! attribute claims become rows of their own, named in hashicorp's style, unless a rule of
//! [`crate::beyond`] leaves them out with its reason.

use crate::beyond::MARK;
use crate::openapi::{Oas, OpenApi, server_default};
use crate::type_gen::{Level, TypeGen, spelled};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

/// Deeper than any built-in kind nests: a guard against recursive schemas.
const MAX_DEPTH: usize = 12;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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

    /// The OpenAPI leaves `reinvocationPolicy` optional, which a `required:` row of
    /// `catalog/beyond.tsv` mends ([`crate::beyond`]).
    #[test]
    fn the_openapi_does_not_require_reinvocation_policy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let api = OpenApi::load(&root).expect("the OpenAPI");
        let spec = "io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicySpec";
        assert!(!required_of(&api, api.schemas.get(spec)).contains("reinvocationPolicy"));
    }
}
