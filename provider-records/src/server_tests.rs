//! The resource and the data source against the project's Kubernetes test server, called
//! the way the plugin runtime calls them: the issue's story from record to refusal, grant,
//! drift and teardown.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_estate::{Configured, connect};
use kube_test_server::{Options, TestServer};
use plugin_runtime::{
    ApplyRequest, DataSource, Diagnostic, Number, PlanRequest, ReadDataRequest, ReadRequest, Resource,
    Severity, Type, Value, codec,
};

use crate::estate_outputs::EstateOutputs;
use crate::outputs_resource::OutputsResource;

const NS: &str = "tofu-records-network";

async fn configured(server: &TestServer, estate: &str, token: &str) -> Arc<Configured> {
    let conn = connect(&Value::object([
        ("estate", Value::string(estate)),
        ("host", Value::string(server.url())),
        ("token", Value::string(token)),
        ("cluster_ca_certificate", Value::string(server.ca_pem())),
    ]))
    .await
    .unwrap();
    let c = Configured::default();
    c.set(conn);
    Arc::new(c)
}

fn resource_config(values: Value, sensitive: Value, readers: Value) -> Value {
    Value::object([
        ("id", Value::Null),
        ("namespace", Value::Null),
        ("values", values),
        ("sensitive_values", sensitive),
        ("readers", readers),
        ("history", Value::Null),
        ("serial", Value::Null),
        ("applied_at", Value::Null),
    ])
}

/// Plans and applies `config` over `prior` as the engine would; returns the new state.
async fn apply(r: &OutputsResource, prior: &Value, config: Value) -> Value {
    let mut proposed = config.clone();
    if !prior.is_null() {
        for computed in ["id", "namespace", "serial", "applied_at"] {
            proposed.set(computed, prior.get(computed).clone());
        }
    }
    let plan = r
        .plan(PlanRequest {
            type_name: "records_outputs".into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed,
            config: config.clone(),
            prior_private: vec![],
        })
        .await
        .unwrap();
    let applied = r
        .apply(ApplyRequest {
            type_name: "records_outputs".into(),
            prior_state: prior.clone(),
            planned_state: plan.planned_state,
            config,
            planned_private: vec![],
        })
        .await;
    assert!(applied.diagnostics.is_empty(), "{:?}", applied.diagnostics);
    applied.new_state
}

/// Destroys the outputs of `prior` as the engine would: an apply to a null planned state.
async fn destroy(r: &OutputsResource, prior: Value) {
    let destroyed = r
        .apply(ApplyRequest {
            type_name: "records_outputs".into(),
            prior_state: prior,
            planned_state: Value::Null,
            config: Value::Null,
            planned_private: vec![],
        })
        .await;
    assert!(destroyed.diagnostics.is_empty(), "{:?}", destroyed.diagnostics);
}

async fn refresh(r: &OutputsResource, state: &Value) -> Value {
    r.read(ReadRequest {
        type_name: "records_outputs".into(),
        current_state: state.clone(),
        private: vec![],
    })
    .await
    .unwrap()
    .new_state
}

fn data_config(names: Option<&[&str]>) -> Value {
    Value::object([
        ("estate", Value::string("network")),
        (
            "names",
            names
                .map(|n| Value::List(n.iter().map(|s| Value::string(*s)).collect()))
                .unwrap_or_default(),
        ),
        ("defaults", Value::Null),
        ("values", Value::Null),
        ("sensitive_values", Value::Null),
        ("as_of", Value::Null),
        ("serial", Value::Null),
        ("min_serial", Value::Null),
        ("max_age", Value::Null),
        ("versions", Value::Null),
    ])
}

async fn read_outputs(
    ds: &EstateOutputs,
    names: Option<&[&str]>,
) -> Result<(Value, Vec<Diagnostic>), Diagnostic> {
    ds.read(ReadDataRequest {
        type_name: "terraform_estate_outputs".into(),
        config: data_config(names),
    })
    .await
    .map(|r| (r.state, r.diagnostics.0))
    .map_err(|d| d.0[0].clone())
}

