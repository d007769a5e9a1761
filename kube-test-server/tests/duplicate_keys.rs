//! A keyed list holding a key twice (a container's env `A` twice), as a v1.36 kube-apiserver
//! treats it: server-side apply refuses the object with structured-merge-diff's 500, a create,
//! an update and a merge patch store both entries, the field manager owns such an item whole,
//! and an apply that sets the key once (by a manager owning it) leaves one entry.

use kube_test_server::{Client, ClientResponse};
use kube_test_server::{Options, TestServer};
use serde_json::{Value, json};

const ADMIN: &str = "admin-token-0123456789abcdef";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn send(c: &mut Client, method: &str, path: &str, content_type: &str, body: &Value) -> (u16, Value) {
    let headers = [("content-type", content_type), ("accept", "application/json")];
    let answer: ClientResponse = c
        .request(
            method,
            path,
            &headers,
            Some(ADMIN),
            Some(body.to_string().into_bytes()),
        )
        .await
        .expect("request answered");
    (answer.status, answer.json().unwrap_or_default())
}

fn deployment(env: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "dup", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "dup"}}, "template": {
            "metadata": {"labels": {"app": "dup"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "env": env}]}}}})
}

fn env_of(object: &Value) -> &Value {
    &object["spec"]["template"]["spec"]["containers"][0]["env"]
}

/// `manager`'s `operation` entry's field set of the container's env.
fn owned_env(object: &Value, operation: &str) -> Value {
    let entries = object["metadata"]["managedFields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    entries
        .iter()
        .find(|e| e["manager"] == "tofu-live" && e["operation"] == operation)
        .map(|e| {
            e["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]["f:env"]
                .clone()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_refuses_a_key_held_twice_that_create_and_update_keep() {
    let server = TestServer::start(Options::default());
    let mut c = Client::connect(server.url(), server.ca_pem())
        .await
        .expect("connects");
    let twice = deployment(json!([{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]));
    let one = format!("{DEPLOYMENTS}/dup");
    let apply = format!("{one}?fieldManager=tofu-live");

    let (code, status) = send(&mut c, "PATCH", &apply, "application/apply-patch+yaml", &twice).await;
    assert_eq!(code, 500, "{status}");
    assert_eq!(
        status["message"],
        "failed to create typed patch object (default/dup; apps/v1, Kind=Deployment): \
         .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]"
    );
    assert!(status.get("reason").is_none(), "{status}");

    let (code, created) = send(
        &mut c,
        "POST",
        &format!("{DEPLOYMENTS}?fieldManager=tofu-live"),
        "application/json",
        &twice,
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(
        *env_of(&created),
        twice["spec"]["template"]["spec"]["containers"][0]["env"]
    );
    // The item is owned whole: a key held twice has no fields of its own to own.
    assert_eq!(
        owned_env(&created, "Update"),
        json!({".": {}, "k:{\"name\":\"A\"}": {}})
    );

    let mut updated = created.clone();
    updated["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] = json!("3");
    let (code, put) = send(&mut c, "PUT", &apply, "application/json", &updated).await;
    assert_eq!(code, 200, "{put}");
    assert_eq!(
        *env_of(&put),
        json!([{"name": "A", "value": "1"}, {"name": "A", "value": "3"}])
    );

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx",
        "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "4"}]}]}}}});
    let (code, patched) = send(&mut c, "PATCH", &apply, "application/merge-patch+json", &patch).await;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(env_of(&patched).as_array().map(Vec::len), Some(2), "{patched}");

    // Handed to apply (as a client does by rewriting its entry), an apply setting the key once
    // leaves one entry, owned field by field.
    let mut entries = patched["metadata"]["managedFields"].clone();
    for e in entries.as_array_mut().unwrap() {
        if e["manager"] == "tofu-live" {
            e["operation"] = json!("Apply");
        }
    }
    let claim = json!({"metadata": {"managedFields": entries}});
    let (code, claimed) = send(&mut c, "PATCH", &apply, "application/merge-patch+json", &claim).await;
    assert_eq!(code, 200, "{claimed}");
    let once = deployment(json!([{"name": "A", "value": "5"}]));
    let (code, applied) = send(&mut c, "PATCH", &apply, "application/apply-patch+yaml", &once).await;
    assert_eq!(code, 200, "{applied}");
    assert_eq!(*env_of(&applied), json!([{"name": "A", "value": "5"}]));
    assert_eq!(
        owned_env(&applied, "Apply"),
        json!({"k:{\"name\":\"A\"}": {".": {}, "f:name": {}, "f:value": {}}})
    );
}
