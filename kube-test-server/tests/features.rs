//! The test server's own features beyond the transcripts: a cluster with nodes (Deployments
//! roll out through ReplicaSets and Pods, a failing image never becomes available, Jobs
//! complete, claims bind, load balancers get addresses, approved requests are signed by the
//! CA, Pods without nodes stay Pending), injected faults, request counters (its own and `/metrics`' `apiserver_request_total`),
//! runtime users, `--state` persistence, watches from
//! "now", the kubeconfig it writes, the ServiceAccount token Secrets the token controller
//! fills, how registry deletions (finalizers, orphaning, grace periods) end, and a
//! CustomResourceDefinition's life: established, its kind served, deleted with its objects.

#[path = "features/api.rs"]
mod api;
#[path = "features/cluster.rs"]
mod cluster;
#[path = "features/support.rs"]
mod support;
#[path = "features/test_hooks.rs"]
mod test_hooks;
