//! `kubectl_file_documents`: the documents of `content`.

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};

use super::{Collected, Origin, diags, sha256_hex, text};

pub struct FileDocuments;

#[async_trait]
impl DataSource for FileDocuments {
    fn type_name(&self) -> &'static str {
        "kubectl_file_documents"
    }

    fn schema(&self) -> Schema {
        let block = Block::new("The documents of a multi-document YAML text, as kubectl_manifest takes them.")
            .attribute(Attribute::computed("id", Type::String, "The SHA-256 of `content`, in hex."))
            .attribute(Attribute::required("content", Type::String, "YAML documents separated by `---` lines."))
            .attribute(Attribute::computed(
                "documents",
                Type::list(Type::String),
                "The non-empty documents in order, each as written (trimmed).",
            ))
            .attribute(Attribute::computed(
                "manifests",
                Type::map(Type::String),
                "Each document re-written as YAML with sorted keys, by its path (`/apis/apps/v1/namespaces/ns/deployments/x`).",
            ));
        Schema::new(0, block)
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let content = text(&req.config, "content");
        let mut collected = Collected::default();
        collected.add(content, &Origin::content(), &[]).map_err(diags)?;
        let state = Value::object([
            ("id", Value::string(sha256_hex(content))),
            ("content", Value::string(content)),
            ("documents", collected.documents_value()),
            ("manifests", collected.manifests_value()),
        ]);
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}
