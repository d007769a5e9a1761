//! What a `kubectl_manifest`'s `yaml_body` says: the manifest (in `override_namespace` when
//! that is set), the object it names, and `yaml_body_parsed`, the manifest with its sensitive
//! fields masked, which is all a plan shows of it.

use plugin_runtime::{AttributePath, Diagnostic, Value};
use serde_json::Value as Json;

use super::yaml;
use crate::identity::ObjectIdentity;

/// What stands in for a masked value in `yaml_body_parsed`.
const MASKED: &str = "(sensitive value)";

/// A `yaml_body` that names no object, or fields that cannot be masked.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("yaml_body is not a Kubernetes manifest: {0}")]
    Yaml(#[from] yaml::YamlError),
    #[error("yaml_body's manifest has no {0}")]
    Missing(&'static str),
    #[error("sensitive_fields entry {path:?} cannot be masked: only map values are supported")]
    NotAMap { path: String },
}

impl From<BodyError> for Diagnostic {
    fn from(e: BodyError) -> Diagnostic {
        let at = match &e {
            BodyError::NotAMap { .. } => "sensitive_fields",
            _ => "yaml_body",
        };
        Diagnostic::error("Invalid kubectl_manifest", e.to_string()).at(AttributePath::root(at))
    }
}

/// A parsed `yaml_body`.
pub struct Body {
    pub manifest: Json,
    pub identity: ObjectIdentity,
}

impl Body {
    /// The body a resource value (configuration, plan or state) holds: `yaml_body` in
    /// `override_namespace`. `None` while `yaml_body` is unknown.
    pub fn of(value: &Value) -> Result<Option<Body>, BodyError> {
        let (body, over) = (value.get("yaml_body"), value.get("override_namespace"));
        if !body.is_wholly_known() || !over.is_wholly_known() {
            return Ok(None);
        }
        let Some(text) = body.as_str() else {
            return Ok(None);
        };
        let mut manifest = yaml::parse_manifest(text)?;
        if let Some(namespace) = over.as_str().filter(|n| !n.is_empty())
            && let Some(object) = manifest.as_object_mut()
        {
            let meta = object
                .entry("metadata")
                .or_insert_with(|| Json::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert("namespace".into(), Json::from(namespace));
            }
        }
        let text = |p: &str| manifest.pointer(p).and_then(Json::as_str).map(str::to_string);
        let identity = ObjectIdentity {
            api_version: text("/apiVersion").ok_or(BodyError::Missing("apiVersion"))?,
            kind: text("/kind").ok_or(BodyError::Missing("kind"))?,
            namespace: text("/metadata/namespace").filter(|n| !n.is_empty()),
            name: text("/metadata/name").ok_or(BodyError::Missing("metadata.name"))?,
        };
        Ok(Some(Body { manifest, identity }))
    }

    /// Whether the manifest is a core Secret, whose values are masked without being named.
    pub fn is_secret(&self) -> bool {
        self.identity.api_version == "v1" && self.identity.kind == "Secret"
    }

    /// `yaml_body_parsed`: the manifest as YAML, each of `sensitive_fields` (dot paths) masked;
    /// without any, a Secret's `data` and `stringData`.
    pub fn parsed(&self, sensitive_fields: &[String]) -> Result<String, BodyError> {
        let defaults = ["data".to_string(), "stringData".to_string()];
        let fields: Vec<&String> = sensitive_fields.iter().filter(|f| !f.trim().is_empty()).collect();
        let fields: Vec<&String> = if fields.is_empty() && self.is_secret() {
            defaults.iter().collect()
        } else {
            fields
        };
        let mut masked = self.manifest.clone();
        for path in fields {
            mask(&mut masked, path)?;
        }
        Ok(yaml::to_yaml(&masked))
    }

    /// The import id the kubectl providers take: `apiVersion//kind//name[//namespace]`.
    pub fn import_id(&self) -> String {
        import_id(&self.identity)
    }
}

/// The kubectl providers' import id of `identity`.
pub fn import_id(identity: &ObjectIdentity) -> String {
    let ObjectIdentity {
        api_version,
        kind,
        name,
        namespace,
    } = identity;
    match namespace {
        Some(ns) => format!("{api_version}//{kind}//{name}//{ns}"),
        None => format!("{api_version}//{kind}//{name}"),
    }
}

/// The identity an import id names: `apiVersion//kind//name` or `apiVersion//kind//name//namespace`.
pub fn parse_import_id(id: &str) -> Result<ObjectIdentity, Diagnostic> {
    let parts: Vec<&str> = id.split("//").collect();
    let bad = || {
        Diagnostic::error(
            "Invalid import id",
            format!(
                "malformed ID {id:?}: a kubectl_manifest import id is \"apiVersion//kind//name\" or \
                 \"apiVersion//kind//name//namespace\", e.g. \"apps/v1//Deployment//web//shop\"."
            ),
        )
    };
    if !(3..=4).contains(&parts.len()) || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(bad());
    }
    Ok(ObjectIdentity {
        api_version: parts[0].to_string(),
        kind: parts[1].to_string(),
        name: parts[2].to_string(),
        namespace: parts.get(3).map(|ns| ns.to_string()),
    })
}

