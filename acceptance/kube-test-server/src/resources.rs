//! The resource types this server stores, and how each answers a DELETE.

/// What a successful DELETE of an object returns (apiserver registries differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteAnswer {
    /// A `Status` with `status: Success`.
    Status,
    /// The deleted object itself.
    Object,
}

/// One stored resource type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceType {
    pub group: &'static str,
    /// Versions served; the first is the storage version.
    pub versions: &'static [&'static str],
    pub resource: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub delete_answer: DeleteAnswer,
}

impl ResourceType {
    /// Storage key prefix shared by every served version.
    pub fn key(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    pub fn storage_version(&self) -> &'static str {
        self.versions[0]
    }

    pub fn target<'a>(&'a self, name: Option<&'a str>) -> crate::status::Target<'a> {
        crate::status::Target {
            group: self.group,
            resource: self.resource,
            name,
        }
    }
}

const fn rt(
    group: &'static str,
    versions: &'static [&'static str],
    resource: &'static str,
    kind: &'static str,
    namespaced: bool,
    delete_answer: DeleteAnswer,
) -> ResourceType {
    ResourceType {
        group,
        versions,
        resource,
        kind,
        namespaced,
        delete_answer,
    }
}

use DeleteAnswer::{Object, Status};

pub const NAMESPACES: ResourceType = rt("", &["v1"], "namespaces", "Namespace", false, Object);
pub const CONFIGMAPS: ResourceType = rt("", &["v1"], "configmaps", "ConfigMap", true, Status);
pub const SECRETS: ResourceType = rt("", &["v1"], "secrets", "Secret", true, Status);
pub const SERVICES: ResourceType = rt("", &["v1"], "services", "Service", true, Object);
pub const SERVICEACCOUNTS: ResourceType = rt("", &["v1"], "serviceaccounts", "ServiceAccount", true, Object);
pub const DEPLOYMENTS: ResourceType = rt("apps", &["v1"], "deployments", "Deployment", true, Status);
pub const HPAS: ResourceType = rt(
    "autoscaling",
    &["v2", "v1"],
    "horizontalpodautoscalers",
    "HorizontalPodAutoscaler",
    true,
    Status,
);
pub const NETWORKPOLICIES: ResourceType = rt(
    "networking.k8s.io",
    &["v1"],
    "networkpolicies",
    "NetworkPolicy",
    true,
    Status,
);
pub const ROLES: ResourceType = rt(
    "rbac.authorization.k8s.io",
    &["v1"],
    "roles",
    "Role",
    true,
    Status,
);
pub const ROLEBINDINGS: ResourceType = rt(
    "rbac.authorization.k8s.io",
    &["v1"],
    "rolebindings",
    "RoleBinding",
    true,
    Status,
);
pub const CLUSTERROLES: ResourceType = rt(
    "rbac.authorization.k8s.io",
    &["v1"],
    "clusterroles",
    "ClusterRole",
    false,
    Status,
);
pub const CLUSTERROLEBINDINGS: ResourceType = rt(
    "rbac.authorization.k8s.io",
    &["v1"],
    "clusterrolebindings",
    "ClusterRoleBinding",
    false,
    Status,
);
pub const LEASES: ResourceType = rt("coordination.k8s.io", &["v1"], "leases", "Lease", true, Status);

/// Every stored type.
pub const ALL: &[ResourceType] = &[
    NAMESPACES,
    CONFIGMAPS,
    SECRETS,
    SERVICES,
    SERVICEACCOUNTS,
    DEPLOYMENTS,
    HPAS,
    NETWORKPOLICIES,
    ROLES,
    ROLEBINDINGS,
    CLUSTERROLES,
    CLUSTERROLEBINDINGS,
    LEASES,
];

/// The stored type served at `group/version/resource`.
pub fn find(group: &str, version: &str, resource: &str) -> Option<ResourceType> {
    ALL.iter()
        .find(|r| r.group == group && r.resource == resource && r.versions.contains(&version))
        .copied()
}
