//! Who may read an estate's outputs: the `readers` of `records_outputs` become one Role
//! allowing `get` on exactly the output Secrets by name (never `list`, which would expose
//! every Secret in the namespace) and one RoleBinding naming the readers.

use std::collections::BTreeMap;

use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_estate::{ESTATE_LABEL, Estate};
use plugin_runtime::{AttributePath, Diagnostic, Diagnostics, Value};

/// Name of the Role and of its RoleBinding in the records namespace.
pub const GRANT_NAME: &str = "tofu-records-readers";
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
        match self {
            Reader::User(n) => format!("{{ kind = \"User\", name = {n:?} }}"),
            Reader::Group(n) => format!("{{ kind = \"Group\", name = {n:?} }}"),
            Reader::ServiceAccount { namespace, name } => {
                format!("{{ kind = \"ServiceAccount\", name = {name:?}, namespace = {namespace:?} }}")
            }
        }
    }
}

/// Checks a `readers` value; unknown parts are skipped.
pub fn validate_readers(readers: &Value) -> Diagnostics {
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
        if let Err(d) = parse_reader(entry, root.clone().index(i as i64)) {
            diags.push(d);
        }
    }
    diags
}

/// The readers of a `readers` value (wholly known at apply), sorted and without repeats.
pub fn readers_of(readers: &Value) -> Result<Vec<Reader>, Diagnostic> {
    let mut out = Vec::new();
    for (i, entry) in readers.elements().iter().enumerate() {
        out.extend(parse_reader(
            entry,
            AttributePath::root("readers").index(i as i64),
        )?);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The reader an entry names; `None` while a part of it is still unknown.
fn parse_reader(entry: &Value, at: AttributePath) -> Result<Option<Reader>, Diagnostic> {
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
        .find(|k| !["kind", "name", "namespace"].contains(&k.as_str()))
    {
        return Err(invalid(
            extra,
            format!("A reader has kind, name and namespace only, not {extra:?}."),
        ));
    }
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
    Ok(Some(reader))
}

fn meta(estate: &Estate) -> ObjectMeta {
    ObjectMeta {
        name: Some(GRANT_NAME.to_string()),
        namespace: Some(estate.records_namespace()),
        labels: Some(BTreeMap::from([(
            ESTATE_LABEL.to_string(),
            estate.as_str().to_string(),
        )])),
        ..ObjectMeta::default()
    }
}

/// The rule granting `get` on exactly `secret_names`. It must never be built from an
/// empty list: a rule without resourceNames covers every Secret.
fn get_rule(secret_names: &[String]) -> PolicyRule {
    debug_assert!(!secret_names.is_empty());
    let mut names = secret_names.to_vec();
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

/// The Role and RoleBinding letting `readers` get the Secrets named, or `None` when
/// there is nothing to grant (no readers or no outputs).
pub fn grants(estate: &Estate, readers: &[Reader], secret_names: &[String]) -> Option<(Role, RoleBinding)> {
    if readers.is_empty() || secret_names.is_empty() {
        return None;
    }
    let role = Role {
        metadata: meta(estate),
        rules: Some(vec![get_rule(secret_names)]),
    };
    let binding = RoleBinding {
        metadata: meta(estate),
        role_ref: RoleRef {
            api_group: Some(RBAC_GROUP.to_string()),
            kind: "Role".to_string(),
            name: GRANT_NAME.to_string(),
        },
        subjects: Some(readers.iter().map(Reader::subject).collect()),
    };
    Some((role, binding))
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

    #[test]
    fn role_grants_get_on_exactly_the_named_secrets() {
        let names = vec!["output-namespace".to_string(), "output-gateway-host".to_string()];
        let (role, binding) = grants(&estate(), &[Reader::User("app-planner".into())], &names).unwrap();
        assert_eq!(role.metadata.name.as_deref(), Some(GRANT_NAME));
        assert_eq!(role.metadata.namespace.as_deref(), Some("tofu-records-network"));
        let rules = role.rules.clone().unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].verbs, ["get"]);
        assert_eq!(rules[0].api_groups.as_deref(), Some(&[String::new()][..]));
        assert_eq!(rules[0].resources.as_deref(), Some(&["secrets".to_string()][..]));
        assert_eq!(
            rules[0].resource_names.as_deref(),
            Some(&["output-gateway-host".to_string(), "output-namespace".to_string()][..])
        );
        assert_eq!(binding.role_ref.kind, "Role");
        assert_eq!(binding.role_ref.name, GRANT_NAME);
        let subject = &binding.subjects.clone().unwrap()[0];
        assert_eq!(
            (subject.kind.as_str(), subject.name.as_str()),
            ("User", "app-planner")
        );
        assert_eq!(subject.api_group.as_deref(), Some(RBAC_GROUP));
        assert!(role_matches(&role, &role));
        assert!(binding_matches(&binding, &binding));
    }

    #[test]
    fn nothing_is_granted_without_readers_or_outputs() {
        assert!(grants(&estate(), &[], &["output-a".into()]).is_none());
        assert!(grants(&estate(), &[Reader::Group("g".into())], &[]).is_none());
    }

    #[test]
    fn changed_rules_or_subjects_do_not_match() {
        let readers = [Reader::User("a".into())];
        let (role, binding) = grants(&estate(), &readers, &["output-a".into()]).unwrap();
        let (other_role, other_binding) = grants(
            &estate(),
            &[Reader::Group("a".into())],
            &["output-a".into(), "output-b".into()],
        )
        .unwrap();
        assert!(!role_matches(&other_role, &role));
        assert!(!binding_matches(&other_binding, &binding));
    }

    #[test]
    fn readers_parse_and_round_trip_as_values() {
        let value = Value::Tuple(vec![
            reader("User", "app-planner", None),
            reader("Group", "devs", None),
            reader("ServiceAccount", "ci", Some("tools")),
            reader("User", "app-planner", None),
        ]);
        assert!(validate_readers(&value).is_empty());
        let readers = readers_of(&value).unwrap();
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
        let paths: Vec<String> = validate_readers(&value)
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
        assert!(validate_readers(&Value::string("x")).has_errors());
        assert!(validate_readers(&Value::Tuple(vec![Value::unknown()])).is_empty());
        let partly_unknown = Value::Tuple(vec![Value::object([
            ("kind", Value::unknown()),
            ("name", Value::string("x")),
        ])]);
        assert!(validate_readers(&partly_unknown).is_empty());
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
        assert!(validate_readers(&empty).is_empty());
        assert_eq!(readers_of(&empty).unwrap(), []);
        let mut user = reader("User", "a", None);
        user.set("namespace", Value::Null);
        let one = Value::typed(&Type::list(entry), Value::List(vec![user]));
        assert!(one.elements()[0].get("namespace").is_null());
        assert!(validate_readers(&one).is_empty());
        assert_eq!(readers_of(&one).unwrap(), [Reader::User("a".into())]);
    }
}
