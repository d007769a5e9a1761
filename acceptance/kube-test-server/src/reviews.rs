//! authorization.k8s.io: SelfSubjectAccessReview and SelfSubjectRulesReview, and the RBAC
//! policy (stored Roles, ClusterRoles and bindings) every authorization decision reads.

use http::Method;
use serde_json::{Value, json};

use crate::api::{Ctx, Reply};
use crate::handlers;
use crate::meta;
use crate::request::ResourcePath;
use crate::resources;
use crate::semantics::{self, Attributes, Policy, WriteInfo};
use crate::state::Shared;
use crate::status::{self, ApiError};

/// The RBAC objects currently stored.
pub fn policy(st: &Shared) -> Policy {
    let store = st.store();
    let all = |rt: &resources::ResourceType| store.list(&rt.key(), None).cloned().collect::<Vec<_>>();
    Policy {
        roles: all(&resources::ROLES),
        cluster_roles: all(&resources::CLUSTERROLES),
        role_bindings: all(&resources::ROLEBINDINGS),
        cluster_role_bindings: all(&resources::CLUSTERROLEBINDINGS),
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
    let policy = policy(st);
    if kind == "SelfSubjectRulesReview" {
        let namespace = spec["namespace"].as_str().unwrap_or("");
        let status = semantics::rules_review(&policy, &ctx.user, namespace);
        let reply = json!({"kind": kind, "apiVersion": api_version, "metadata": {}, "spec": {}, "status": status});
        return Ok(Some(Reply::json(201, reply)));
    }
    let attrs = match (spec.get("resourceAttributes"), spec.get("nonResourceAttributes")) {
        (Some(r), _) => Attributes {
            verb: str_of(r, "verb"),
            namespace: str_of(r, "namespace"),
            api_group: str_of(r, "group"),
            resource: str_of(r, "resource"),
            subresource: str_of(r, "subresource"),
            name: str_of(r, "name"),
            path: None,
        },
        (None, Some(n)) => Attributes { verb: str_of(n, "verb"), path: Some(str_of(n, "path")), ..Default::default() },
        (None, None) => Attributes::default(),
    };
    let decision = semantics::authorize(&policy, &ctx.user, &attrs);
    let mut review = json!({"kind": kind, "apiVersion": api_version, "metadata": {}, "spec": spec});
    let time = meta::now();
    let manager = ctx.manager();
    let info = WriteInfo { manager: &manager, api_version: &api_version, subresource: None, time: &time };
    semantics::record_update(None, &mut review, &info);
    let mut status = json!({"allowed": decision.allowed});
    if let Some(reason) = decision.reason {
        status["reason"] = json!(reason);
    }
    review["status"] = status;
    Ok(Some(Reply::json(201, review)))
}

fn str_of(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("").to_string()
}
