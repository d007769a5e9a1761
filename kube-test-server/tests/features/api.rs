//! API behaviour the transcripts do not record: watches from "now", label-selector lists
//! following changes, how each registry ends a deletion, and a CustomResourceDefinition's life.

use super::support::{ADMIN, call, connect};
use kube_test_server::ClientResponse;
use kube_test_server::{Options, TestServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_without_resource_version_starts_with_the_current_objects() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let resp = call(
        &mut c,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        ADMIN,
        None,
    )
    .await;
    let events: Vec<Value> = String::from_utf8_lossy(&resp.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "kube-root-ca.crt");

    // client-go's watch-list ends the initial events with a bookmark.
    let path = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let resp = call(&mut c, "GET", path, ADMIN, None).await;
    let events: Vec<Value> = String::from_utf8_lossy(&resp.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["type"], "BOOKMARK");
    assert_eq!(
        events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );

    let refused = call(&mut c, "DELETE", "/api/v1/namespaces/default", ADMIN, None).await;
    assert_eq!(refused.status, 403, "the default namespace may not be deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selector_lists_follow_label_changes_and_deletes() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let base = "/api/v1/namespaces/default/configmaps";
    let names = |r: ClientResponse| -> Vec<String> {
        r.json().expect("list JSON")["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (name, tier) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"tier": tier, "app": "w"}}});
        assert_eq!(call(&mut c, "POST", base, ADMIN, Some(cm)).await.status, 201);
    }
    let by = |sel: &str| format!("{base}?labelSelector={sel}");
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dx%2Capp%3Dw"), ADMIN, None).await),
        ["a", "b"]
    );

    let relabel = json!({"metadata": {"labels": {"tier": "y"}}});
    let headers = [("content-type", "application/merge-patch+json")];
    let body = Some(relabel.to_string().into_bytes());
    assert_eq!(
        c.request("PATCH", &format!("{base}/a"), &headers, Some(ADMIN), body)
            .await
            .expect("patch")
            .status,
        200
    );
    assert_eq!(
        call(&mut c, "DELETE", &format!("{base}/c"), ADMIN, None)
            .await
            .status,
        200
    );

    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dx"), ADMIN, None).await),
        ["b"]
    );
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dy"), ADMIN, None).await),
        ["a"]
    );
    assert_eq!(
        names(call(&mut c, "GET", &by("tier%3Dy&limit=1"), ADMIN, None).await),
        ["a"]
    );
    assert_eq!(
        names(
            call(
                &mut c,
                "GET",
                "/api/v1/configmaps?labelSelector=app%3Dw",
                ADMIN,
                None
            )
            .await
        ),
        ["a", "b"]
    );
}

