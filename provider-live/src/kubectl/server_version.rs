//! `kubectl_server_version`, the resource and the data source: the API server's version,
//! read again at every refresh. The version is cut as alekc/kubectl v3 cuts it (build metadata,
//! then a pre-release suffix, dropped: `v1.30.4+k3s1` gives `v1.30.4`, patch `4`); the raw
//! string stays in `git_version`.

use std::sync::Arc;

use async_trait::async_trait;
use kube_estate::{ApiError, ObjectRef, with_retry};
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, DataSource, Diagnostics, ImportRequest,
    ImportResponse, PlanRequest, PlanResponse, ReadDataRequest, ReadDataResponse, ReadRequest, ReadResponse,
    Resource, Schema, Type, Value,
};

use super::fingerprint::sha256_hex;
use crate::context::Context;
use crate::lifecycle::diag;

/// The computed attributes, with their descriptions.
const FIELDS: [(&str, &str); 9] = [
    ("id", "The SHA-256 of `git_version`, in hex."),
    ("version", "The version, `vX.Y.Z`."),
    ("major", "`X`."),
    ("minor", "`Y`."),
    ("patch", "`Z`."),
    ("git_version", "The version string the server reports."),
    ("git_commit", "The commit the server was built from."),
    ("build_date", "When it was built."),
    ("platform", "Its platform, e.g. `linux/amd64`."),
];

fn block(description: &str) -> Block {
    FIELDS.iter().fold(Block::new(description), |b, (name, doc)| {
        b.attribute(Attribute::computed(name, Type::String, doc))
    })
}

/// `v1.30.4+k3s1` → (`v1.30.4`, `1`, `30`, `4`).
fn cut(git_version: &str, major: &str, minor: &str) -> [String; 4] {
    let version = git_version.split('+').next().unwrap_or_default();
    let version = version.split('-').next().unwrap_or_default().to_string();
    let parts: Vec<&str> = version.split('.').collect();
    match parts.as_slice() {
        [x, y, z, ..] => [
            version.clone(),
            x.trim_start_matches('v').into(),
            (*y).into(),
            (*z).into(),
        ],
        _ => [version.clone(), major.into(), minor.into(), String::new()],
    }
}

/// The version attributes, read now, over `base` (a configuration or state).
async fn read_version(ctx: &Context, mut base: Value) -> Result<Value, Diagnostics> {
    let conn = ctx.connection().map_err(diag)?;
    let info = with_retry(|| conn.client.apiserver_version())
        .await
        .map_err(|e| {
            diag(ApiError::from_kube(
                e,
                &ObjectRef::cluster("version", "/version"),
                "get",
            ))
        })?;
    let [version, major, minor, patch] = cut(&info.git_version, &info.major, &info.minor);
    let id = sha256_hex(&info.git_version);
    for (name, value) in [
        ("id", id),
        ("version", version),
        ("major", major),
        ("minor", minor),
        ("patch", patch),
        ("git_version", info.git_version.clone()),
        ("git_commit", info.git_commit.clone()),
        ("build_date", info.build_date.clone()),
        ("platform", info.platform.clone()),
    ] {
        base.set(name, Value::string(value));
    }
    Ok(base)
}

pub struct ServerVersionData {
    ctx: Arc<Context>,
}

impl ServerVersionData {
    pub fn new(ctx: Arc<Context>) -> ServerVersionData {
        ServerVersionData { ctx }
    }
}

#[async_trait]
impl DataSource for ServerVersionData {
    fn type_name(&self) -> &'static str {
        "kubectl_server_version"
    }

    fn schema(&self) -> Schema {
        Schema::new(0, block("The version of the cluster's API server."))
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        Ok(ReadDataResponse {
            state: read_version(&self.ctx, req.config).await?,
            diagnostics: Diagnostics::new(),
        })
    }
}

pub struct ServerVersionResource {
    ctx: Arc<Context>,
}

impl ServerVersionResource {
    pub fn new(ctx: Arc<Context>) -> ServerVersionResource {
        ServerVersionResource { ctx }
    }
}

#[async_trait]
impl Resource for ServerVersionResource {
    fn type_name(&self) -> &'static str {
        "kubectl_server_version"
    }

    fn schema(&self) -> Schema {
        let block = block(
            "The version of the cluster's API server, kept in state and read again at every refresh; a \
             change of `triggers` replaces it.",
        )
        .attribute(Attribute::optional(
            "triggers",
            Type::map(Type::String),
            "Any change of these values replaces the resource, which reads the version again.",
        ));
        Schema::new(0, block)
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let mut planned = req.proposed_new_state;
        let mut response = PlanResponse::default();
        let replace =
            !req.prior_state.is_null() && planned.get("triggers") != req.prior_state.get("triggers");
        if req.prior_state.is_null() || replace {
            for (name, _) in FIELDS {
                planned.set(name, Value::unknown());
            }
        }
        if replace {
            response.requires_replace = vec![AttributePath::root("triggers")];
        }
        response.planned_state = planned;
        Ok(response)
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        if req.planned_state.is_null() {
            return ApplyResponse::default();
        }
        match read_version(&self.ctx, req.planned_state.clone()).await {
            Ok(new_state) => ApplyResponse {
                new_state,
                ..Default::default()
            },
            Err(diagnostics) => ApplyResponse {
                new_state: req.prior_state,
                diagnostics,
                ..Default::default()
            },
        }
    }

    async fn read(&self, req: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        if self.ctx.offline().is_some() {
            return Ok(ReadResponse {
                new_state: req.current_state,
                private: req.private,
                ..Default::default()
            });
        }
        Ok(ReadResponse {
            new_state: read_version(&self.ctx, req.current_state).await?,
            private: req.private,
            ..Default::default()
        })
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let state = read_version(&self.ctx, Value::object([("triggers", Value::Null)])).await?;
        Ok(ImportResponse::one(req.type_name, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_cut_before_build_metadata_and_suffixes() {
        assert_eq!(
            cut("v1.30.4+k3s1", "1", "30"),
            ["v1.30.4", "1", "30", "4"].map(String::from)
        );
        assert_eq!(
            cut("v1.36.0-master+8e16b12", "1", "36"),
            ["v1.36.0", "1", "36", "0"].map(String::from)
        );
        assert_eq!(
            cut("v1.29", "1", "29+"),
            ["v1.29", "1", "29+", ""].map(String::from)
        );
    }
}
