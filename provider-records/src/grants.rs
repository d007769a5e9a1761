//! Who may read an estate's outputs: the `readers` of `records_outputs` become Roles
//! allowing `get` on exactly the output Secrets by name (never `list`, which would expose
//! every Secret in the namespace) and RoleBindings naming the readers. Readers of every
//! output share the Role `tofu-records-readers`; readers given `outputs = [...]` share one
//! Role per set of outputs, `tofu-records-readers-<hash of its Secret names>`, listing
//! those Secrets only, so a grant's name stays the same while its outputs do.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_estate::{ESTATE_LABEL, Estate};
use plugin_runtime::{AttributePath, Diagnostic, Diagnostics, Value};

use crate::record::HEAD_SECRET;

/// Name of the Role and of its RoleBinding granting every output; grants of some outputs
/// only are named with this and a suffix.
pub const GRANT_NAME: &str = "tofu-records-readers";

/// True for the name of a Role or RoleBinding this provider writes.
pub fn is_grant_name(name: &str) -> bool {
    name.strip_prefix(GRANT_NAME)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
}
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// One identity allowed to read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reader {
    User(String),
    Group(String),
    ServiceAccount { namespace: String, name: String },
}

impl Reader {
    pub fn subject(&self) -> Subject {
        let (kind, name, namespace, group) = match self {
            Reader::User(n) => ("User", n, None, Some(RBAC_GROUP.to_string())),
            Reader::Group(n) => ("Group", n, None, Some(RBAC_GROUP.to_string())),
            Reader::ServiceAccount { namespace, name } => (
                "ServiceAccount",
                name,
                Some(namespace.clone()),
                Some(String::new()),
            ),
        };
        Subject {
            api_group: group,
            kind: kind.to_string(),
            name: name.clone(),
            namespace,
        }
    }

    /// The reader a binding subject names, if it is one this provider writes.
    pub fn from_subject(s: &Subject) -> Option<Reader> {
        match s.kind.as_str() {
            "User" => Some(Reader::User(s.name.clone())),
            "Group" => Some(Reader::Group(s.name.clone())),
            "ServiceAccount" => Some(Reader::ServiceAccount {
                namespace: s.namespace.clone().unwrap_or_default(),
                name: s.name.clone(),
            }),
            _ => None,
        }
    }

    /// The reader as the `readers` attribute spells it: `{ kind, name }`, plus `namespace`
    /// for a ServiceAccount.
    pub fn to_value(&self) -> Value {
        match self {
            Reader::User(n) => Value::object([("kind", Value::string("User")), ("name", Value::string(n))]),
            Reader::Group(n) => Value::object([("kind", Value::string("Group")), ("name", Value::string(n))]),
            Reader::ServiceAccount { namespace, name } => Value::object([
                ("kind", Value::string("ServiceAccount")),
                ("name", Value::string(name)),
                ("namespace", Value::string(namespace)),
            ]),
        }
    }

    /// How an HCL `readers` entry for this identity reads.
    pub fn hcl(&self) -> String {
        self.hcl_with("")
    }

    /// The HCL `readers` entry granting this identity `outputs` only.
    pub fn hcl_for_outputs(&self, outputs: &[String]) -> String {
        let quoted: Vec<String> = outputs.iter().map(|o| format!("{o:?}")).collect();
        self.hcl_with(&format!(", outputs = [{}]", quoted.join(", ")))
    }

    fn hcl_with(&self, extra: &str) -> String {
        match self {
            Reader::User(n) => format!("{{ kind = \"User\", name = {n:?}{extra} }}"),
            Reader::Group(n) => format!("{{ kind = \"Group\", name = {n:?}{extra} }}"),
            Reader::ServiceAccount { namespace, name } => {
                format!("{{ kind = \"ServiceAccount\", name = {name:?}, namespace = {namespace:?}{extra} }}")
            }
        }
    }
}

/// One reader and what it may read: every output (`outputs` is `None`) or those named.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub reader: Reader,
    pub outputs: Option<BTreeSet<String>>,
}

