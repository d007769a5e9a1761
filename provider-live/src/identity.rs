//! Resource identity, as hashicorp/kubernetes declares it: `api_version`, `kind` and `name`,
//! plus `namespace` for namespaced objects. Typed resources and `kubernetes_manifest` share
//! it, so `import { to = ..., identity = {...} }` names an object the same way for both, and
//! the engine can check that the object behind a resource never changes.

use plugin_runtime::{
    AttributePath, Diagnostic, Diagnostics, IdentityAttribute, IdentitySchema, Type, Value,
};
use serde_json::Value as Json;

use crate::kind::KindInfo;
use crate::metadata;

/// The kind a resource type's identity names: a typed resource's, or the one a patch-style
/// type edits (hashicorp's default service account shares the service account's identity).
#[derive(Clone, Copy, Debug)]
pub struct IdentityKind<'a> {
    pub type_name: &'a str,
    pub api_version: &'a str,
    pub kind: &'a str,
    pub namespaced: bool,
}

impl<'a> From<&'a KindInfo> for IdentityKind<'a> {
    fn from(info: &'a KindInfo) -> Self {
        IdentityKind {
            type_name: info.type_name,
            api_version: info.api_version,
            kind: info.kind,
            namespaced: info.namespaced,
        }
    }
}

/// The identity schema of a typed resource, as hashicorp's (version 1): `namespace` only for
/// namespaced kinds. Identities stored at version 0 had `namespace` always; the runtime drops
/// what a schema no longer has when it upgrades them.
pub fn schema(namespaced: bool) -> IdentitySchema {
    let mut attributes = vec![
        IdentityAttribute::required(
            "api_version",
            Type::String,
            "The object's apiVersion, e.g. `apps/v1`.",
        ),
        IdentityAttribute::required("kind", Type::String, "The object's kind, e.g. `Deployment`."),
        IdentityAttribute::required("name", Type::String, "The object's name."),
    ];
    if namespaced {
        attributes.push(IdentityAttribute::optional(
            "namespace",
            Type::String,
            "The object's namespace; `default` when left out.",
        ));
    }
    IdentitySchema {
        version: 1,
        attributes,
    }
}

/// The identity schema of `kubernetes_manifest`, whose object may be of any kind: `namespace`
/// is there, and not set for cluster-scoped kinds. Version 1, as hashicorp's
/// (manifest/provider/resourceidentity.go:21): a state it wrote holds identities of version 1,
/// and ours of version 0 hold the same attributes.
pub fn manifest_schema() -> IdentitySchema {
    let mut schema = schema(true);
    if let Some(namespace) = schema.attributes.iter_mut().find(|a| a.name == "namespace") {
        namespace.description =
            "The object's namespace; `default` when left out. Not set for cluster-scoped kinds.";
    }
    schema
}

