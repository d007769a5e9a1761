//! The cluster the tests run against: the one `KUBECONFIG` names (a real cluster, e.g. kind), or
//! else an in-memory kube-test-server started for the test. Tests talk to either the same way,
//! through kubeconfig files, the engine and kubectl; both run Pods (the test server simulates
//! nodes as `make test-real`'s cluster does), so no test asks which one it has.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use kube_test_server::{Options, TestServer};

use crate::api_calls::ApiCalls;
pub use crate::credentials::Credentials;
use crate::engine::{EngineOutput, run_command};
use crate::paths;
use crate::requests::{self, RequestCounts};

/// Identities the test server knows besides `admin`: `(name, groups)`.
const TEST_USERS: [(&str, &str); 2] = [("app-planner", "tofu-planners"), ("restricted", "")];

/// How long one kubectl call may take.
const KUBECTL_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Cluster {
    /// The in-memory server, when no real cluster was given; dropping it stops it.
    server: Option<TestServer>,
    kubeconfig: PathBuf,
    /// Holds the kubeconfig files written for the test server.
    dir: tempfile::TempDir,
    /// The admin's kubectl calls made without kubectl ([`crate::api_calls`]), set up on first
    /// use; None when the admin kubeconfig has no bearer token (client certificates, an exec
    /// plugin): kubectl makes them all.
    calls: OnceLock<Option<ApiCalls>>,
}

