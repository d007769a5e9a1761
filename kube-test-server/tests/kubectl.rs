//! kubectl against the test server: `get -o yaml`, `label`, `annotate`, `patch` (merge, JSON,
//! strategic), `apply --server-side`, `delete`, `auth can-i`, the imperative `create <kind>`
//! commands (sent as protobuf), and `rollout restart` and `scale` next to server-side apply,
//! through a generated kubeconfig.
//! kubectl is the one `make setup` installs (`.tools/bin`), else the one on PATH; the tests are
//! skipped (with a note) when there is none.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kube_test_server::{Controllers, Options, TestServer};
use serde_json::Value;

/// `.tools/bin/kubectl` of the workspace when `make setup` installed it, else `kubectl`.
fn kubectl() -> PathBuf {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/bin/kubectl");
    if local.exists() {
        local
    } else {
        PathBuf::from("kubectl")
    }
}

fn kubectl_available() -> bool {
    Command::new(kubectl())
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
        let mut cmd = Command::new(kubectl());
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
        all.extend(["-o", "json", "--show-managed-fields"]);
        serde_json::from_str(&self.ok(&all)).expect("kubectl -o json prints JSON")
    }
}

/// A started server with an admin kubeconfig in a temp dir (None when kubectl is missing).
fn start(options: Options) -> Option<(TestServer, tempfile::TempDir)> {
    if !kubectl_available() {
        println!("note: no kubectl in .tools/bin or on PATH; skipping the kubectl test");
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

/// A Deployment `web` as tofu-live applies it: 2 replicas (unless `replicas` is None), and the
/// restart annotation on its template when given.
fn web_deployment(replicas: Option<u32>, restarted_at: Option<&str>) -> String {
    let replicas = replicas.map(|r| format!("  replicas: {r}\n")).unwrap_or_default();
    let annotations = restarted_at
        .map(|t| format!("      annotations:\n        kubectl.kubernetes.io/restartedAt: \"{t}\"\n"))
        .unwrap_or_default();
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n{replicas}  \
         selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n\
         {annotations}    spec:\n      containers:\n      - name: web\n        image: nginx:1.27.0\n"
    )
}

/// The managedFields entry of `manager` (and subresource), if any.
fn entry<'a>(object: &'a Value, manager: &str, subresource: Option<&str>) -> Option<&'a Value> {
    object["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["subresource"].as_str() == subresource)
}

/// kube-golden 23 done with kubectl: `rollout restart` and `scale` next to server-side apply by
/// tofu-live, on a cluster whose Pods never start.
#[test]
fn kubectl_rollout_restart_and_scale_next_to_server_side_apply() {
    let Some((_server, dir)) = start(Options {
        controllers: Controllers::NoNodes,
        ..Default::default()
    }) else {
        return;
    };
    let kubeconfig = dir.path().join("kubeconfig");
    let k = Kubectl {
        kubeconfig: &kubeconfig,
    };
    let apply = |manifest: &str, force: bool| {
        let mut args = vec!["apply", "--server-side", "--field-manager=tofu-live", "-f", "-"];
        if force {
            args.push("--force-conflicts");
        }
        k.run(&args, Some(manifest))
    };
    // Each step waits for the controller to catch up, as a real one does within milliseconds.
    let settled = || {
        for _ in 0..100 {
            let d = k.json(&["get", "deployment", "web"]);
            if d["status"]["observedGeneration"] == d["metadata"]["generation"] {
                return d;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the Deployment controller did not catch up");
    };
    let out = apply(&web_deployment(Some(2), None), true);
    assert!(
        out.status.success(),
        "apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    settled();

    k.ok(&["rollout", "restart", "deployment/web"]);
    let restarted = settled();
    let at = restarted["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
        .as_str()
        .unwrap_or_else(|| panic!("no restart annotation: {restarted}"))
        .to_string();
    assert_eq!(restarted["metadata"]["generation"], 2);
    let rollout = entry(&restarted, "kubectl-rollout", None).expect("kubectl-rollout's entry");
    assert_eq!(
        rollout["fieldsV1"],
        serde_json::json!({"f:spec": {"f:template": {"f:metadata": {"f:annotations": {
            ".": {}, "f:kubectl.kubernetes.io/restartedAt": {}}}}}})
    );

    k.ok(&["scale", "deployment/web", "--replicas=3"]);
    let scaled = settled();
    assert_eq!(scaled["spec"]["replicas"], 3);
    let scale = entry(&scaled, "kubectl", Some("scale")).expect("kubectl's scale entry");
    assert_eq!(
        scale["fieldsV1"],
        serde_json::json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(scale.get("time").is_none(), "a scale entry has no time: {scale}");

    // Re-applied without replicas and without the annotation: both stay, owned by the others.
    let out = apply(&web_deployment(None, None), true);
    assert!(
        out.status.success(),
        "re-apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = k.json(&["get", "deployment", "web"]);
    assert_eq!(kept["spec"]["replicas"], 3);
    assert_eq!(
        kept["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"],
        at.as_str()
    );
    // Setting the annotation without force: a conflict naming kubectl-rollout.
    let out = apply(&web_deployment(None, Some("2026-01-01T00:00:00Z")), false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a conflicting apply succeeded");
    assert!(
        stderr.contains("conflict with \"kubectl-rollout\"")
            && stderr.contains(".spec.template.metadata.annotations.kubectl.kubernetes.io/restartedAt"),
        "{stderr}"
    );

    // The controller's view, as a real v1.36 one counted the same commands: the restart's new
    // ReplicaSet got one surge replica, the scale's extra replica went to the old, larger one,
    // and no Pod ever becomes ready.
    let status = &scaled["status"];
    assert_eq!(status["observedGeneration"], 3, "{status}");
    assert_eq!(status["replicas"], 4, "{status}");
    assert_eq!(status["updatedReplicas"], 1, "{status}");
    assert_eq!(status["unavailableReplicas"], 4, "{status}");
    assert_eq!(
        status["conditions"][0]["reason"], "MinimumReplicasUnavailable",
        "{status}"
    );
    assert_eq!(
        scaled["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
}
