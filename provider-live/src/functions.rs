//! The provider-defined functions of hashicorp/kubernetes 3.4.0:
//! `provider::kubernetes::manifest_decode(string)`, `manifest_decode_multi(string)` (both
//! returning a dynamic value) and `manifest_encode(dynamic)` (returning YAML text).
//!
//! Decoding keeps the types the YAML has: numbers, bools and strings stay so, sequences are
//! tuples and mappings objects (an attribute of any value, as `yamldecode` gives), null stays
//! null. Each document must be a Kubernetes manifest (`apiVersion`, `kind` and `metadata`, as
//! hashicorp's functions require); empty documents are skipped. Every failure is a
//! [`ManifestError`] that says which document and, for bad YAML, which line and column,
//! turned into the function's error at one place.

use std::sync::Arc;

use plugin_runtime::{Function, FunctionError, Number, Parameter, Signature, Type, Value};
use serde::Deserialize;
use serde_yaml::Value as Yaml;

/// The fields hashicorp's functions require of every manifest.
const MANIFEST_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// The functions this provider serves.
pub fn all() -> Vec<Arc<dyn Function>> {
    vec![
        Arc::new(ManifestDecode),
        Arc::new(ManifestDecodeMulti),
        Arc::new(ManifestEncode),
    ]
}

/// Why a manifest could not be decoded or encoded. Documents are counted from 1, as they
/// appear in the text (empty ones included).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ManifestError {
    #[error("invalid YAML in document {document}: {message}")]
    Yaml { document: usize, message: String },
    #[error("document {document} is not a Kubernetes manifest: a mapping is required, found {found}")]
    NotMapping { document: usize, found: &'static str },
    #[error("document {document} is not a Kubernetes manifest: missing field {field:?}")]
    MissingField { document: usize, field: &'static str },
    #[error("document {document}: {path}: {problem}")]
    BadValue {
        document: usize,
        path: String,
        problem: String,
    },
    #[error("Invalid manifest: YAML document is empty")]
    Empty,
    #[error(
        "YAML manifest contains {0} resources: use manifest_decode_multi to decode manifests \
         containing more than one resource"
    )]
    Multiple(usize),
    #[error("the manifest is not an object, nor a list of objects: found {0}")]
    NotObject(&'static str),
}

impl From<ManifestError> for FunctionError {
    fn from(e: ManifestError) -> FunctionError {
        // Every function has one parameter, the manifest.
        FunctionError::argument(0, e.to_string())
    }
}

fn manifest_parameter(ty: Type, description: &str) -> Parameter {
    Parameter::new("manifest", ty, description)
}

/// The text argument of the decoding functions.
fn text_argument(args: &[Value]) -> Result<&str, FunctionError> {
    args.first()
        .and_then(Value::as_str)
        .ok_or_else(|| FunctionError::argument(0, "a string is required"))
}

pub struct ManifestDecode;

impl Function for ManifestDecode {
    fn name(&self) -> &'static str {
        "manifest_decode"
    }

    fn signature(&self) -> Signature {
        Signature {
            parameters: vec![manifest_parameter(
                Type::String,
                "The YAML text for a Kubernetes manifest",
            )],
            variadic: None,
            return_type: Type::Dynamic,
            summary: "Decode a Kubernetes YAML manifest".into(),
            description: "Given a YAML text containing a Kubernetes manifest, will decode and return an \
                          object representation of that resource."
                .into(),
        }
    }

    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError> {
        let mut manifests = decode(text_argument(&args)?)?;
        match manifests.len() {
            0 => Err(ManifestError::Empty.into()),
            1 => Ok(manifests.remove(0)),
            n => Err(ManifestError::Multiple(n).into()),
        }
    }
}

pub struct ManifestDecodeMulti;

impl Function for ManifestDecodeMulti {
    fn name(&self) -> &'static str {
        "manifest_decode_multi"
    }

    fn signature(&self) -> Signature {
        Signature {
            parameters: vec![manifest_parameter(
                Type::String,
                "The YAML plaintext for a Kubernetes manifest",
            )],
            variadic: None,
            return_type: Type::Dynamic,
            summary: "Decode a Kubernetes YAML manifest containing multiple resources".into(),
            description: "Given a YAML text containing a Kubernetes manifest with multiple resources, will \
                          decode the manifest and return a tuple of object representations for each resource."
                .into(),
        }
    }

    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError> {
        Ok(Value::Tuple(decode(text_argument(&args)?)?))
    }
}

