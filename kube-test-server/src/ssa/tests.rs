//! Server-side apply and update bookkeeping held to the recorded transcripts.

use super::field_set::{Element, FieldSet, Path, Schema};
use super::managed_fields::{decode_entries, decode_set, encode_set, path_string, store_entries};
use super::merge::merge_items;

use super::*;
use crate::selectors::golden::{golden, query_param};

/// The body a step sends, YAML or JSON, as JSON.
fn body_of(step: &Value) -> Value {
    match &step["body"] {
        Value::String(yaml) => serde_yaml::from_str(yaml).unwrap(),
        other => other.clone(),
    }
}

fn time_of(step: &Value) -> String {
    step["response"]["body"]["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or("2026-12-02T10:43:26Z")
        .to_string()
}

/// Objects equal after blanking what storage owns (uid, resourceVersion, ...).
fn assert_same(actual: &Value, expected: &Value, context: &str) {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "namespace",
                "generation",
            ] {
                meta.remove(key);
            }
        }
        for key in ["clusterIP", "clusterIPs"] {
            if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove(key);
            }
        }
        v
    };
    assert_eq!(strip(actual), strip(expected), "{context}");
}

/// Replays every create/update/patch step of a transcript through defaults + record_update.
fn replay_updates(file: &str, steps: &[usize]) {
    let doc = golden(file);
    let all = doc["steps"].as_array().unwrap();
    let mut stored: Vec<Value> = Vec::new();
    for &index in steps {
        let step = &all[index];
        let path = step["path"].as_str().unwrap();
        let manager = query_param(path, "fieldManager").unwrap_or_else(|| "golden-recorder".into());
        let expected = &step["response"]["body"];
        let name = expected["metadata"]["name"].as_str().unwrap();
        let kind = expected["kind"].as_str().unwrap().to_string();
        let old = stored
            .iter()
            .find(|o| o["metadata"]["name"] == name && o["kind"] == kind)
            .cloned();
        let content_type = step["headers"]["Content-Type"].as_str().unwrap_or("");
        let mut new = match (content_type, &old) {
            ("application/json-patch+json", Some(o)) => crate::patch::json_patch(o, &step["body"]).unwrap(),
            ("application/strategic-merge-patch+json", Some(o)) => {
                crate::patch::strategic_merge_patch(o, &step["body"]).unwrap()
            }
            ("application/merge-patch+json", Some(o)) => crate::patch::merge_patch(o, &step["body"]),
            _ => step["body"].clone(),
        };
        let subresource = ["status", "scale"]
            .into_iter()
            .find(|s| path.split('?').next().unwrap().ends_with(s));
        if let (Some(o), Some("status")) = (&old, subresource) {
            let status = new["status"].clone();
            new = o.clone();
            new["status"] = status;
        }
        if let (Some(o), Some("scale")) = (&old, subresource) {
            let replicas = new["spec"]["replicas"].clone();
            new = o.clone();
            new["spec"]["replicas"] = replicas;
        }
        if let Some(o) = &old
            && subresource.is_none()
            && o.get("status").is_some()
        {
            new["status"] = o["status"].clone();
        }
        crate::defaults::apply_defaults(&kind, &mut new);
        new["apiVersion"] = json!(
            expected["apiVersion"]
                .as_str()
                .filter(|_| kind != "Scale")
                .unwrap_or("apps/v1")
        );
        new["kind"] = json!(kind);
        for key in ["clusterIP", "clusterIPs"] {
            if let Some(ip) = old.as_ref().and_then(|o| o["spec"].get(key)) {
                new["spec"][key] = ip.clone();
            }
        }
        let now = expected["metadata"]["managedFields"]
            .as_array()
            .and_then(|m| m.iter().filter_map(|e| e["time"].as_str()).max())
            .unwrap_or("2026-12-02T10:43:10Z")
            .to_string();
        record_update(old.as_ref(), &mut new, &manager, subresource, &now);
        if kind != "Scale" {
            assert_same(&new, expected, &format!("{file} step {index}"));
        }
        stored.retain(|o| !(o["metadata"]["name"] == name && o["kind"] == kind));
        stored.push(new);
    }
}

