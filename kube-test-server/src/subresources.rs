//! Subresources: `status` (of kinds that have one), `scale` (Deployments, StatefulSets,
//! ReplicationControllers), CertificateSigningRequest `approval`, and the ServiceAccount
//! `token` (TokenRequest).

use http::Method;
use serde_json::{Value, json};

use crate::exchange::Reply;
use crate::handlers::{self, Call, Recording};
use crate::kinds;
use crate::meta;
use crate::resources;
use crate::status::{self, ApiError};
use crate::store::Store;
use crate::validation::{self, FieldError};

pub fn handle(call: &Call, sub: &str) -> Result<Reply, ApiError> {
    match sub {
        "status" if call.rt.status => status_subresource(call),
        "scale" if call.rt.scale => scale(call),
        "token" if call.rt == resources::SERVICEACCOUNTS => token(call),
        "approval" if call.rt == resources::CSRS => approval(call),
        _ => Err(status::unknown_resource()),
    }
}

fn stored(call: &Call) -> Result<Value, ApiError> {
    let store = call.st.store();
    current(call, &store)
}

fn current(call: &Call, store: &Store) -> Result<Value, ApiError> {
    store
        .get(
            &call.rt.key(),
            &call.namespace,
            call.name.as_deref().unwrap_or(""),
        )
        .cloned()
        .ok_or_else(|| status::not_found(call.target()))
}

/// A write through subresource `sub`: `change` turns the stored object into the new one (or
/// refuses). Read and write happen under one lock, so a controller writing in between (the
/// Deployment controller's status) never turns a request without a resourceVersion into a
/// conflict, as on the real apiserver, which retries such updates itself.
fn write_through(
    call: &Call,
    sub: &'static str,
    change: impl FnOnce(&Value) -> Result<Value, ApiError>,
) -> Result<Value, ApiError> {
    let dry = call.dry_run("UpdateOptions")?;
    let manager = call.ctx.manager();
    let time = meta::now();
    let info = call.write_info(&manager, None, &time);
    let mut store = call.st.store();
    let old = current(call, &store)?;
    let new = change(&old)?;
    let out = call.commit_update(&mut store, &old, new, &info, Recording::Update(Some(sub)), dry)?;
    drop(store);
    if !dry {
        call.after_write(&out);
    }
    Ok(out)
}

fn status_subresource(call: &Call) -> Result<Reply, ApiError> {
    let incoming = match call.ctx.method {
        Method::GET => return Ok(Reply::json(200, call.present(&stored(call)?))),
        Method::PUT => Some(call.decode_object()?.0),
        Method::PATCH => None,
        _ => return Err(status::method_not_allowed()),
    };
    let out = write_through(call, "status", |old| {
        let incoming = match &incoming {
            Some(obj) => {
                check_rv(call, obj, old)?;
                kinds::from_version(&call.rt, &call.version, obj)
            }
            None => {
                let view = kinds::to_version(&call.rt, &call.version, old);
                let patched = handlers::apply_patch(call.ctx, &view)?;
                kinds::from_version(&call.rt, &call.version, &patched)
            }
        };
        let mut new = old.clone();
        new["status"] = incoming.get("status").cloned().unwrap_or(json!({}));
        Ok(new)
    })?;
    Ok(Reply::json(200, call.present(&out)))
}

fn check_rv(call: &Call, body: &Value, old: &Value) -> Result<(), ApiError> {
    match body["metadata"]["resourceVersion"]
        .as_str()
        .filter(|rv| !rv.is_empty())
    {
        Some(rv) if Some(rv) != old["metadata"]["resourceVersion"].as_str() => {
            Err(status::conflict(call.target()))
        }
        _ => Ok(()),
    }
}

