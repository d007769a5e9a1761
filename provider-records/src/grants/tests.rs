//! The grants' names, rules and matching, without a cluster.
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
