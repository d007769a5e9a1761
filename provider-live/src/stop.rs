//! Ctrl-C: the process's stop signal lives in `kube_estate` (its retries end on it too); the
//! provider sets it on StopProvider, and the waits on the cluster end on it.

pub use kube_estate::Stop;