#[test]
fn update_managed_fields_match_transcripts() {
    replay_updates("03-configmap.json", &[0, 1, 5, 8, 9, 11]);
    replay_updates("05-list.json", &[0, 1, 2, 3, 4, 5]);
    replay_updates("06-secret.json", &[1, 3, 5]);
    replay_updates("07-service.json", &[1, 2, 3, 4, 6]);
    replay_updates("08-serviceaccount.json", &[1, 3]);
    replay_updates("10-hpa.json", &[1, 2, 4, 5]);
    replay_updates("11-networkpolicy.json", &[1, 2, 3]);
    replay_updates("14-rbac.json", &[2, 5, 6, 7]);
    replay_updates("15-lease.json", &[1, 3]);
    replay_updates("02-namespace.json", &[0]);
    replay_updates("13-dry-run.json", &[1, 3, 4]);
    replay_updates("16-delete-options.json", &[1, 4, 7, 11]);
    replay_updates("17-watch.json", &[2, 3]);
}

#[test]
fn deployment_status_and_scale_entries() {
    // 09: create, /status patch, PUT of the template, /scale PUT and PATCH (no time).
    let doc = golden("09-deployment.json");
    let s = |i: usize| doc["steps"][i].clone();
    let mut current = s(1)["body"].clone();
    crate::defaults::apply_defaults("Deployment", &mut current);
    record_update(None, &mut current, "tofu-live", None, "2026-12-02T10:43:07Z");
    assert_same(&current, &s(1)["response"]["body"], "create");
    let mut with_status = current.clone();
    with_status["status"] = s(3)["body"]["status"].clone();
    record_update(
        Some(&current),
        &mut with_status,
        "tofu-live",
        Some("status"),
        "2026-12-02T10:43:10Z",
    );
    assert_same(&with_status, &s(3)["response"]["body"], "status");
    let mut put = s(5)["body"].clone();
    put["status"] = with_status["status"].clone();
    crate::defaults::apply_defaults("Deployment", &mut put);
    record_update(
        Some(&with_status),
        &mut put,
        "tofu-live",
        None,
        "2026-12-02T10:43:10Z",
    );
    assert_same(&put, &s(5)["response"]["body"], "put");
    let mut scaled = put.clone();
    scaled["spec"]["replicas"] = json!(4);
    record_update(
        Some(&put),
        &mut scaled,
        "tofu-live",
        Some("scale"),
        "2026-12-02T10:43:10Z",
    );
    assert_same(&scaled, &s(9)["response"]["body"], "scale");
}

#[test]
fn a_scale_of_replicas_nobody_owns_records_no_manager() {
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
    let applied = apply(None, &config, "tofu-live", false, "2026-12-04T15:00:00Z")
        .unwrap()
        .object;
    let mut scaled = applied.clone();
    scaled["spec"]["replicas"] = json!(3);
    record_update(
        Some(&applied),
        &mut scaled,
        "tofu-live-scale",
        Some("scale"),
        "2026-12-04T15:00:01Z",
    );
    assert_eq!(
        scaled["metadata"]["managedFields"],
        applied["metadata"]["managedFields"]
    );
    assert_eq!(scaled["spec"]["replicas"], 3);
}

#[test]
fn server_side_apply_transcript() {
    let doc = golden("12-server-side-apply.json");
    let s = |i: usize| doc["steps"][i].clone();
    let mut live: Option<Value> = None;
    for index in [1, 2, 3, 4, 5, 8] {
        let step = s(index);
        let path = step["path"].as_str().unwrap();
        let manager = query_param(path, "fieldManager").unwrap();
        let force = query_param(path, "force").is_some();
        let result = apply(live.as_ref(), &body_of(&step), &manager, force, &time_of(&step));
        let expected = &step["response"]["body"];
        match result {
            Err(conflict) => assert_eq!(&conflict.status(), expected, "step {index}"),
            Ok(outcome) => {
                let mut object = outcome.object;
                crate::defaults::apply_defaults("ConfigMap", &mut object);
                assert_same(&object, expected, &format!("step {index}"));
                assert_eq!(outcome.changed, index != 8, "step {index}");
                if query_param(path, "dryRun").is_none() {
                    live = Some(object);
                }
            }
        }
    }
    // Deployment: apply, another manager's update of replicas, re-apply without replicas.
    let mut deployment = apply(None, &body_of(&s(9)), "tofu-live", true, "2026-12-02T10:43:26Z")
        .unwrap()
        .object;
    crate::defaults::apply_defaults("Deployment", &mut deployment);
    assert_same(&deployment, &s(9)["response"]["body"], "step 9");
    let mut scaled = crate::patch::merge_patch(&deployment, &s(10)["body"]);
    record_update(
        Some(&deployment),
        &mut scaled,
        "scaler",
        None,
        "2026-12-02T10:43:26Z",
    );
    assert_same(&scaled, &s(10)["response"]["body"], "step 10");
    let outcome = apply(
        Some(&scaled),
        &body_of(&s(11)),
        "tofu-live",
        true,
        "2026-12-02T10:43:26Z",
    )
    .unwrap();
    assert!(outcome.changed);
    assert_same(&outcome.object, &s(11)["response"]["body"], "step 11");
}

