//! `kubectl_kustomize_documents`: gavinbunney's and alekc v3's schema, so that configurations
//! naming it validate; its read refuses and says what to do instead (render with `kustomize build`
//! and read the result with `kubectl_file_documents`, or write `kubernetes_manifest`s), since no
//! sound, maintained kustomize exists for a Rust provider to build with.

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};

use super::{DocumentsError, diags};

pub struct KustomizeDocuments;

#[async_trait]
impl DataSource for KustomizeDocuments {
    fn type_name(&self) -> &'static str {
        "kubectl_kustomize_documents"
    }

    fn schema(&self) -> Schema {
        let block = Block::new(
            "Not supported by this provider: reading it is an error that says how to render the \
             kustomization with `kustomize build` and read it with `kubectl_file_documents`.",
        )
        .attribute(Attribute::computed(
            "id",
            Type::String,
            "Never set: the read refuses.",
        ))
        .attribute(Attribute::required(
            "target",
            Type::String,
            "The kustomization folder.",
        ))
        .attribute(
            Attribute::optional(
                "load_restrictor",
                Type::String,
                "kustomize's load restriction: `rootOnly` or `none`.",
            )
            .with_default(Value::string("rootOnly")),
        )
        .attribute(
            Attribute::optional(
                "add_managed_by_label",
                Type::Bool,
                "Whether kustomize stamps its managed-by label.",
            )
            .with_default(Value::Bool(false)),
        )
        .attribute(Attribute::computed(
            "documents",
            Type::list(Type::String),
            "Never set: the read refuses.",
        ));
        Schema::new(0, block)
    }

    async fn read(&self, _req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        Err(diags(DocumentsError::Kustomize))
    }
}