pub struct ManifestEncode;

impl Function for ManifestEncode {
    fn name(&self) -> &'static str {
        "manifest_encode"
    }

    fn signature(&self) -> Signature {
        Signature {
            parameters: vec![manifest_parameter(
                Type::Dynamic,
                "The object representation of a Kubernetes manifest",
            )],
            variadic: None,
            return_type: Type::String,
            summary: "Encode an object to Kubernetes YAML".into(),
            description: "Given an object representation of a Kubernetes manifest, will encode and return a \
                          YAML string for that resource."
                .into(),
        }
    }

    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError> {
        let manifest = args.first().unwrap_or(&Value::Null);
        Ok(Value::String(encode(manifest)?))
    }
}

/// Every non-empty document of `text`, as objects.
pub fn decode(text: &str) -> Result<Vec<Value>, ManifestError> {
    let mut manifests = Vec::new();
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let document_number = index + 1;
        let yaml_error = |e: serde_yaml::Error| ManifestError::Yaml {
            document: document_number,
            message: e.to_string(),
        };
        let mut yaml = Yaml::deserialize(document).map_err(yaml_error)?;
        yaml.apply_merge().map_err(yaml_error)?;
        let yaml = untagged(yaml);
        let mapping = match &yaml {
            Yaml::Null => continue,
            Yaml::Mapping(m) if m.is_empty() => continue,
            Yaml::Mapping(m) => m,
            other => {
                return Err(ManifestError::NotMapping {
                    document: document_number,
                    found: yaml_kind(other),
                });
            }
        };
        if let Some(field) = MANIFEST_FIELDS.iter().find(|f| !mapping.contains_key(**f)) {
            return Err(ManifestError::MissingField {
                document: document_number,
                field,
            });
        }
        let value = from_yaml(&yaml, "").map_err(|(path, problem)| ManifestError::BadValue {
            document: document_number,
            path,
            problem,
        })?;
        manifests.push(value);
    }
    Ok(manifests)
}

/// A tagged value (`!something x`) as its value: Kubernetes manifests carry no tags.
fn untagged(yaml: Yaml) -> Yaml {
    match yaml {
        Yaml::Tagged(tagged) => untagged(tagged.value),
        other => other,
    }
}

fn yaml_kind(yaml: &Yaml) -> &'static str {
    match yaml {
        Yaml::Null => "null",
        Yaml::Bool(_) => "a bool",
        Yaml::Number(_) => "a number",
        Yaml::String(_) => "a string",
        Yaml::Sequence(_) => "a sequence",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(_) => "a tagged value",
    }
}

/// A path inside a document as error messages show it: `spec.ports[0]`.
fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// One YAML value as a Terraform value; on failure, the path and the problem.
fn from_yaml(yaml: &Yaml, path: &str) -> Result<Value, (String, String)> {
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(b) => Value::Bool(*b),
        Yaml::String(s) => Value::String(s.clone()),
        Yaml::Number(n) => Value::Number(if let Some(i) = n.as_i64() {
            Number::Int(i)
        } else if let Some(u) = n.as_u64() {
            Number::Decimal(u.to_string())
        } else {
            // NaN and the infinities are no Terraform numbers.
            let f = n.as_f64().filter(|f| f.is_finite());
            Number::from(f.ok_or_else(|| (path.to_string(), format!("{n} is not a finite number")))?)
        }),
        Yaml::Sequence(items) => Value::Tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| from_yaml(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Mapping(mapping) => {
            let mut attributes = std::collections::BTreeMap::new();
            for (key, item) in mapping {
                let key = match untagged(key.clone()) {
                    Yaml::String(s) => s,
                    // Scalars keys become their text, as Kubernetes' YAML-to-JSON does.
                    Yaml::Bool(b) => b.to_string(),
                    Yaml::Number(n) => n.to_string(),
                    other => {
                        return Err((
                            path.to_string(),
                            format!("a mapping key must be a string, found {}", yaml_kind(&other)),
                        ));
                    }
                };
                let value = from_yaml(item, &child(path, &key))?;
                attributes.insert(key, value);
            }
            Value::Object(attributes)
        }
        Yaml::Tagged(tagged) => from_yaml(&tagged.value, path)?,
    })
}