#[test]
fn service_apply_keys_ports_with_default_protocol() {
    let step = golden("07-service.json")["steps"][9].clone();
    let mut created = apply(None, &body_of(&step), "tofu-live", true, &time_of(&step))
        .unwrap()
        .object;
    crate::defaults::apply_defaults("Service", &mut created);
    assert_same(&created, &step["response"]["body"], "07 step 9");
}

/// Applies `config` by manager "tf" onto `live` and defaults the result, as the handler does.
fn apply_defaulted(live: Option<&Value>, config: &Value) -> Value {
    let mut object = apply(live, config, "tf", false, "2026-01-01T00:00:00Z")
        .unwrap()
        .object;
    let kind = object["kind"].as_str().unwrap().to_string();
    crate::defaults::apply_defaults(&kind, &mut object);
    object
}

#[test]
fn reapply_replaces_a_service_port_whose_key_changed() {
    let service = |port: u16| {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {
            "selector": {"app": "s"},
            "ports": [{"name": "http", "port": port, "targetPort": 8080}]
        }})
    };
    let first = apply_defaulted(None, &service(81));
    let second = apply_defaulted(Some(&first), &service(82));
    assert_eq!(
        second["spec"]["ports"],
        json!([{"name": "http", "port": 82, "protocol": "TCP", "targetPort": 8080}])
    );
    let owned = &second["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"];
    assert_eq!(
        owned.as_object().unwrap().keys().collect::<Vec<_>>(),
        [r#"k:{"port":82,"protocol":"TCP"}"#]
    );
}

#[test]
fn reapply_removes_dropped_items_and_keys_of_every_associative_list() {
    let deployment = |v2: bool| {
        let pick = |a: Value, b: Value| if v2 { a } else { b };
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labels": pick(json!({"x": "1"}), json!({"x": "1", "y": "2"}))},
            "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {
                    "containers": pick(
                        json!([{"name": "a", "image": "a:1",
                            "env": [{"name": "E1", "value": "1"}],
                            "ports": [{"containerPort": 81}],
                            "volumeMounts": [{"name": "v1", "mountPath": "/a"}]}]),
                        json!([{"name": "a", "image": "a:1",
                            "env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "2"}],
                            "ports": [{"containerPort": 80}],
                            "volumeMounts": [{"name": "v1", "mountPath": "/a"}, {"name": "v2", "mountPath": "/b"}]},
                            {"name": "b", "image": "b:1"}])),
                    "volumes": pick(
                        json!([{"name": "v1", "emptyDir": {}}]),
                        json!([{"name": "v1", "emptyDir": {}}, {"name": "v2", "emptyDir": {}}]))
                }
            }}
        })
    };
    let first = apply_defaulted(None, &deployment(false));
    let second = apply_defaulted(Some(&first), &deployment(true));
    let pod = &second["spec"]["template"]["spec"];
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{pod}");
    let c = &containers[0];
    assert_eq!(c["env"], json!([{"name": "E1", "value": "1"}]));
    assert_eq!(c["ports"], json!([{"containerPort": 81, "protocol": "TCP"}]));
    assert_eq!(c["volumeMounts"], json!([{"name": "v1", "mountPath": "/a"}]));
    assert_eq!(pod["volumes"].as_array().unwrap().len(), 1, "{pod}");
    assert_eq!(second["metadata"]["labels"], json!({"x": "1"}));
}

#[test]
fn reapply_keeps_dropped_fields_another_manager_owns() {
    let config_map = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
    let first = apply_defaulted(None, &config_map(json!({"a": "1", "b": "2", "c": "3"})));
    // Another manager writes b (same value) with an update: it now shares b.
    let mut updated = first.clone();
    updated["data"]["b"] = json!("2");
    updated["data"]["d"] = json!("4");
    record_update(
        Some(&first),
        &mut updated,
        "kubectl",
        None,
        "2026-01-01T00:00:01Z",
    );
    let mut entries = decode_entries(Some(&updated));
    let other = entries.iter_mut().find(|e| e.manager == "kubectl").unwrap();
    other
        .set
        .insert(vec![Element::Field("data".into()), Element::Field("b".into())]);
    store_entries(&mut updated, entries);
    let second = apply_defaulted(Some(&updated), &config_map(json!({"a": "1"})));
    assert_eq!(second["data"], json!({"a": "1", "b": "2", "d": "4"}));
}

