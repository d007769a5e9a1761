//! The cluster support the suites stand on: the admin kubeconfig reaches the cluster with full
//! rights, and a user's kubeconfig carries that user's (restricted) identity, on the test
//! server and on a real cluster alike.

use acceptance::Cluster;
use acceptance::hcl::ScratchNamespace;

#[test]
fn admin_and_restricted_identities_reach_the_cluster() {
    let cluster = Cluster::start();
    let default = cluster.get_json(&["namespace", "default"]);
    assert_eq!(default["metadata"]["name"], "default");

    // Only rights no suite ever grants app-planner: on a real cluster another suite runs beside
    // this one, and the stages and records suites grant it namespaces and ConfigMaps
    // cluster-wide while they run.
    let admin = cluster.kubectl(&["auth", "can-i", "create", "clusterrolebindings"]);
    assert_eq!(
        admin.stdout.trim(),
        "yes",
        "the admin may create cluster role bindings:\n{admin}"
    );

    let planner_can = cluster.kubectl_as("app-planner", &["auth", "can-i", "create", "clusterrolebindings"]);
    assert_eq!(
        planner_can.stdout.trim(),
        "no",
        "app-planner may not create cluster role bindings:\n{planner_can}"
    );

    // The request reaches the server as app-planner, not as some other identity without rights:
    // a grant to User app-planner is what changes its answer.
    let ns = ScratchNamespace::create(&cluster, "who");
    let ns = ns.name.as_str();
    let can_read = |user: &str| {
        let out = cluster.kubectl_as(user, &["auth", "can-i", "get", "secrets", "-n", ns]);
        out.stdout.trim().to_string()
    };
    assert_eq!(can_read("app-planner"), "no");
    for args in [
        &[
            "create",
            "role",
            "reader",
            "--verb=get",
            "--resource=secrets",
            "-n",
            ns,
        ][..],
        &[
            "create",
            "rolebinding",
            "reader",
            "--role=reader",
            "--user=app-planner",
            "-n",
            ns,
        ][..],
    ] {
        let out = cluster.kubectl(args);
        assert!(out.success(), "kubectl {}:\n{out}", args.join(" "));
    }
    assert_eq!(
        can_read("app-planner"),
        "yes",
        "the grant to app-planner does not reach it"
    );
    assert_eq!(can_read("restricted"), "no", "restricted got app-planner's grant");
}
