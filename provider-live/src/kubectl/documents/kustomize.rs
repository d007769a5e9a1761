//! `kubectl_kustomize_documents`: gavinbunney's and alekc v3's schema and checks, so that
//! configurations naming it validate; its read refuses and says what to do instead (render with `kustomize build`
//! and read the result with `kubectl_file_documents`, or write `kubernetes_manifest`s), since no
//! sound, maintained kustomize exists for a Rust provider to build with.

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostic, Diagnostics, ReadDataRequest, ReadDataResponse,
    Schema, Type, Value,
};

use super::{DocumentsError, diags};

pub struct KustomizeDocuments;

/// kustomize's load restrictions.
const RESTRICTORS: [&str; 2] = ["rootOnly", "none"];
/// The file names kustomize reads a kustomization from.
const KUSTOMIZATIONS: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

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

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = Diagnostics::new();
        if let Some(value) = config.get("load_restrictor").as_str()
            && !RESTRICTORS.contains(&value)
        {
            out.push(
                Diagnostic::error(
                    "Invalid load_restrictor",
                    format!("load_restrictor is {value:?}; it must be one of {RESTRICTORS:?}."),
                )
                .at(AttributePath::root("load_restrictor")),
            );
        }
        out
    }

    /// A target without a kustomization is the user's mistake whatever builds it, so it is
    /// named first; any other target is refused.
    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let target = req.config.get("target").as_str().unwrap_or_default().to_string();
        let found = std::fs::read_dir(&target).map(|entries| {
            entries
                .flatten()
                .any(|e| KUSTOMIZATIONS.contains(&e.file_name().to_string_lossy().as_ref()))
        });
        match found {
            Ok(true) => Err(diags(DocumentsError::Kustomize)),
            Ok(false) => Err(diags(DocumentsError::NoKustomization {
                target,
                reason: "not found (no kustomization.yaml, kustomization.yml or Kustomization)".into(),
            })),
            Err(e) => Err(diags(DocumentsError::NoKustomization {
                reason: e.to_string().to_lowercase(),
                target,
            })),
        }
    }
}
