//! The default policy a fresh kube-apiserver bootstraps: the ClusterRoles (`cluster-admin`,
//! `admin`/`edit`/`view` with their aggregation labels, the `system:` roles) and their
//! ClusterRoleBindings, as far as this server's clients meet them.

use serde_json::{Value, json};

pub(super) const MASTERS: &str = "system:masters";

pub(super) fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": groups, "resources": resources})
}

pub(super) fn url_rule(urls: &[&str]) -> Value {
    json!({"verbs": ["get"], "nonResourceURLs": urls})
}

pub(super) fn cluster_role(
    name: &str,
    labels: Value,
    rules: Vec<Value>,
    aggregate_label: Option<&str>,
) -> Value {
    let mut labels = labels;
    labels["kubernetes.io/bootstrapping"] = json!("rbac-defaults");
    let mut role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        },
        "rules": rules
    });
    if let Some(label) = aggregate_label {
        role["aggregationRule"] = json!({"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]});
    }
    role
}

pub(super) fn cluster_role_binding(role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": role,
            "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects
    })
}

pub(super) const READ: &[&str] = &["get", "list", "watch"];
pub(super) const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
pub(super) const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
pub(super) const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
pub(super) const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";

/// The ClusterRoles and ClusterRoleBindings of a fresh cluster that matter to this server.
pub fn bootstrap_policy() -> Vec<Value> {
    let view_rules = vec![
        rule(
            READ,
            &[""],
            &[
                "configmaps",
                "endpoints",
                "persistentvolumeclaims",
                "persistentvolumeclaims/status",
                "pods",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "serviceaccounts",
                "services",
                "services/status",
            ],
        ),
        rule(
            READ,
            &[""],
            &[
                "bindings",
                "events",
                "limitranges",
                "namespaces/status",
                "pods/log",
                "pods/status",
                "replicationcontrollers/status",
                "resourcequotas",
                "resourcequotas/status",
            ],
        ),
        rule(READ, &[""], &["namespaces"]),
        rule(READ, &["discovery.k8s.io"], &["endpointslices"]),
        rule(
            READ,
            &["apps"],
            &[
                "controllerrevisions",
                "daemonsets",
                "daemonsets/status",
                "deployments",
                "deployments/scale",
                "deployments/status",
                "replicasets",
                "replicasets/scale",
                "replicasets/status",
                "statefulsets",
                "statefulsets/scale",
                "statefulsets/status",
            ],
        ),
        rule(
            READ,
            &["autoscaling"],
            &["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
        ),
        rule(
            READ,
            &["batch"],
            &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
        ),
        rule(
            READ,
            &["policy"],
            &["poddisruptionbudgets", "poddisruptionbudgets/status"],
        ),
        rule(
            READ,
            &["networking.k8s.io"],
            &["ingresses", "ingresses/status", "networkpolicies"],
        ),
    ];
    let edit_rules = vec![
        rule(
            &["create"],
            &[""],
            &[
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
                "secrets",
                "services/proxy",
            ],
        ),
        rule(&["impersonate"], &[""], &["serviceaccounts"]),
        rule(
            WRITE,
            &[""],
            &[
                "pods",
                "pods/attach",
                "pods/exec",
                "pods/portforward",
                "pods/proxy",
            ],
        ),
        rule(&["create"], &[""], &["pods/eviction"]),
        rule(
            WRITE,
            &[""],
            &[
                "configmaps",
                "events",
                "persistentvolumeclaims",
                "replicationcontrollers",
                "replicationcontrollers/scale",
                "secrets",
                "serviceaccounts",
                "services",
                "services/proxy",
            ],
        ),
        rule(&["create"], &[""], &["serviceaccounts/token"]),
        rule(
            WRITE,
            &["apps"],
            &[
                "daemonsets",
                "deployments",
                "deployments/rollback",
                "deployments/scale",
                "replicasets",
                "replicasets/scale",
                "statefulsets",
                "statefulsets/scale",
            ],
        ),
        rule(WRITE, &["autoscaling"], &["horizontalpodautoscalers"]),
        rule(WRITE, &["batch"], &["cronjobs", "jobs"]),
        rule(WRITE, &["networking.k8s.io"], &["ingresses", "networkpolicies"]),
        rule(WRITE, &["policy"], &["poddisruptionbudgets"]),
        rule(WRITE, &["coordination.k8s.io"], &["leases"]),
        rule(READ, &["coordination.k8s.io"], &["leases"]),
        rule(READ, &[""], &["secrets"]),
    ];
    let admin_rules = vec![
        rule(
            &["create"],
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews"],
        ),
        rule(
            &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            &["rbac.authorization.k8s.io"],
            &["rolebindings", "roles"],
        ),
    ];
    vec![
        cluster_role(
            "cluster-admin",
            json!({}),
            vec![
                json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
                json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
            ],
            None,
        ),
        cluster_role("admin", json!({}), vec![], Some(AGGREGATE_TO_ADMIN)),
        cluster_role(
            "edit",
            json!({AGGREGATE_TO_ADMIN: "true"}),
            vec![],
            Some(AGGREGATE_TO_EDIT),
        ),
        cluster_role(
            "view",
            json!({AGGREGATE_TO_EDIT: "true"}),
            vec![],
            Some(AGGREGATE_TO_VIEW),
        ),
        cluster_role(
            "system:aggregate-to-admin",
            json!({AGGREGATE_TO_ADMIN: "true"}),
            admin_rules,
            None,
        ),
        cluster_role(
            "system:aggregate-to-edit",
            json!({AGGREGATE_TO_EDIT: "true"}),
            edit_rules,
            None,
        ),
        cluster_role(
            "system:aggregate-to-view",
            json!({AGGREGATE_TO_VIEW: "true"}),
            view_rules,
            None,
        ),
        cluster_role(
            "system:discovery",
            json!({}),
            vec![url_rule(&[
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            ])],
            None,
        ),
        cluster_role(
            "system:basic-user",
            json!({}),
            vec![
                rule(
                    &["create"],
                    &["authorization.k8s.io"],
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(&["create"], &["authentication.k8s.io"], &["selfsubjectreviews"]),
            ],
            None,
        ),
        cluster_role(
            "system:public-info-viewer",
            json!({}),
            vec![url_rule(&[
                "/healthz",
                "/livez",
                "/readyz",
                "/version",
                "/version/",
            ])],
            None,
        ),
        // The recorded server is OpenShift's fork, which adds this role for everyone.
        cluster_role(
            "system:openshift:public-info-viewer",
            json!({}),
            vec![url_rule(&["/.well-known", "/.well-known/*"])],
            None,
        ),
        cluster_role_binding("cluster-admin", &[MASTERS]),
        cluster_role_binding("system:discovery", &["system:authenticated"]),
        cluster_role_binding("system:basic-user", &["system:authenticated"]),
        cluster_role_binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
        cluster_role_binding(
            "system:openshift:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}