/// Names and resourceVersions of everything in the records namespace that we write.
async fn snapshot(client: &kube::Client) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    for s in secrets.list(&ListParams::default()).await.unwrap().items {
        out.insert(
            format!("Secret/{}", s.metadata.name.unwrap()),
            s.metadata.resource_version.unwrap(),
        );
    }
    let roles: Api<Role> = Api::namespaced(client.clone(), NS);
    for r in roles.list(&ListParams::default()).await.unwrap().items {
        out.insert(
            format!("Role/{}", r.metadata.name.unwrap()),
            r.metadata.resource_version.unwrap(),
        );
    }
    out
}

/// How many requests `user` made with `verb` on `resource`, from the server's counters.
async fn request_count(admin: &kube::Client, user: &str, verb: &str, resource: &str) -> u64 {
    let req = http::Request::get("/_test/requests").body(Vec::new()).unwrap();
    let counters: serde_json::Value = admin.request(req).await.unwrap();
    counters["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["user"] == user && c["verb"] == verb && c["resource"] == resource)
        .map(|c| c["count"].as_u64().unwrap())
        .sum()
}

/// Lets `user` get namespaces, as the scenario's planner "may read cluster objects".
async fn grant_namespace_reads(admin: &kube::Client, user: &str) {
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "read-namespaces"},
        "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}],
    }))
    .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "read-namespaces"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read-namespaces"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }))
    .unwrap();
    let params = PostParams::default();
    Api::<ClusterRole>::all(admin.clone())
        .create(&params, &role)
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&params, &binding)
        .await
        .unwrap();
}

