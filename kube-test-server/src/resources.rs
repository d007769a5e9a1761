//! The resource types this server stores, with what their registries do differently: how a
//! DELETE answers and proceeds, whether `metadata.generation` is kept, which subresources
//! exist. The flags follow the recorded v1.36 apiserver (transcripts 18-22) and its discovery.

/// What a successful DELETE of an object returns (apiserver registries differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteAnswer {
    /// A `Status` with `status: Success`.
    Status,
    /// The deleted object itself.
    Object,
}

/// How a DELETE without a propagation policy proceeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// The object goes at once (unless finalizers hold it).
    Immediate,
    /// The registry's default policy orphans dependents (ReplicationControllers, Jobs): the
    /// object gets the `orphan` finalizer, which the garbage collector removes shortly after.
    Orphan,
    /// Graceful deletion of a Pod that no kubelet runs: stamped with a zero grace period and
    /// removed at once.
    Graceful,
}

/// How `metadata.generation` is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Not at all.
    None,
    /// 1 on create, bumped by any change outside metadata and status.
    Tracked,
    /// 1 on create and never bumped (PriorityClass).
    Fixed,
    /// Not set on create, bumped from 0 by each change of `spec` (CSIDriver).
    SpecOnly,
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
    pub deletion: Deletion,
    pub generation: Generation,
    /// There is a `status` subresource: writes to the main resource keep the stored status.
    pub status: bool,
    /// There is a `scale` subresource (`spec.replicas` as an autoscaling/v1 Scale).
    pub scale: bool,
    /// Writes are recorded in `metadata.managedFields` (CertificateSigningRequests never
    /// show any on the recorded apiserver).
    pub managed_fields: bool,
    /// Served for a CustomResourceDefinition ([`crate::crd`]): none of the built-in kinds'
    /// registry code applies, whatever the kind's name.
    pub custom: bool,
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

    const fn with(mut self, flag: Flag) -> Self {
        match flag {
            Flag::Tracked => self.generation = Generation::Tracked,
            Flag::FixedGeneration => self.generation = Generation::Fixed,
            Flag::SpecGeneration => self.generation = Generation::SpecOnly,
            Flag::Status => self.status = true,
            Flag::Scale => self.scale = true,
            Flag::ReturnsObject => self.delete_answer = DeleteAnswer::Object,
            Flag::Orphans => self.deletion = Deletion::Orphan,
            Flag::Graceful => self.deletion = Deletion::Graceful,
            Flag::Unmanaged => self.managed_fields = false,
        }
        self
    }
}

#[derive(Clone, Copy)]
enum Flag {
    Tracked,
    FixedGeneration,
    SpecGeneration,
    Status,
    Scale,
    ReturnsObject,
    Orphans,
    Graceful,
    Unmanaged,
}

use Flag::{
    FixedGeneration, Graceful, Orphans, ReturnsObject, Scale, SpecGeneration, Status, Tracked, Unmanaged,
};

const fn rt(
    group: &'static str,
    versions: &'static [&'static str],
    resource: &'static str,
    kind: &'static str,
    namespaced: bool,
    flags: &[Flag],
) -> ResourceType {
    let mut t = ResourceType {
        group,
        versions,
        resource,
        kind,
        namespaced,
        delete_answer: DeleteAnswer::Status,
        deletion: Deletion::Immediate,
        generation: Generation::None,
        status: false,
        scale: false,
        managed_fields: true,
        custom: false,
    };
    let mut i = 0;
    while i < flags.len() {
        t = t.with(flags[i]);
        i += 1;
    }
    t
}

const V1: &[&str] = &["v1"];
const APPS: &str = "apps";
const BATCH: &str = "batch";
const RBAC: &str = "rbac.authorization.k8s.io";
const NETWORKING: &str = "networking.k8s.io";
const STORAGE: &str = "storage.k8s.io";
const ADMISSION: &str = "admissionregistration.k8s.io";
const RESOURCE: &str = "resource.k8s.io";
const FLOWCONTROL: &str = "flowcontrol.apiserver.k8s.io";