/// One object's identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectIdentity {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectIdentity {
    /// The identity as the engine stores it; `with_namespace`: the schema has `namespace`
    /// (null for a cluster-scoped object).
    pub fn to_value(&self, with_namespace: bool) -> Value {
        let mut value = Value::object([
            ("api_version", Value::string(&self.api_version)),
            ("kind", Value::string(&self.kind)),
            ("name", Value::string(&self.name)),
        ]);
        if with_namespace {
            value.set(
                "namespace",
                self.namespace.as_ref().map_or(Value::Null, Value::string),
            );
        }
        value
    }

    /// From a manifest: apiVersion, kind and metadata.name are required.
    pub fn of_manifest(manifest: &Json) -> Result<ObjectIdentity, Diagnostic> {
        let text = |pointer: &str| {
            manifest
                .pointer(pointer)
                .and_then(Json::as_str)
                .map(str::to_string)
        };
        let missing = |what: &str, path: AttributePath| {
            Diagnostic::error(
                "Invalid manifest",
                format!("The manifest must set {what} (a string)."),
            )
            .at(path)
        };
        let root = || AttributePath::root("manifest");
        Ok(ObjectIdentity {
            api_version: text("/apiVersion")
                .ok_or_else(|| missing("apiVersion", root().attribute("apiVersion")))?,
            kind: text("/kind").ok_or_else(|| missing("kind", root().attribute("kind")))?,
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name")
                .ok_or_else(|| missing("metadata.name", root().attribute("metadata").attribute("name")))?,
        })
    }

    /// From an import id `apiVersion=v1,kind=ConfigMap,namespace=x,name=y`.
    pub fn from_manifest_import_id(id: &str) -> Result<ObjectIdentity, Diagnostic> {
        let mut fields = std::collections::BTreeMap::new();
        for part in id.split(',') {
            if let Some((k, v)) = part.split_once('=') {
                fields.insert(k.trim(), v.trim().to_string());
            }
        }
        let mut take = |k: &str| fields.remove(k).filter(|v| !v.is_empty());
        match (take("apiVersion"), take("kind"), take("name")) {
            (Some(api_version), Some(kind), Some(name)) => Ok(ObjectIdentity {
                api_version,
                kind,
                namespace: take("namespace"),
                name,
            }),
            _ => Err(Diagnostic::error(
                "Invalid import id",
                format!(
                    "{id:?} is not a manifest import id: expected \
                     \"apiVersion=<apiVersion>,kind=<kind>,namespace=<namespace>,name=<name>\" \
                     (namespace left out for cluster-scoped kinds), e.g. \
                     \"apiVersion=v1,kind=ConfigMap,namespace=shop,name=handoff\"."
                ),
            )),
        }
    }

    /// The `kubernetes_manifest` import id: `apiVersion=v1,kind=ConfigMap,namespace=x,name=y`.
    pub fn manifest_import_id(&self) -> String {
        let namespace = self
            .namespace
            .as_ref()
            .map(|ns| format!("namespace={ns},"))
            .unwrap_or_default();
        format!(
            "apiVersion={},kind={},{namespace}name={}",
            self.api_version, self.kind, self.name
        )
    }

    /// Reads an identity an `import` block gave. `namespace` defaults to `default` for
    /// namespaced kinds, as `kubectl` does.
    pub fn from_value(identity: &Value, namespaced: bool) -> Result<ObjectIdentity, Diagnostics> {
        let text = |name: &str| {
            identity
                .get(name)
                .as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let required = |name: &str| {
            text(name).ok_or_else(|| {
                Diagnostics::from(Diagnostic::error(
                    "Incomplete resource identity",
                    format!("The identity must set `{name}`."),
                ))
            })
        };
        let namespace = text("namespace");
        if !namespaced && namespace.is_some() {
            return Err(Diagnostic::error(
                "Invalid resource identity",
                format!(
                    "{} objects are cluster-scoped: leave `namespace` out of the identity.",
                    text("kind").unwrap_or_default()
                ),
            )
            .into());
        }
        Ok(ObjectIdentity {
            api_version: required("api_version")?,
            kind: required("kind")?,
            name: required("name")?,
            namespace: namespaced.then(|| namespace.unwrap_or_else(|| "default".to_string())),
        })
    }
}

/// The identity a typed resource's state describes.
pub fn of_typed<'a>(info: impl Into<IdentityKind<'a>>, state: &Value) -> Option<Value> {
    let info = info.into();
    let meta = metadata::of(state);
    let name = meta.get("name").as_str()?;
    let namespace = if info.namespaced {
        Some(meta.get("namespace").as_str()?.to_string())
    } else {
        None
    };
    let identity = ObjectIdentity {
        api_version: info.api_version.to_string(),
        kind: info.kind.to_string(),
        namespace,
        name: name.to_string(),
    };
    Some(identity.to_value(info.namespaced))
}

/// The import id (`namespace/name` or `name`) an identity names for a typed resource, which
/// must be of the resource's own kind.
pub fn typed_import_id<'a>(
    info: impl Into<IdentityKind<'a>>,
    identity: &Value,
) -> Result<String, Diagnostics> {
    let info = info.into();
    let identity = ObjectIdentity::from_value(identity, info.namespaced)?;
    if identity.api_version != info.api_version || identity.kind != info.kind {
        return Err(Diagnostic::error(
            "Resource identity of another kind",
            format!(
                "{} manages {} {} objects, but the identity names {} {}.",
                info.type_name, info.api_version, info.kind, identity.api_version, identity.kind
            ),
        )
        .into());
    }
    Ok(match identity.namespace {
        Some(namespace) => format!("{namespace}/{}", identity.name),
        None => identity.name,
    })
}