/// `kubectl certificate approve|deny`: a PUT of the request with its new conditions; only
/// the conditions change, each stamped with its transition time.
fn approval(call: &Call) -> Result<Reply, ApiError> {
    let incoming = match call.ctx.method {
        Method::GET => return Ok(Reply::json(200, call.present(&stored(call)?))),
        Method::PUT => Some(call.decode_object()?.0),
        Method::PATCH => None,
        _ => return Err(status::method_not_allowed()),
    };
    let out = write_through(call, "approval", |old| {
        let incoming = match &incoming {
            Some(obj) => {
                check_rv(call, obj, old)?;
                obj.clone()
            }
            None => handlers::apply_patch(call.ctx, old)?,
        };
        let now = meta::now();
        let previous = old["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut conditions = incoming["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for c in &mut conditions {
            if c.get("lastTransitionTime").is_none_or(Value::is_null) {
                let unchanged = previous
                    .iter()
                    .find(|p| p["type"] == c["type"] && p["status"] == c["status"]);
                c["lastTransitionTime"] = unchanged.map_or(json!(now), |p| p["lastTransitionTime"].clone());
            }
        }
        let mut new = old.clone();
        new["status"]["conditions"] = json!(conditions);
        Ok(new)
    })?;
    Ok(Reply::json(200, call.present(&out)))
}

/// The autoscaling/v1 Scale view of a scalable object.
fn scale_view(d: &Value) -> Value {
    let m = &d["metadata"];
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
        },
        "spec": {"replicas": d["spec"]["replicas"].as_i64().unwrap_or(1)},
        "status": {"replicas": d["status"]["replicas"].as_i64().unwrap_or(0), "selector": kinds::selector_string(d)},
    })
}

fn scale(call: &Call) -> Result<Reply, ApiError> {
    let body = match call.ctx.method {
        Method::GET => return Ok(Reply::json(200, scale_view(&stored(call)?))),
        Method::PUT => Some(handlers::parse_body(call.ctx, "Scale")?),
        Method::PATCH => None,
        _ => return Err(status::method_not_allowed()),
    };
    let out = write_through(call, "scale", |old| {
        let wanted = match &body {
            Some(body) => body.clone(),
            None => handlers::apply_patch(call.ctx, &scale_view(old))?,
        };
        check_rv(call, &wanted, old)?;
        let mut new = old.clone();
        new["spec"]["replicas"] = wanted["spec"]["replicas"].clone();
        Ok(new)
    })?;
    Ok(Reply::json(200, scale_view(&out)))
}

/// TokenRequest: a JWT-shaped token the server also accepts as the ServiceAccount.
fn token(call: &Call) -> Result<Reply, ApiError> {
    if call.ctx.method != Method::POST {
        return Err(status::method_not_allowed());
    }
    let sa = stored(call)?;
    let body = handlers::parse_body(call.ctx, "TokenRequest")?;
    let given = &body["spec"];
    let audiences = given
        .get("audiences")
        .cloned()
        .unwrap_or(json!(["https://kubernetes.default.svc.cluster.local"]));
    let expiration = given["expirationSeconds"].as_i64().unwrap_or(3600);
    // 22-admission-misc step 29: the message names no object.
    if expiration < 600 {
        let error = FieldError::invalid(
            "spec.expirationSeconds",
            &json!(expiration),
            "may not specify a duration less than 10 minutes",
        );
        let body = validation::invalid_status("TokenRequest", "authentication.k8s.io", "", &[error]);
        return Ok(Reply::json(422, body));
    }
    let bound = given.get("boundObjectRef").cloned().unwrap_or(Value::Null);
    // expirationSeconds is defaulted before the field manager runs, so it is always recorded
    // (22-admission-misc step 28); the others only when given.
    let mut fields = serde_json::Map::new();
    for key in ["audiences", "boundObjectRef", "expirationSeconds"] {
        if given.get(key).is_some() || key == "expirationSeconds" {
            fields.insert(format!("f:{key}"), json!({}));
        }
    }
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let (namespace, name) = (call.namespace.as_str(), call.name.as_deref().unwrap_or(""));
    let uid = sa["metadata"]["uid"].as_str().unwrap_or("");
    let claims = json!({
        "aud": audiences, "exp": now + expiration, "iat": now,
        "iss": "https://kubernetes.default.svc.cluster.local", "jti": meta::new_uid(),
        "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
        "nbf": now, "sub": format!("system:serviceaccount:{namespace}:{name}"),
    });
    let jwt = call
        .st
        .auth
        .issue_service_account_token(&claims, namespace, name, uid);
    let expires = time::OffsetDateTime::from_unix_timestamp(now + expiration)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default();
    let stamp = meta::now();
    let reply = json!({
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": name, "namespace": namespace, "uid": uid, "creationTimestamp": stamp,
            "managedFields": [{
                "manager": call.ctx.manager(), "operation": "Update", "apiVersion": "authentication.k8s.io/v1",
                "time": stamp, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": fields}, "subresource": "token",
            }],
        },
        "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": bound},
        "status": {"token": jwt, "expirationTimestamp": expires},
    });
    Ok(Reply::json(201, reply))
}
