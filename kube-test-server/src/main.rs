//! `kube-test-server`: runs the test API server until killed.
//!
//! `kube-test-server --port 0 --kubeconfig PATH [--state FILE] [--user name:group1,group2 ...]
//! [--controllers nodes|no-nodes|off]` prints the URL and writes a kubeconfig with a context
//! per user (`admin` current). `--controllers` says what runs beside the API (see
//! [`Controllers`]): controllers and nodes (the default), the controllers without nodes, or none.

use std::path::PathBuf;
use std::process::ExitCode;

use kube_test_server::{Controllers, Options, TestServer};

#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error("{0} needs a value")]
    MissingValue(String),
    #[error("--port: {0:?} is not a port number")]
    BadPort(String),
    #[error("--controllers: {0:?} is not one of nodes, no-nodes, off")]
    BadControllers(String),
    #[error("unknown argument {0:?}")]
    Unknown(String),
    #[error(transparent)]
    Server(#[from] kube_test_server::ServerError),
    #[error("waiting for a signal: {0}")]
    Signal(std::io::Error),
}

struct Args {
    options: Options,
    kubeconfig: Option<PathBuf>,
}

fn parse_args() -> Result<Args, CliError> {
    let mut options = Options::default();
    let mut kubeconfig = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| CliError::MissingValue(arg.clone()));
        match arg.as_str() {
            "--port" => {
                let v = value()?;
                options.port = v.parse().map_err(|_| CliError::BadPort(v))?;
            }
            "--kubeconfig" => kubeconfig = Some(PathBuf::from(value()?)),
            "--state" => options.state_file = Some(PathBuf::from(value()?)),
            "--user" => {
                let v = value()?;
                let (name, groups) = v.split_once(':').unwrap_or((&v, ""));
                let groups = groups
                    .split(',')
                    .filter(|g| !g.is_empty())
                    .map(String::from)
                    .collect();
                options.users.push((name.to_string(), groups));
            }
            "--controllers" => {
                options.controllers = match value()?.as_str() {
                    "nodes" => Controllers::Nodes,
                    "no-nodes" => Controllers::NoNodes,
                    "off" => Controllers::Off,
                    other => return Err(CliError::BadControllers(other.into())),
                }
            }
            _ => return Err(CliError::Unknown(arg)),
        }
    }
    Ok(Args { options, kubeconfig })
}

fn run() -> Result<(), CliError> {
    let args = parse_args()?;
    let server = TestServer::try_start(args.options)?;
    if let Some(path) = &args.kubeconfig {
        server.write_kubeconfig(path, "admin")?;
    }
    println!("{}", server.url());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CliError::Signal)?;
    runtime.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(CliError::Signal)?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.map_err(CliError::Signal),
            _ = term.recv() => Ok(()),
        }
    })?;
    server.shutdown();
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kube-test-server: {e}");
            ExitCode::FAILURE
        }
    }
}
