//! `kubectl_path_documents`: the documents of every file a glob matches (sorted), each rendered
//! as an HCL template with `vars` and `sensitive_vars` (which wins on a clash) unless
//! `disable_template`; then split, in file order and in-file order.

use std::collections::BTreeMap;

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Type, Value,
};

use super::{Collected, DocumentsError, Origin, diags, matches, sha256_hex, text};
use crate::kubectl::template;

pub struct PathDocuments;

/// A `map(string)` attribute's entries (a null element reads as empty).
fn strings(config: &Value, name: &str) -> BTreeMap<String, String> {
    config
        .get(name)
        .entries()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

/// A map attribute as configured, or the empty map gavinbunney's default is.
fn map_or_empty(config: &Value, name: &str) -> Value {
    match config.get(name) {
        Value::Null => Value::Map(BTreeMap::new()),
        value => value.clone(),
    }
}

#[async_trait]
impl DataSource for PathDocuments {
    fn type_name(&self) -> &'static str {
        "kubectl_path_documents"
    }

    fn schema(&self) -> Schema {
        let block = Block::new(
            "The documents of the YAML files a glob pattern matches, each rendered as a template \
             (Terraform's templatefile language) first.",
        )
        .attribute(Attribute::computed(
            "id",
            Type::String,
            "The SHA-256, in hex, of all the documents concatenated.",
        ))
        .attribute(Attribute::required(
            "pattern",
            Type::String,
            "A Go filepath.Glob pattern (`*` stays within a folder), relative to the working directory.",
        ))
        .attribute(
            Attribute::optional("vars", Type::map(Type::String), "The template's variables, each a string.")
                .with_default(Value::Map(BTreeMap::new())),
        )
        .attribute(
            Attribute::optional(
                "sensitive_vars",
                Type::map(Type::String),
                "More variables, never shown; they win over `vars` of the same name.",
            )
            .sensitive()
            .with_default(Value::Map(BTreeMap::new())),
        )
        .attribute(
            Attribute::optional("disable_template", Type::Bool, "Read the files as they are, without rendering.")
                .with_default(Value::Bool(false)),
        )
        .attribute(Attribute::computed(
            "documents",
            Type::list(Type::String),
            "The non-empty documents of all files, in file order then in-file order, each as rendered (trimmed).",
        ))
        .attribute(Attribute::computed(
            "manifests",
            Type::map(Type::String),
            "Each document re-written as YAML with sorted keys, by its path (`/apis/apps/v1/namespaces/ns/deployments/x`).",
        ));
        Schema::new(0, block)
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let config = &req.config;
        let pattern = text(config, "pattern");
        let disable_template = config.get("disable_template").as_bool().unwrap_or(false);
        let sensitive = strings(config, "sensitive_vars");
        let mut vars = strings(config, "vars");
        vars.extend(sensitive.clone());
        let secrets: Vec<String> = sensitive.into_values().collect();
        let mut collected = Collected::default();
        for file in matches(pattern).map_err(diags)? {
            let bytes = std::fs::read(&file).map_err(|e| {
                diags(DocumentsError::Read {
                    file: file.clone(),
                    reason: e.to_string(),
                })
            })?;
            let content = String::from_utf8(bytes).map_err(|_| {
                diags(DocumentsError::Read {
                    file: file.clone(),
                    reason: "it is not UTF-8 text".into(),
                })
            })?;
            let rendered = if disable_template {
                content
            } else {
                template::render(&content, &vars, &file).map_err(|e| diags(e.into()))?
            };
            collected
                .add(&rendered, &Origin::file(&file), &secrets)
                .map_err(diags)?;
        }
        let state = Value::object([
            ("id", Value::string(sha256_hex(collected.documents.concat()))),
            ("pattern", Value::string(pattern)),
            ("vars", map_or_empty(config, "vars")),
            ("sensitive_vars", map_or_empty(config, "sensitive_vars")),
            ("disable_template", Value::Bool(disable_template)),
            ("documents", collected.documents_value()),
            ("manifests", collected.manifests_value()),
        ]);
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}
