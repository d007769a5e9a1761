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
mod tests {
    use super::*;

    fn estate() -> Estate {
        Estate::parse("network").unwrap()
    }

    fn reader(kind: &str, name: &str, namespace: Option<&str>) -> Value {
        let mut v = Value::object([("kind", Value::string(kind)), ("name", Value::string(name))]);
        if let Some(ns) = namespace {
            v.set("namespace", Value::string(ns));
        }
        v
    }

    fn all(reader: Reader) -> Grant {
        Grant {
            reader,
            outputs: None,
        }
    }

    fn only(reader: Reader, outputs: &[&str]) -> Grant {
        Grant {
            reader,
            outputs: Some(outputs.iter().map(|o| o.to_string()).collect()),
        }
    }

    fn secrets(outputs: &[&str]) -> BTreeMap<String, String> {
        outputs
            .iter()
            .map(|o| (o.to_string(), format!("output-{}", o.replace('_', "-"))))
            .collect()
    }

    /// The output Secrets a Role grants; every Role also grants the head.
    fn names(role: &Role) -> Vec<String> {
        let mut names = role.rules.clone().unwrap()[0].resource_names.clone().unwrap();
        let head = names
            .iter()
            .position(|n| n == HEAD_SECRET)
            .expect("the head is granted");
        names.remove(head);
        names
    }

