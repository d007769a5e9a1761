//! `make registry`: serves the artifacts of `make release` as a provider registry and network
//! mirror (see `tools::registry`) until interrupted, and prints how to point the engine at it.
//!
//! ```text
//! registry [--dir DIR] [--listen ADDR:PORT] [--namespace NS] [--public-url URL]
//!          [--tls-cert PEM --tls-key PEM]
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use provider_mirror::paths;
use tools::registry::{Options, Protocol, Registry, Tls};

fn parse() -> Result<Options, String> {
    let mut options = Options::local(&paths::dist_dir().join("release"));
    options.listen = SocketAddr::from(([127, 0, 0, 1], 8443));
    let (mut cert, mut key) = (None, None);
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = || words.next().ok_or(format!("{word} needs a value"));
        match word.as_str() {
            "--dir" => options.dir = PathBuf::from(value()?),
            "--listen" => options.listen = value()?.parse().map_err(|e| format!("--listen: {e}"))?,
            "--namespace" => options.namespace = value()?,
            "--public-url" => options.public_url = Some(value()?),
            "--tls-cert" => cert = Some(PathBuf::from(value()?)),
            "--tls-key" => key = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    options.tls = match (cert, key) {
        (Some(cert), Some(key)) => Tls::Files { cert, key },
        (None, None) => Tls::OwnCa,
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("registry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let registry = match Registry::start(options.clone()) {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("registry: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("serving {} at {}", options.dir.display(), registry.base_url());
    if let Some(ca) = registry.ca_pem() {
        let ca_file = options.dir.join("registry-ca.pem");
        if let Err(e) = std::fs::write(&ca_file, ca) {
            eprintln!("registry: {}: {e}", ca_file.display());
            return ExitCode::FAILURE;
        }
        println!("its CA: export SSL_CERT_FILE={}", ca_file.display());
    }
    println!(
        "\n# CLI configuration, registry protocol:\n{}\n# CLI configuration, network mirror protocol:\n{}",
        registry.cli_config(Protocol::Registry),
        registry.cli_config(Protocol::NetworkMirror)
    );
    // Serves until the process is interrupted.
    loop {
        std::thread::park();
    }
}