pub const NAMESPACES: ResourceType = rt("", V1, "namespaces", "Namespace", false, &[ReturnsObject, Status]);
pub const CONFIGMAPS: ResourceType = rt("", V1, "configmaps", "ConfigMap", true, &[]);
pub const SECRETS: ResourceType = rt("", V1, "secrets", "Secret", true, &[]);
pub const SERVICES: ResourceType = rt("", V1, "services", "Service", true, &[ReturnsObject, Status]);
pub const SERVICEACCOUNTS: ResourceType = rt(
    "",
    V1,
    "serviceaccounts",
    "ServiceAccount",
    true,
    &[ReturnsObject],
);
pub const PODS: ResourceType = rt(
    "",
    V1,
    "pods",
    "Pod",
    true,
    &[ReturnsObject, Graceful, Tracked, Status],
);
pub const REPLICATIONCONTROLLERS: ResourceType = rt(
    "",
    V1,
    "replicationcontrollers",
    "ReplicationController",
    true,
    &[Orphans, Tracked, Status, Scale],
);
pub const PERSISTENTVOLUMES: ResourceType = rt(
    "",
    V1,
    "persistentvolumes",
    "PersistentVolume",
    false,
    &[ReturnsObject, Status],
);
pub const PERSISTENTVOLUMECLAIMS: ResourceType = rt(
    "",
    V1,
    "persistentvolumeclaims",
    "PersistentVolumeClaim",
    true,
    &[ReturnsObject, Status],
);
pub const ENDPOINTS: ResourceType = rt("", V1, "endpoints", "Endpoints", true, &[]);
pub const LIMITRANGES: ResourceType = rt("", V1, "limitranges", "LimitRange", true, &[]);
pub const RESOURCEQUOTAS: ResourceType = rt(
    "",
    V1,
    "resourcequotas",
    "ResourceQuota",
    true,
    &[ReturnsObject, Status],
);
pub const DEPLOYMENTS: ResourceType = rt(
    APPS,
    V1,
    "deployments",
    "Deployment",
    true,
    &[Tracked, Status, Scale],
);
pub const REPLICASETS: ResourceType = rt(
    APPS,
    V1,
    "replicasets",
    "ReplicaSet",
    true,
    &[Tracked, Status, Scale],
);
pub const STATEFULSETS: ResourceType = rt(
    APPS,
    V1,
    "statefulsets",
    "StatefulSet",
    true,
    &[Tracked, Status, Scale],
);
pub const DAEMONSETS: ResourceType = rt(APPS, V1, "daemonsets", "DaemonSet", true, &[Tracked, Status]);
pub const JOBS: ResourceType = rt(BATCH, V1, "jobs", "Job", true, &[Orphans, Tracked, Status]);
pub const CRONJOBS: ResourceType = rt(BATCH, V1, "cronjobs", "CronJob", true, &[Tracked, Status]);
pub const HPAS: ResourceType = rt(
    "autoscaling",
    &["v2", "v1"],
    "horizontalpodautoscalers",
    "HorizontalPodAutoscaler",
    true,
    &[Status],
);
pub const NETWORKPOLICIES: ResourceType = rt(
    NETWORKING,
    V1,
    "networkpolicies",
    "NetworkPolicy",
    true,
    &[Tracked],
);
pub const INGRESSES: ResourceType = rt(NETWORKING, V1, "ingresses", "Ingress", true, &[Tracked, Status]);
pub const INGRESSCLASSES: ResourceType = rt(
    NETWORKING,
    V1,
    "ingressclasses",
    "IngressClass",
    false,
    &[Tracked],
);
pub const ENDPOINTSLICES: ResourceType = rt(
    "discovery.k8s.io",
    V1,
    "endpointslices",
    "EndpointSlice",
    true,
    &[Tracked],
);
pub const ROLES: ResourceType = rt(RBAC, V1, "roles", "Role", true, &[]);
pub const ROLEBINDINGS: ResourceType = rt(RBAC, V1, "rolebindings", "RoleBinding", true, &[]);
pub const CLUSTERROLES: ResourceType = rt(RBAC, V1, "clusterroles", "ClusterRole", false, &[]);
pub const CLUSTERROLEBINDINGS: ResourceType =
    rt(RBAC, V1, "clusterrolebindings", "ClusterRoleBinding", false, &[]);