    #[test]
    fn role_grants_get_on_exactly_the_named_secrets() {
        let granted = grants(
            &estate(),
            &[all(Reader::User("app-planner".into()))],
            &secrets(&["namespace", "gateway_host"]),
        );
        let [(role, binding)] = &granted[..] else {
            panic!("{granted:?}")
        };
        assert_eq!(role.metadata.name.as_deref(), Some(GRANT_NAME));
        assert_eq!(role.metadata.namespace.as_deref(), Some("tofu-records-network"));
        let rules = role.rules.clone().unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].verbs, ["get"]);
        assert_eq!(rules[0].api_groups.as_deref(), Some(&[String::new()][..]));
        assert_eq!(rules[0].resources.as_deref(), Some(&["secrets".to_string()][..]));
        assert_eq!(names(role), ["output-gateway-host", "output-namespace"]);
        assert_eq!(binding.role_ref.kind, "Role");
        assert_eq!(binding.role_ref.name, GRANT_NAME);
        let subject = &binding.subjects.clone().unwrap()[0];
        assert_eq!(
            (subject.kind.as_str(), subject.name.as_str()),
            ("User", "app-planner")
        );
        assert_eq!(subject.api_group.as_deref(), Some(RBAC_GROUP));
        assert!(role_matches(role, role));
        assert!(binding_matches(binding, binding));
        assert!(all_match(
            &granted,
            std::slice::from_ref(role),
            std::slice::from_ref(binding)
        ));
        assert!(!all_match(&granted, &[], &[]));
        // A Role written before heads existed still matches what the state says.
        let mut headless = role.clone();
        headless.rules = Some(vec![get_rule(&[
            "output-gateway-host".into(),
            "output-namespace".into(),
        ])]);
        headless.rules.as_mut().unwrap()[0]
            .resource_names
            .as_mut()
            .unwrap()
            .retain(|n| n != HEAD_SECRET);
        assert!(!all_match(
            &granted,
            std::slice::from_ref(&headless),
            std::slice::from_ref(binding)
        ));
        assert!(all_match_or_headless(
            &granted,
            std::slice::from_ref(&headless),
            std::slice::from_ref(binding)
        ));
    }

    #[test]
    fn a_grant_of_some_outputs_lists_exactly_their_secrets() {
        let outputs = secrets(&["gateway_host", "namespace", "token"]);
        let readers = [
            all(Reader::Group("admins".into())),
            only(Reader::User("restricted".into()), &["gateway_host"]),
            only(Reader::User("other".into()), &["gateway_host"]),
            only(Reader::User("ci".into()), &["namespace", "token"]),
        ];
        let granted = grants(&estate(), &readers, &outputs);
        assert_eq!(granted.len(), 3, "{granted:?}");
        let by_secrets: BTreeMap<Vec<String>, (&Role, Vec<String>)> = granted
            .iter()
            .map(|(role, binding)| {
                assert_eq!(binding.role_ref.name, role.metadata.name.clone().unwrap());
                let subjects = binding
                    .subjects
                    .iter()
                    .flatten()
                    .map(|s| s.name.clone())
                    .collect();
                (names(role), (role, subjects))
            })
            .collect();
        let (role, subjects) = &by_secrets[&vec!["output-gateway-host".to_string()]];
        assert_eq!(subjects, &["restricted", "other"]);
        let name = role.metadata.name.clone().unwrap();
        assert!(
            name.starts_with("tofu-records-readers-") && is_grant_name(&name),
            "{name}"
        );
        // The name follows the outputs, not the readers or their order.
        let again = grants(&estate(), &readers[1..2], &outputs);
        assert_eq!(again[0].0.metadata.name.as_deref(), Some(name.as_str()));
        assert_eq!(
            by_secrets[&vec!["output-namespace".to_string(), "output-token".to_string()]].1,
            ["ci"]
        );
        assert_eq!(
            by_secrets[&outputs.values().cloned().collect::<Vec<_>>()].1,
            ["admins"]
        );

        // What the cluster holds reads back as the same grants.
        let roles: Vec<Role> = granted.iter().map(|(r, _)| r.clone()).collect();
        let bindings: Vec<RoleBinding> = granted.iter().map(|(_, b)| b.clone()).collect();
        let mut expected = readers.to_vec();
        expected.sort();
        assert_eq!(live_grants(&roles, &bindings, &outputs), expected);
        assert!(!is_grant_name("tofu-records-read-app"));
    }

    #[test]
    fn nothing_is_granted_without_readers_or_outputs() {
        assert!(grants(&estate(), &[], &secrets(&["a"])).is_empty());
        assert!(grants(&estate(), &[all(Reader::Group("g".into()))], &BTreeMap::new()).is_empty());
        // Outputs not recorded grant nothing.
        let unrecorded = only(Reader::Group("g".into()), &["gone"]);
        assert!(grants(&estate(), &[unrecorded], &secrets(&["a"])).is_empty());
    }

    #[test]
    fn changed_rules_or_subjects_do_not_match() {
        let granted = grants(&estate(), &[all(Reader::User("a".into()))], &secrets(&["a"]));
        let other = grants(
            &estate(),
            &[all(Reader::Group("a".into()))],
            &secrets(&["a", "b"]),
        );
        assert!(!role_matches(&other[0].0, &granted[0].0));
        assert!(!binding_matches(&other[0].1, &granted[0].1));
    }

    #[test]
    fn readers_parse_and_round_trip_as_values() {
        let value = Value::Tuple(vec![
            reader("User", "app-planner", None),
            reader("Group", "devs", None),
            reader("ServiceAccount", "ci", Some("tools")),
            reader("User", "app-planner", None),
        ]);
        assert!(validate_readers(&value, None).is_empty());
        let readers: Vec<Reader> = readers_of(&value)
            .unwrap()
            .into_iter()
            .map(|g| g.reader)
            .collect();
        assert_eq!(
            readers,
            [
                Reader::User("app-planner".into()),
                Reader::Group("devs".into()),
                Reader::ServiceAccount {
                    namespace: "tools".into(),
                    name: "ci".into()
                },
            ]
        );
        for r in &readers {
            assert_eq!(Reader::from_subject(&r.subject()).as_ref(), Some(r));
        }
        assert_eq!(
            readers[2].to_value(),
            reader("ServiceAccount", "ci", Some("tools"))
        );
        assert_eq!(readers[0].hcl(), "{ kind = \"User\", name = \"app-planner\" }");
    }

    #[test]
    fn bad_readers_are_reported_at_their_path() {
        let value = Value::Tuple(vec![
            reader("Robot", "r", None),
            reader("ServiceAccount", "ci", None),
            reader("User", "u", Some("ns")),
            Value::object([("kind", Value::string("User"))]),
            Value::string("app-planner"),
        ]);
        let paths: Vec<String> = validate_readers(&value, None)
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "readers[0].kind",
                "readers[1].namespace",
                "readers[2].namespace",
                "readers[3].name",
                "readers[4]"
            ]
        );
        assert!(validate_readers(&Value::string("x"), None).has_errors());
        assert!(validate_readers(&Value::Tuple(vec![Value::unknown()]), None).is_empty());
        let partly_unknown = Value::Tuple(vec![Value::object([
            ("kind", Value::unknown()),
            ("name", Value::string("x")),
        ])]);
        assert!(validate_readers(&partly_unknown, None).is_empty());
    }

    #[test]
    fn typed_readers_validate_like_plain_ones() {
        use plugin_runtime::Type;
        // `readers = var.readers`, a list(object(...)): empty, or with a null namespace.
        let entry = Type::object([
            ("kind", Type::String),
            ("name", Type::String),
            ("namespace", Type::String),
        ]);
        let empty = Value::typed(&Type::list(entry.clone()), Value::List(vec![]));
        assert!(validate_readers(&empty, None).is_empty());
        assert_eq!(readers_of(&empty).unwrap(), []);
        let mut user = reader("User", "a", None);
        user.set("namespace", Value::Null);
        let one = Value::typed(&Type::list(entry), Value::List(vec![user]));
        assert!(one.elements()[0].get("namespace").is_null());
        assert!(validate_readers(&one, None).is_empty());
        assert_eq!(readers_of(&one).unwrap(), [all(Reader::User("a".into()))]);
        let with_outputs = Type::object([
            ("kind", Type::String),
            ("name", Type::String),
            ("outputs", Type::list(Type::String)),
        ]);
        let mut user = reader("User", "a", None);
        user.set("outputs", Value::Null);
        let typed = Value::typed(&Type::list(with_outputs), Value::List(vec![user]));
        assert!(validate_readers(&typed, None).is_empty());
        assert_eq!(readers_of(&typed).unwrap(), [all(Reader::User("a".into()))]);
    }

    #[test]
    fn readers_with_outputs_parse_merge_and_are_checked() {
        let with_outputs = |name: &str, outputs: Value| {
            let mut v = reader("User", name, None);
            v.set("outputs", outputs);
            v
        };
        let list = |names: &[&str]| Value::List(names.iter().map(|n| Value::string(*n)).collect());
        let value = Value::Tuple(vec![
            with_outputs("r", list(&["gateway_host"])),
            with_outputs("r", list(&["namespace"])),
            with_outputs("both", list(&["namespace"])),
            reader("User", "both", None),
        ]);
        let recorded: BTreeSet<String> = ["gateway_host", "namespace"].map(String::from).into();
        assert!(validate_readers(&value, Some(&recorded)).is_empty());
        assert_eq!(
            readers_of(&value).unwrap(),
            [
                all(Reader::User("both".into())),
                only(Reader::User("r".into()), &["gateway_host", "namespace"]),
            ]
        );
        assert_eq!(
            only(Reader::User("r".into()), &["a"]).to_value(),
            with_outputs("r", list(&["a"]))
        );
        assert_eq!(
            Reader::User("r".into()).hcl_for_outputs(&["a".into(), "b".into()]),
            "{ kind = \"User\", name = \"r\", outputs = [\"a\", \"b\"] }"
        );

        let bad = Value::Tuple(vec![
            with_outputs("a", list(&[])),
            with_outputs("b", Value::string("gateway_host")),
            with_outputs("c", list(&["gateway_host", "nope"])),
        ]);
        let diags = validate_readers(&bad, Some(&recorded));
        let paths: Vec<String> = diags
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(
            paths,
            [
                "readers[0].outputs",
                "readers[1].outputs",
                "readers[2].outputs[1]"
            ]
        );
        assert!(
            diags.0[2]
                .detail
                .contains("\"nope\" is not an output of this resource")
        );
        // Outputs not known yet are not checked.
        let unchecked = Value::Tuple(vec![bad.elements()[2].clone()]);
        assert!(validate_readers(&unchecked, None).is_empty());
    }
}
