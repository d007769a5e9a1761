//! How every message names a Kubernetes object: `ConfigMap "shop/app-config"`,
//! `Namespace "shop"`.

use std::fmt;

/// An object as a message names it; its `Display` is `Kind "namespace/name"`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// The kind, `ConfigMap`.
    pub kind: String,
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The name; empty for a collection.
    pub name: String,
}

impl ObjectRef {
    /// An object in a namespace.
    pub fn namespaced(kind: &str, namespace: &str, name: &str) -> ObjectRef {
        ObjectRef {
            kind: kind.to_string(),
            namespace: Some(namespace.to_string()),
            name: name.to_string(),
        }
    }

    /// A cluster-scoped object (or a collection, with an empty name).
    pub fn cluster(kind: &str, name: &str) -> ObjectRef {
        ObjectRef {
            kind: kind.to_string(),
            namespace: None,
            name: name.to_string(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} \"{}/{}\"", self.kind, ns, self.name),
            None => write!(f, "{} \"{}\"", self.kind, self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_kind_and_qualified_name() {
        assert_eq!(
            ObjectRef::namespaced("ConfigMap", "shop", "app-config").to_string(),
            "ConfigMap \"shop/app-config\""
        );
        assert_eq!(
            ObjectRef::cluster("Namespace", "shop").to_string(),
            "Namespace \"shop\""
        );
    }
}
