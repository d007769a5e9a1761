//! Subresources: `status` (of kinds that have one), Deployment `scale`, and the
//! ServiceAccount `token` (TokenRequest).

use base64::Engine;
use http::Method;
use serde_json::{Value, json};

use crate::api::Reply;
use crate::handlers::{self, Call, Recording};
use crate::kinds;
use crate::meta;
use crate::resources;
use crate::status::{self, ApiError};

pub fn handle(call: &Call, sub: &str) -> Result<Reply, ApiError> {
    match sub {
        "status" if kinds::has_status(call.rt.kind) => status_subresource(call),
        "scale" if call.rt == resources::DEPLOYMENTS => scale(call),
        "token" if call.rt == resources::SERVICEACCOUNTS => token(call),
        _ => Err(status::unknown_resource()),
    }
}

fn stored(call: &Call) -> Result<Value, ApiError> {
    call.st
        .store()
        .get(
            &call.rt.key(),
            &call.namespace,
            call.name.as_deref().unwrap_or(""),
        )
        .cloned()
        .ok_or_else(|| status::not_found(call.target()))
}

/// Writes `new` over `old` as an Update through subresource `sub`.
fn commit(call: &Call, old: &Value, new: Value, sub: &'static str, dry: bool) -> Result<Value, ApiError> {
    let manager = call.ctx.manager();
    let time = meta::now();
    let info = call.write_info(&manager, None, &time);
    let mut store = call.st.store();
    let current = store
        .get(
            &call.rt.key(),
            &call.namespace,
            call.name.as_deref().unwrap_or(""),
        )
        .cloned();
    if current.as_ref().map(|c| &c["metadata"]["resourceVersion"])
        != Some(&old["metadata"]["resourceVersion"])
    {
        return Err(status::conflict(call.target()));
    }
    let out = call.commit_update(&mut store, old, new, &info, Recording::Update(Some(sub)), dry)?;
    drop(store);
    if !dry {
        call.after_write(&out);
    }
    Ok(out)
}

fn status_subresource(call: &Call) -> Result<Reply, ApiError> {
    let old = stored(call)?;
    let incoming = match call.ctx.method {
        Method::GET => return Ok(Reply::json(200, call.present(&old))),
        Method::PUT => {
            let (obj, _) = call.decode_object()?;
            check_rv(call, &obj, &old)?;
            kinds::from_version(&call.rt, &call.version, &obj)
        }
        Method::PATCH => {
            let view = kinds::to_version(&call.rt, &call.version, &old);
            let patched = handlers::apply_patch(call.ctx, call.rt.kind, &view)?;
            kinds::from_version(&call.rt, &call.version, &patched)
        }
        _ => return Err(status::method_not_allowed()),
    };
    let dry = call.dry_run("UpdateOptions")?;
    let mut new = old.clone();
    new["status"] = incoming.get("status").cloned().unwrap_or(json!({}));
    let out = commit(call, &old, new, "status", dry)?;
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

/// The autoscaling/v1 Scale view of a Deployment.
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
    let old = stored(call)?;
    let view = scale_view(&old);
    let wanted = match call.ctx.method {
        Method::GET => return Ok(Reply::json(200, view)),
        Method::PUT => {
            let body = handlers::parse_body(call.ctx, "Scale")?;
            check_rv(call, &body, &old)?;
            body
        }
        Method::PATCH => {
            let patched = handlers::apply_patch(call.ctx, "Scale", &view)?;
            check_rv(call, &patched, &old)?;
            patched
        }
        _ => return Err(status::method_not_allowed()),
    };
    let dry = call.dry_run("UpdateOptions")?;
    let mut new = old.clone();
    new["spec"]["replicas"] = wanted["spec"]["replicas"].clone();
    let out = commit(call, &old, new, "scale", dry)?;
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
    let bound = given.get("boundObjectRef").cloned().unwrap_or(Value::Null);
    let mut fields = serde_json::Map::new();
    for key in ["audiences", "boundObjectRef", "expirationSeconds"] {
        if given.get(key).is_some() {
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
    let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    let signature: Vec<u8> = (0..8).flat_map(|_| uuid::Uuid::new_v4().into_bytes()).collect();
    let jwt = format!(
        "{}.{}.{}",
        b64(json!({"alg": "RS256", "kid": "kube-test-server"})
            .to_string()
            .as_bytes()),
        b64(claims.to_string().as_bytes()),
        b64(&signature)
    );
    call.st.auth.add_service_account_token(&jwt, namespace, name, uid);
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