/// YAML text for an object (one document) or a list of objects (each document preceded by
/// `---`, as hashicorp's function writes them).
pub fn encode(manifest: &Value) -> Result<String, ManifestError> {
    match manifest.plain() {
        Value::Object(_) | Value::Map(_) => encode_document(manifest, 1),
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
            let mut out = String::new();
            for (index, item) in items.iter().enumerate() {
                out.push_str("---\n");
                out.push_str(&encode_document(item, index + 1)?);
            }
            Ok(out)
        }
        other => Err(ManifestError::NotObject(value_kind(other))),
    }
}

fn encode_document(manifest: &Value, document: usize) -> Result<String, ManifestError> {
    let Some(entries) = manifest.entries() else {
        return Err(ManifestError::NotMapping {
            document,
            found: value_kind(manifest.plain()),
        });
    };
    if let Some(field) = MANIFEST_FIELDS.iter().find(|f| !entries.contains_key(**f)) {
        return Err(ManifestError::MissingField { document, field });
    }
    let yaml = to_yaml(manifest, "").map_err(|(path, problem)| ManifestError::BadValue {
        document,
        path,
        problem,
    })?;
    serde_yaml::to_string(&yaml).map_err(|e| ManifestError::BadValue {
        document,
        path: String::new(),
        problem: e.to_string(),
    })
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Unknown(_) => "an unknown value",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) | Value::Set(_) | Value::Tuple(_) => "a list",
        Value::Map(_) | Value::Object(_) => "an object",
        Value::Typed(t) => value_kind(t.value()),
    }
}

