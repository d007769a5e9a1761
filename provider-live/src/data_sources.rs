//! The data sources of hashicorp/kubernetes 3.4.0: read-only views of the cluster that never
//! write. Each reads with the fewest requests (one GET by name, one LIST for the plural ones)
//! and a refused request is an error naming the object and the verb. A missing object reads
//! as empty, as hashicorp's do (but for the few where theirs fail).
//!
//! Most are data: [`by_name`] serves every type of the data-source catalog
//! (`catalog/data_sources.tsv`, [`crate::catalog::data_entries`]) by reading the live object
//! through its field table in full (the server's defaults included: a data source reports the
//! object as it is), and [`nodes`] the one listed type of that catalog. The rest are small:
//! [`cluster`] (`kubernetes_all_namespaces`, `kubernetes_server_version`) and [`dynamic`]
//! (`kubernetes_resource`, `kubernetes_resources`: any kind, as dynamic values).

mod by_name;
mod cluster;
mod dynamic;
mod nodes;

use std::sync::Arc;

use kube::api::{ApiResource, ListParams};
use kube_estate::{ApiError, ObjectRef};
use plugin_runtime::{AttributePath, DataSource, Diagnostic, Diagnostics, Value};
use serde_json::Value as Json;

use crate::catalog;
use crate::context::Context;
use crate::discovery::DiscoveryError;

/// Every data source, sharing the provider's context.
pub fn all(ctx: &Arc<Context>) -> Vec<Arc<dyn DataSource>> {
    let mut out: Vec<Arc<dyn DataSource>> = Vec::new();
    for entry in catalog::data_entries() {
        let names = std::iter::once(entry.info.type_name).chain(entry.info.aliases.iter().copied());
        for name in names {
            out.push(if nodes::is_listed(entry) {
                Arc::new(nodes::Nodes::new(name, entry, ctx.clone()))
            } else {
                Arc::new(by_name::ByName::new(name, entry, ctx.clone()))
            });
        }
    }
    out.push(Arc::new(cluster::AllNamespaces::new(ctx.clone())));
    out.push(Arc::new(cluster::ServerVersion::new(ctx.clone())));
    out.push(Arc::new(dynamic::One::new(ctx.clone())));
    out.push(Arc::new(dynamic::Many::new(ctx.clone())));
    out
}

/// Why a data source read nothing.
#[derive(Debug, thiserror::Error)]
pub enum DataSourceReadError {
    /// The object asked for by name does not exist.
    #[error("{object} not found")]
    Missing { source_type: String, object: ObjectRef },
    /// A setting the read needs is not given.
    #[error("{path} is required")]
    Required { path: AttributePath, why: &'static str },
    /// A selector or other setting the API would refuse.
    #[error("invalid {path}: {message}")]
    Invalid { path: AttributePath, message: String },
    /// The API refused or failed (a refusal names the verb and the object); boxed, as
    /// these errors are large and rare.
    #[error(transparent)]
    Api(Box<ApiError>),
    #[error(transparent)]
    Discovery(Box<DiscoveryError>),
}

impl From<ApiError> for DataSourceReadError {
    fn from(e: ApiError) -> DataSourceReadError {
        DataSourceReadError::Api(Box::new(e))
    }
}

impl From<DiscoveryError> for DataSourceReadError {
    fn from(e: DiscoveryError) -> DataSourceReadError {
        DataSourceReadError::Discovery(Box::new(e))
    }
}

impl From<DataSourceReadError> for Diagnostic {
    fn from(e: DataSourceReadError) -> Diagnostic {
        match e {
            DataSourceReadError::Missing { source_type, object } => Diagnostic::error(
                format!("{object} not found"),
                format!(
                    "The data source {source_type} reads an existing object, and the Kubernetes \
                     API answered the get of {object} with \"not found\". Create the object first \
                     (or make the data source depend on the resource that does), or correct its \
                     name and namespace."
                ),
            ),
            DataSourceReadError::Required { ref path, why } => {
                Diagnostic::error(e.to_string(), why).at(path.clone())
            }
            DataSourceReadError::Invalid { ref path, .. } => {
                Diagnostic::error(format!("Invalid {path}"), e.to_string()).at(path.clone())
            }
            DataSourceReadError::Api(e) => (*e).into(),
            DataSourceReadError::Discovery(e) => (*e).into(),
        }
    }
}

fn diags(e: impl Into<Diagnostic>) -> Diagnostics {
    Diagnostics::from(e.into())
}

/// One object by name (verb `get`); a missing one is [`DataSourceReadError::Missing`].
async fn get(
    client: &kube::Client,
    source_type: &str,
    resource: &ApiResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<Json, DataSourceReadError> {
    let target = crate::objects::Target {
        resource: resource.clone(),
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    };
    crate::objects::get(client, &target)
        .await?
        .ok_or_else(|| DataSourceReadError::Missing {
            source_type: source_type.to_string(),
            object: target.object_ref(),
        })
}

/// Every object of a kind matching `params`, in one request (verb `list`); errors name the
/// selectors.
async fn list(
    client: &kube::Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    params: &ListParams,
) -> Result<Vec<Json>, DataSourceReadError> {
    Ok(crate::objects::list_with(client, resource, namespace, params).await?)
}

/// The first element of a block list (`Null` when absent).
fn first<'a>(value: &'a Value, block: &str) -> &'a Value {
    value.get(block).elements().first().unwrap_or(&Value::Null)
}
