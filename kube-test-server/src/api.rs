//! The request pipeline: authentication, request counting and faults, RBAC, content
//! negotiation and routing to discovery, object handlers, subresources and reviews.

use http::{HeaderMap, Method, Request, Response};
use http_body_util::BodyExt;

use crate::auth::{Authn, UserInfo};
use crate::crd;
use crate::discovery;
use crate::exchange::{Body, Ctx, Reply, ResponseBody, render};
use crate::handlers::Call;
use crate::openapi;
use crate::rbac::{self, Attributes};
use crate::request::{Query, ResourcePath, Route};
use crate::resources;
use crate::reviews;
use crate::state::Shared;
use crate::status::{self, ApiError};
use crate::subresources;
use crate::table;
use crate::telemetry::{FaultKind, RequestLabels};
use crate::testing;
use crate::watch;

/// Raised to close the connection without an answer (the `drop` fault).
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an injected fault")]
pub struct Dropped;

/// Serves one HTTP request.
pub async fn handle(
    st: Shared,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<ResponseBody>, Dropped> {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Err(Dropped),
    };
    let path = parts.uri.path().to_string();
    let query = Query::parse(parts.uri.query());
    let authn = st.auth.authenticate(
        parts
            .headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
    );
    let user = match authn {
        Authn::User(u) => u,
        Authn::Rejected => return Ok(render(status::unauthorized().into())),
    };
    let user = match impersonate(&st, user, &parts.headers) {
        Ok(u) => u,
        Err(e) => return Ok(render(e.into())),
    };
    let ctx = Ctx {
        method: parts.method,
        query,
        headers: parts.headers,
        body,
        user,
    };
    if let Some(rest) = path.strip_prefix("/_test/") {
        return Ok(render(testing::handle(&st, &ctx, rest)));
    }
    let route = Route::parse(&path);
    let attrs = attributes(&ctx, &route, &path);
    st.telemetry
        .count(&ctx.user.name, &attrs.verb, &attrs.resource, ctx.user_agent());
    let labels = request_labels(&ctx, &route, &attrs);
    let reply = answer(&st, &ctx, route, &attrs).await?;
    st.telemetry.count_answer(labels, reply.code);
    Ok(render(reply))
}

/// The answer to an authenticated request: an injected fault, a refusal, or what the API says.
async fn answer(st: &Shared, ctx: &Ctx, route: Route, attrs: &Attributes) -> Result<Reply, Dropped> {
    if attrs.non_resource_path.is_none()
        && let Some(fault) = st.telemetry.take_fault(&attrs.resource, &attrs.verb)
    {
        match fault.kind {
            FaultKind::Latency => tokio::time::sleep(fault.latency()).await,
            FaultKind::TooManyRequests => return Ok(status::too_many_requests().into()),
            FaultKind::InternalError => return Ok(status::internal_error("injected fault").into()),
            FaultKind::Conflict => {
                let t = status::Target {
                    group: &attrs.api_group,
                    resource: &attrs.resource,
                    name: attrs.name.as_deref(),
                };
                return Ok(status::conflict(t).into());
            }
            FaultKind::Drop => return Err(Dropped),
        }
    }
    if !authorized(st, &ctx.user, attrs) {
        let body = rbac::forbidden_status(&reviews::subject(&ctx.user), attrs);
        return Ok(Reply::json(403, body));
    }
    Ok(match dispatch(st, ctx, route).await {
        Ok(r) => r,
        Err(e) => e.into(),
    })
}

/// The labels the real apiserver counts a request under in `apiserver_request_total`.
fn request_labels(ctx: &Ctx, route: &Route, attrs: &Attributes) -> RequestLabels {
    let Route::Resource(rp) = route else {
        return RequestLabels {
            verb: ctx.method.as_str().to_string(),
            ..Default::default()
        };
    };
    let verb = match attrs.verb.as_str() {
        "create" => "POST".to_string(),
        "update" => "PUT".to_string(),
        "patch" if ctx.content_type() == "application/apply-patch+yaml" => "APPLY".to_string(),
        other => other.to_uppercase(),
    };
    // kube's CleanScope: a create counts as one object too.
    let scope = if rp.name.is_some() || attrs.verb == "create" {
        "resource"
    } else if rp.namespace.is_some() {
        "namespace"
    } else {
        "cluster"
    };
    RequestLabels {
        verb,
        dry_run: ctx.query.get("dryRun").unwrap_or("").to_string(),
        group: rp.group.clone(),
        version: rp.version.clone(),
        resource: rp.resource.clone(),
        subresource: rp.subresource.clone().unwrap_or_default(),
        scope: scope.to_string(),
    }
}

/// Applies `Impersonate-User` / `Impersonate-Group` (kubectl `--as`, `--as-group`) when the
/// requester may impersonate.
fn impersonate(st: &Shared, user: UserInfo, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
    let Some(name) = headers.get("impersonate-user").and_then(|v| v.to_str().ok()) else {
        return Ok(user);
    };
    let attrs = Attributes {
        verb: "impersonate".into(),
        resource: "users".into(),
        name: Some(name.into()),
        ..Default::default()
    };
    if !authorized(st, &user, &attrs) {
        return Err(ApiError {
            code: 403,
            body: rbac::forbidden_status(&reviews::subject(&user), &attrs),
        });
    }
    let mut groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|v| v.to_str().ok().map(String::from))
        .collect();
    groups.push("system:authenticated".into());
    Ok(UserInfo {
        name: name.to_string(),
        uid: String::new(),
        groups,
    })
}

