//! Starting and stopping a server: TLS listener on 127.0.0.1, its own tokio runtime thread,
//! bootstrap objects, optional persistence to a state file, and kubeconfig output.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::api;
use crate::auth::ADMIN_TOKEN;
use crate::controllers;
use crate::kubeconfig;
use crate::meta;
use crate::rbac;
use crate::resources;
use crate::state::{Controllers, Shared, State};
use crate::store::{Snapshot, Store};
use crate::tls::{self, CaMaterial, TlsError};

/// How a server is started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// TCP port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Extra users `(name, groups)`; each gets the token `<name>-token-0123456789abcdef`.
    pub users: Vec<(String, Vec<String>)>,
    /// Load the store from this file at start (if it exists) and save it after writes.
    pub state_file: Option<PathBuf>,
    /// What runs beside the API: by default controllers and nodes, so Pods run.
    pub controllers: Controllers,
    /// How long a deleted namespace stays Terminating (default 1 s; the recorded cluster
    /// took about 5 s).
    pub namespace_grace: Option<Duration>,
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("binding 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("reading state file {path}: {source}")]
    StateRead { path: PathBuf, source: std::io::Error },
    #[error("state file {path} is not valid: {source}")]
    StateParse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("starting the server runtime: {0}")]
    Runtime(std::io::Error),
    #[error("writing {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

/// What `--state` saves: the CA (so kubeconfigs stay valid) and the objects.
#[derive(Serialize, Deserialize)]
struct SavedState {
    ca: CaMaterial,
    store: Snapshot,
}

/// A running server. Dropping it shuts it down.
pub struct TestServer {
    url: String,
    state: Shared,
    /// Users named in kubeconfigs (admin, `Options::users`, added users).
    users: std::sync::Mutex<Vec<String>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server, panicking with the reason if it cannot (test infrastructure).
    pub fn start(options: Options) -> TestServer {
        Self::try_start(options).unwrap_or_else(|e| panic!("kube-test-server failed to start: {e}"))
    }

    pub fn try_start(options: Options) -> Result<TestServer, ServerError> {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", options.port)).map_err(|source| ServerError::Bind {
                port: options.port,
                source,
            })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| ServerError::Bind {
                port: options.port,
                source,
            })?;
        let addr: SocketAddr = listener.local_addr().map_err(|source| ServerError::Bind {
            port: options.port,
            source,
        })?;
        let saved = match &options.state_file {
            Some(path) if path.exists() => Some(load_state(path)?),
            _ => None,
        };
        let ca = match &saved {
            Some(s) => s.ca.clone(),
            None => CaMaterial::generate()?,
        };
        let tls_config = tls::server_config(&ca)?;
        let mut store = Store::new();
        let restored = saved.is_some();
        if let Some(s) = saved {
            store.restore(s.store);
        }
        let address = addr.to_string();
        let state = Arc::new(State::new(
            store,
            ca,
            address.clone(),
            options.controllers,
            options.state_file.clone(),
            options.namespace_grace.unwrap_or(Duration::from_secs(1)),
        ));
        if !restored {
            bootstrap(&state);
        }
        let mut users = vec!["admin".to_string()];
        for (name, groups) in &options.users {
            state.auth.add_user(name, groups);
            users.push(name.clone());
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("kube-test-server")
            .build()
            .map_err(ServerError::Runtime)?;
        let (tx, rx) = oneshot::channel();
        let st = state.clone();
        let thread = std::thread::Builder::new()
            .name("kube-test-server".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("a bound listener converts");
                    if st.state_file.is_some() {
                        tokio::spawn(persist_loop(st.clone()));
                    }
                    crate::simulation::start(&st);
                    serve(listener, tls_config, st.clone(), rx).await;
                    save_state(&st);
                });
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .map_err(ServerError::Runtime)?;
        Ok(TestServer {
            url: format!("https://{address}"),
            state,
            users: std::sync::Mutex::new(users),
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The CA certificate (PEM) that signed the serving certificate.
    pub fn ca_pem(&self) -> &str {
        &self.state.ca.cert_pem
    }

    /// The bearer token of a known user (`admin`, the transcripts' identities, added users).
    pub fn token_for(&self, user: &str) -> Option<String> {
        self.state.auth.token_for(user)
    }

    pub fn admin_token(&self) -> &'static str {
        ADMIN_TOKEN
    }

    /// Adds a user while the server runs and returns its token.
    pub fn add_user(&self, name: &str, groups: &[&str]) -> String {
        let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        let mut users = self.users.lock().unwrap_or_else(|e| e.into_inner());
        if !users.iter().any(|u| u == name) {
            users.push(name.to_string());
        }
        self.state.auth.add_user(name, &groups)
    }

    /// A stored object by resource (`configmaps`, `leases.coordination.k8s.io`, ...),
    /// namespace ("" for cluster-scoped) and name.
    pub fn object(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        self.state.store().get(resource, namespace, name).cloned()
    }

    /// The request counters `/_test/requests` serves.
    pub fn request_counts(&self) -> Value {
        self.state.telemetry.counters()
    }

    /// A kubeconfig with every user of this server, `current` as the current context
    /// (`current` may be any user with a token, e.g. the transcripts' `app-planner`).
    pub fn kubeconfig(&self, current: &str) -> String {
        let mut names = self.users.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if !names.iter().any(|u| u == current) {
            names.push(current.to_string());
        }
        let users: Vec<(String, String)> = names
            .iter()
            .filter_map(|u| self.token_for(u).map(|t| (u.clone(), t)))
            .collect();
        kubeconfig::render(&self.url, self.ca_pem(), &users, current)
    }

    pub fn write_kubeconfig(&self, path: &Path, current: &str) -> Result<(), ServerError> {
        std::fs::write(path, self.kubeconfig(current)).map_err(|source| ServerError::Write {
            path: path.into(),
            source,
        })
    }

    /// Stops the server (saving the state file, if any) and waits for it.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    tls_config: Arc<rustls::ServerConfig>,
    st: Shared,
    mut shutdown: oneshot::Receiver<()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls_config);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                let Ok((tcp, _)) = accepted else { continue };
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let st = st.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else { return };
                    let service = hyper::service::service_fn(move |req| api::handle(st.clone(), req));
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    // Connection errors (clients going away, dropped-by-fault) end only this connection.
                    let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                });
            }
        }
    }
}

