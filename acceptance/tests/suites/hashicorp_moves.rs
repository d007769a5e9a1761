//! `moved` from hashicorp/kubernetes's types to choudoufu/live's, one resource at a time with
//! both providers declared (issue 37): states hashicorp's binary wrote
//! (`acceptance/fixtures/hashicorp-3.2.1/corpus/`), each resource moved from the root module
//! into a module served by choudoufu/live; the first plan changes nothing but the estate stamp,
//! one apply stamps every object, and the next plan is empty. The engine reads the source
//! state with a stand-in for hashicorp's provider; the move is answered by ours alone.

use acceptance::Cluster;
use acceptance::migration::fixtures;
use acceptance::migration::replay::{Route, replay};

/// A ConfigMap (schema version 0), a Deployment and a Service (version 1, hashicorp's
/// upgraders' types), each with its namespace.
const TYPES: [&str; 3] = [
    "kubernetes_config_map_v1",
    "kubernetes_deployment_v1",
    "kubernetes_service_v1",
];

#[test]
fn resources_move_from_hashicorps_provider_to_ours_and_plan_empty() {
    let cluster = Cluster::start();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = TYPES
            .iter()
            .map(|t| {
                let dir = fixtures().join("corpus").join(t);
                let cluster = &cluster;
                scope.spawn(move || replay(cluster, &dir, Route::Moved).map_err(|e| format!("{t}: {e}")))
            })
            .collect();
        running
            .into_iter()
            .filter_map(|r| r.join().expect("a replay").err())
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
