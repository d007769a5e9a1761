//! The API server's OpenAPI v3 schema of a kind, as `kubernetes_manifest` types its values
//! with it: `/openapi/v3` lists one document per group-version (built-in kinds and
//! CustomResourceDefinitions alike, each at a URL whose hash changes with its content), and
//! the document's component carrying `x-kubernetes-group-version-kind` is the kind's schema.
//!
//! Documents are fetched on first use and kept for the rest of the run, keyed by that URL; a
//! kind a kept document lacks (a CustomResourceDefinition created since) makes the index be
//! read again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube_estate::{ApiError, ObjectRef, with_retry};
use serde_json::{Map, Value as Json};

/// One group-version's document: its component schemas by name.
struct Document {
    url: String,
    schemas: Map<String, Json>,
}

impl Document {
    /// The name of the component that is `group/version` `kind`.
    fn kind(&self, group: &str, version: &str, kind: &str) -> Option<String> {
        self.schemas.iter().find_map(|(name, schema)| {
            let gvks = schema.get("x-kubernetes-group-version-kind")?.as_array()?;
            gvks.iter()
                .any(|gvk| gvk["group"] == group && gvk["version"] == version && gvk["kind"] == kind)
                .then(|| name.clone())
        })
    }
}

/// The schema of one kind, with the document whose definitions its references name.
#[derive(Clone)]
pub struct KindSchema {
    document: Arc<Document>,
    root: String,
}

impl KindSchema {
    /// The kind's top node.
    pub fn root(&self) -> Node<'_> {
        Node::new(&self.document.schemas[&self.root], &self.document.schemas)
    }

    /// A kind's schema from a document's component schemas (tests build their own).
    #[cfg(test)]
    pub fn of(schemas: Json, root: &str) -> KindSchema {
        let schemas = match schemas {
            Json::Object(m) => m,
            _ => Map::new(),
        };
        KindSchema {
            document: Arc::new(Document {
                url: String::new(),
                schemas,
            }),
            root: root.to_string(),
        }
    }
}

/// A schema node, its `$ref` (direct, or the `allOf: [{$ref}]` form v3 documents use next to
/// a `default`) followed.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    schema: &'a Json,
    definitions: &'a Map<String, Json>,
}

impl<'a> Node<'a> {
    fn new(schema: &'a Json, definitions: &'a Map<String, Json>) -> Node<'a> {
        let mut schema = schema;
        // Bounded: a reference cycle would otherwise never end.
        for _ in 0..8 {
            let reference = schema.get("$ref").or_else(|| {
                let all_of = schema.get("allOf")?.as_array()?;
                if all_of.len() == 1 {
                    all_of[0].get("$ref")
                } else {
                    None
                }
            });
            let Some(target) = reference
                .and_then(Json::as_str)
                .and_then(|r| definitions.get(r.rsplit('/').next().unwrap_or(r)))
            else {
                break;
            };
            schema = target;
        }
        Node { schema, definitions }
    }

    /// `type`, when the node says (int-or-string and free-form nodes do not).
    pub fn ty(&self) -> Option<&'a str> {
        self.schema.get("type").and_then(Json::as_str)
    }

    /// A field that takes an integer or a string (`IntOrString`: a port, a percentage).
    pub fn int_or_string(&self) -> bool {
        self.schema.get("format").and_then(Json::as_str) == Some("int-or-string")
            || self.schema.get("x-kubernetes-int-or-string") == Some(&Json::Bool(true))
    }

    /// The node of property `name` of an object.
    pub fn property(&self, name: &str) -> Option<Node<'a>> {
        let p = self.schema.get("properties")?.get(name)?;
        Some(Node::new(p, self.definitions))
    }

    /// The node of every value of a map (`additionalProperties`).
    pub fn values(&self) -> Option<Node<'a>> {
        let v = self
            .schema
            .get("additionalProperties")
            .filter(|v| v.is_object())?;
        Some(Node::new(v, self.definitions))
    }

    /// The key fields of a keyed list (`x-kubernetes-list-type: map`), `None` for any other.
    pub fn list_map_keys(&self) -> Option<Vec<String>> {
        if self.schema.get("x-kubernetes-list-type").and_then(Json::as_str) != Some("map") {
            return None;
        }
        let keys = self.schema.get("x-kubernetes-list-map-keys")?.as_array()?;
        Some(keys.iter().filter_map(Json::as_str).map(str::to_string).collect())
    }

    /// The value the server fills in when the field is omitted.
    pub fn default(&self) -> Option<&'a Json> {
        self.schema.get("default")
    }

    /// The node of every item of an array.
    pub fn items(&self) -> Option<Node<'a>> {
        Some(Node::new(self.schema.get("items")?, self.definitions))
    }
}