#[tokio::test]
async fn record_refuse_grant_read_drift_and_destroy() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let planner_token = server.token_for("app-planner").unwrap();
    let app = configured(&server, "app", &planner_token).await;
    let resource = OutputsResource::new(network.clone());
    let data = EstateOutputs::new(app.clone());
    let outsider = configured(&server, "app", "restricted-token-0123456789abcdef").await;
    grant_namespace_reads(&admin, "app-planner").await;

    // network records its outputs: one Secret each, in a namespace labelled with the estate.
    let limits = Value::object([
        ("cpu", Value::int(2)),
        ("tags", Value::Tuple(vec![Value::string("a"), Value::string("b")])),
    ]);
    let values = Value::object([
        (
            "gateway_host",
            Value::string("gateway.platform.svc.cluster.local"),
        ),
        ("namespace", Value::string("platform")),
        ("limits", limits.clone()),
        ("replicas", Value::int(3)),
        (
            "big",
            Value::Number(Number::parse("123456789012345678901234567890").unwrap()),
        ),
    ]);
    let sensitive = Value::object([("token", Value::string("s3cret"))]);
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values.clone(), sensitive.clone(), Value::Null),
    )
    .await;
    assert_eq!(state.get("id"), &Value::string("network"));
    assert_eq!(state.get("serial"), &Value::int(1));
    let ns: Api<Namespace> = Api::all(admin.clone());
    let labels = ns.get(NS).await.unwrap().metadata.labels.unwrap();
    assert_eq!(labels["tofu-estate"], "network");
    let before = snapshot(&admin).await;
    assert_eq!(before.len(), 7, "six outputs and the head: {before:?}");
    assert_eq!(
        refresh(&resource, &state).await,
        state,
        "a refresh right after apply changes nothing"
    );

    // app-planner, with no grant, is refused, and told who, where and what would grant it.
    let names: &[&str] = &["gateway_host", "namespace", "limits", "replicas", "big"];
    let refusal = read_outputs(&data, Some(names)).await.unwrap_err();
    assert_eq!(
        refusal.summary,
        "This estate may not read another estate's outputs"
    );
    for needle in [
        "estate \"network\"",
        "namespace \"tofu-records-network\"",
        "User \"app-planner\"",
        "(verb \"get\")",
    ] {
        assert!(refusal.detail.contains(needle), "{needle}: {}", refusal.detail);
    }

    // network adds the reader: a Role with get by name only; no output is rewritten.
    let readers = Value::Tuple(vec![Value::object([
        ("kind", Value::string("User")),
        ("name", Value::string("app-planner")),
    ])]);
    let state = apply(
        &resource,
        &state,
        resource_config(values.clone(), sensitive.clone(), readers.clone()),
    )
    .await;
    assert_eq!(
        state.get("serial"),
        &Value::int(1),
        "grants alone do not change the outputs"
    );
    let roles: Api<Role> = Api::namespaced(admin.clone(), NS);
    let rule = &roles.get("tofu-records-readers").await.unwrap().rules.unwrap()[0];
    assert_eq!(rule.verbs, ["get"]);
    assert_eq!(
        rule.resource_names.as_ref().unwrap().len(),
        7,
        "six outputs and the head"
    );
    let after_grant = snapshot(&admin).await;
    let secrets_only = |m: &BTreeMap<String, String>| {
        m.iter()
            .filter(|(k, _)| k.starts_with("Secret/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(secrets_only(&after_grant), secrets_only(&before));

    // The same read now succeeds, with k GETs for k names and one of the head, types intact,
    // and a warning.
    let requests = || request_count(&admin, "app-planner", "get", "secrets");
    let gets_before = requests().await;
    let (read, diags) = read_outputs(&data, Some(names)).await.unwrap();
    assert_eq!(requests().await - gets_before, names.len() as u64 + 1);
    assert_eq!(read.get("values"), &values);
    assert_eq!(read.get("values").get("limits").infer_type(), limits.infer_type());
    assert_eq!(read.get("serial"), &Value::int(1));
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].severity, Severity::Warning);
    assert!(
        diags[0]
            .summary
            .starts_with("Outputs of estate \"network\" are as of its last apply at ")
    );
    assert!(diags[0].summary.ends_with(" (serial 1)"));
    let (sensitive_read, _) = read_outputs(&data, Some(&["token"])).await.unwrap();
    assert_eq!(sensitive_read.get("sensitive_values"), &sensitive);
    assert_eq!(snapshot(&admin).await, after_grant, "reads change nothing");

    // Without names the data source lists, which the grant does not allow.
    let refusal = read_outputs(&data, None).await.unwrap_err();
    assert!(refusal.detail.contains("(verb \"list\")"), "{}", refusal.detail);

    // A change grows the serial and rewrites only the changed output, and the head it commits.
    let mut changed = values.clone();
    changed.set("replicas", Value::int(4));
    let state = apply(
        &resource,
        &state,
        resource_config(changed.clone(), sensitive.clone(), readers.clone()),
    )
    .await;
    assert_eq!(state.get("serial"), &Value::int(2));
    let after_change = snapshot(&admin).await;
    let rewritten: Vec<&String> = after_change
        .iter()
        .filter(|(k, v)| after_grant.get(*k) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(rewritten, ["Secret/output-replicas", "Secret/records-head"]);

    // Drift: a deleted Secret shows as a missing output on refresh.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);
    secrets
        .delete("output-namespace", &DeleteParams::default())
        .await
        .unwrap();
    let drifted = refresh(&resource, &state).await;
    assert!(drifted.get("values").get("namespace").is_null());
    assert_eq!(
        drifted.get("readers"),
        &readers,
        "the grant still matches the state"
    );

    // Destroy removes the Secrets; the readers' grant stays, and so the namespace, so a
    // granted reader's gets find nothing (404) and it is told "not recorded".
    destroy(&resource, state.clone()).await;
    assert!(secrets.list(&Default::default()).await.unwrap().items.is_empty());
    assert!(roles.get_opt("tofu-records-readers").await.unwrap().is_some());
    let kept = ns.get(NS).await.unwrap();
    assert!(kept.metadata.deletion_timestamp.is_none());
    let gone = read_outputs(&data, Some(&["gateway_host"])).await.unwrap_err();
    assert_eq!(gone.summary, "Outputs of estate \"network\" are not recorded");
    assert!(gone.detail.contains("\"gateway_host\""), "{}", gone.detail);
    let mut with_defaults = data_config(Some(&["gateway_host"]));
    with_defaults.set(
        "defaults",
        Value::object([("gateway_host", Value::string("fallback"))]),
    );
    let defaulted = data
        .read(ReadDataRequest {
            type_name: "terraform_estate_outputs".into(),
            config: with_defaults,
        })
        .await
        .unwrap();
    assert_eq!(
        defaulted.state.get("values"),
        &Value::object([("gateway_host", Value::string("fallback"))])
    );
    assert!(defaulted.diagnostics.is_empty());
    // An identity never granted, that may not even look at namespaces, is refused.
    let still_refused = read_outputs(&EstateOutputs::new(outsider), Some(&["gateway_host"]))
        .await
        .unwrap_err();
    assert!(
        still_refused.detail.contains("User \"restricted\""),
        "{}",
        still_refused.detail
    );
    let network_reader = EstateOutputs::new(network.clone());
    let gone = read_outputs(&network_reader, None).await.unwrap_err();
    assert!(
        gone.detail
            .starts_with("No outputs of estate \"network\" are recorded"),
        "{}",
        gone.detail
    );

    // Recording again reuses the namespace; without readers, a destroy removes it all.
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values.clone(), Value::Null, Value::Null),
    )
    .await;
    assert_eq!(state.get("serial"), &Value::int(1));
    assert!(roles.get_opt("tofu-records-readers").await.unwrap().is_none());
    destroy(&resource, state).await;
    // Like a real cluster, the namespace goes through Terminating before it is gone.
    let left = ns.get_opt(NS).await.unwrap();
    assert!(left.is_none_or(|n| n.metadata.deletion_timestamp.is_some()));
    let gone = read_outputs(&data, Some(&["gateway_host"])).await.unwrap_err();
    assert_eq!(gone.summary, "Outputs of estate \"network\" are not recorded");

    // Recording again right away waits for the old namespace to finish terminating.
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values.clone(), Value::Null, Value::Null),
    )
    .await;
    assert_eq!(state.get("serial"), &Value::int(1));
    assert!(ns.get(NS).await.unwrap().metadata.deletion_timestamp.is_none());
}

