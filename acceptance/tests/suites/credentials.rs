//! Credentials that expire during a long apply (issue 47): an exec plugin whose tokens live a
//! few seconds, a token file rewritten under the provider as a projected service-account token
//! is, and a token that is refused for good. The cluster sits behind the fault proxy, which
//! refuses a token written `<token>~<unix seconds>` once that second has passed, as the API
//! server refuses an expired one.
//!
//! The apply runs a Job that takes 20 s beside 40 ConfigMaps, so every credential expires
//! several times while the provider polls and writes. Neither apply sees `Unauthorized`; the
//! plugin runs about once per lifetime per provider process, never once per request (kube's own
//! refresh ran it on every request within a minute of expiry: 816 runs for a 400-object apply).

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use base64::Engine;
use fault_proxy::{FaultPlan, FaultProxy};

/// How long the plugin's and the file's tokens live.
const LIFETIME: u64 = 6;

/// A kubeconfig for the proxy whose user is `user` (YAML lines under `user:`).
fn kubeconfig(dir: &Path, proxy: &FaultProxy, user: &str) -> PathBuf {
    let ca = base64::engine::general_purpose::STANDARD.encode(proxy.ca_pem());
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n    server: {}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: short-lived\n  user:\n{user}\ncontexts:\n\
         - name: proxy\n  context:\n    cluster: proxy\n    user: short-lived\ncurrent-context: proxy\n",
        proxy.url()
    );
    let path = dir.join("kubeconfig");
    fs::write(&path, text).expect("the kubeconfig");
    path
}

/// An exec plugin printing `token` with an expiry `LIFETIME` s ahead (`token~<unix>`) when
/// `expiring`, and appending a line to `dir/runs` each time it runs.
fn plugin(dir: &Path, token: &str, expiring: bool) -> PathBuf {
    fs::write(dir.join("token"), token).expect("the plugin's token");
    let suffix = if expiring { "~$until" } else { "" };
    let script = format!(
        "#!/bin/sh\necho run >> '{dir}/runs'\nuntil=$(( $(date +%s) + {LIFETIME} ))\n\
         at=$(date -u -d \"@$until\" +%Y-%m-%dT%H:%M:%SZ)\n\
         printf '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\
         \"status\":{{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}}}' \"$(cat '{dir}/token'){suffix}\" \"$at\"\n",
        dir = dir.display()
    );
    let path = dir.join("get-token");
    fs::write(&path, script).expect("the plugin");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("an executable plugin");
    path
}

fn runs(dir: &Path) -> usize {
    fs::read_to_string(dir.join("runs")).map_or(0, |t| t.lines().count())
}

/// 40 ConfigMaps and a Job whose pod runs 20 s, its completion awaited.
fn long_apply(ns: &str) -> String {
    let ns = quote(ns);
    format!(
        r#"
resource "kubernetes_config_map_v1" "many" {{
  count = 40
  metadata {{
    name      = "many-${{count.index}}"
    namespace = {ns}
  }}
  data = {{ index = count.index }}
}}

resource "kubernetes_job_v1" "slow" {{
  metadata {{
    name      = "slow"
    namespace = {ns}
  }}
  spec {{
    template {{
      metadata {{
        annotations = {{ "realk8s.local/run-seconds" = "20" }}
      }}
      spec {{
        container {{
          name    = "slow"
          image   = "busybox"
          command = ["true"]
        }}
        restart_policy = "Never"
      }}
    }}
  }}
  wait_for_completion = true
}}
"#
    )
}

/// Applies [`long_apply`] through `kubeconfig` and destroys it; panics on `Unauthorized`.
fn apply_and_destroy(cluster: &Cluster, kubeconfig: &Path, what: &str) -> Duration {
    let ns = ScratchNamespace::create(cluster, "creds");
    let work = LiveDir::new(&unique_name("creds"), kubeconfig);
    work.write(&long_apply(&ns.name));
    let started = std::time::Instant::now();
    let out = work.run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"]);
    let took = started.elapsed();
    assert!(out.success(), "{what}: the apply failed:\n{out}");
    assert!(!out.flat().contains("Unauthorized"), "{out}");
    work.write("");
    work.apply_ok(&format!("{what}: destroy"));
    took
}