/// The documents fetched so far, by group-version path (`api/v1`, `apis/apps/v1`).
#[derive(Default)]
pub struct OpenApi {
    documents: Mutex<HashMap<String, Arc<Document>>>,
}

/// The path of a group-version in `/openapi/v3`.
fn group_version_path(api_version: &str) -> (String, &str, &str) {
    match api_version.split_once('/') {
        Some((group, version)) => (format!("apis/{group}/{version}"), group, version),
        None => (format!("api/{api_version}"), "", api_version),
    }
}

impl OpenApi {
    /// The schema of `api_version` `kind`; `None` when the server publishes none (no
    /// OpenAPI v3, or a kind it does not document).
    pub async fn kind(
        &self,
        client: &Client,
        api_version: &str,
        kind: &str,
    ) -> Result<Option<KindSchema>, ApiError> {
        let (path, group, version) = group_version_path(api_version);
        let known = self.documents.lock().expect("openapi lock").get(&path).cloned();
        let found = |document: Arc<Document>| {
            document
                .kind(group, version, kind)
                .map(|root| KindSchema { document, root })
        };
        if let Some(schema) = known.clone().and_then(found) {
            return Ok(Some(schema));
        }
        let Some(index) = get(client, "/openapi/v3", api_version, kind).await? else {
            return Ok(None);
        };
        let Some(url) = index["paths"][&path]["serverRelativeURL"].as_str() else {
            return Ok(None);
        };
        if known.is_some_and(|d| d.url == url) {
            return Ok(None);
        }
        let Some(mut doc) = get(client, url, api_version, kind).await? else {
            return Ok(None);
        };
        let schemas = match doc["components"]["schemas"].take() {
            Json::Object(m) => m,
            _ => Map::new(),
        };
        let document = Arc::new(Document {
            url: url.to_string(),
            schemas,
        });
        self.documents
            .lock()
            .expect("openapi lock")
            .insert(path, document.clone());
        Ok(found(document))
    }
}

/// GET `url` as JSON; `None` when the server has no such document or does not let us read it.
/// An empty answer counts as none: kube-apiserver answers 200 with no body for the published
/// URL of a group-version whose CustomResourceDefinition was just deleted.
async fn get(client: &Client, url: &str, api_version: &str, kind: &str) -> Result<Option<Json>, ApiError> {
    let what = || ObjectRef {
        kind: kind.to_string(),
        namespace: None,
        name: format!("({api_version})"),
    };
    let request = || {
        let req = http::Request::get(url)
            .body(Vec::new())
            .expect("a GET of a server-relative URL");
        client.request_text(req)
    };
    let text = match with_retry(request).await {
        Ok(text) => text,
        Err(e) if matches!(&e.error, kube::Error::Api(s) if s.code == 404 || s.code == 403) => {
            return Ok(None);
        }
        Err(e) => return Err(ApiError::from_kube(e, &what(), "read the OpenAPI schema of")),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| ApiError::Other {
            object: what(),
            code: 200,
            message: format!("the OpenAPI document at {url} is not JSON: {e}"),
        })
}