/// The RBAC attributes of a request (kube's RequestInfo).
fn attributes(ctx: &Ctx, route: &Route, path: &str) -> Attributes {
    let Route::Resource(rp) = route else {
        // Non-resource requests use the lowercased HTTP method as their verb.
        let verb = match ctx.method {
            Method::GET | Method::HEAD => "get".to_string(),
            ref m => m.as_str().to_lowercase(),
        };
        return Attributes {
            verb,
            non_resource_path: Some(path.to_string()),
            ..Default::default()
        };
    };
    let verb = match (&ctx.method, rp.name.is_some()) {
        (&Method::GET, true) => "get".to_string(),
        (&Method::GET, false) if ctx.query.flag("watch") => "watch".to_string(),
        (&Method::GET, false) => "list".to_string(),
        (&Method::POST, _) => "create".to_string(),
        (&Method::PUT, _) => "update".to_string(),
        (&Method::PATCH, _) => "patch".to_string(),
        (&Method::DELETE, true) => "delete".to_string(),
        (&Method::DELETE, false) => "deletecollection".to_string(),
        (m, _) => m.as_str().to_lowercase(),
    };
    let namespace = if rp.resource == "namespaces" {
        rp.name.clone()
    } else {
        rp.namespace.clone()
    };
    Attributes {
        verb,
        api_group: rp.group.clone(),
        resource: rp.resource.clone(),
        subresource: rp.subresource.clone(),
        namespace,
        name: rp.name.clone(),
        non_resource_path: None,
    }
}

fn authorized(st: &Shared, user: &UserInfo, attrs: &Attributes) -> bool {
    // system:masters skips the policy walk (the authorizer allows it first thing anyway).
    user.is_admin() || reviews::with_policy(st, |p| rbac::authorize(p, &reviews::subject(user), attrs))
}

/// Whether the client accepts a JSON answer (kube serves JSON, YAML and protobuf).
fn acceptable(accept: &str) -> bool {
    accept.is_empty()
        || accept.split(',').any(|t| {
            let media = t.split(';').next().unwrap_or("").trim();
            matches!(
                media,
                "" | "*/*"
                    | "application/*"
                    | "application/json"
                    | "application/yaml"
                    | "application/vnd.kubernetes.protobuf"
            )
        })
}

/// Whether the client asks for aggregated discovery (v2) before anything else it accepts.
fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').next().is_some_and(|first| {
        first.contains("as=APIGroupDiscoveryList")
            && first.contains("g=apidiscovery.k8s.io")
            && first.contains("v=v2")
            && !first.contains("v=v2beta1")
    })
}

async fn dispatch(st: &Shared, ctx: &Ctx, route: Route) -> Result<Reply, ApiError> {
    if let Route::NonResource(path) = &route {
        return Ok(non_resource(st, path, ctx.query.get("hash").is_some()));
    }
    if !acceptable(ctx.accept()) {
        return Err(status::not_acceptable());
    }
    match route {
        Route::NonResource(_) => unreachable!("answered above"),
        Route::CoreVersions | Route::Groups => {
            let core = route == Route::CoreVersions;
            if wants_aggregated(ctx.accept()) {
                let mut doc = discovery::aggregated(core);
                if !core {
                    crd::add_aggregated(st, &mut doc);
                }
                let mut r = Reply::json(200, doc);
                r.content_type = discovery::AGGREGATED_CONTENT_TYPE.into();
                return Ok(r);
            }
            Ok(Reply::json(
                200,
                if core {
                    discovery::core_versions(&st.address)
                } else {
                    let mut doc = discovery::groups();
                    crd::add_groups(st, &mut doc);
                    doc
                },
            ))
        }
        Route::Group(g) => Ok(discovery::group(&g)
            .or_else(|| crd::group(st, &g))
            .map(|d| Reply::json(200, d))
            .unwrap_or_else(Reply::page_not_found)),
        Route::GroupVersion(g, v) => Ok(discovery::group_version(&g, &v)
            .or_else(|| crd::group_version(st, &g, &v))
            .map(|d| Reply::json(200, d))
            .unwrap_or_else(Reply::page_not_found)),
        Route::Resource(rp) => resource(st, ctx, rp).await,
    }
}