impl Cluster {
    /// `KUBECONFIG` set: that cluster, with its current context as the admin identity. Otherwise
    /// a fresh test server on 127.0.0.1 with the users `admin`, `app-planner` (group
    /// `tofu-planners`) and `restricted`.
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().expect("a temporary folder for kubeconfigs");
        match std::env::var_os("KUBECONFIG") {
            Some(path) if !path.is_empty() => Cluster {
                server: None,
                kubeconfig: PathBuf::from(path),
                dir,
                calls: OnceLock::new(),
            },
            _ => {
                let users = TEST_USERS
                    .iter()
                    .map(|(name, group)| {
                        let groups = if group.is_empty() {
                            vec![]
                        } else {
                            vec![group.to_string()]
                        };
                        (name.to_string(), groups)
                    })
                    .collect();
                let server = TestServer::start(Options {
                    users,
                    ..Options::default()
                });
                let kubeconfig = dir.path().join("admin.kubeconfig");
                server
                    .write_kubeconfig(&kubeconfig, "admin")
                    .expect("write the admin kubeconfig");
                Cluster {
                    server: Some(server),
                    kubeconfig,
                    dir,
                    calls: OnceLock::new(),
                }
            }
        }
    }

    /// The cluster `kubeconfig` names (its current context as the admin identity), as
    /// [`Cluster::start`] takes `KUBECONFIG`.
    pub fn at(kubeconfig: &Path) -> Cluster {
        Cluster {
            server: None,
            kubeconfig: kubeconfig.to_path_buf(),
            dir: tempfile::tempdir().expect("a temporary folder for kubeconfigs"),
            calls: OnceLock::new(),
        }
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The admin's connection as a provider block writes it without a kubeconfig: the API
    /// server's URL, its CA certificate (PEM) and the admin's bearer token, read from the
    /// current context of the admin kubeconfig.
    pub fn credentials(&self) -> Credentials {
        Credentials::of_kubeconfig(&self.kubeconfig)
            .expect("the admin kubeconfig names a server, its CA certificate and a bearer token")
    }

    /// A kubeconfig whose identity is `user`. On a real cluster a kubeconfig cannot impersonate,
    /// so it comes from `KUBECONFIG_<USER>` (e.g. `KUBECONFIG_APP_PLANNER`).
    pub fn kubeconfig_for(&self, user: &str) -> PathBuf {
        match &self.server {
            Some(server) => {
                let path = self.dir.path().join(format!("{user}.kubeconfig"));
                assert!(
                    server.token_for(user).is_some(),
                    "the test server has no user {user:?}"
                );
                server
                    .write_kubeconfig(&path, user)
                    .expect("write a user's kubeconfig");
                path
            }
            None => {
                let var = format!(
                    "KUBECONFIG_{}",
                    user.to_ascii_uppercase()
                        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
                );
                match std::env::var_os(&var) {
                    Some(path) if !path.is_empty() => PathBuf::from(path),
                    _ => panic!("on a real cluster, set {var} to a kubeconfig whose identity is {user:?}"),
                }
            }
        }
    }

    /// Runs kubectl (from `.tools/bin`, else PATH) as the admin.
    pub fn kubectl(&self, args: &[&str]) -> EngineOutput {
        self.kubectl_with(&self.kubeconfig, args)
    }

    /// [`Cluster::kubectl`], which must succeed: panics with kubectl's output otherwise.
    pub fn kubectl_ok(&self, args: &[&str]) -> EngineOutput {
        let out = self.kubectl(args);
        assert!(out.success(), "kubectl {}:\n{out}", args.join(" "));
        out
    }

    /// Runs kubectl as `user` (see [`Cluster::kubeconfig_for`]).
    pub fn kubectl_as(&self, user: &str, args: &[&str]) -> EngineOutput {
        self.kubectl_with(&self.kubeconfig_for(user), args)
    }

    /// `kubectl get <args> -o json`, parsed; panics when kubectl fails. The plain forms are read
    /// from the API server directly, as kubectl would (module `api_calls`), without the cost
    /// of starting kubectl; the others run it.
    pub fn get_json(&self, args: &[&str]) -> serde_json::Value {
        if let Some(Ok(value)) = self.calls().map(|calls| calls.get_json(args)) {
            return value;
        }
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let out = self.kubectl_ok(&all);
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("kubectl {} printed no JSON ({e})", all.join(" ")))
    }

    fn calls(&self) -> Option<&ApiCalls> {
        self.calls
            .get_or_init(|| Credentials::of_kubeconfig(&self.kubeconfig).map(ApiCalls::new))
            .as_ref()
    }

    /// Requests the API server has answered so far, from its `/metrics` (see [`crate::requests`]).
    pub fn request_counts(&self) -> RequestCounts {
        let out = self.kubectl(&["get", "--raw", "/metrics"]);
        assert!(out.success(), "reading the API server's /metrics:\n{out}");
        RequestCounts::from_metrics(&out.stdout)
    }

    /// Runs `work` while no other test of this process sends requests, and returns its result
    /// with the requests it made.
    pub fn count_requests<T>(&self, work: impl FnOnce() -> T) -> (T, RequestCounts) {
        requests::exclusive(|| {
            let before = self.request_counts();
            let result = work();
            (result, self.request_counts().since(&before))
        })
    }

    /// The kubectl program itself as the admin, even for a call [`Cluster::kubectl`] makes
    /// without it: to hold the two against each other.
    pub fn kubectl_program(&self, args: &[&str]) -> EngineOutput {
        self.run_kubectl(&self.kubeconfig, args)
    }

    /// kubectl as the identity `kubeconfig` holds; the admin's commonest calls are made
    /// without starting kubectl ([`crate::api_calls`]).
    fn kubectl_with(&self, kubeconfig: &Path, args: &[&str]) -> EngineOutput {
        if kubeconfig == self.kubeconfig
            && let Some(Ok(out)) = self.calls().map(|calls| calls.kubectl(args))
        {
            return out;
        }
        self.run_kubectl(kubeconfig, args)
    }

    fn run_kubectl(&self, kubeconfig: &Path, args: &[&str]) -> EngineOutput {
        let mut command = Command::new(paths::tool("kubectl"));
        command.arg("--kubeconfig").arg(kubeconfig);
        // kubectl keeps its discovery cache per server address, in ~/.kube/cache unless told
        // otherwise: a test server's (a new port each test) goes with its kubeconfigs, rather
        // than piling up in the user's home. A real cluster's stays where the user keeps it.
        if self.server.is_some() {
            command
                .arg("--cache-dir")
                .arg(self.dir.path().join("kubectl-cache"));
        }
        command.args(args);
        run_command(command, KUBECTL_TIMEOUT)
    }
}
