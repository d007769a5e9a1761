//! The kubectl providers' types (gavinbunney/kubectl v1.19, alekc/kubectl v2 and v3), served by
//! this binary under its second address `choudoufu/kubectl`: `kubectl_manifest` (raw YAML,
//! applied with this provider's estate label, guard and waits), the documents data sources
//! that split folders of YAML, the server version, and alekc's read of one object.
//! Their behaviour is taken from gavinbunney v1.19.0 and alekc v2.4.1 / v3.0.0-beta3; where
//! those differ, the choice made is in docs/guides/behaviour.md.

mod body;
mod documents;
mod drift;
mod fingerprint;
mod manifest;
mod manifest_schema;
mod object;
mod server_version;
mod template;
mod wait_for;
mod yaml;

use std::sync::Arc;

use plugin_runtime::{DataSource, EphemeralResource, Resource, Value};
use serde_json::Value as Json;

use crate::context::Context;

/// The kubectl providers' resources.
pub fn resources(ctx: &Arc<Context>) -> Vec<Arc<dyn Resource>> {
    vec![
        Arc::new(manifest::KubectlManifest::new(ctx.clone())),
        Arc::new(server_version::ServerVersionResource::new(ctx.clone())),
    ]
}

/// The kubectl providers' data sources.
pub fn data_sources(ctx: &Arc<Context>) -> Vec<Arc<dyn DataSource>> {
    let mut all: Vec<Arc<dyn DataSource>> = vec![
        Arc::new(server_version::ServerVersionData::new(ctx.clone())),
        Arc::new(object::ObjectData::new(ctx.clone())),
    ];
    all.extend(documents::all());
    all
}

/// The kubectl providers' ephemeral resources.
pub fn ephemeral_resources(ctx: &Arc<Context>) -> Vec<Arc<dyn EphemeralResource>> {
    vec![Arc::new(object::ObjectEphemeral::new(ctx.clone()))]
}

/// The manifest a `kubectl_manifest` state applied (its `yaml_body` in its
/// `override_namespace`), read as the kubectl providers read it: what a `moved` block into
/// `kubernetes_manifest` takes. Err says why there is none.
pub(crate) fn applied_manifest(state: &Json) -> Result<Json, String> {
    match body::Body::of(&Value::from_json(state)) {
        Ok(Some(body)) => Ok(body.manifest),
        Ok(None) => Err("its yaml_body is not a string".into()),
        Err(e) => Err(e.to_string()),
    }
}