/// The identity of a `kubernetes_manifest`, from its `manifest`: known at plan time, and
/// stable since a new name or kind replaces the object. `namespace` is what the manifest
/// says (absent when it relies on the default). `None` while the manifest is partly unknown.
pub fn of_manifest(state: &Value) -> Option<Value> {
    let manifest = state.get("manifest");
    if !manifest.is_wholly_known() {
        return None;
    }
    ObjectIdentity::of_manifest(&manifest.to_json())
        .ok()
        .map(|i| i.to_value(true))
}

/// The `kubernetes_manifest` import id an identity names. Whether the kind is namespaced is
/// discovery's to say, at import.
pub fn manifest_import_id(identity: &Value) -> Result<String, Diagnostics> {
    let namespaced = !identity.get("namespace").is_null();
    Ok(ObjectIdentity::from_value(identity, namespaced)?.manifest_import_id())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::MetadataShape;

    const DEPLOYMENT: KindInfo = KindInfo {
        type_name: "kubernetes_deployment_v1",
        aliases: &[],
        api_version: "apps/v1",
        kind: "Deployment",
        plural: "deployments",
        namespaced: true,
        description: "",
        metadata: MetadataShape::block(true),
    };

    fn state(name: Value, namespace: Value) -> Value {
        Value::object([(
            "metadata",
            Value::List(vec![Value::object([("name", name), ("namespace", namespace)])]),
        )])
    }

    #[test]
    fn identity_follows_state_and_waits_for_unknowns() {
        let identity = of_typed(&DEPLOYMENT, &state(Value::string("web"), Value::string("shop"))).unwrap();
        assert_eq!(identity.get("kind").as_str(), Some("Deployment"));
        assert_eq!(identity.get("namespace").as_str(), Some("shop"));
        assert!(of_typed(&DEPLOYMENT, &state(Value::string("web"), Value::unknown())).is_none());
        assert!(of_typed(&DEPLOYMENT, &Value::Null).is_none());
    }

    #[test]
    fn import_by_identity_checks_the_kind_and_defaults_the_namespace() {
        let given = |kind: &str, namespace: Value| {
            Value::object([
                ("api_version", Value::string("apps/v1")),
                ("kind", Value::string(kind)),
                ("name", Value::string("web")),
                ("namespace", namespace),
            ])
        };
        assert_eq!(
            typed_import_id(&DEPLOYMENT, &given("Deployment", Value::string("shop"))).unwrap(),
            "shop/web"
        );
        assert_eq!(
            typed_import_id(&DEPLOYMENT, &given("Deployment", Value::Null)).unwrap(),
            "default/web"
        );
        let error = typed_import_id(&DEPLOYMENT, &given("StatefulSet", Value::Null)).unwrap_err();
        assert!(
            format!("{error:?}").contains("names apps/v1 StatefulSet"),
            "{error:?}"
        );
    }

    #[test]
    fn manifest_identity_comes_from_the_manifest() {
        let state = Value::object([(
            "manifest",
            Value::from_json(&serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "handoff", "namespace": "shop"}
            })),
        )]);
        let identity = of_manifest(&state).unwrap();
        assert_eq!(
            manifest_import_id(&identity).unwrap(),
            "apiVersion=v1,kind=ConfigMap,namespace=shop,name=handoff"
        );
        let cluster = Value::object([
            ("api_version", Value::string("v1")),
            ("kind", Value::string("Namespace")),
            ("name", Value::string("shop")),
            ("namespace", Value::Null),
        ]);
        assert_eq!(
            manifest_import_id(&cluster).unwrap(),
            "apiVersion=v1,kind=Namespace,name=shop"
        );
    }
}