impl Grant {
    /// The entry as the `readers` attribute spells it.
    pub fn to_value(&self) -> Value {
        let mut value = self.reader.to_value();
        if let Some(outputs) = &self.outputs {
            value.set(
                "outputs",
                Value::List(outputs.iter().map(Value::string).collect()),
            );
        }
        value
    }
}

/// Checks a `readers` value; unknown parts are skipped. `recorded`, when known, is the
/// outputs the resource records: an entry's `outputs` must name some of them.
pub fn validate_readers(readers: &Value, recorded: Option<&BTreeSet<String>>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if readers.is_null() || readers.is_unknown() {
        return diags;
    }
    let root = AttributePath::root("readers");
    if !matches!(readers.plain(), Value::List(_) | Value::Tuple(_) | Value::Set(_)) {
        diags.push(
            Diagnostic::error(
                "Invalid readers",
                "readers must be a list of objects such as { kind = \"User\", name = \"app-planner\" }.",
            )
            .at(root),
        );
        return diags;
    }
    for (i, entry) in readers.elements().iter().enumerate() {
        let at = root.clone().index(i as i64);
        match parse_reader(entry, at.clone()) {
            Err(d) => diags.push(d),
            Ok(Some(Grant { outputs: Some(_), .. })) => {
                let Some(recorded) = recorded else { continue };
                for (j, name) in entry.get("outputs").elements().iter().enumerate() {
                    let Some(name) = name.as_str().filter(|n| !recorded.contains(*n)) else {
                        continue;
                    };
                    diags.push(
                        Diagnostic::error(
                            "Unknown output in readers",
                            format!(
                                "{name:?} is not an output of this resource (in values or \
                                 sensitive_values), so no reader can be granted it."
                            ),
                        )
                        .at(at.clone().attribute("outputs").index(j as i64)),
                    );
                }
            }
            Ok(_) => {}
        }
    }
    diags
}

/// The grants of a `readers` value (wholly known at apply), one per reader, sorted: a
/// reader listed twice may read what either entry grants.
pub fn readers_of(readers: &Value) -> Result<Vec<Grant>, Diagnostic> {
    let mut merged: BTreeMap<Reader, Option<BTreeSet<String>>> = BTreeMap::new();
    for (i, entry) in readers.elements().iter().enumerate() {
        let Some(grant) = parse_reader(entry, AttributePath::root("readers").index(i as i64))? else {
            continue;
        };
        match (merged.get_mut(&grant.reader), grant.outputs) {
            (None, outputs) => {
                merged.insert(grant.reader, outputs);
            }
            (Some(Some(have)), Some(more)) => have.extend(more),
            (Some(have), None) => *have = None,
            (Some(None), Some(_)) => {}
        }
    }
    Ok(merged
        .into_iter()
        .map(|(reader, outputs)| Grant { reader, outputs })
        .collect())
}