#[test]
fn conflicts_with_update_managers_and_several_fields() {
    let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
    let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    record_update(Some(&old), &mut live, "kubectl", None, "2026-01-01T00:00:00Z");
    let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x", "b": "y"}});
    let conflict = apply(Some(&live), &config, "tofu-live", false, "2026-01-01T00:00:01Z").unwrap_err();
    assert_eq!(
        conflict.causes,
        vec![
            (".data.a".into(), "kubectl".into()),
            (".data.b".into(), "kubectl".into())
        ]
    );
    assert_eq!(
        conflict.message(),
        "Apply failed with 2 conflicts: conflicts with \"kubectl\" using v1:\n- .data.a\n- .data.b"
    );
    // Same values: shared ownership, no conflict, nothing changes.
    let same =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    let outcome = apply(Some(&live), &same, "tofu-live", false, "2026-01-01T00:00:01Z").unwrap();
    assert_eq!(outcome.object["data"], live["data"]);
    assert_eq!(
        outcome.object["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Objects the server creates from a request without storing them keep the same rules:
/// a SelfSubjectAccessReview (14 step 17) and a TokenRequest (08 step 4, subresource token).
#[test]
fn review_and_token_request_entries() {
    for (file, index, subresource) in [
        ("14-rbac.json", 17, None),
        ("08-serviceaccount.json", 4, Some("token")),
    ] {
        let step = golden(file)["steps"][index].clone();
        let expected = &step["response"]["body"];
        let mut object = expected.clone();
        object["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        let now = expected["metadata"]["managedFields"][0]["time"].as_str().unwrap();
        record_update(None, &mut object, "golden-recorder", subresource, now);
        assert_eq!(&object, expected, "{file} step {index}");
    }
}

#[test]
fn associative_lists_follow_the_configuration_order() {
    let schema = Schema {
        root: schema::of("apps/v1", "Deployment"),
    };
    let names: Vec<String> = ["spec", "template", "spec", "containers"]
        .map(String::from)
        .to_vec();
    let item = |n: &str| json!({"name": n, "image": format!("{n}:1")});
    let names_of = |v: Vec<Value>| {
        v.iter()
            .map(|i| i["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let live = [item("a"), item("x"), item("c")];
    let merged = merge_items(
        &live,
        &[json!({"name": "b"}), json!({"name": "a", "image": "a:2"})],
        &names,
        &schema,
    );
    assert_eq!(names_of(merged.clone()), ["b", "a", "x", "c"]);
    assert_eq!(merged[1]["image"], "a:2");
    let reordered = merge_items(
        &live,
        &[json!({"name": "c"}), json!({"name": "a"})],
        &names,
        &schema,
    );
    assert_eq!(names_of(reordered), ["x", "c", "a"]);
    assert_eq!(
        names_of(merge_items(&live, &[item("d")], &names, &schema)),
        ["a", "x", "c", "d"]
    );
}

#[test]
fn reapplying_a_non_canonical_quantity_is_a_no_op() {
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
            {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "0.1"}}}
        ]}}
    }});
    let created = apply(None, &config, "tofu-live", false, "2026-01-01T00:00:00Z")
        .unwrap()
        .object;
    assert_eq!(
        created["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "100m"
    );
    let again = apply(
        Some(&created),
        &config,
        "tofu-live",
        false,
        "2026-01-01T00:00:05Z",
    )
    .unwrap();
    assert!(!again.changed);
    assert_eq!(again.object, created);
}

#[test]
fn fields_v1_round_trip_and_paths() {
    let fields = golden("09-deployment.json")["steps"][1]["response"]["body"]["metadata"]["managedFields"][0]
        ["fieldsV1"]
        .clone();
    let mut set = FieldSet::new();
    decode_set(&fields, &Vec::new(), &mut set);
    assert_eq!(encode_set(&set), fields);
    let container = set
        .iter()
        .find(|p| p.len() == 6 && matches!(&p[5], Element::Field(f) if f == "image"))
        .unwrap();
    assert_eq!(
        path_string(container),
        ".spec.template.spec.containers[name=\"sidecar\"].image"
    );
    let finalizers: Path = vec![
        Element::Field("metadata".into()),
        Element::Field("finalizers".into()),
        Element::Value("\"x\"".into()),
    ];
    assert_eq!(path_string(&finalizers), ".metadata.finalizers[=\"x\"]");
}