/// `hashed`: the request carries the `hash` of a URL the index published.
fn non_resource(st: &Shared, path: &str, hashed: bool) -> Reply {
    if let Some(gv) = path.strip_prefix("/openapi/v3/") {
        return match openapi::group_version(st, gv) {
            Some(d) => Reply::json(200, d),
            // kube-apiserver answers a published URL of a group-version that has just gone
            // (its CRD deleted) with 200 and an empty body until its OpenAPI controller
            // catches up; here that window stays open, so clients meet it every time.
            None if hashed => Reply::text(200, ""),
            None => Reply::page_not_found(),
        };
    }
    match path.trim_end_matches('/') {
        "/version" => Reply::json(200, discovery::version()),
        "/openapi/v3" => Reply::json(200, openapi::root(st)),
        "/healthz" | "/livez" | "/readyz" => Reply::text(200, "ok"),
        "/metrics" => {
            let mut reply = Reply::text(200, &st.telemetry.metrics());
            reply.content_type = "text/plain; version=0.0.4; charset=utf-8".into();
            reply
        }
        _ => Reply::page_not_found(),
    }
}

/// Turns a GET's object or list into a Table when the client prints server-side.
fn as_table(ctx: &Ctx, kind: &str, reply: Reply) -> Reply {
    let Body::Json(body) = &reply.body else {
        return reply;
    };
    if !table::wanted(ctx.accept()) {
        return reply;
    }
    let table = match body["items"].as_array() {
        Some(items) => table::render(kind, items, &body["metadata"]["resourceVersion"]),
        None => table::render(
            kind,
            std::slice::from_ref(body),
            &body["metadata"]["resourceVersion"],
        ),
    };
    Reply::json(reply.code, table)
}

/// A resource the real apiserver has but this server does not store (pods, replicasets, ...):
/// reads find nothing, so `kubectl get all` works; anything else is an unknown resource.
fn unstored(ctx: &Ctx, rp: &ResourcePath) -> Result<Reply, ApiError> {
    let kind = discovery::resource_kind(&rp.group, &rp.version, &rp.resource)
        .filter(|_| ctx.method == Method::GET && rp.subresource.is_none())
        .ok_or_else(status::unknown_resource)?;
    let target = status::Target {
        group: &rp.group,
        resource: &rp.resource,
        name: rp.name.as_deref(),
    };
    if rp.name.is_some() {
        return Err(status::not_found(target));
    }
    let api_version = if rp.group.is_empty() {
        rp.version.clone()
    } else {
        format!("{}/{}", rp.group, rp.version)
    };
    let list = serde_json::json!({
        "kind": format!("{kind}List"), "apiVersion": api_version, "metadata": {"resourceVersion": ""}, "items": [],
    });
    Ok(Reply::json(200, list))
}

async fn resource(st: &Shared, ctx: &Ctx, rp: ResourcePath) -> Result<Reply, ApiError> {
    let builtin = discovery::serves_group_version(&rp.group, &rp.version);
    let custom = (!builtin)
        .then(|| crd::find(st, &rp.group, &rp.version, &rp.resource))
        .flatten();
    if !builtin && custom.is_none() && !crd::serves(st, &rp.group, &rp.version) {
        return Ok(Reply::page_not_found());
    }
    if rp.group == "authorization.k8s.io"
        && rp.name.is_none()
        && let Some(reply) = reviews::handle(st, ctx, &rp)?
    {
        return Ok(reply);
    }
    let Some(rt) = resources::find(&rp.group, &rp.version, &rp.resource).or(custom.as_ref().map(|c| c.rt))
    else {
        return unstored(ctx, &rp);
    };
    // A custom kind's table has the default columns whatever its name.
    let table_kind = if rt.custom { "" } else { rt.kind };
    let namespace_mismatch = if rt.namespaced {
        rp.namespace.is_none() && rp.name.is_some()
    } else {
        rp.namespace.is_some()
    };
    if namespace_mismatch {
        return Err(status::unknown_resource());
    }
    // The cluster-wide path of a namespaced resource only lists and watches: kube-apiserver
    // answers a create (or anything else) there with 405.
    if rt.namespaced && rp.namespace.is_none() && ctx.method != Method::GET {
        return Err(status::method_not_allowed());
    }
    let call = Call {
        st,
        ctx,
        rt,
        version: rp.version.clone(),
        namespace: if rt.namespaced {
            rp.namespace.clone().unwrap_or_default()
        } else {
            String::new()
        },
        name: rp.name.clone(),
        custom,
    };
    if let Some(sub) = rp.subresource.as_deref() {
        return subresources::handle(&call, sub);
    }
    let reply = match (&ctx.method, call.name.is_some()) {
        (&Method::GET, true) => call.get().map(|r| as_table(ctx, table_kind, r)),
        (&Method::GET, false) if ctx.query.flag("watch") => watch::serve(&call),
        (&Method::GET, false) => call.list().map(|r| as_table(ctx, table_kind, r)),
        (&Method::POST, false) => call.create(),
        (&Method::PUT, true) => call.update(),
        (&Method::PATCH, true) => call.patch(),
        (&Method::DELETE, true) => call.delete(),
        (&Method::DELETE, false) => call.delete_collection(),
        _ => Err(status::method_not_allowed()),
    };
    // Every answer about v1 Endpoints, errors too, carries the deprecation warning
    // (20-networking 13, 14).
    if rt != resources::ENDPOINTS {
        return reply;
    }
    let mut reply = reply.unwrap_or_else(Reply::from);
    reply
        .warnings
        .push("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice".into());
    Ok(reply)
}