#[tokio::test]
async fn import_by_estate_name_reads_everything_back() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let resource = OutputsResource::new(network);
    let values = Value::object([("a", Value::string("x")), ("n", Value::int(1))]);
    let readers = Value::Tuple(vec![Value::object([
        ("kind", Value::string("ServiceAccount")),
        ("name", Value::string("ci")),
        ("namespace", Value::string("tools")),
    ])]);
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values.clone(), Value::Null, readers.clone()),
    )
    .await;

    let wrong = resource
        .import(plugin_runtime::ImportRequest {
            type_name: "records_outputs".into(),
            id: "app".into(),
        })
        .await;
    assert!(wrong.is_err());
    let imported = resource
        .import(plugin_runtime::ImportRequest {
            type_name: "records_outputs".into(),
            id: "network".into(),
        })
        .await
        .unwrap();
    let read = refresh(&resource, &imported.imported[0].state).await;
    assert_eq!(read, state);

    // With the state lost, applying the same configuration adopts the records as they are.
    let adopted = apply(
        &resource,
        &Value::Null,
        resource_config(values, Value::Null, readers),
    )
    .await;
    assert_eq!(adopted, state);
}

#[tokio::test]
async fn a_record_stripped_of_its_labels_is_taken_back() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let resource = OutputsResource::new(network);
    let values = Value::object([("a", Value::string("x"))]);
    let config = resource_config(values, Value::Null, Value::Null);
    let state = apply(&resource, &Value::Null, config.clone()).await;

    let secrets: Api<Secret> = Api::namespaced(admin, NS);
    let mut secret = secrets.get("output-a").await.unwrap();
    secret.metadata.labels = None;
    secrets
        .replace("output-a", &PostParams::default(), &secret)
        .await
        .unwrap();

    let drifted = refresh(&resource, &state).await;
    assert_eq!(
        drifted.get("values"),
        &Value::object(Vec::<(String, Value)>::new())
    );
    let repaired = apply(&resource, &drifted, config).await;
    assert_eq!(repaired.get("values"), state.get("values"));
    assert_eq!(repaired.get("serial"), &Value::int(2));
    let labels = secrets.get("output-a").await.unwrap().metadata.labels.unwrap();
    assert_eq!(labels["tofu-estate"], "network");
}

