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

/// The admin's commonest kubectl calls, made without kubectl, answer as kubectl does: the same
/// output, exit code and error lines, on the test server and on a real cluster.
#[test]
fn kubectl_calls_made_directly_answer_as_kubectl_does() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "direct");
    let ns = ns.name.as_str();
    for name in ["one", "two", "three", "four"] {
        cluster.kubectl_ok(&["create", "configmap", name, "-n", ns, "--from-literal=a=b"]);
    }
    cluster.kubectl_ok(&["label", "configmap", "one", "two", "-n", ns, "tier=front"]);

    let same = |args: &[&str]| {
        let direct = cluster.kubectl(args);
        let program = cluster.kubectl_program(args);
        let call = args.join(" ");
        assert_eq!(
            direct.code, program.code,
            "kubectl {call}: exit codes\n{direct}\n{program}"
        );
        assert_eq!(direct.stderr, program.stderr, "kubectl {call}: error lines");
        if program.stdout.is_empty() {
            assert_eq!(direct.stdout, "", "kubectl {call} printed nothing");
        } else {
            let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("JSON");
            assert_eq!(
                parse(&direct.stdout),
                parse(&program.stdout),
                "kubectl {call}: output"
            );
        }
    };
    same(&["get", "configmap", "one", "-n", ns, "-o", "json"]);
    same(&["get", "configmaps", "-n", ns, "-l", "tier=front", "-o", "json"]);
    same(&[
        "get",
        "cm/one",
        "configmap/two",
        "-n",
        ns,
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    same(&[
        "get",
        "configmap",
        "nope",
        "-n",
        ns,
        "--ignore-not-found",
        "-o",
        "json",
    ]);
    same(&[
        "get",
        "configmap",
        "one",
        "nope",
        "-n",
        ns,
        "--ignore-not-found",
        "-o",
        "json",
    ]);
    same(&[
        "get",
        "configmaps",
        "-n",
        "no-such-namespace",
        "--ignore-not-found",
        "-o",
        "json",
    ]);
    same(&["get", "configmap", "nope", "-n", ns, "-o", "json"]);
    same(&["create", "namespace", ns]);
    same(&["delete", "configmap", "nope", "-n", ns]);
    same(&[
        "delete",
        "configmap",
        "nope",
        "-n",
        ns,
        "--ignore-not-found",
        "--wait=false",
    ]);

    // A deletion's line names the object; each way deletes one of a pair.
    let deleted = |out: &acceptance::EngineOutput, name: &str| {
        assert!(out.success(), "{out}");
        out.stdout.replace(name, "NAME")
    };
    let direct = cluster.kubectl(&["delete", "configmap", "one", "-n", ns]);
    let program = cluster.kubectl_program(&["delete", "configmap", "two", "-n", ns]);
    assert_eq!(deleted(&direct, "one"), deleted(&program, "two"));
    let direct = cluster.kubectl(&["delete", "cm/three", "-n", ns, "--wait=false"]);
    let program = cluster.kubectl_program(&["delete", "cm/four", "-n", ns, "--wait=false"]);
    assert_eq!(deleted(&direct, "three"), deleted(&program, "four"));
    // Waited for (`one`) or not, the objects are gone afterwards.
    let left = cluster.get_json(&["configmaps", "-n", ns, "-l", "tier=front"]);
    assert_eq!(left["items"], serde_json::json!([]), "one and two were deleted");
}