/// One Terraform value as YAML; on failure, the path and the problem.
fn to_yaml(value: &Value, path: &str) -> Result<Yaml, (String, String)> {
    Ok(match value.plain() {
        Value::Null => Yaml::Null,
        Value::Unknown(_) => return Err((path.to_string(), "the value is not known yet".to_string())),
        Value::Bool(b) => Yaml::Bool(*b),
        Value::String(s) => Yaml::String(s.clone()),
        Value::Number(n) => match n {
            Number::Int(i) => Yaml::Number((*i).into()),
            other => match other.to_string().parse::<u64>() {
                Ok(u) => Yaml::Number(u.into()),
                Err(_) => Yaml::Number(other.as_f64().into()),
            },
        },
        Value::List(items) | Value::Set(items) | Value::Tuple(items) => Yaml::Sequence(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_yaml(item, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Map(entries) | Value::Object(entries) => {
            let mut mapping = serde_yaml::Mapping::new();
            for (key, item) in entries {
                mapping.insert(Yaml::String(key.clone()), to_yaml(item, &child(path, key))?);
            }
            Yaml::Mapping(mapping)
        }
        Value::Typed(t) => to_yaml(t.value(), path)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: web\ndata:\n  port: \"8080\"\nreplicas: 3\nratio: 0.5\nenabled: true\nnothing: null\nports:\n- 80\n- name: https\n";

    #[test]
    fn decoding_keeps_the_yaml_types() {
        let value = ManifestDecode
            .call(vec![Value::string(CONFIG_MAP)])
            .expect("decodes");
        assert_eq!(value.get("data").get("port"), &Value::string("8080"));
        assert_eq!(value.get("replicas"), &Value::int(3));
        assert_eq!(value.get("ratio"), &Value::Number(Number::Float(0.5)));
        assert_eq!(value.get("enabled"), &Value::Bool(true));
        assert_eq!(value.get("nothing"), &Value::Null);
        let ports = value.get("ports");
        assert_eq!(
            ports.infer_type(),
            Type::Tuple(vec![Type::Number, Type::object([("name", Type::String)])])
        );
        assert_eq!(
            value.get("metadata").get("labels").infer_type(),
            Type::object([("app", Type::String)])
        );
    }

    #[test]
    fn encoding_then_decoding_gives_the_same_value() {
        let value = ManifestDecode.call(vec![Value::string(CONFIG_MAP)]).unwrap();
        let text = ManifestEncode.call(vec![value.clone()]).unwrap();
        let text = text.as_str().unwrap();
        assert!(text.starts_with("apiVersion: v1\n"), "{text}");
        assert!(text.contains("port: '8080'"), "strings stay strings: {text}");
        assert_eq!(ManifestDecode.call(vec![Value::string(text)]).unwrap(), value);
    }

    #[test]
    fn several_documents_decode_to_a_tuple_and_encode_back() {
        let text =
            format!("---\n{CONFIG_MAP}---\n\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n");
        let decoded = ManifestDecodeMulti.call(vec![Value::string(&text)]).unwrap();
        let kinds: Vec<&str> = decoded
            .elements()
            .iter()
            .filter_map(|m| m.get("kind").as_str())
            .collect();
        assert_eq!(kinds, ["ConfigMap", "Namespace"], "the empty document is skipped");
        let encoded = ManifestEncode.call(vec![decoded.clone()]).unwrap();
        let encoded = encoded.as_str().unwrap();
        assert_eq!(encoded.matches("---\n").count(), 2, "{encoded}");
        assert!(encoded.starts_with("---\napiVersion: v1\n"), "{encoded}");
        assert_eq!(
            ManifestDecodeMulti.call(vec![Value::string(encoded)]).unwrap(),
            decoded
        );

        let single = ManifestDecode.call(vec![Value::string(&text)]).unwrap_err();
        assert_eq!(single.message, ManifestError::Multiple(2).to_string());
        let empty = ManifestDecode.call(vec![Value::string("---\n")]).unwrap_err();
        assert_eq!(empty.message, ManifestError::Empty.to_string());
        assert_eq!(
            ManifestDecodeMulti.call(vec![Value::string("")]).unwrap(),
            Value::Tuple(vec![])
        );
    }

    #[test]
    fn bad_yaml_says_which_document_line_and_column() {
        let text = format!("{CONFIG_MAP}---\napiVersion: v1\nkind: [unclosed\n");
        let error = ManifestDecodeMulti.call(vec![Value::string(&text)]).unwrap_err();
        assert_eq!(error.argument, Some(0));
        assert!(
            error.message.starts_with("invalid YAML in document 2: "),
            "{}",
            error.message
        );
        // The unclosed flow sequence runs to the end of the text: line 18 of the whole input.
        assert!(error.message.contains("line 18 column"), "{}", error.message);
    }

    #[test]
    fn documents_that_are_no_manifests_are_refused() {
        let missing = decode("apiVersion: v1\nmetadata: {}\n").unwrap_err();
        assert_eq!(
            missing,
            ManifestError::MissingField {
                document: 1,
                field: "kind"
            }
        );
        assert_eq!(
            decode("apiVersion: v1\nkind: A\nmetadata: {}\n---\n- a\n").unwrap_err(),
            ManifestError::NotMapping {
                document: 2,
                found: "a sequence"
            }
        );
        let not_object = ManifestEncode.call(vec![Value::string("x")]).unwrap_err();
        assert!(
            not_object.message.contains("found a string"),
            "{}",
            not_object.message
        );
        let no_kind = Value::object([("apiVersion", Value::string("v1")), ("metadata", Value::Null)]);
        let refused = ManifestEncode
            .call(vec![Value::Tuple(vec![no_kind])])
            .unwrap_err();
        assert_eq!(
            refused.message,
            "document 1 is not a Kubernetes manifest: missing field \"kind\""
        );
    }

    #[test]
    fn anchors_merges_and_scalar_keys_resolve() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: a\nextra:\n  <<: *m\n  1: one\n  true: yes\n";
        let value = ManifestDecode.call(vec![Value::string(text)]).unwrap();
        assert_eq!(value.get("extra").get("name"), &Value::string("a"));
        assert_eq!(value.get("extra").get("1"), &Value::string("one"));
        assert_eq!(value.get("extra").get("true"), &Value::string("yes"));
    }

    #[test]
    fn unknown_values_cannot_be_encoded() {
        let manifest = Value::object([
            ("apiVersion", Value::string("v1")),
            ("kind", Value::string("ConfigMap")),
            ("metadata", Value::object([("name", Value::unknown())])),
        ]);
        let error = encode(&manifest).unwrap_err();
        assert_eq!(
            error.to_string(),
            "document 1: metadata.name: the value is not known yet"
        );
    }
}
