//! A slow, throttled server: kube-apiserver with `--max-requests-inflight=5` (it answers 429 with
//! `Retry-After` beyond), behind a proxy that delays every request by up to 4 s (2 s on
//! average); the 300 objects of [`crate::restarts::many`] with the provider's default retry
//! budget.

use std::time::Duration;

use acceptance::Cluster;
use fault_proxy::{FaultPlan, FaultProxy};

use crate::plane::Plane;
use crate::{Scenario, Tally};

pub fn scenarios() -> Vec<Scenario> {
    vec![Scenario {
        name: "throttled: 5 requests in flight, 2 s latency on average",
        run: throttled,
        apiserver_args: "--max-requests-inflight=5 --max-mutating-requests-inflight=5",
    }]
}

fn throttled(cluster: &Cluster, _: &Plane, tally: &mut Tally) {
    let slow = FaultPlan {
        latency: Duration::from_secs(4),
        ..FaultPlan::none(6)
    };
    let proxy = FaultProxy::start(cluster.kubeconfig(), slow);
    let folder = tempfile::tempdir().expect("a folder");
    let kubeconfig = folder.path().join("proxy.kubeconfig");
    proxy.write_kubeconfig(&kubeconfig);
    crate::restarts::many(cluster, &kubeconfig, "", tally, || {});
}
