//! Where an object written as a manifest lives: the API resource of its apiVersion and kind,
//! found by discovery, and its namespace (the default one for a namespaced kind that names
//! none; none for a cluster-scoped kind, whatever the manifest says).

use std::time::Duration;

use crate::context::Context;
use crate::discovery::{DiscoveryError, Resolved};
use crate::identity::ObjectIdentity;
use crate::objects::Target;

/// The object `identity` names, of a kind the server serves.
pub async fn target(
    ctx: &Context,
    client: &kube::Client,
    identity: &ObjectIdentity,
) -> Result<Target, DiscoveryError> {
    let resolved = ctx
        .discovery
        .resolve(client, &identity.api_version, &identity.kind)
        .await?;
    Ok(locate(ctx, resolved, identity))
}

/// The object `identity` names, of a kind that may not be served yet (a
/// CustomResourceDefinition applied earlier in this run): waits up to `timeout` for the server
/// to serve it.
pub async fn target_awaiting(
    ctx: &Context,
    client: &kube::Client,
    identity: &ObjectIdentity,
    timeout: Duration,
) -> Result<Target, DiscoveryError> {
    let resolved = ctx
        .discovery
        .await_served(client, &identity.api_version, &identity.kind, timeout)
        .await?;
    Ok(locate(ctx, resolved, identity))
}

fn locate(ctx: &Context, resolved: Resolved, identity: &ObjectIdentity) -> Target {
    let namespace = match (resolved.namespaced, &identity.namespace) {
        (true, Some(ns)) => Some(ns.clone()),
        // Connected by now, so the default is known.
        (true, None) => ctx.default_namespace().map(str::to_string),
        (false, _) => None,
    };
    Target {
        resource: resolved.resource,
        namespace,
        name: identity.name.clone(),
    }
}