#[tokio::test]
async fn outputs_keep_the_exact_types_the_engine_sent() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let resource = OutputsResource::new(network.clone());
    let data = EstateOutputs::new(network);

    // `values = { ids = var.ids, m = var.m, e = tomap({}), s = var.s, n = var.n, mixed = {...} }`
    // as the runtime decodes it: each value with the type the engine sent.
    let ty = Type::object([
        ("ids", Type::list(Type::String)),
        ("m", Type::map(Type::String)),
        ("e", Type::map(Type::Dynamic)),
        ("s", Type::set(Type::String)),
        ("n", Type::String),
        (
            "mixed",
            Type::object([("a", Type::Number), ("b", Type::list(Type::Bool))]),
        ),
    ]);
    let values = Value::typed(
        &ty,
        Value::object([
            ("ids", Value::List(vec![])),
            ("m", Value::Null),
            ("e", Value::Map(BTreeMap::new())),
            ("s", Value::Set(vec![])),
            ("n", Value::Null),
            (
                "mixed",
                Value::object([("a", Value::int(1)), ("b", Value::List(vec![]))]),
            ),
        ]),
    );
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values.clone(), Value::Null, Value::Null),
    )
    .await;
    let schema = resource.schema().value_type();
    let wire = codec::encode_msgpack(&state, &schema).unwrap();
    let back = codec::decode_msgpack(&wire, &schema).unwrap();
    assert_eq!(back, state, "the state goes to the engine as it came");
    assert_eq!(back.get("values").infer_type(), ty);
    assert_eq!(
        refresh(&resource, &state).await,
        state,
        "the records read back are what the state says"
    );

    // Each record carries the exact type, and a reader gets exactly that type back.
    let secrets: Api<Secret> = Api::namespaced(admin, NS);
    let ids = secrets.get("output-ids").await.unwrap();
    assert_eq!(ids.data.unwrap()["type"].0, br#"["list","string"]"#);
    let (read, _) = read_outputs(&data, None).await.unwrap();
    assert_eq!(read.get("values").infer_type(), ty);
    let schema = data.schema().value_type();
    let wire = codec::encode_msgpack(&read, &schema).unwrap();
    let read_back = codec::decode_msgpack(&wire, &schema).unwrap();
    assert_eq!(read_back.get("values"), &values);
}

