//! Terraform's `backend "kubernetes"` (state in a Secret, lock in a Lease) against the test
//! server: init, two applies of a config with only `terraform_data` and outputs, and a lock
//! held by a stuck run refusing a concurrent apply. The engine is `$ENGINE`, else the one `make
//! setup` installed ([`provider_mirror::paths::engine`]); skipped with a note when none can run.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kube_test_server::{Options, TestServer};

fn engine() -> String {
    provider_mirror::paths::engine().to_string_lossy().into_owned()
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(engine());
    cmd.args(args)
        .current_dir(dir)
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("the engine runs")
}

fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn config(kubeconfig: &Path, slow: bool) -> String {
    let slow_resource = if slow {
        r#"
resource "terraform_data" "slow" {
  input = "slow"
  provisioner "local-exec" {
    # Holds the lock until the test has seen a concurrent apply refused (at most 60 s).
    command = "for i in $(seq 600); do [ -e release ] && exit 0; sleep 0.1; done; exit 1"
  }
}
"#
    } else {
        ""
    };
    format!(
        r#"
terraform {{
  backend "kubernetes" {{
    secret_suffix = "state"
    config_path   = "{}"
    namespace     = "default"
  }}
}}

resource "terraform_data" "greeting" {{
  input = "hello"
}}
{slow_resource}
output "greeting" {{
  value = terraform_data.greeting.output
}}
"#,
        kubeconfig.display()
    )
}

fn wait_for_lock_holder(server: &TestServer) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let lease = server.object(
            "leases.coordination.k8s.io",
            "default",
            "lock-tfstate-default-state",
        );
        if lease.is_some_and(|l| {
            l["spec"]["holderIdentity"]
                .as_str()
                .is_some_and(|h| !h.is_empty())
        }) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the first apply never took the state lock");
}

#[test]
fn kubernetes_state_backend_works_against_the_test_server() {
    if !Command::new(engine())
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        println!(
            "note: no engine ({}) runnable; skipping the state backend test",
            engine()
        );
        return;
    }
    let server = TestServer::start(Options::default());
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    server
        .write_kubeconfig(&kubeconfig, "admin")
        .expect("kubeconfig written");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("work dir");
    std::fs::write(work.join("main.tf"), config(&kubeconfig, false)).expect("config written");

    assert_ok(&run(&work, &["init", "-input=false", "-no-color"]), "init");
    let first = run(&work, &["apply", "-auto-approve", "-input=false", "-no-color"]);
    assert_ok(&first, "first apply");
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("1 added"),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let secret = server
        .object("secrets", "default", "tfstate-default-state")
        .expect("state Secret written");
    assert!(
        secret["data"]["tfstate"].as_str().is_some_and(|s| !s.is_empty()),
        "state in {secret}"
    );

    let second = run(&work, &["apply", "-auto-approve", "-input=false", "-no-color"]);
    assert_ok(&second, "second apply");
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("0 added"),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );

    // A run stuck in a provisioner holds the lock; a concurrent apply gives up after 1 s, then
    // the stuck one is let go.
    std::fs::write(work.join("main.tf"), config(&kubeconfig, true)).expect("config written");
    let mut stuck: Child = command(&work, &["apply", "-auto-approve", "-input=false", "-no-color"])
        .spawn()
        .expect("the stuck apply starts");
    wait_for_lock_holder(&server);
    let refused = run(
        &work,
        &[
            "apply",
            "-auto-approve",
            "-input=false",
            "-no-color",
            "-lock-timeout=1s",
        ],
    );
    std::fs::write(work.join("release"), "").expect("the lock holder released");
    let stuck_done = stuck.wait().expect("the stuck apply finishes");
    assert!(
        !refused.status.success(),
        "a concurrent apply must not get the lock"
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("Error acquiring the state lock"), "{stderr}");
    assert!(stuck_done.success(), "the lock holder completes its apply");
}
