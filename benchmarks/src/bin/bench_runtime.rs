//! Measures the plugin runtime as the engine experiences it, over repeated runs:
//! spawn -> handshake line, GetProviderSchema latency over mTLS, and the provider's
//! resident memory after ConfigureProvider. Prints medians (and the range).
//!
//! Usage: `bench_runtime [PROVIDER_BINARY] [RUNS]`; the binary defaults to the runtime's
//! `echo_provider` example (build it with `--release` for meaningful figures).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use acceptance::plugin_process::{self, PluginError, StartOptions};
use plugin_runtime::proto::plugin::{Empty, grpc_controller_client::GrpcControllerClient};
use plugin_runtime::proto::tfplugin6::{self as pb, provider_client::ProviderClient};

struct Sample {
    handshake: Duration,
    schema: Duration,
    rss_kib: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let path = match args.next() {
        Some(path) => PathBuf::from(path),
        None => match plugin_process::binary("echo_provider") {
            Ok(path) => path,
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(20);

    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        match measure(&path).await {
            Ok(sample) => samples.push(sample),
            Err(e) => {
                eprintln!("run failed: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{} runs of {}", runs, path.display());
    report(
        "spawn -> handshake line",
        samples.iter().map(|s| s.handshake.as_secs_f64() * 1e3),
        "ms",
    );
    report(
        "GetProviderSchema",
        samples.iter().map(|s| s.schema.as_secs_f64() * 1e3),
        "ms",
    );
    report(
        "RSS after ConfigureProvider",
        samples.iter().map(|s| s.rss_kib as f64 / 1024.0),
        "MiB",
    );
    ExitCode::SUCCESS
}

async fn measure(path: &std::path::Path) -> Result<Sample, PluginError> {
    let mut plugin = plugin_process::start_plugin(path, &StartOptions::default()).await?;
    let channel = plugin.connect().await?;
    let mut provider = ProviderClient::new(channel.clone());

    let started = Instant::now();
    provider
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await
        .map_err(|e| PluginError::Io(std::io::Error::other(e.to_string())))?;
    let schema = started.elapsed();

    // An empty object: every attribute of the provider block null.
    let config = pb::DynamicValue {
        msgpack: vec![0x80],
        json: Vec::new(),
    };
    provider
        .configure_provider(pb::configure_provider::Request {
            terraform_version: "1.15.5".into(),
            config: Some(config),
            client_capabilities: None,
        })
        .await
        .map_err(|e| PluginError::Io(std::io::Error::other(e.to_string())))?;
    let rss_kib = plugin.pid().map(resident_kib).unwrap_or(0);

    let _ = GrpcControllerClient::new(channel).shutdown(Empty {}).await;
    plugin.wait_exit(Duration::from_secs(3)).await;
    Ok(Sample {
        handshake: plugin.startup,
        schema,
        rss_kib,
    })
}

/// `VmRSS` of a process, in KiB.
fn resident_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn report(what: &str, values: impl Iterator<Item = f64>, unit: &str) {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    let (min, max) = (values[0], values[values.len() - 1]);
    println!("{what:<30} median {median:>8.2} {unit}   (min {min:.2}, max {max:.2})");
}
