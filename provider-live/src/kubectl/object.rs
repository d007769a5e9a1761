//! alekc/kubectl's `kubectl_manifest` data source and ephemeral resource: one object read by
//! apiVersion, kind, name and namespace, as YAML and JSON, with chosen `fields` extracted into
//! `results`; `wait_for` first holds the read until the object exists and its conditions and
//! fields hold (within `timeouts.read`, or `timeouts.open`, 5 minutes by default). The ephemeral
//! resource's values never reach state.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostic, Diagnostics, EphemeralResource, NestedBlock,
    Nesting, OpenRequest, OpenResponse, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};
use serde_json::Value as Json;

use super::wait_for::{self, WaitFor, as_text, lookup};
use super::yaml;
use crate::context::Context;
use crate::identity::ObjectIdentity;
use crate::lifecycle::diag;
use crate::objects::{self, Pace, Readiness};
use crate::{locate, timeouts};

const TYPE_NAME: &str = "kubectl_manifest";
const DEFAULT_WAIT: Duration = Duration::from_secs(300);

/// Why a `kubectl_manifest` read (data source or ephemeral resource) found nothing to give.
#[derive(Debug, thiserror::Error)]
enum KubectlManifestReadError {
    #[error("manifest not found: {0}")]
    NotFound(String),
    #[error("{object} did not exist within the wait timeout ({timeout:?})")]
    NeverThere { object: String, timeout: Duration },
    #[error("fields[{key:?}]: {path:?} is not a path of {object}")]
    NoPath {
        key: String,
        path: String,
        object: String,
    },
}

impl From<KubectlManifestReadError> for Diagnostic {
    fn from(e: KubectlManifestReadError) -> Diagnostic {
        let at = match &e {
            KubectlManifestReadError::NotFound(_) | KubectlManifestReadError::NeverThere { .. } => {
                AttributePath::root("name")
            }
            KubectlManifestReadError::NoPath { key, .. } => AttributePath::root("fields").key(key),
        };
        Diagnostic::error("Cannot read kubectl_manifest", e.to_string()).at(at)
    }
}

/// The schema of both: the inputs, what is read, and the wait; the data source has an `id`, and
/// its timeout is `read`, the ephemeral resource's `open`.
fn schema(description: &str, timeout: &str, with_id: bool) -> Schema {
    let required = |name: &str, doc: &str| Attribute::required(name, Type::String, doc);
    let computed = |name: &str, doc: &str| Attribute::computed(name, Type::String, doc);
    let condition = Block::new("A status condition.")
        .attribute(required("type", "The condition's type."))
        .attribute(required("status", "The condition's status."));
    let field = Block::new("A field whose value must match.")
        .attribute(required("key", "The field's path."))
        .attribute(required("value", "The value wanted."))
        .attribute(
            Attribute::optional("value_type", Type::String, "`eq` (the default) or `regex`.")
                .with_default(Value::string("eq")),
        );
    let wait_for = Block::new("Before reading, wait until the object exists and all of these hold (an empty block: until it exists).")
        .block(NestedBlock::new("condition", Nesting::List, condition))
        .block(NestedBlock::new("field", Nesting::List, field));
    let timeouts = Block::new("How long `wait_for` may wait (default 5m).").attribute(Attribute::optional(
        timeout,
        Type::String,
        "A duration, e.g. `5m`.",
    ));
    let mut block = Block::new(description)
        .attribute(required("api_version", "The object's apiVersion."))
        .attribute(required("kind", "The object's kind."))
        .attribute(required("name", "The object's name."))
        .attribute(Attribute::optional("namespace", Type::String, "Its namespace (`default` when empty for a namespaced kind)."))
        .attribute(Attribute::optional(
            "fields",
            Type::map(Type::String),
            "Values to extract into `results`: a name for each, and its path (`status.phase`, `spec.ports[0].port`).",
        ))
        .attribute(computed("yaml", "The object, as YAML."))
        .attribute(computed("json", "The object, as JSON."))
        .attribute(computed("uid", "Its uid."))
        .attribute(Attribute::computed("results", Type::map(Type::String), "The `fields`' values as text (maps and lists as JSON)."))
        .block(NestedBlock::at_most_one("wait_for", wait_for))
        .block(NestedBlock::new("timeouts", Nesting::Single, timeouts));
    if with_id {
        block = block.attribute(computed(
            "id",
            "`<apiVersion>/<namespace>/<kind>/<name>`, as configured.",
        ));
    }
    Schema::new(0, block)
}