#[test]
fn an_exec_plugins_short_lived_tokens_are_renewed_once_per_lifetime() {
    let cluster = Cluster::start();
    let proxy = FaultProxy::start(cluster.kubeconfig(), FaultPlan::none(47));
    let dir = tempfile::tempdir().expect("a folder");
    let plugin = plugin(dir.path(), proxy.upstream_token(), true);
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      \
         interactiveMode: Never\n",
        plugin.display()
    );
    let kubeconfig = kubeconfig(dir.path(), &proxy, &exec);
    let took = apply_and_destroy(&cluster, &kubeconfig, "exec plugin");
    let report = proxy.report();
    let runs = runs(dir.path());
    say(&format!(
        "exec plugin ({LIFETIME} s tokens): apply and destroy ({:.0} s apply) sent {} requests, \
         ran the plugin {runs} times; {} requests refused as expired and sent again",
        took.as_secs_f64(),
        report.total_requests(),
        report.expired
    ));
    // A handful per provider process and lifetime, never one per request.
    assert!(
        runs * 4 < report.total_requests() as usize,
        "{runs} plugin runs for {} requests",
        report.total_requests()
    );
}

#[test]
fn a_token_file_rewritten_under_the_provider_is_read_again() {
    let cluster = Cluster::start();
    let proxy = FaultProxy::start(cluster.kubeconfig(), FaultPlan::none(48));
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("token");
    let token = proxy.upstream_token().to_string();
    let write = {
        let file = file.clone();
        move || {
            let until = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() + LIFETIME;
            // Written whole, then renamed, as the kubelet swaps a projected token's file.
            let next = file.with_extension("next");
            fs::write(&next, format!("{token}~{until}")).expect("the token file");
            fs::rename(&next, &file).expect("the token file in place");
        }
    };
    write();
    let stop = Arc::new(AtomicBool::new(false));
    let rotating = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_secs(2));
                write();
            }
        })
    };
    let kubeconfig = kubeconfig(
        dir.path(),
        &proxy,
        &format!("    tokenFile: {}\n", file.display()),
    );
    let took = apply_and_destroy(&cluster, &kubeconfig, "token file");
    stop.store(true, Ordering::SeqCst);
    rotating.join().expect("the rotation");
    let report = proxy.report();
    say(&format!(
        "token file ({LIFETIME} s tokens, rewritten every 2 s): apply and destroy ({:.0} s apply) \
         sent {} requests; {} refused as expired and sent again",
        took.as_secs_f64(),
        report.total_requests(),
        report.expired
    ));
}

#[test]
fn a_revoked_token_is_one_clear_error_naming_the_identity() {
    let cluster = Cluster::start();
    let proxy = FaultProxy::start(cluster.kubeconfig(), FaultPlan::none(49));
    let dir = tempfile::tempdir().expect("a folder");
    let plugin = plugin(dir.path(), "revoked-token", false);
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      \
         interactiveMode: Never\n",
        plugin.display()
    );
    let kubeconfig = kubeconfig(dir.path(), &proxy, &exec);
    let ns = ScratchNamespace::create(&cluster, "creds");
    let work = LiveDir::new(&unique_name("creds"), &kubeconfig);
    work.write(&long_apply(&ns.name));
    let started = std::time::Instant::now();
    let out = work.run(&["plan", "-input=false"]);
    let text = out.flat();
    assert!(!out.success(), "a plan with a revoked token succeeded:\n{out}");
    assert!(
        text.contains("Unauthorized") && text.contains(&format!("exec plugin `{}`", plugin.display())),
        "the error does not name the refused identity:\n{out}"
    );
    assert!(
        !text.contains("unavailable"),
        "a refusal reported as unavailable:\n{out}"
    );
    // Refused at once: no retries with backoff.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    say(&format!(
        "revoked token: refused in {:.1} s, the plugin ran {} times",
        started.elapsed().as_secs_f64(),
        runs(dir.path())
    ));
}

/// Prints past the harness's capture.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "credentials: {line}");
}
