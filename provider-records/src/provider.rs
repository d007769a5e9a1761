//! The `records` provider: the shared provider block, one resource that records an
//! estate's outputs, one data source that reads another estate's, and one resource that
//! remembers which versions of them the reader last applied with.

use std::sync::Arc;

use async_trait::async_trait;
use kube_estate::Configured;
use plugin_runtime::{DataSource, Diagnostic, Diagnostics, Provider, Resource, Schema, Value};

use crate::estate_outputs::EstateOutputs;
use crate::outputs_resource::OutputsResource;
use crate::seen_resource::SeenResource;

#[derive(Default)]
pub struct RecordsProvider {
    configured: Arc<Configured>,
}

#[async_trait]
impl Provider for RecordsProvider {
    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            kube_estate::provider_block(
                "Records this estate's outputs as Secrets in namespace `tofu-records-<estate>`, and \
                 reads other estates' outputs with nothing more than `get` on those Secrets.",
            ),
        )
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        kube_estate::validate(config)
    }

    async fn configure(&self, config: &Value) -> Diagnostics {
        // A setting known only at apply defers the connection: outputs still plan.
        match self.configured.connect(config).await {
            Ok(()) => Diagnostics::new(),
            Err(e) => Diagnostic::from(e).into(),
        }
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        vec![
            Arc::new(OutputsResource::new(self.configured.clone())),
            Arc::new(SeenResource),
        ]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        vec![Arc::new(EstateOutputs::new(self.configured.clone()))]
    }

    /// Ctrl-C: retries of failing requests end at once.
    async fn stop(&self) {
        kube_estate::Stop::process().request();
    }
}
