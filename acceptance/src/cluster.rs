//! The cluster the tests run against: the one `KUBECONFIG` names (a real cluster, e.g. kind), or
//! else an in-memory kube-test-server started for the test. Tests talk to either the same way,
//! through kubeconfig files, the engine and kubectl.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kube_test_server::{Options, TestServer};

use crate::engine::{EngineOutput, run_command};
use crate::paths;

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
                }
            }
        }
    }

    /// The admin kubeconfig.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
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
        kubectl_with(&self.kubeconfig, args)
    }

    /// Runs kubectl as `user` (see [`Cluster::kubeconfig_for`]).
    pub fn kubectl_as(&self, user: &str, args: &[&str]) -> EngineOutput {
        kubectl_with(&self.kubeconfig_for(user), args)
    }

    /// `kubectl get <args> -o json`, parsed; panics when kubectl fails.
    pub fn get_json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["get"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", "json"]);
        let out = self.kubectl(&all);
        assert!(out.success(), "kubectl {}:\n{out}", all.join(" "));
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("kubectl {} printed no JSON ({e})", all.join(" ")))
    }

    /// The test server's request counters (`GET /_test/requests`); None on a real cluster.
    pub fn request_count(&self) -> Option<serde_json::Value> {
        self.server.as_ref()?;
        let out = self.kubectl(&["get", "--raw", "/_test/requests"]);
        assert!(
            out.success(),
            "reading the test server's request counters:\n{out}"
        );
        Some(serde_json::from_str(&out.stdout).expect("request counters are JSON"))
    }
}

fn kubectl_with(kubeconfig: &Path, args: &[&str]) -> EngineOutput {
    let mut command = Command::new(paths::tool("kubectl"));
    command.arg("--kubeconfig").arg(kubeconfig).args(args);
    run_command(command, KUBECTL_TIMEOUT)
}