pub const LEASES: ResourceType = rt("coordination.k8s.io", V1, "leases", "Lease", true, &[]);
pub const STORAGECLASSES: ResourceType = rt(
    STORAGE,
    V1,
    "storageclasses",
    "StorageClass",
    false,
    &[ReturnsObject],
);
pub const CSIDRIVERS: ResourceType = rt(
    STORAGE,
    V1,
    "csidrivers",
    "CSIDriver",
    false,
    &[ReturnsObject, SpecGeneration],
);
pub const PODDISRUPTIONBUDGETS: ResourceType = rt(
    "policy",
    V1,
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    true,
    &[Tracked, Status],
);
pub const PRIORITYCLASSES: ResourceType = rt(
    "scheduling.k8s.io",
    V1,
    "priorityclasses",
    "PriorityClass",
    false,
    &[FixedGeneration],
);
pub const RUNTIMECLASSES: ResourceType = rt("node.k8s.io", V1, "runtimeclasses", "RuntimeClass", false, &[]);
pub const MUTATINGWEBHOOKS: ResourceType = rt(
    ADMISSION,
    V1,
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    false,
    &[Tracked],
);
pub const VALIDATINGWEBHOOKS: ResourceType = rt(
    ADMISSION,
    V1,
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    false,
    &[Tracked],
);
pub const VALIDATINGPOLICIES: ResourceType = rt(
    ADMISSION,
    V1,
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    false,
    &[Tracked, Status],
);
pub const VALIDATINGPOLICYBINDINGS: ResourceType = rt(
    ADMISSION,
    V1,
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    false,
    &[Tracked],
);
pub const MUTATINGPOLICIES: ResourceType = rt(
    ADMISSION,
    V1,
    "mutatingadmissionpolicies",
    "MutatingAdmissionPolicy",
    false,
    &[Tracked],
);
pub const MUTATINGPOLICYBINDINGS: ResourceType = rt(
    ADMISSION,
    V1,
    "mutatingadmissionpolicybindings",
    "MutatingAdmissionPolicyBinding",
    false,
    &[Tracked],
);
pub const VOLUMEATTRIBUTESCLASSES: ResourceType = rt(
    STORAGE,
    V1,
    "volumeattributesclasses",
    "VolumeAttributesClass",
    false,
    &[ReturnsObject],
);
pub const IPADDRESSES: ResourceType = rt(NETWORKING, V1, "ipaddresses", "IPAddress", false, &[]);
pub const SERVICECIDRS: ResourceType = rt(NETWORKING, V1, "servicecidrs", "ServiceCIDR", false, &[Status]);
pub const DEVICECLASSES: ResourceType = rt(
    RESOURCE,
    V1,
    "deviceclasses",
    "DeviceClass",
    false,
    &[Tracked, ReturnsObject],
);
pub const RESOURCECLAIMS: ResourceType = rt(
    RESOURCE,
    V1,
    "resourceclaims",
    "ResourceClaim",
    true,
    &[Status, ReturnsObject],
);
pub const RESOURCECLAIMTEMPLATES: ResourceType = rt(
    RESOURCE,
    V1,
    "resourceclaimtemplates",
    "ResourceClaimTemplate",
    true,
    &[ReturnsObject],
);
pub const RESOURCESLICES: ResourceType = rt(
    RESOURCE,
    V1,
    "resourceslices",
    "ResourceSlice",
    false,
    &[Tracked, ReturnsObject],
);
pub const FLOWSCHEMAS: ResourceType = rt(
    FLOWCONTROL,
    V1,
    "flowschemas",
    "FlowSchema",
    false,
    &[Tracked, Status],
);
pub const PRIORITYLEVELS: ResourceType = rt(
    FLOWCONTROL,
    V1,
    "prioritylevelconfigurations",
    "PriorityLevelConfiguration",
    false,
    &[Tracked, Status],
);
pub const APISERVICES: ResourceType = rt(
    "apiregistration.k8s.io",
    V1,
    "apiservices",
    "APIService",
    false,
    &[Status],
);
pub const CSRS: ResourceType = rt(
    "certificates.k8s.io",
    V1,
    "certificatesigningrequests",
    "CertificateSigningRequest",
    false,
    &[Status, Unmanaged],
);
/// Nodes: the simulated ones ([`crate::scheduler`]) and any a client creates.
pub const NODES: ResourceType = rt("", V1, "nodes", "Node", false, &[Status]);

pub const CRDS: ResourceType = rt(
    "apiextensions.k8s.io",
    V1,
    "customresourcedefinitions",
    "CustomResourceDefinition",
    false,
    &[ReturnsObject, Tracked, Status],
);

