//! authorization.k8s.io: SelfSubjectAccessReview and SelfSubjectRulesReview, and the RBAC
//! policy (stored Roles, ClusterRoles and bindings) every authorization decision reads.

use http::Method;
use serde_json::{Value, json};

use crate::auth::UserInfo;
use crate::exchange::{Ctx, Reply};
use crate::handlers;
use crate::meta;
use crate::rbac::{self, Attributes, Policy};
use crate::request::ResourcePath;
use crate::resources;
use crate::semantics::{self, WriteInfo};
use crate::state::Shared;
use crate::status::{self, ApiError};

/// Runs `f` over the RBAC objects currently stored (holding the store lock).
pub fn with_policy<R>(st: &Shared, f: impl FnOnce(&Policy) -> R) -> R {
    let store = st.store();
    let all = |rt: &resources::ResourceType| store.list(&rt.key(), None).collect::<Vec<_>>();
    let policy = Policy {
        roles: all(&resources::ROLES),
        cluster_roles: all(&resources::CLUSTERROLES),
        role_bindings: all(&resources::ROLEBINDINGS),
        cluster_role_bindings: all(&resources::CLUSTERROLEBINDINGS),
    };
    f(&policy)
}

/// The authorizer's view of an authenticated user.
pub fn subject(user: &UserInfo) -> rbac::UserInfo {
    rbac::UserInfo {
        name: user.name.clone(),
        groups: user.groups.clone(),
    }
}

/// Serves the review resources; `None` for other authorization.k8s.io resources.
pub fn handle(st: &Shared, ctx: &Ctx, rp: &ResourcePath) -> Result<Option<Reply>, ApiError> {
    let kind = match rp.resource.as_str() {
        "selfsubjectaccessreviews" => "SelfSubjectAccessReview",
        "selfsubjectrulesreviews" => "SelfSubjectRulesReview",
        _ => return Ok(None),
    };
    if ctx.method != Method::POST {
        return Err(status::method_not_allowed());
    }
    let body = handlers::parse_body(ctx, kind)?;
    let spec = body.get("spec").cloned().unwrap_or(json!({}));
    let api_version = format!("authorization.k8s.io/{}", rp.version);
    let user = subject(&ctx.user);
    if kind == "SelfSubjectRulesReview" {
        let namespace = spec["namespace"].as_str().unwrap_or("");
        let status = with_policy(st, |p| rbac::rules_review(p, &user, namespace));
        let reply =
            json!({"kind": kind, "apiVersion": api_version, "metadata": {}, "spec": {}, "status": status});
        return Ok(Some(Reply::json(201, reply)));
    }
    let attrs = match (spec.get("resourceAttributes"), spec.get("nonResourceAttributes")) {
        (Some(r), _) => Attributes {
            verb: str_of(r, "verb"),
            api_group: str_of(r, "group"),
            resource: str_of(r, "resource"),
            subresource: opt_of(r, "subresource"),
            namespace: opt_of(r, "namespace"),
            name: opt_of(r, "name"),
            non_resource_path: None,
        },
        (None, Some(n)) => Attributes {
            verb: str_of(n, "verb"),
            non_resource_path: Some(str_of(n, "path")),
            ..Default::default()
        },
        (None, None) => Attributes::default(),
    };
    let decision = with_policy(st, |p| rbac::decide(p, &user, &attrs));
    let mut review = json!({"kind": kind, "apiVersion": api_version, "metadata": {}, "spec": spec});
    let time = meta::now();
    let manager = ctx.manager();
    let info = WriteInfo {
        manager: &manager,
        subresource: None,
        time: &time,
    };
    semantics::record_update(None, &mut review, &info);
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    review["status"] = status;
    Ok(Some(Reply::json(201, review)))
}

fn str_of(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("").to_string()
}

fn opt_of(v: &Value, key: &str) -> Option<String> {
    v[key].as_str().filter(|s| !s.is_empty()).map(str::to_string)
}
