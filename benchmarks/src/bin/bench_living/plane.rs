//! The control plane of a run: `../shared/realk8s` on ports of its own (17443, 17379), with
//! kube-apiserver flags of the scenario, restarted part by part and stopped when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

pub struct Plane {
    script_dir: PathBuf,
    dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub apiserver_args: &'static str,
}

impl Plane {
    fn env(command: &mut Command) -> &mut Command {
        command
            .env("REALK8S_PORT", "17443")
            .env("REALK8S_ETCD_PORT", "17379")
    }

    pub fn start(script_dir: PathBuf, apiserver_args: &'static str) -> Plane {
        let dir = tempfile::tempdir().expect("a folder for the control plane");
        let out = Self::env(&mut Command::new(script_dir.join("start")))
            .env("REALK8S_APISERVER_ARGS", apiserver_args)
            .arg(dir.path())
            .output()
            .expect("realk8s start");
        assert!(
            out.status.success(),
            "realk8s start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kubeconfig = dir.path().join("admin.kubeconfig");
        Plane {
            script_dir,
            dir,
            kubeconfig,
            apiserver_args,
        }
    }

    /// Stops `part` (`kill`: SIGKILL) for `down` seconds and starts it again, in the background.
    pub fn restart(&self, part: &str, kill: bool, down: u32) -> Child {
        Self::env(&mut Command::new(self.script_dir.join("restart")))
            .env("REALK8S_KILL", if kill { "1" } else { "0" })
            .args([&self.dir.path().to_string_lossy(), part, &down.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("realk8s restart")
    }
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = Command::new(self.script_dir.join("stop"))
            .arg(self.dir.path())
            .output();
    }
}