/// The grant an entry names; `None` while a part of it is still unknown.
fn parse_reader(entry: &Value, at: AttributePath) -> Result<Option<Grant>, Diagnostic> {
    let invalid = |attribute: &str, detail: String| {
        Diagnostic::error("Invalid reader", detail).at(at.clone().attribute(attribute))
    };
    if !entry.is_wholly_known() {
        return Ok(None);
    }
    let Some(fields) = entry
        .entries()
        .filter(|_| matches!(entry.plain(), Value::Object(_) | Value::Map(_)))
    else {
        return Err(Diagnostic::error(
            "Invalid reader",
            "Each reader is an object such as { kind = \"User\", name = \"app-planner\" }.",
        )
        .at(at));
    };
    if let Some(extra) = fields
        .keys()
        .find(|k| !["kind", "name", "namespace", "outputs"].contains(&k.as_str()))
    {
        return Err(invalid(
            extra,
            format!("A reader has kind, name, namespace and outputs only, not {extra:?}."),
        ));
    }
    let outputs = match entry.get("outputs") {
        // Also a typed null: `outputs = optional(list(string))` in a variable's type.
        none if none.is_null() => None,
        list if matches!(list.plain(), Value::List(_) | Value::Tuple(_) | Value::Set(_)) => {
            let names: Option<BTreeSet<String>> = list
                .elements()
                .iter()
                .map(|n| n.as_str().filter(|n| !n.is_empty()).map(str::to_string))
                .collect();
            match names {
                Some(names) if !names.is_empty() => Some(names),
                Some(_) => {
                    return Err(invalid(
                        "outputs",
                        "outputs is empty: list the outputs this reader may read, or leave it out \
                         to grant all of them."
                            .into(),
                    ));
                }
                None => {
                    return Err(invalid(
                        "outputs",
                        "outputs lists output names: non-empty strings such as \"gateway_host\".".into(),
                    ));
                }
            }
        }
        _ => {
            return Err(invalid(
                "outputs",
                "outputs is a list of output names, e.g. outputs = [\"gateway_host\"].".into(),
            ));
        }
    };
    let text = |k: &str| entry.get(k).as_str().map(str::to_string);
    let name = text("name")
        .filter(|n| !n.is_empty())
        .ok_or_else(|| invalid("name", "A reader needs a non-empty name.".into()))?;
    let kind = text("kind").unwrap_or_default();
    let reader = match (kind.as_str(), text("namespace")) {
        ("User", None) => Reader::User(name),
        ("Group", None) => Reader::Group(name),
        ("User" | "Group", Some(_)) => {
            return Err(invalid(
                "namespace",
                format!("A {kind} has no namespace: only a ServiceAccount reader takes one."),
            ));
        }
        ("ServiceAccount", Some(namespace)) if !namespace.is_empty() => {
            Reader::ServiceAccount { namespace, name }
        }
        ("ServiceAccount", _) => {
            return Err(invalid(
                "namespace",
                "A ServiceAccount reader needs the namespace of the ServiceAccount.".into(),
            ));
        }
        _ => {
            return Err(invalid(
                "kind",
                format!("kind is {kind:?}; it must be \"User\", \"Group\" or \"ServiceAccount\"."),
            ));
        }
    };
    Ok(Some(Grant { reader, outputs }))
}

fn meta(estate: &Estate, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: Some(estate.records_namespace()),
        labels: Some(BTreeMap::from([(
            ESTATE_LABEL.to_string(),
            estate.as_str().to_string(),
        )])),
        ..ObjectMeta::default()
    }
}

/// The rule granting `get` on exactly `secret_names` and the estate's head (a reader reads
/// the outputs as of its commit). It must never be built from an empty list: a rule without
/// resourceNames covers every Secret.
fn get_rule(secret_names: &[String]) -> PolicyRule {
    debug_assert!(!secret_names.is_empty());
    let mut names = secret_names.to_vec();
    names.push(HEAD_SECRET.to_string());
    names.sort();
    names.dedup();
    PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["secrets".to_string()]),
        verbs: vec!["get".to_string()],
        resource_names: Some(names),
        ..PolicyRule::default()
    }
}

/// The Roles and RoleBindings letting each reader get the Secrets of its outputs, from
/// `secrets` (output name -> Secret name, the outputs recorded). Nothing is granted where
/// there is no reader or no recorded output.
pub fn grants(
    estate: &Estate,
    readers: &[Grant],
    secrets: &BTreeMap<String, String>,
) -> Vec<(Role, RoleBinding)> {
    // Secret names -> readers: every output, or one set of outputs.
    let mut by_names: BTreeMap<(bool, Vec<String>), Vec<&Reader>> = BTreeMap::new();
    for grant in readers {
        let names: Vec<String> = match &grant.outputs {
            None => secrets.values().cloned().collect(),
            Some(outputs) => outputs.iter().filter_map(|o| secrets.get(o).cloned()).collect(),
        };
        by_names
            .entry((grant.outputs.is_none(), names))
            .or_default()
            .push(&grant.reader);
    }
    by_names
        .into_iter()
        .filter(|((_, names), _)| !names.is_empty())
        .map(|((all, names), readers)| {
            let name = if all {
                GRANT_NAME.to_string()
            } else {
                format!("{GRANT_NAME}-{:08x}", fnv1a(&names))
            };
            let role = Role {
                metadata: meta(estate, &name),
                rules: Some(vec![get_rule(&names)]),
            };
            let binding = RoleBinding {
                metadata: meta(estate, &name),
                role_ref: RoleRef {
                    api_group: Some(RBAC_GROUP.to_string()),
                    kind: "Role".to_string(),
                    name,
                },
                subjects: Some(readers.into_iter().map(Reader::subject).collect()),
            };
            (role, binding)
        })
        .collect()
}

