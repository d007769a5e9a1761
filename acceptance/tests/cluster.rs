//! The cluster support the suites stand on: the admin kubeconfig reaches the cluster with full
//! rights, and a user's kubeconfig carries that user's (restricted) identity.

use acceptance::Cluster;

#[test]
fn admin_and_restricted_identities_reach_the_cluster() {
    let cluster = Cluster::start();
    let default = cluster.get_json(&["namespace", "default"]);
    assert_eq!(default["metadata"]["name"], "default");

    let admin = cluster.kubectl(&["auth", "can-i", "create", "namespaces"]);
    assert_eq!(
        admin.stdout.trim(),
        "yes",
        "the admin may create namespaces:\n{admin}"
    );

    let planner_can = cluster.kubectl_as("app-planner", &["auth", "can-i", "create", "namespaces"]);
    assert_eq!(
        planner_can.stdout.trim(),
        "no",
        "app-planner may not create namespaces:\n{planner_can}"
    );

    // The test server counts requests per user; a real cluster has no such counters.
    if let Some(counters) = cluster.request_count() {
        let users: Vec<&str> = counters["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i["user"].as_str())
            .collect();
        assert!(
            users.contains(&"app-planner"),
            "app-planner's request is not counted: {counters}"
        );
    }
}