/// The type a CustomResourceDefinition serves: `versions` are the served ones, the storage
/// version first. Names are interned (leaked once per distinct name) so that the type is
/// `Copy` like the built-in ones.
pub fn custom(
    group: &str,
    versions: &[&str],
    resource: &str,
    kind: &str,
    namespaced: bool,
    status: bool,
) -> ResourceType {
    let mut t = rt(
        intern(group),
        intern_list(versions),
        intern(resource),
        intern(kind),
        namespaced,
        &[Tracked],
    );
    t.status = status;
    t.custom = true;
    t
}

fn interned() -> std::sync::MutexGuard<'static, std::collections::HashSet<&'static str>> {
    static NAMES: std::sync::OnceLock<std::sync::Mutex<std::collections::HashSet<&'static str>>> =
        std::sync::OnceLock::new();
    NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn intern(name: &str) -> &'static str {
    let mut names = interned();
    if let Some(found) = names.get(name) {
        return found;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

fn intern_list(names: &[&str]) -> &'static [&'static str] {
    type Lists = std::collections::HashMap<Vec<&'static str>, &'static [&'static str]>;
    static LISTS: std::sync::OnceLock<std::sync::Mutex<Lists>> = std::sync::OnceLock::new();
    let key: Vec<&'static str> = names.iter().map(|n| intern(n)).collect();
    let mut lists = LISTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    lists
        .entry(key.clone())
        .or_insert_with(|| Box::leak(key.into_boxed_slice()))
}

/// Every stored type.
pub const ALL: &[ResourceType] = &[
    NAMESPACES,
    CONFIGMAPS,
    SECRETS,
    SERVICES,
    SERVICEACCOUNTS,
    PODS,
    REPLICATIONCONTROLLERS,
    PERSISTENTVOLUMES,
    PERSISTENTVOLUMECLAIMS,
    ENDPOINTS,
    LIMITRANGES,
    RESOURCEQUOTAS,
    DEPLOYMENTS,
    REPLICASETS,
    STATEFULSETS,
    DAEMONSETS,
    JOBS,
    CRONJOBS,
    HPAS,
    NETWORKPOLICIES,
    INGRESSES,
    INGRESSCLASSES,
    ENDPOINTSLICES,
    ROLES,
    ROLEBINDINGS,
    CLUSTERROLES,
    CLUSTERROLEBINDINGS,
    LEASES,
    STORAGECLASSES,
    CSIDRIVERS,
    PODDISRUPTIONBUDGETS,
    PRIORITYCLASSES,
    RUNTIMECLASSES,
    MUTATINGWEBHOOKS,
    VALIDATINGWEBHOOKS,
    VALIDATINGPOLICIES,
    VALIDATINGPOLICYBINDINGS,
    MUTATINGPOLICIES,
    MUTATINGPOLICYBINDINGS,
    VOLUMEATTRIBUTESCLASSES,
    IPADDRESSES,
    SERVICECIDRS,
    DEVICECLASSES,
    RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES,
    RESOURCESLICES,
    FLOWSCHEMAS,
    PRIORITYLEVELS,
    APISERVICES,
    CSRS,
    NODES,
    CRDS,
];

/// The stored type served at `group/version/resource`.
pub fn find(group: &str, version: &str, resource: &str) -> Option<ResourceType> {
    ALL.iter()
        .find(|r| r.group == group && r.resource == resource && r.versions.contains(&version))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stored type is in discovery with the same scope and its subresources.
    #[test]
    fn stored_types_match_discovery() {
        for rt in ALL {
            for version in rt.versions {
                let doc = crate::discovery::group_version(rt.group, version).unwrap();
                let listed = |name: &str| {
                    doc["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|r| r["name"] == name)
                        .cloned()
                };
                let main = listed(rt.resource).unwrap_or_else(|| panic!("{} not in discovery", rt.resource));
                assert_eq!(main["kind"], rt.kind);
                assert_eq!(main["namespaced"], rt.namespaced, "{}", rt.resource);
                assert_eq!(
                    listed(&format!("{}/status", rt.resource)).is_some(),
                    rt.status,
                    "{}",
                    rt.resource
                );
                assert_eq!(
                    listed(&format!("{}/scale", rt.resource)).is_some(),
                    rt.scale,
                    "{}",
                    rt.resource
                );
            }
        }
    }
}