#[tokio::test]
async fn a_grant_of_some_outputs_reads_those_refuses_the_rest_by_name_and_is_repaired() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let planner_token = server.token_for("app-planner").unwrap();
    let data = EstateOutputs::new(configured(&server, "app", &planner_token).await);
    let resource = OutputsResource::new(network.clone());
    let values = Value::object([("a", Value::string("x")), ("b", Value::string("y"))]);
    let readers = Value::Tuple(vec![Value::object([
        ("kind", Value::string("User")),
        ("name", Value::string("app-planner")),
        ("outputs", Value::List(vec![Value::string("a")])),
    ])]);
    let config = resource_config(values, Value::Null, readers);
    let state = apply(&resource, &Value::Null, config.clone()).await;

    // One Role, for that set of outputs, listing output-a alone.
    let roles: Api<Role> = Api::namespaced(admin.clone(), NS);
    let live = roles.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(live.len(), 1);
    let role_name = live[0].metadata.name.clone().unwrap();
    assert!(role_name.starts_with("tofu-records-readers-"), "{role_name}");
    let rules = live[0].rules.clone().unwrap();
    assert_eq!(
        rules[0].resource_names.as_deref(),
        Some(&["output-a".to_string(), "records-head".to_string()][..])
    );

    let (read, _) = read_outputs(&data, Some(&["a"])).await.unwrap();
    assert_eq!(read.get("values").get("a"), &Value::string("x"));
    let refused = read_outputs(&data, Some(&["a", "b"])).await.unwrap_err();
    assert!(
        refused
            .detail
            .contains("Output \"b\" is not granted to it; it may read \"a\""),
        "{}",
        refused.detail
    );
    assert!(
        refused.detail.contains("resourceNames: [\"output-b\"]"),
        "{}",
        refused.detail
    );

    // No drift while the grants are as applied; a Role deleted by hand shows as a change of
    // `readers`, and the next apply puts it back.
    assert_eq!(refresh(&resource, &state).await, state);
    roles.delete(&role_name, &DeleteParams::default()).await.unwrap();
    let drifted = refresh(&resource, &state).await;
    assert_ne!(drifted.get("readers"), state.get("readers"));
    apply(&resource, &drifted, config).await;
    assert!(roles.get_opt(&role_name).await.unwrap().is_some());
    assert!(read_outputs(&data, Some(&["a"])).await.is_ok());
}