/// Kinds whose registry orphans dependents by default (Jobs, ReplicationControllers) keep
/// the `orphan` finalizer briefly; a Pod nobody runs is deleted at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletions_follow_each_registry() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}});
    let jobs = "/apis/batch/v1/namespaces/default/jobs";
    assert_eq!(call(&mut c, "POST", jobs, ADMIN, Some(job)).await.status, 201);
    let deleted = call(&mut c, "DELETE", &format!("{jobs}/j"), ADMIN, None).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(deleted.warnings.len(), 1, "{:?}", deleted.warnings);
    let body = deleted.json().unwrap();
    assert_eq!(body["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(body["metadata"]["generation"], 2);
    let deadline = Instant::now() + Duration::from_secs(5);
    while call(&mut c, "GET", &format!("{jobs}/j"), ADMIN, None)
        .await
        .status
        != 404
    {
        assert!(Instant::now() < deadline, "the garbage collector did not finish");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(call(&mut c, "POST", pods, ADMIN, Some(pod)).await.status, 201);
    let gone = call(&mut c, "DELETE", &format!("{pods}/p"), ADMIN, None)
        .await
        .json()
        .unwrap();
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        call(&mut c, "GET", &format!("{pods}/p"), ADMIN, None)
            .await
            .status,
        404
    );
}

/// The CRD the real apiserver was compared with (see `crd.rs`): namespaced Widget with a
/// defaulted `size`, free-form `extra`.
fn widget_definition() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.h4probe.example.com"},
        "spec": {"group": "h4probe.example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "default": 3}, "color": {"type": "string"},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_is_established_serves_its_kind_and_takes_its_objects_when_deleted() {
    let server = TestServer::start(Options::default());
    let mut c = connect(&server).await;
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let crd_path = format!("{crds}/widgets.h4probe.example.com");
    let created = call(&mut c, "POST", crds, ADMIN, Some(widget_definition())).await;
    assert_eq!(created.status, 201);
    let created = created.json().unwrap();
    assert_eq!(
        created["status"],
        json!({"conditions": null, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]})
    );
    assert_eq!(created["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(created["spec"]["conversion"], json!({"strategy": "None"}));

    // Established shortly after, with the names accepted.
    let deadline = Instant::now() + Duration::from_secs(5);
    let crd = loop {
        let crd = call(&mut c, "GET", &crd_path, ADMIN, None).await.json().unwrap();
        let established = crd["status"]["conditions"].as_array().is_some_and(|l| {
            l.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        });
        if established || Instant::now() > deadline {
            break crd;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(crd["status"]["conditions"][0]["reason"], "NoConflicts", "{crd}");
    assert_eq!(
        crd["status"]["conditions"][1]["reason"], "InitialNamesAccepted",
        "{crd}"
    );
    assert_eq!(crd["status"]["acceptedNames"]["kind"], "Widget");

    // Discovery as the real apiserver answered it.
    let doc = call(&mut c, "GET", "/apis/h4probe.example.com/v1", ADMIN, None)
        .await
        .json()
        .unwrap();
    assert_eq!(
        doc["resources"][0],
        json!({"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
            "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
            "shortNames": ["wg"], "storageVersionHash": "QDWKm9OI6RQ="})
    );
    let groups = call(&mut c, "GET", "/apis", ADMIN, None).await.json().unwrap();
    assert!(
        groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "h4probe.example.com")
    );

    // Objects: pruned (with warnings), defaulted, type-checked.
    let widgets = "/apis/h4probe.example.com/v1/namespaces/default/widgets";
    let w1 = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
        "spec": {"color": "red", "unknown": 1, "extra": {"any": {"x": 1}}}, "top": "x"});
    let made = call(&mut c, "POST", widgets, ADMIN, Some(w1)).await;
    assert_eq!(made.status, 201);
    assert_eq!(
        made.warnings,
        [
            "299 - \"unknown field \\\"spec.unknown\\\"\"",
            "299 - \"unknown field \\\"top\\\"\""
        ]
    );
    let w1 = made.json().unwrap();
    assert_eq!(
        w1["spec"],
        json!({"color": "red", "extra": {"any": {"x": 1}}, "size": 3})
    );
    assert_eq!(w1.get("top"), None);
    let bad = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "w2"},
        "spec": {"color": 5}});
    let refused = call(&mut c, "POST", widgets, ADMIN, Some(bad)).await;
    assert_eq!(refused.status, 422);
    assert_eq!(
        refused.json().unwrap()["message"],
        "Widget.h4probe.example.com \"w2\" is invalid: spec.color: Invalid value: \"integer\": \
         spec.color in body must be of type string: \"integer\""
    );

    // Deleting the definition: Terminating behind its finalizer while an object holds on, no
    // creates meanwhile, then gone with its objects and its kind.
    let held = json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "spec": {"color": "blue"}});
    assert_eq!(call(&mut c, "POST", widgets, ADMIN, Some(held)).await.status, 201);
    let deleted = call(&mut c, "DELETE", &crd_path, ADMIN, None).await;
    assert_eq!(deleted.status, 200);
    assert_eq!(
        deleted.json().unwrap()["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    let late =
        json!({"apiVersion": "h4probe.example.com/v1", "kind": "Widget", "metadata": {"name": "late"}});
    let refused = call(&mut c, "POST", widgets, ADMIN, Some(late)).await;
    assert_eq!(refused.status, 403);
    let held = call(&mut c, "GET", &format!("{widgets}/held"), ADMIN, None)
        .await
        .json()
        .unwrap();
    assert!(held["metadata"].get("deletionTimestamp").is_some(), "{held}");
    assert_eq!(
        call(&mut c, "GET", &format!("{widgets}/w1"), ADMIN, None)
            .await
            .status,
        404
    );
    let release = json!({"metadata": {"finalizers": null}});
    let headers = [("content-type", "application/merge-patch+json")];
    let patched = c
        .request(
            "PATCH",
            &format!("{widgets}/held"),
            &headers,
            Some(ADMIN),
            Some(release.to_string().into_bytes()),
        )
        .await
        .unwrap();
    assert_eq!(patched.status, 200);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(call(&mut c, "GET", &crd_path, ADMIN, None).await.status, 404);
    assert_eq!(
        call(&mut c, "GET", "/apis/h4probe.example.com/v1", ADMIN, None)
            .await
            .status,
        404
    );
}