/// A stable 32-bit FNV-1a hash of sorted names (Rust's own hasher is seeded per process).
fn fnv1a(names: &[String]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in names.join("\n").bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The grants the live Roles and RoleBindings (those this provider writes) give, with
/// output names from `secrets` (output -> Secret); a Secret no output maps to shows as
/// its own name, so the result still differs from what was meant.
pub fn live_grants(
    roles: &[Role],
    bindings: &[RoleBinding],
    secrets: &BTreeMap<String, String>,
) -> Vec<Grant> {
    let output_of: BTreeMap<&String, &String> = secrets.iter().map(|(o, s)| (s, o)).collect();
    let mut out = Vec::new();
    for binding in bindings {
        let name = binding.metadata.name.as_deref().unwrap_or_default();
        let outputs = (name != GRANT_NAME).then(|| {
            roles
                .iter()
                .filter(|r| r.metadata.name.as_deref() == Some(binding.role_ref.name.as_str()))
                .flat_map(|r| r.rules.iter().flatten())
                .flat_map(|rule| rule.resource_names.iter().flatten())
                .filter(|s| *s != HEAD_SECRET)
                .map(|s| output_of.get(s).map_or_else(|| s.clone(), |o| (*o).clone()))
                .collect()
        });
        for reader in binding.subjects.iter().flatten().filter_map(Reader::from_subject) {
            out.push(Grant {
                reader,
                outputs: outputs.clone(),
            });
        }
    }
    out.sort();
    out
}

/// [`all_match`], also where the live Roles are `want`'s without the estate's head: grants
/// written before heads existed, which still give what the state says (their readers read the
/// current versions) and are brought up to date by the next write.
pub fn all_match_or_headless(want: &[(Role, RoleBinding)], roles: &[Role], bindings: &[RoleBinding]) -> bool {
    let headless: Vec<(Role, RoleBinding)> = want
        .iter()
        .map(|(role, binding)| {
            let mut role = role.clone();
            for rule in role.rules.iter_mut().flatten() {
                if let Some(names) = rule.resource_names.as_mut() {
                    names.retain(|n| n != HEAD_SECRET);
                }
            }
            (role, binding.clone())
        })
        .collect();
    all_match(want, roles, bindings) || all_match(&headless, roles, bindings)
}

/// True when the live Roles and RoleBindings (this provider's) are exactly `want`.
pub fn all_match(want: &[(Role, RoleBinding)], roles: &[Role], bindings: &[RoleBinding]) -> bool {
    let named = |m: &ObjectMeta| m.name.clone().unwrap_or_default();
    roles.len() == want.len()
        && bindings.len() == want.len()
        && want.iter().all(|(role, binding)| {
            roles
                .iter()
                .any(|r| named(&r.metadata) == named(&role.metadata) && role_matches(r, role))
                && bindings
                    .iter()
                    .any(|b| named(&b.metadata) == named(&binding.metadata) && binding_matches(b, binding))
        })
}

/// True when the live Role grants exactly what `want` does.
pub fn role_matches(live: &Role, want: &Role) -> bool {
    live.rules == want.rules && has_estate_label(&live.metadata, want)
}

/// True when the live RoleBinding binds exactly what `want` does.
pub fn binding_matches(live: &RoleBinding, want: &RoleBinding) -> bool {
    let subjects = |b: &RoleBinding| {
        let mut readers: Vec<Reader> = b
            .subjects
            .iter()
            .flatten()
            .filter_map(Reader::from_subject)
            .collect();
        readers.sort();
        readers
    };
    live.role_ref == want.role_ref
        && subjects(live) == subjects(want)
        && live.subjects.as_ref().map(Vec::len) == want.subjects.as_ref().map(Vec::len)
}

fn has_estate_label(live: &ObjectMeta, want: &Role) -> bool {
    let label = |m: &ObjectMeta| m.labels.as_ref().and_then(|l| l.get(ESTATE_LABEL)).cloned();
    label(live) == label(&want.metadata)
}

#[cfg(test)]
mod tests;