#[tokio::test]
async fn a_destroy_keeps_a_namespace_holding_a_foreign_object_beside_the_automatic_ones() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let resource = OutputsResource::new(network);
    let values = Value::object([("a", Value::string("x"))]);
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(values, Value::Null, Value::Null),
    )
    .await;

    // Named after `kube-root-ca.crt`, so a listing that stopped at the automatic one would
    // miss it.
    let config_maps: Api<ConfigMap> = Api::namespaced(admin.clone(), NS);
    let automatic = config_maps.get_opt("kube-root-ca.crt").await.unwrap();
    assert!(automatic.is_some(), "the namespace holds kube-root-ca.crt");
    let foreign = ConfigMap {
        metadata: ObjectMeta {
            name: Some("zz-foreign".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    config_maps
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();

    destroy(&resource, state).await;
    let namespaces: Api<Namespace> = Api::all(admin);
    let kept = namespaces.get(NS).await.unwrap();
    assert!(
        kept.metadata.deletion_timestamp.is_none(),
        "the namespace was deleted"
    );
    assert!(config_maps.get_opt("zz-foreign").await.unwrap().is_some());
}

#[tokio::test]
async fn a_second_writer_is_refused_and_readers_see_one_commit_whole() {
    let server = TestServer::start(Options::default());
    let network = configured(&server, "network", server.admin_token()).await;
    let admin = network.get().unwrap().client.clone();
    let resource = OutputsResource::new(network.clone());
    let data = EstateOutputs::new(network.clone());
    let outputs = |n: i64| Value::object([("a", Value::int(n)), ("b", Value::int(n))]);
    let state = apply(
        &resource,
        &Value::Null,
        resource_config(outputs(1), Value::Null, Value::Null),
    )
    .await;
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), NS);

    // Another apply claimed the head and has written `a` of serial 2 so far.
    let mut head = secrets.get("records-head").await.unwrap();
    let since = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    head.metadata.annotations.get_or_insert_default().insert(
        "tofu-records/writing".into(),
        format!("2 0123456789abcdef {since}"),
    );
    secrets
        .replace("records-head", &PostParams::default(), &head)
        .await
        .unwrap();
    let mut a = secrets.get("output-a").await.unwrap();
    let annotations = a.metadata.annotations.get_or_insert_default();
    annotations.insert("tofu-records/serial".into(), "2".into());
    a.data.get_or_insert_default().insert(
        "history".into(),
        k8s_openapi::ByteString(
            br#"[{"serial":1,"applied_at":"2026-12-06T00:00:00Z","sensitive":false,"value":1,"type":"number"}]"#
                .to_vec(),
        ),
    );
    a.data
        .get_or_insert_default()
        .insert("value".into(), k8s_openapi::ByteString(b"2".to_vec()));
    secrets
        .replace("output-a", &PostParams::default(), &a)
        .await
        .unwrap();

    // A reader sees serial 1 whole: `a` as it was, not the version being written.
    let (read, _) = read_outputs(&data, Some(&["a", "b"])).await.unwrap();
    assert_eq!(read.get("values"), &outputs(1), "a mix of two applies");
    assert_eq!(read.get("serial"), &Value::int(1));
    let (all, _) = read_outputs(&data, None).await.unwrap();
    assert_eq!(all.get("values"), &outputs(1));
    // So does the producer's own refresh: the version not committed is no record yet.
    assert_eq!(refresh(&resource, &state).await.get("values"), &outputs(1));

    // A second writer is refused, naming the estate, and writes nothing.
    let before = snapshot(&admin).await;
    let mut proposed = resource_config(outputs(3), Value::Null, Value::Null);
    for computed in ["id", "namespace", "serial", "applied_at"] {
        proposed.set(computed, state.get(computed).clone());
    }
    let plan = resource
        .plan(PlanRequest {
            type_name: "records_outputs".into(),
            prior_state: state.clone(),
            proposed_new_state: proposed,
            config: resource_config(outputs(3), Value::Null, Value::Null),
            prior_private: vec![],
        })
        .await
        .unwrap();
    let refused = resource
        .apply(ApplyRequest {
            type_name: "records_outputs".into(),
            prior_state: state.clone(),
            planned_state: plan.planned_state,
            config: resource_config(outputs(3), Value::Null, Value::Null),
            planned_private: vec![],
        })
        .await;
    let error = &refused.diagnostics.0[0];
    assert_eq!(
        error.summary,
        "Another apply is writing the records of estate \"network\""
    );
    assert!(
        error.detail.contains("Two states claim one estate"),
        "{}",
        error.detail
    );
    assert_eq!(
        snapshot(&admin).await,
        before,
        "the refused apply wrote something"
    );

    // Once that claim has lapsed (its apply was stopped), a write takes over: serial 2 is
    // written again whole, with `a`'s history as committed, and the history is contiguous.
    head = secrets.get("records-head").await.unwrap();
    head.metadata.annotations.get_or_insert_default().insert(
        "tofu-records/writing".into(),
        "2 0123456789abcdef 2026-12-06T00:00:00Z".into(),
    );
    secrets
        .replace("records-head", &PostParams::default(), &head)
        .await
        .unwrap();
    let state = apply(
        &resource,
        &state,
        resource_config(outputs(3), Value::Null, Value::Null),
    )
    .await;
    assert_eq!(state.get("serial"), &Value::int(2));
    let (read, _) = read_outputs(&data, Some(&["a", "b"])).await.unwrap();
    assert_eq!(read.get("values"), &outputs(3));
    assert_eq!(read.get("serial"), &Value::int(2));
    let a = crate::record::from_secret(&secrets.get("output-a").await.unwrap()).unwrap();
    assert_eq!(a.serials(), [2, 1]);

    // An output removed by serial 3 is marked first and gone after; the head goes on destroy.
    let state = apply(
        &resource,
        &state,
        resource_config(Value::object([("a", Value::int(4))]), Value::Null, Value::Null),
    )
    .await;
    assert!(secrets.get_opt("output-b").await.unwrap().is_none());
    destroy(&resource, state).await;
    assert!(secrets.get_opt("records-head").await.unwrap().is_none());
}
