//! Admission webhooks (Mutating- and ValidatingWebhookConfigurations). This server calls no
//! webhook, as no webhook server runs beside it (nor beside `make test-real`'s control plane,
//! which has no Pod network): a webhook that selects a write fails to answer. With
//! `failurePolicy: Ignore` the write goes on; with `Fail`, the default, it is refused as
//! kube-apiserver refuses it: 500 `failed calling webhook "<name>": failed to call webhook:
//! Post "<url>?timeout=10s": ...` (recorded from kube-apiserver 1.36).

use serde_json::{Value, json};

use crate::policies::{Write, selects};
use crate::resources::{MUTATINGWEBHOOKS, VALIDATINGWEBHOOKS};
use crate::status::{self, ApiError};
use crate::store::Store;

/// Refuses `write` when a `failurePolicy: Fail` webhook selects it: mutating webhooks first,
/// then validating ones, in name order, as the API server calls them.
pub fn call(store: &Store, write: &Write) -> Result<(), ApiError> {
    for kind in [&MUTATINGWEBHOOKS, &VALIDATINGWEBHOOKS] {
        for configuration in store.list(&kind.key(), None) {
            for webhook in configuration["webhooks"].as_array().into_iter().flatten() {
                let fails = webhook["failurePolicy"].as_str().unwrap_or("Fail") == "Fail";
                let rules = json!({
                    "namespaceSelector": webhook["namespaceSelector"],
                    "objectSelector": webhook["objectSelector"],
                    "resourceRules": webhook["rules"],
                });
                if fails && selects(store, &rules, write) {
                    return Err(failed(store, webhook));
                }
            }
        }
    }
    Ok(())
}

/// The API server's answer for a webhook it could not call.
fn failed(store: &Store, webhook: &Value) -> ApiError {
    let name = webhook["name"].as_str().unwrap_or_default();
    let config = &webhook["clientConfig"];
    let cause = match &config["service"] {
        Value::Object(service) => {
            let (ns, svc) = (
                service
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                service.get("name").and_then(Value::as_str).unwrap_or_default(),
            );
            let port = service.get("port").and_then(Value::as_u64).unwrap_or(443);
            let path = service.get("path").and_then(Value::as_str).unwrap_or("");
            let url = format!("https://{svc}.{ns}.svc:{port}{path}");
            let why = match store.get(&crate::resources::SERVICES.key(), ns, svc) {
                None => format!("service \"{svc}\" not found"),
                Some(_) => format!("no endpoints available for service \"{svc}\""),
            };
            format!("Post \"{url}?timeout=10s\": {why}")
        }
        _ => {
            let url = config["url"].as_str().unwrap_or_default();
            format!("Post \"{url}?timeout=10s\": dial tcp: connect: connection refused")
        }
    };
    let message = format!(
        "Internal error occurred: failed calling webhook \"{name}\": failed to call webhook: {cause}"
    );
    status::failure(
        500,
        "InternalError",
        &message,
        Some(json!({"causes": [{"message": message.trim_start_matches("Internal error occurred: ")}]})),
    )
}