/// Reads the object `config` names (after its wait) into `config`'s computed attributes.
async fn read(ctx: &Context, mut config: Value, timeout_name: &str) -> Result<Value, Diagnostics> {
    let conn = ctx.connection().map_err(diag)?;
    let text = |name: &str| config.get(name).as_str().unwrap_or_default().to_string();
    let identity = ObjectIdentity {
        api_version: text("api_version"),
        kind: text("kind"),
        name: text("name"),
        namespace: Some(text("namespace")).filter(|n| !n.is_empty()),
    };
    let target = locate::target(ctx, &conn.client, &identity).await.map_err(diag)?;
    let object = target.object_ref().to_string();
    let wait_for = WaitFor::of_read(&config).map_err(diag)?;
    let live = match &wait_for {
        Some(wait_for) => {
            let check = wait_for::check(false, Some(wait_for));
            let existed = std::sync::atomic::AtomicBool::new(false);
            let seen = |live: Option<&Json>| match live {
                Some(o) => {
                    existed.store(true, std::sync::atomic::Ordering::Relaxed);
                    check(o)
                }
                None => Readiness::Waiting("it does not exist yet".into()),
            };
            let timeout = timeouts::of(&config, timeout_name, DEFAULT_WAIT);
            let pace = Pace::new(Duration::from_secs(1), timeout);
            let what = "exist and meet its wait_for";
            match objects::poll(&conn.client, &target, None, pace, what, seen).await {
                Err(objects::WaitError::Timeout(_))
                    if !existed.load(std::sync::atomic::Ordering::Relaxed) =>
                {
                    return Err(diag(KubectlManifestReadError::NeverThere { object, timeout }));
                }
                found => found.map_err(|e| diag(Diagnostic::from(e)))?,
            }
        }
        None => objects::get(&conn.client, &target).await.map_err(diag)?,
    }
    .ok_or_else(|| diag(KubectlManifestReadError::NotFound(object.clone())))?;
    let mut results = Vec::new();
    for (key, path) in config.get("fields").entries().into_iter().flatten() {
        let path = path.as_str().unwrap_or_default();
        let value = lookup(&live, path).ok_or_else(|| {
            diag(KubectlManifestReadError::NoPath {
                key: key.to_string(),
                path: path.to_string(),
                object: object.clone(),
            })
        })?;
        results.push((key.to_string(), as_text(value)));
    }
    config.set("yaml", Value::string(yaml::to_yaml(&live)));
    config.set("json", Value::string(live.to_string()));
    config.set(
        "uid",
        Value::from(
            live.pointer("/metadata/uid")
                .and_then(Json::as_str)
                .map(str::to_string),
        ),
    );
    config.set("results", Value::string_map(results));
    Ok(config)
}

pub struct ObjectData {
    ctx: Arc<Context>,
}

impl ObjectData {
    pub fn new(ctx: Arc<Context>) -> ObjectData {
        ObjectData { ctx }
    }
}

#[async_trait]
impl DataSource for ObjectData {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema(
            "One object of any kind, read as it is in the cluster (alekc/kubectl's data source).",
            "read",
            true,
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        WaitFor::of_read(config).err().map(diag).unwrap_or_default()
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let config = req.config;
        let text = |name: &str| config.get(name).as_str().unwrap_or_default().to_string();
        let id = format!(
            "{}/{}/{}/{}",
            text("api_version"),
            text("namespace"),
            text("kind"),
            text("name")
        );
        let mut state = read(&self.ctx, config.clone(), "read").await?;
        state.set("id", Value::string(id));
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}

pub struct ObjectEphemeral {
    ctx: Arc<Context>,
}

impl ObjectEphemeral {
    pub fn new(ctx: Arc<Context>) -> ObjectEphemeral {
        ObjectEphemeral { ctx }
    }
}

#[async_trait]
impl EphemeralResource for ObjectEphemeral {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        schema(
            "One object of any kind, read as it is in the cluster, never kept in state (alekc/kubectl's ephemeral resource).",
            "open",
            false,
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        WaitFor::of_read(config).err().map(diag).unwrap_or_default()
    }

    async fn open(&self, req: OpenRequest) -> Result<OpenResponse, Diagnostics> {
        Ok(OpenResponse {
            result: read(&self.ctx, req.config, "open").await?,
            ..Default::default()
        })
    }
}
