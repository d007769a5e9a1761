//! The kube-apiserver's OpenAPI v3 documents as the catalog reads them: schemas by name, their
//! properties, types, descriptions and server-side defaults.

use crate::inputs::Error;
use serde_json::{Map, Value as Json};
use std::path::Path;

const OPENAPI: &str = "reference/openapi";

/// The merged `components.schemas` of every OpenAPI document.
pub(crate) struct OpenApi {
    pub(crate) schemas: Map<String, Json>,
}

pub(crate) const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
pub(crate) const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// What a Kubernetes field holds.
pub(crate) enum Oas<'a> {
    Scalar(&'static str),
    Array(&'a Json),
    Map(&'a Json),
    Object(&'a Map<String, Json>),
    Any,
}

impl OpenApi {
    pub(crate) fn load(root: &Path) -> Result<OpenApi, Error> {
        let mut schemas = Map::new();
        let dir = root.join(OPENAPI);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|source| Error::Read {
                path: OPENAPI.to_string(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            let path = file.display().to_string();
            let text = std::fs::read_to_string(&file).map_err(|source| Error::Read {
                path: path.clone(),
                source,
            })?;
            let doc: Json = serde_json::from_str(&text).map_err(|source| Error::Json { path, source })?;
            if let Some(s) = doc.pointer("/components/schemas").and_then(Json::as_object) {
                schemas.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        Ok(OpenApi { schemas })
    }

    /// The referenced schema's name, through `$ref` or a one-element `allOf`.
    pub(crate) fn ref_name(schema: &Json) -> Option<&str> {
        let reference = schema
            .get("$ref")
            .or_else(|| schema.pointer("/allOf/0/$ref"))?
            .as_str()?;
        reference.rsplit('/').next()
    }

    pub(crate) fn resolve<'a>(&'a self, schema: &'a Json) -> &'a Json {
        match Self::ref_name(schema).and_then(|n| self.schemas.get(n)) {
            Some(target) => self.resolve(target),
            None => schema,
        }
    }

    pub(crate) fn classify<'a>(&'a self, schema: &'a Json) -> Oas<'a> {
        match Self::ref_name(schema) {
            Some(INT_OR_STRING) => return Oas::Scalar("intorstr"),
            Some(QUANTITY) => return Oas::Scalar("quantity"),
            _ => {}
        }
        let schema = self.resolve(schema);
        if schema.get("format").and_then(Json::as_str) == Some("int-or-string")
            || schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true))
        {
            return Oas::Scalar("intorstr");
        }
        match schema.get("type").and_then(Json::as_str) {
            Some("integer") => Oas::Scalar("int"),
            Some("number") => Oas::Scalar("number"),
            Some("boolean") => Oas::Scalar("bool"),
            // Go []byte: base64 in JSON, the text itself in Terraform (PEM requests, CA bundles).
            Some("string") if schema.get("format").and_then(Json::as_str) == Some("byte") => {
                Oas::Scalar("bytes")
            }
            Some("string") => Oas::Scalar("str"),
            Some("array") => schema.get("items").map(Oas::Array).unwrap_or(Oas::Any),
            _ => {
                if let Some(p) = schema.get("properties").and_then(Json::as_object) {
                    Oas::Object(p)
                } else if let Some(a) = schema.get("additionalProperties") {
                    Oas::Map(a)
                } else {
                    Oas::Any
                }
            }
        }
    }

    /// Whether server-side apply owns the field's value whole: an atomic list, or an object
    /// (or the objects of a list) whose type is an atomic map.
    pub(crate) fn is_atomic(&self, schema: &Json) -> bool {
        let atomic = |s: &Json, key: &str| s.get(key).and_then(Json::as_str) == Some("atomic");
        if atomic(schema, "x-kubernetes-list-type") || atomic(schema, "x-kubernetes-map-type") {
            return true;
        }
        let resolved = self.resolve(schema);
        if atomic(resolved, "x-kubernetes-map-type") {
            return true;
        }
        resolved
            .get("items")
            .is_some_and(|items| atomic(self.resolve(items), "x-kubernetes-map-type"))
    }

    pub(crate) fn description(&self, schema: &Json) -> String {
        let text = schema
            .get("description")
            .or_else(|| self.resolve(schema).get("description"))
            .and_then(Json::as_str)
            .unwrap_or("");
        first_sentence(text)
    }
}

/// The first sentence of an OpenAPI description, on one line.
pub(crate) fn first_sentence(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let end = flat
        .char_indices()
        .find(|&(i, c)| c == '.' && flat[i + 1..].starts_with(' '))
        .map(|(i, _)| i + 1)
        .unwrap_or(flat.len());
    let mut out = flat[..end].to_string();
    if out.len() > 240 {
        let cut = out
            .char_indices()
            .take_while(|(i, _)| *i < 237)
            .last()
            .map_or(0, |(i, c)| i + c.len_utf8());
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// The value the API server fills in for a scalar field nobody set, as JSON text: the
/// OpenAPI `default` where it is not Go's zero value, else a `defaults to "v1"` or
/// `Default is "*"` in the description.
pub(crate) fn server_default(schema: &Json) -> Option<String> {
    let zero = |v: &Json| match v {
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        _ => true,
    };
    if let Some(value) = schema.get("default").filter(|v| !zero(v)) {
        return Some(value.to_string());
    }
    let text = schema.get("description").and_then(Json::as_str)?;
    let lower = text.to_lowercase();
    let at = ["defaults to \"", "default is \""]
        .iter()
        .find_map(|phrase| lower.find(phrase).map(|i| i + phrase.len()))?;
    let end = text[at..].find('"')?;
    Some(Json::from(&text[at..at + end]).to_string())
}
