//! kubectl against the test server: `get -o yaml`, `label`, `annotate`, `patch` (merge, JSON,
//! strategic), `apply --server-side`, `delete`, `auth can-i` and the imperative `create <kind>`
//! commands (sent as protobuf), through a generated kubeconfig.
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

/// A started server with an admin kubeconfig in a temp dir (None when kubectl is missing).
fn start(options: Options) -> Option<(TestServer, tempfile::TempDir)> {
    if !kubectl_available() {
        println!("note: kubectl not on PATH; skipping the kubectl test");
        return None;
    }
    let server = TestServer::start(options);
    let dir = tempfile::tempdir().expect("temp dir");
    server
        .write_kubeconfig(&dir.path().join("kubeconfig"), "admin")
        .expect("kubeconfig written");
    Some((server, dir))
}

#[test]
fn kubectl_works_against_the_test_server() {
    let Some((_server, dir)) = start(Options {
        users: vec![("app-planner".into(), vec!["tofu-planners".into()])],
        ..Default::default()
    }) else {
        return;
    };
    let kubeconfig = dir.path().join("kubeconfig");
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

#[test]
fn kubectl_create_sends_every_imperative_kind_as_protobuf() {
    let Some((_server, dir)) = start(Options::default()) else {
        return;
    };
    let kubeconfig = dir.path().join("kubeconfig");
    let k = Kubectl {
        kubeconfig: &kubeconfig,
    };
    k.ok(&["create", "namespace", "p"]);
    for args in [
        &["create", "role", "r", "--verb=get", "--resource=secrets"][..],
        &[
            "create",
            "rolebinding",
            "rb",
            "--role=r",
            "--user=bob",
            "--serviceaccount=p:sa",
        ],
        &[
            "create",
            "clusterrole",
            "cr",
            "--verb=get,list",
            "--resource=pods",
            "--resource-name=x",
        ],
        &[
            "create",
            "clusterrolebinding",
            "crb",
            "--clusterrole=cr",
            "--group=g",
        ],
        &["create", "secret", "generic", "s", "--from-literal=a=b"],
        &["create", "serviceaccount", "sa"],
        &[
            "create",
            "deployment",
            "d",
            "--image=nginx:1",
            "--port=80",
            "--replicas=2",
        ],
        &["create", "service", "clusterip", "svc", "--tcp=80:8080"],
    ] {
        let mut all = vec!["-n", "p"];
        all.extend(args);
        k.ok(&all);
    }
    let role = k.json(&["-n", "p", "get", "role", "r"]);
    assert_eq!(
        role["rules"],
        serde_json::json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}])
    );
    let binding = k.json(&["-n", "p", "get", "rolebinding", "rb"]);
    assert_eq!(binding["roleRef"]["name"], "r");
    assert_eq!(binding["subjects"][1]["kind"], "ServiceAccount");
    assert_eq!(binding["subjects"][1]["namespace"], "p");
    let cluster_role = k.json(&["get", "clusterrole", "cr"]);
    assert_eq!(cluster_role["rules"][0]["resourceNames"][0], "x");
    assert_eq!(cluster_role["rules"][0]["verbs"][1], "list");
    let cluster_binding = k.json(&["get", "clusterrolebinding", "crb"]);
    assert_eq!(cluster_binding["subjects"][0]["name"], "g");
    assert_eq!(cluster_binding["roleRef"]["kind"], "ClusterRole");
    assert_eq!(k.json(&["-n", "p", "get", "secret", "s"])["data"]["a"], "Yg==");
    let deployment = k.json(&["-n", "p", "get", "deployment", "d"]);
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["spec"]["selector"]["matchLabels"]["app"], "d");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1");
    assert_eq!(container["ports"][0]["containerPort"], 80);
    let service = k.json(&["-n", "p", "get", "service", "svc"]);
    assert_eq!(
        service["spec"]["ports"],
        serde_json::json!([{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}])
    );
}

#[test]
fn kubectl_server_side_reapply_replaces_a_changed_service_port() {
    let Some((_server, dir)) = start(Options::default()) else {
        return;
    };
    let kubeconfig = dir.path().join("kubeconfig");
    let k = Kubectl {
        kubeconfig: &kubeconfig,
    };
    let manifest = |port: u16| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  \
             selector:\n    app: web\n  ports:\n  - name: http\n    port: {port}\n    targetPort: 8080\n"
        )
    };
    for port in [81, 82] {
        let out = k.run(
            &["apply", "--server-side", "--field-manager=tf", "-f", "-"],
            Some(&manifest(port)),
        );
        assert!(
            out.status.success(),
            "apply of port {port}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let service = k.json(&["get", "service", "web"]);
    assert_eq!(
        service["spec"]["ports"],
        serde_json::json!([{"name": "http", "port": 82, "protocol": "TCP", "targetPort": 8080}])
    );
}