/// The namespaces, RBAC, PriorityClasses and APIServices a fresh cluster has.
fn bootstrap(st: &Shared) {
    let time = meta::now();
    let mut store = st.store();
    for ns in ["default", "kube-node-lease", "kube-public", "kube-system"] {
        let mut obj = serde_json::json!({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": ns}});
        crate::kinds::prepare_create(&resources::NAMESPACES, &mut obj);
        obj["metadata"]["uid"] = meta::new_uid().into();
        obj["metadata"]["creationTimestamp"] = time.clone().into();
        meta::canonicalize(&mut obj);
        store.put(&resources::NAMESPACES.key(), obj);
        controllers::populate_namespace(&mut store, &st.ca.cert_pem, ns, &time);
    }
    for (rt, mut obj) in crate::builtin::objects(&time) {
        stamp(&mut obj, &time);
        store.put(&rt.key(), obj);
    }
    if st.controllers == Controllers::Nodes {
        for mut node in crate::scheduler::nodes(&time) {
            stamp(&mut node, &time);
            store.put(&resources::NODES.key(), node);
        }
        let mut class = crate::storage::standard_class();
        stamp(&mut class, &time);
        store.put(&resources::STORAGECLASSES.key(), class);
    }
    for mut obj in rbac::bootstrap_policy() {
        let rt = if obj["kind"] == "ClusterRoleBinding" {
            resources::CLUSTERROLEBINDINGS
        } else {
            resources::CLUSTERROLES
        };
        stamp(&mut obj, &time);
        store.put(&rt.key(), obj);
    }
}

fn stamp(obj: &mut Value, time: &str) {
    if obj["metadata"].get("uid").is_none() {
        obj["metadata"]["uid"] = meta::new_uid().into();
    }
    if obj["metadata"].get("creationTimestamp").is_none() {
        obj["metadata"]["creationTimestamp"] = time.into();
    }
    meta::canonicalize(obj);
}

fn load_state(path: &Path) -> Result<SavedState, ServerError> {
    let text = std::fs::read(path).map_err(|source| ServerError::StateRead {
        path: path.into(),
        source,
    })?;
    serde_json::from_slice(&text).map_err(|source| ServerError::StateParse {
        path: path.into(),
        source,
    })
}

/// Saves the store when something was written, at most every 100 ms.
async fn persist_loop(st: Shared) {
    loop {
        st.written.notified().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        save_state(&st);
    }
}

fn save_state(st: &Shared) {
    let Some(path) = &st.state_file else { return };
    let snapshot = {
        let mut store = st.store();
        if !store.take_dirty() && path.exists() {
            return;
        }
        store.snapshot()
    };
    let saved = SavedState {
        ca: st.ca.clone(),
        store: snapshot,
    };
    let tmp = path.with_extension("tmp");
    let bytes = serde_json::to_vec(&saved).expect("state serialises");
    // A failed save is reported and retried at the next write; the server keeps serving.
    if let Err(e) = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path)) {
        tracing::warn!("saving state to {}: {e}", path.display());
    }
}