/// Replaces the value at dot path `path` with [`MASKED`]; a path that is not there is left.
fn mask(object: &mut Json, path: &str) -> Result<(), BodyError> {
    let steps: Vec<&str> = path.split('.').collect();
    let mut at = object;
    for (i, step) in steps.iter().enumerate() {
        let Some(map) = at.as_object_mut() else {
            return Err(BodyError::NotAMap {
                path: path.to_string(),
            });
        };
        if i + 1 == steps.len() {
            if let Some(value) = map.get_mut(*step) {
                *value = Json::from(MASKED);
            }
            return Ok(());
        }
        match map.get_mut(*step) {
            Some(next) => at = next,
            None => return Ok(()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(yaml: &str, over: Option<&str>) -> Body {
        let value = Value::object([
            ("yaml_body", Value::string(yaml)),
            ("override_namespace", over.map_or(Value::Null, Value::string)),
        ]);
        Body::of(&value).unwrap().unwrap()
    }

    #[test]
    fn override_namespace_moves_the_object() {
        let b = body(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\n",
            Some("y"),
        );
        assert_eq!(b.identity.namespace.as_deref(), Some("y"));
        assert_eq!(b.manifest["metadata"]["namespace"], "y");
        assert_eq!(b.import_id(), "v1//ConfigMap//a//y");
    }

    #[test]
    fn secret_values_are_masked_by_default_and_named_paths_otherwise() {
        let b = body(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  k: dg==\nstringData:\n  p: pw\n",
            None,
        );
        let parsed = b.parsed(&[]).unwrap();
        assert!(!parsed.contains("dg==") && !parsed.contains("pw"), "{parsed}");
        assert!(parsed.contains(MASKED));
        let c = body(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n",
            None,
        );
        assert!(c.parsed(&["data.a".into()]).unwrap().contains(MASKED));
        assert!(c.parsed(&["data.missing".into()]).unwrap().contains("a: b"));
        let list = body(
            "apiVersion: v1\nkind: X\nmetadata:\n  name: c\nitems:\n- a\n",
            None,
        );
        assert!(matches!(
            list.parsed(&["items.0".into()]),
            Err(BodyError::NotAMap { .. })
        ));
    }

    #[test]
    fn import_ids_have_three_or_four_parts() {
        let id = parse_import_id("apps/v1//Deployment//web//shop").unwrap();
        assert_eq!(id.namespace.as_deref(), Some("shop"));
        assert!(parse_import_id("v1//Namespace//x").unwrap().namespace.is_none());
        assert!(parse_import_id("v1//Namespace").is_err());
        assert!(parse_import_id("v1//ConfigMap//x//").is_err());
    }
}
