//! A provider build run the way the engine runs it: the go-plugin handshake, `GetProviderSchema`,
//! and a plan against the test server through the engine. `make release-check` runs these on the
//! release's other platforms under their emulators (`PROVIDER_BIN_DIR` names the build,
//! `PROVIDER_RUNNER` the emulator, see `acceptance::plugin_process`; `PROVIDER_NETWORK` the
//! transport the handshake must name: `tcp` for Windows); in `make test` they run this machine's
//! build, directly.

use std::fs;
use std::path::Path;

use acceptance::hcl::{live_provider, metadata, unique_name};
use acceptance::mirror;
use acceptance::plugin_process::{self, StartOptions, binary, runner};
use acceptance::{Cluster, Engine};
use plugin_runtime::proto::tfplugin6::{self as pb, provider_client::ProviderClient};

/// The transport the handshake line must name: the emulated platform's (`PROVIDER_NETWORK`), else
/// this machine's.
fn expected_network() -> String {
    std::env::var("PROVIDER_NETWORK").unwrap_or_else(|_| if cfg!(windows) { "tcp" } else { "unix" }.into())
}

/// The handshake and the schema of provider `name`, over AutoMTLS.
async fn hands_shake_and_describes_itself(name: &str) {
    let path = binary(name).expect("the provider binary");
    let plugin = plugin_process::start_plugin(&path, &StartOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{} did not hand-shake: {e}", path.display()));
    assert_eq!(plugin.handshake.protocol, 6);
    assert_eq!(plugin.handshake.network, expected_network());
    if plugin.handshake.network == "tcp" {
        assert!(
            plugin.handshake.address.starts_with("127.0.0.1:"),
            "{}",
            plugin.handshake.address
        );
    }
    assert!(plugin.handshake.server_cert.is_some(), "AutoMTLS");
    let channel = plugin.connect().await.expect("an mTLS connection");
    let schema = ProviderClient::new(channel)
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await
        .unwrap_or_else(|status| panic!("GetProviderSchema: {status}\n{}", plugin.stderr()))
        .into_inner();
    assert!(schema.diagnostics.is_empty(), "{:?}", schema.diagnostics);
    assert!(
        schema.provider.and_then(|s| s.block).is_some(),
        "no provider schema"
    );
    assert!(!schema.resource_schemas.is_empty(), "no resources");
}

#[tokio::test]
async fn live_hands_shake_and_describes_itself() {
    hands_shake_and_describes_itself("terraform-provider-live").await;
}

#[tokio::test]
async fn records_hands_shake_and_describes_itself() {
    hands_shake_and_describes_itself("terraform-provider-records").await;
}

/// `choudoufu/live` installed from a mirror of its own whose package is the build under test:
/// a script that runs it under `PROVIDER_RUNNER` (the engine starts it, and sees its handshake,
/// as it would the binary's), or the binary itself without one.
fn cli_config_for_the_build(dir: &Path) -> std::path::PathBuf {
    let build = binary("terraform-provider-live").expect("the provider binary");
    let root = dir.join("mirror");
    let platform = mirror::platform().expect("this machine's platform");
    for host in mirror::HOSTS {
        let folder = (root.join(host).join(mirror::NAMESPACE).join("live"))
            .join(mirror::VERSION)
            .join(&platform);
        fs::create_dir_all(&folder).expect("a mirror folder");
        let package = folder.join("terraform-provider-live");
        match runner() {
            Some(runner) => {
                let words: Vec<String> = runner
                    .iter()
                    .map(String::as_str)
                    .chain([build.to_str().expect("a UTF-8 path")])
                    .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
                    .collect();
                fs::write(&package, format!("#!/bin/sh\nexec {} \"$@\"\n", words.join(" ")))
                    .expect("the script");
                make_executable(&package);
            }
            None => {
                fs::copy(&build, &package).expect("the binary");
            }
        }
    }
    let config = dir.join("cli.tfrc");
    let include = mirror::included();
    fs::write(
        &config,
        format!(
            "provider_installation {{\n  filesystem_mirror {{\n    path    = \"{}\"\n    include = [{include}]\n  }}\n  \
             direct {{\n    exclude = [{include}]\n  }}\n}}\n",
            root.display()
        ),
    )
    .expect("cli.tfrc");
    config
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) {}

#[test]
fn plans_against_the_test_server() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().expect("a working folder");
    let config = cli_config_for_the_build(dir.path());
    let estate = unique_name("platform");
    let main = format!(
        "{}\nresource \"kubernetes_config_map\" \"planned\" {{\n{}  data = {{ from = \"{estate}\" }}\n}}\n",
        live_provider(&estate, cluster.kubeconfig()),
        metadata(&estate, "default")
    );
    fs::write(dir.path().join("main.tf"), main).expect("main.tf");
    let engine = Engine::new(dir.path()).env("TF_CLI_CONFIG_FILE", &config.to_string_lossy());
    let init = engine.init();
    assert!(init.success(), "init failed:\n{init}");
    let (plan, summary) = engine.plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let summary = summary.expect("a saved plan");
    assert_eq!(
        summary.actions("kubernetes_config_map.planned"),
        Some(&["create".to_string()][..]),
        "{:?}",
        summary.changes
    );
}
