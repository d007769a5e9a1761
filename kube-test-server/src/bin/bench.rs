//! Benchmark: requests/second for GET and for a label-selector LIST over 10,000 ConfigMaps,
//! and the process RSS before and after loading them.
//!
//! `bench [--objects N] [--seconds S] [--clients C]` (defaults 10000, 3, 4).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kube_test_server::{Client, ClientError};
use kube_test_server::{Controllers, Options, TestServer};
use serde_json::json;

const TOKEN: &str = "admin-token-0123456789abcdef";
const NAMESPACE: &str = "bench";

#[derive(Debug, thiserror::Error)]
enum BenchError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("{what} answered HTTP {status}")]
    Status { what: String, status: u16 },
    #[error("bad argument {0:?}")]
    Arg(String),
    #[error("starting tokio: {0}")]
    Runtime(std::io::Error),
}

struct Args {
    objects: usize,
    seconds: u64,
    clients: usize,
}

fn parse_args() -> Result<Args, BenchError> {
    let mut args = Args {
        objects: 10_000,
        seconds: 3,
        clients: 4,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| BenchError::Arg(flag.clone()))?;
        let n: u64 = value.parse().map_err(|_| BenchError::Arg(value.clone()))?;
        match flag.as_str() {
            "--objects" => args.objects = n as usize,
            "--seconds" => args.seconds = n,
            "--clients" => args.clients = n as usize,
            _ => return Err(BenchError::Arg(flag)),
        }
    }
    Ok(args)
}

/// Resident set size of this process in KiB (from /proc).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

async fn expect(
    client: &mut Client,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
    want: u16,
) -> Result<(), BenchError> {
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json"),
    ];
    let bytes = body.map(|b| b.to_string().into_bytes());
    let resp = client.request(method, path, &headers, Some(TOKEN), bytes).await?;
    if resp.status != want {
        return Err(BenchError::Status {
            what: format!("{method} {path}"),
            status: resp.status,
        });
    }
    Ok(())
}

async fn load(server: &TestServer, args: &Args) -> Result<(), BenchError> {
    let mut client = Client::connect(server.url(), server.ca_pem()).await?;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    expect(&mut client, "POST", "/api/v1/namespaces", Some(ns), 201).await?;
    let per_client = args.objects.div_ceil(args.clients);
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let (url, ca) = (server.url().to_string(), server.ca_pem().to_string());
        let range = (c * per_client)..((c + 1) * per_client).min(args.objects);
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(&url, &ca).await?;
            for i in range {
                let cm = json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm-{i:05}"), "labels": {"app": "bench", "shard": format!("s{}", i % 100)}},
                    "data": {"index": i.to_string(), "payload": "x".repeat(200)},
                });
                expect(&mut client, "POST", &format!("/api/v1/namespaces/{NAMESPACE}/configmaps"), Some(cm), 201).await?;
            }
            Ok::<(), BenchError>(())
        }));
    }
    for t in tasks {
        t.await.expect("loader task does not panic")?;
    }
    Ok(())
}

/// Runs `clients` loops of `path_for(i)` GETs for `seconds`; returns requests/second.
async fn throughput(
    server: &TestServer,
    args: &Args,
    path_for: fn(u64, usize) -> String,
) -> Result<f64, BenchError> {
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let (url, ca, done, objects) = (
            server.url().to_string(),
            server.ca_pem().to_string(),
            done.clone(),
            args.objects,
        );
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(&url, &ca).await?;
            let mut i = c as u64;
            while Instant::now() < deadline {
                expect(&mut client, "GET", &path_for(i, objects), None, 200).await?;
                done.fetch_add(1, Ordering::Relaxed);
                i += 7919;
            }
            Ok::<(), BenchError>(())
        }));
    }
    for t in tasks {
        t.await.expect("benchmark task does not panic")?;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / args.seconds as f64)
}

fn get_path(i: u64, objects: usize) -> String {
    format!(
        "/api/v1/namespaces/{NAMESPACE}/configmaps/cm-{:05}",
        i as usize % objects
    )
}

fn list_path(i: u64, _objects: usize) -> String {
    format!(
        "/api/v1/namespaces/{NAMESPACE}/configmaps?labelSelector=shard%3Ds{}",
        i % 100
    )
}

fn main() -> Result<(), BenchError> {
    let args = parse_args()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(BenchError::Runtime)?;
    let before = rss_kib();
    let server = TestServer::start(Options {
        controllers: Controllers::Off,
        ..Default::default()
    });
    let started = Instant::now();
    runtime.block_on(load(&server, &args))?;
    let load_secs = started.elapsed().as_secs_f64();
    let after = rss_kib();
    println!(
        "loaded {} ConfigMaps in {load_secs:.1} s ({:.0} creates/s)",
        args.objects,
        args.objects as f64 / load_secs
    );
    println!(
        "RSS: {} MiB before, {} MiB with {} ConfigMaps loaded",
        before / 1024,
        after / 1024,
        args.objects
    );
    let get = runtime.block_on(throughput(&server, &args, get_path))?;
    println!(
        "GET one ConfigMap: {get:.0} requests/s ({} clients)",
        args.clients
    );
    let list = runtime.block_on(throughput(&server, &args, list_path))?;
    println!(
        "LIST with labelSelector (1% of {} match): {list:.0} requests/s ({} clients)",
        args.objects, args.clients
    );
    server.shutdown();
    Ok(())
}
