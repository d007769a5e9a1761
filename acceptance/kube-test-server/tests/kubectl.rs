//! kubectl against the test server: `get -o yaml`, `label`, `annotate`, `patch` (merge, JSON,
//! strategic), `apply --server-side`, `delete` and `auth can-i`, through a generated kubeconfig.
//! Skipped (with a note) when no kubectl is on PATH.

use std::path::Path;
use std::process::{Command, Output};

use kube_test_server::{Options, TestServer};
use serde_json::Value;

fn kubectl_available() -> bool {
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Kubectl<'a> {
    kubeconfig: &'a Path,
}

impl Kubectl<'_> {
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig").arg(self.kubeconfig).args(args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("kubectl starts");
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin piped")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        child.wait_with_output().expect("kubectl finishes")
    }

    /// Runs kubectl and returns stdout, failing the test on a non-zero exit.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.ok(&all)).expect("kubectl -o json prints JSON")
    }
}

#[test]
fn kubectl_works_against_the_test_server() {
    if !kubectl_available() {
        println!("note: kubectl not on PATH; skipping the kubectl test");
        return;
    }
    let server = TestServer::start(Options {
        users: vec![("app-planner".into(), vec!["tofu-planners".into()])],
        ..Default::default()
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    server
        .write_kubeconfig(&kubeconfig, "admin")
        .expect("kubeconfig written");
    let k = Kubectl {
        kubeconfig: &kubeconfig,
    };

    k.ok(&["create", "namespace", "kt"]);
    k.ok(&["-n", "kt", "create", "configmap", "c1", "--from-literal=a=b"]);

    let yaml = k.ok(&["-n", "kt", "get", "configmap", "c1", "-o", "yaml"]);
    let obj: Value = serde_yaml::from_str(&yaml).expect("get -o yaml prints YAML");
    assert_eq!(obj["data"]["a"], "b");
    assert_eq!(obj["metadata"]["namespace"], "kt");
    assert!(
        obj["metadata"]["uid"].as_str().is_some_and(|u| u.len() == 36),
        "uid in {yaml}"
    );

    k.ok(&["-n", "kt", "label", "configmap", "c1", "tier=web"]);
    k.ok(&[
        "-n",
        "kt",
        "annotate",
        "configmap",
        "c1",
        "example.com/note=hello",
    ]);
    k.ok(&[
        "-n",
        "kt",
        "patch",
        "configmap",
        "c1",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"m":"1"}}"#,
    ]);
    k.ok(&[
        "-n",
        "kt",
        "patch",
        "configmap",
        "c1",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/data/j","value":"2"}]"#,
    ]);
    k.ok(&[
        "-n",
        "kt",
        "patch",
        "configmap",
        "c1",
        "--type",
        "strategic",
        "-p",
        r#"{"data":{"s":"3"}}"#,
    ]);
    let obj = k.json(&["-n", "kt", "get", "configmap", "c1"]);
    assert_eq!(obj["metadata"]["labels"]["tier"], "web");
    assert_eq!(obj["metadata"]["annotations"]["example.com/note"], "hello");
    for (key, value) in [("a", "b"), ("m", "1"), ("j", "2"), ("s", "3")] {
        assert_eq!(obj["data"][key], value, "data.{key} in {obj}");
    }
    // Server-side printing: kubectl's usual columns, plus -L label columns.
    let table = k.ok(&["-n", "kt", "get", "configmap", "c1", "-L", "tier"]);
    let header: Vec<&str> = table.lines().next().unwrap_or("").split_whitespace().collect();
    assert_eq!(header, ["NAME", "DATA", "AGE", "TIER"], "{table}");
    assert!(
        table
            .lines()
            .nth(1)
            .is_some_and(|row| row.starts_with("c1 ") && row.contains(" 4 ") && row.ends_with("web")),
        "{table}"
    );
    let selected = k.json(&["-n", "kt", "get", "configmaps", "-l", "tier=web"]);
    assert_eq!(
        selected["items"].as_array().map(Vec::len),
        Some(1),
        "label selector list: {selected}"
    );

    let manifest =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: kt\ndata:\n  k: v\n";
    let out = k.run(&["apply", "--server-side", "-f", "-"], Some(manifest));
    assert!(
        out.status.success(),
        "apply --server-side: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let applied = k.json(&["-n", "kt", "get", "configmap", "applied"]);
    assert_eq!(applied["data"]["k"], "v");

    assert_eq!(
        k.ok(&["auth", "can-i", "delete", "secrets", "-n", "kt"]).trim(),
        "yes"
    );
    let denied = k.run(
        &[
            "--context",
            "app-planner",
            "auth",
            "can-i",
            "get",
            "secrets",
            "-n",
            "kt",
        ],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&denied.stdout).trim(), "no");
    assert!(
        !denied.status.success(),
        "can-i answers 'no' with a failing exit code"
    );

    k.ok(&["-n", "kt", "delete", "configmap", "c1"]);
    let gone = k.run(&["-n", "kt", "get", "configmap", "c1"], None);
    assert!(!gone.status.success());
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("NotFound"),
        "{}",
        String::from_utf8_lossy(&gone.stderr)
    );
}
