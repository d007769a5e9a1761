//! A fault-injecting HTTPS proxy between the providers and the API server, the test server or a
//! real one alike: it serves its own certificate, forwards each request over a TLS connection of
//! its own to the server a kubeconfig names (the bearer token passes through unchanged), and,
//! as its [`FaultPlan`] says, answers some requests itself (429 with only a `Retry-After` header,
//! 5xx), breaks their connection before forwarding them, or forwards a write and then loses the
//! answer (a broken connection, or a gateway's 504). Rates are per request and drawn from a
//! seeded generator. The proxy can also go down altogether (connections refused), right after it
//! forwarded a chosen `generateName` create, or a write holding a chosen text, and lost its
//! answer, and come back on the same port.
//! It counts what it did ([`FaultReport`]).
//!
//! A bearer token written `<token>~<unix seconds>` expires then, as a short-lived credential
//! does: the proxy refuses it with 401 once that second has passed, and forwards it as
//! `<token>` before (`expiring`), so a test's exec plugin or token file can hand out
//! credentials that expire, in front of any server.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// A fault the proxy injects into one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// Answered 429 with `Retry-After: 1` and a plain-text body: not forwarded.
    Throttle,
    /// Answered 500, 502 or 503: not forwarded.
    ServerError,
    /// The connection broken before forwarding.
    ResetBefore,
    /// Writes only: forwarded, then the connection broken instead of answering.
    ResetAfter,
    /// Writes only: forwarded, then answered 504 instead of the server's answer.
    TimeoutAfter,
    /// LISTs with a `continue` token only: answered 410 Gone, as kube-apiserver answers once
    /// etcd was compacted past the revision the token lists (reason `Expired`). One compaction:
    /// the first such LIST gets it, the lists started after it do not, until
    /// [`FaultProxy::reset_report`] compacts again.
    Compacted,
}

impl Fault {
    /// Whether the server acts on the request before the fault: a write the server carried out.
    fn after(self) -> bool {
        matches!(self, Fault::ResetAfter | Fault::TimeoutAfter)
    }

    /// Whether the fault can befall a request: a write, or a read continuing a LIST.
    fn applies(self, write: bool, continued: bool) -> bool {
        match self {
            Fault::Compacted => continued,
            _ => write || !self.after(),
        }
    }
}

/// Which requests a plan's faults apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Every,
    /// Creates whose name the server picks (a POST whose body has `metadata.generateName`).
    GeneratedNames,
    /// The first try of each request (method, path, body): its repetitions go through.
    FirstTries,
}

/// What the proxy does to the requests it forwards.
#[derive(Clone, Debug)]
pub struct FaultPlan {
    pub seed: u64,
    /// The share of the requests in `scope` that get a fault: one of `faults`, picked evenly
    /// among those that apply (those after forwarding apply to writes only).
    pub rate: f64,
    pub faults: Vec<Fault>,
    pub scope: Scope,
    /// Each forwarded request waits up to this long first (uniformly drawn).
    pub latency: Duration,
    /// After forwarding this many `generateName` creates, the last one's answer is lost and the
    /// proxy goes down (connections refused) until [`FaultProxy::start_again`]; once.
    pub down_after_generated: Option<u32>,
    /// The first write whose body holds this text is forwarded, its answer lost, and the proxy
    /// goes down (connections refused) until [`FaultProxy::start_again`]; once.
    pub down_after_write_holding: Option<&'static str>,
}

impl FaultPlan {
    /// No faults: every request forwarded as it is.
    pub fn none(seed: u64) -> FaultPlan {
        FaultPlan {
            seed,
            rate: 0.0,
            faults: Vec::new(),
            scope: Scope::Every,
            latency: Duration::ZERO,
            down_after_generated: None,
            down_after_write_holding: None,
        }
    }
}

/// What the proxy did, for a test to print.
#[derive(Clone, Debug, Default)]
pub struct FaultReport {
    /// Requests received, by method.
    pub requests: BTreeMap<String, u64>,
    /// Faults injected, by kind.
    pub faults: BTreeMap<String, u64>,
    /// Distinct requests (method, path, body) that got a fault, and how many of them the
    /// provider sent again.
    pub faulted: u64,
    pub repeated: u64,
    /// `generateName` creates forwarded, and how many of their answers were lost.
    pub generated: u64,
    pub generated_lost: u64,
    /// Requests refused for an expired token.
    pub expired: u64,
}

impl FaultReport {
    pub fn total_requests(&self) -> u64 {
        self.requests.values().sum()
    }

    pub fn total_faults(&self) -> u64 {
        self.faults.values().sum()
    }
}

impl fmt::Display for FaultReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(
            f,
            "{} requests ({}); {} faults injected ({}) into {} distinct requests, {} of them sent \
             again by the provider; generateName creates forwarded {}, answers lost {}; expired \
             tokens refused {}",
            self.total_requests(),
            list(&self.requests),
            self.total_faults(),
            list(&self.faults),
            self.faulted,
            self.repeated,
            self.generated,
            self.generated_lost,
            self.expired,
        )
    }
}

/// Where the proxy forwards to: the server, how to trust it, and the identity to hand out.
struct Upstream {
    host: String,
    port: u16,
    tls: Arc<rustls::ClientConfig>,
    token: String,
}

/// State the connections share.
struct Shared {
    upstream: Upstream,
    plan: FaultPlan,
    rng: Mutex<fastrand::Rng>,
    report: Mutex<FaultReport>,
    /// Faulted requests by fingerprint, to tell a retry from a new request.
    faulted: Mutex<HashMap<[u8; 32], bool>>,
    /// Every request seen, for [`Scope::FirstTries`].
    seen: Mutex<HashSet<[u8; 32]>>,
    /// A compaction is due: the next LIST continuing a page gets [`Fault::Compacted`].
    compaction_due: Mutex<bool>,
    /// `generateName` creates forwarded, for `down_after_generated`.
    generated: Mutex<u32>,
    down: watch::Sender<bool>,
    /// `down_after_write_holding` went down already.
    written_down: std::sync::atomic::AtomicBool,
    /// Writes wait until then ([`FaultProxy::hold_writes_for`]).
    writes_held_until: Mutex<Option<std::time::Instant>>,
}

/// A running proxy; dropping it stops it.
pub struct FaultProxy {
    runtime: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    addr: SocketAddr,
    tls: Arc<rustls::ServerConfig>,
    ca_pem: String,
}

impl FaultProxy {
    /// A proxy in front of the server `kubeconfig` names (its current context's cluster and
    /// token), listening on a free port of 127.0.0.1.
    pub fn start(kubeconfig: &Path, plan: FaultPlan) -> FaultProxy {
        let upstream = upstream(kubeconfig);
        let ca = kube_test_server::tls::CaMaterial::generate().expect("a CA for the fault proxy");
        let mut tls = (*kube_test_server::tls::server_config(&ca).expect("the proxy's certificate")).clone();
        // One request per exchange keeps the faults simple to place.
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the fault proxy");
        let shared = Arc::new(Shared {
            upstream,
            rng: Mutex::new(fastrand::Rng::with_seed(plan.seed)),
            plan,
            report: Mutex::new(FaultReport::default()),
            faulted: Mutex::new(HashMap::new()),
            seen: Mutex::new(HashSet::new()),
            compaction_due: Mutex::new(true),
            generated: Mutex::new(0),
            down: watch::channel(false).0,
            written_down: std::sync::atomic::AtomicBool::new(false),
            writes_held_until: Mutex::new(None),
        });
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a port for the fault proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let proxy = FaultProxy {
            runtime,
            shared,
            addr,
            tls: Arc::new(tls),
            ca_pem: ca.cert_pem,
        };
        proxy.serve(listener);
        proxy
    }

    /// The proxy's URL (`https://127.0.0.1:<port>`).
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The certificate of the CA that signed the proxy's, in PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The token the upstream's kubeconfig gave, which the proxy's kubeconfig hands out.
    pub fn upstream_token(&self) -> &str {
        &self.shared.upstream.token
    }

    /// A kubeconfig for the proxy, with the upstream's token.
    pub fn write_kubeconfig(&self, path: &Path) {
        let users = [("admin".to_string(), self.shared.upstream.token.clone())];
        let text = kube_test_server::render_kubeconfig(
            &format!("https://{}", self.addr),
            &self.ca_pem,
            &users,
            "admin",
        );
        std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// Comes back on the same port.
    pub fn start_again(&self) {
        // The old listener is gone once its loop saw the stop.
        let listener = self.runtime.block_on(async {
            for _ in 0..100 {
                if let Ok(listener) = TcpListener::bind(self.addr).await {
                    return listener;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            panic!("the fault proxy cannot listen on {} again", self.addr)
        });
        self.shared.down.send_replace(false);
        self.serve(listener);
    }

    /// Every write from now on waits until `hold` has passed before it is forwarded; reads
    /// go on as before.
    pub fn hold_writes_for(&self, hold: Duration) {
        *self.shared.writes_held_until.lock().expect("hold lock") = Some(std::time::Instant::now() + hold);
    }

    /// Whether the proxy is down.
    pub fn is_down(&self) -> bool {
        *self.shared.down.borrow()
    }

    /// What the proxy did so far.
    pub fn report(&self) -> FaultReport {
        self.shared.report.lock().expect("report lock").clone()
    }

    /// Forgets what the proxy did so far (the counts, not the plan): a request seen before is
    /// a first try again, and etcd compacts once more (see [`Fault::Compacted`]).
    pub fn reset_report(&self) {
        *self.shared.report.lock().expect("report lock") = FaultReport::default();
        self.shared.faulted.lock().expect("faulted lock").clear();
        self.shared.seen.lock().expect("seen lock").clear();
        *self.shared.compaction_due.lock().expect("compaction lock") = true;
    }

    fn serve(&self, listener: TcpListener) {
        let shared = self.shared.clone();
        let tls = tokio_rustls::TlsAcceptor::from(self.tls.clone());
        self.runtime.spawn(async move {
            let mut down = shared.down.subscribe();
            loop {
                let (tcp, _) = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(_) => continue,
                    },
                    _ = down.wait_for(|down| *down) => return,
                };
                let shared = shared.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let mut down = shared.down.subscribe();
                    tokio::select! {
                        () = connection(shared.clone(), tls, tcp) => {}
                        // Going down breaks the connections in flight too.
                        _ = down.wait_for(|down| *down) => {}
                    }
                });
            }
        });
    }
}

/// Serves one client connection.
async fn connection(shared: Arc<Shared>, tls: tokio_rustls::TlsAcceptor, tcp: TcpStream) {
    let fd = tcp.as_raw_fd();
    let Ok(stream) = tls.accept(tcp).await else {
        return;
    };
    let service = hyper::service::service_fn(move |request| {
        let shared = shared.clone();
        async move { handle(&shared, fd, request).await }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// Why a connection was broken instead of answered.
#[derive(Debug, thiserror::Error)]
#[error("connection broken by the fault proxy")]
struct Broken;

/// One request: a fault, or the server's answer.
async fn handle(
    shared: &Shared,
    fd: RawFd,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Broken> {
    let (mut parts, body) = request.into_parts();
    let body = body.collect().await.map_err(|_| Broken)?.to_bytes();
    if expiring(&mut parts.headers) == Token::Expired {
        shared.report.lock().expect("report lock").expired += 1;
        return Ok(status(401, "Unauthorized"));
    }
    let generated = parts.method == http::Method::POST && names_generated(&body);
    let write = !matches!(parts.method, http::Method::GET | http::Method::HEAD);
    let fingerprint = fingerprint(&parts, &body);
    let (fault, latency) = {
        let mut rng = shared.rng.lock().expect("rng lock");
        let plan = &shared.plan;
        let in_scope = match plan.scope {
            Scope::Every => true,
            Scope::GeneratedNames => generated,
            Scope::FirstTries => shared.seen.lock().expect("seen lock").insert(fingerprint),
        };
        let continued = !write
            && parts
                .uri
                .query()
                .is_some_and(|q| q.split('&').any(|p| p.starts_with("continue=")));
        let applicable: Vec<Fault> = plan
            .faults
            .iter()
            .copied()
            .filter(|f| {
                f.applies(
                    write,
                    continued && *shared.compaction_due.lock().expect("compaction lock"),
                )
            })
            .collect();
        // Draws only for the requests in scope, so that with a scope of generateName creates
        // the seed alone decides which of them fail, whatever other requests come between.
        let fault = (in_scope && !applicable.is_empty() && rng.f64() < plan.rate)
            .then(|| applicable[rng.usize(..applicable.len())]);
        let latency = if plan.latency.is_zero() {
            Duration::ZERO
        } else {
            plan.latency.mul_f64(rng.f64())
        };
        (fault, latency)
    };
    {
        let mut report = shared.report.lock().expect("report lock");
        *report.requests.entry(parts.method.to_string()).or_default() += 1;
        let mut faulted = shared.faulted.lock().expect("faulted lock");
        if let Some(counted) = faulted.get_mut(&fingerprint)
            && !*counted
        {
            *counted = true;
            report.repeated += 1;
        }
        if let Some(fault) = fault {
            *report.faults.entry(format!("{fault:?}")).or_default() += 1;
            if let std::collections::hash_map::Entry::Vacant(entry) = faulted.entry(fingerprint) {
                entry.insert(false);
                report.faulted += 1;
            }
        }
    }
    match fault {
        Some(Fault::Throttle) => {
            return Ok(Response::builder()
                .status(StatusCode::TOO_MANY_REQUESTS)
                .header(http::header::RETRY_AFTER, "1")
                .header(http::header::CONTENT_TYPE, "text/plain")
                .body(Full::new(Bytes::from_static(
                    b"Too many requests (fault proxy)\n",
                )))
                .expect("a valid response"));
        }
        Some(Fault::ServerError) => {
            let code = [500, 502, 503][shared.rng.lock().expect("rng lock").usize(..3)];
            return Ok(status(code, "injected by the fault proxy"));
        }
        Some(Fault::ResetBefore) => return Err(reset(fd)),
        Some(Fault::Compacted) => {
            *shared.compaction_due.lock().expect("compaction lock") = false;
            return Ok(expired_continue());
        }
        _ => {}
    }
    let cut_off = write
        && shared
            .plan
            .down_after_write_holding
            .is_some_and(|text| body.windows(text.len()).any(|w| w == text.as_bytes()));
    let held = write
        .then(|| *shared.writes_held_until.lock().expect("hold lock"))
        .flatten();
    if let Some(until) = held {
        tokio::time::sleep_until(until.into()).await;
    }
    tokio::time::sleep(latency).await;
    let answer = forward(&shared.upstream, parts, body).await;
    let mut fault = fault;
    if generated {
        let mut forwarded = shared.generated.lock().expect("generated lock");
        *forwarded += 1;
        if shared.plan.down_after_generated == Some(*forwarded) {
            fault = Some(Fault::ResetAfter);
            shared.down.send_replace(true);
        }
        let mut report = shared.report.lock().expect("report lock");
        report.generated += 1;
        report.generated_lost += u64::from(fault.is_some_and(Fault::after));
    }
    if cut_off
        && !shared
            .written_down
            .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        shared.down.send_replace(true);
        fault = Some(Fault::ResetAfter);
    }
    match fault {
        Some(Fault::ResetAfter) => Err(reset(fd)),
        Some(Fault::TimeoutAfter) => Ok(status(504, "the gateway timed out (fault proxy)")),
        _ => answer,
    }
}

/// Whether a create's body asks the server to pick the name.
fn names_generated(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|object| {
        object.pointer("/metadata/generateName").is_some() && object.pointer("/metadata/name").is_none()
    })
}

fn fingerprint(parts: &http::request::Parts, body: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(parts.method.as_str());
    hash.update(parts.uri.to_string());
    hash.update(body);
    hash.finalize().into()
}

/// Makes the connection's close a reset (RST), as a peer's crash or a middlebox would.
fn reset(fd: RawFd) -> Broken {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is the socket of the connection this request came on, open while it is
    // served; SO_LINGER takes a `linger` of this size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    Broken
}

/// A Status answer the proxy makes itself.
/// kube-apiserver's answer to a `continue` token older than its etcd's compaction.
fn expired_continue() -> Response<Full<Bytes>> {
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "The provided continue parameter is too old to display a consistent list result. \
                    You can start a new list without the continue parameter, or use the continue \
                    token in this response to retrieve the remainder of the results. Continuing \
                    with the provided token results in an inconsistent list - objects that were \
                    created, modified, or deleted between the time the first chunk was returned \
                    and now may show up in the list.",
        "reason": "Expired",
        "code": 410,
    });
    Response::builder()
        .status(StatusCode::GONE)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}

/// What a request's bearer token says about its expiry.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    /// No expiry written in it.
    Plain,
    /// Written `<token>~<unix seconds>`, not expired: the header now holds `<token>`.
    Current,
    Expired,
}

/// Reads a `<token>~<unix seconds>` bearer token: refused once expired, else forwarded bare.
fn expiring(headers: &mut http::HeaderMap) -> Token {
    let Some((token, until)) = headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .and_then(|v| v.rsplit_once('~'))
        .and_then(|(token, until)| Some((token.to_string(), until.parse::<u64>().ok()?)))
    else {
        return Token::Plain;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if now >= until {
        return Token::Expired;
    }
    match http::HeaderValue::from_str(&format!("Bearer {token}")) {
        Ok(bare) => {
            headers.insert(http::header::AUTHORIZATION, bare);
            Token::Current
        }
        Err(_) => Token::Expired,
    }
}

fn status(code: u16, message: &str) -> Response<Full<Bytes>> {
    let status = StatusCode::from_u16(code).expect("a valid status code");
    let body = serde_json::json!({
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": status.canonical_reason().unwrap_or_default().replace(' ', ""),
        "code": code,
    });
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}

/// Sends the request to the server on a connection of its own, and returns its answer.
async fn forward(
    upstream: &Upstream,
    parts: http::request::Parts,
    body: Bytes,
) -> Result<Response<Full<Bytes>>, Broken> {
    let tcp = TcpStream::connect((upstream.host.as_str(), upstream.port))
        .await
        .map_err(|_| Broken)?;
    let name = ServerName::try_from(upstream.host.clone()).map_err(|_| Broken)?;
    let stream = tokio_rustls::TlsConnector::from(upstream.tls.clone())
        .connect(name, tcp)
        .await
        .map_err(|_| Broken)?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|_| Broken)?;
    tokio::spawn(conn);
    let mut request = Request::from_parts(parts, Full::new(body));
    let headers = request.headers_mut();
    for hop in [http::header::CONNECTION, http::header::TRANSFER_ENCODING] {
        headers.remove(hop);
    }
    let host = format!("{}:{}", upstream.host, upstream.port);
    headers.insert(
        http::header::HOST,
        http::HeaderValue::from_str(&host).map_err(|_| Broken)?,
    );
    let answer = sender.send_request(request).await.map_err(|_| Broken)?;
    let (mut parts, body) = answer.into_parts();
    let body = body.collect().await.map_err(|_| Broken)?.to_bytes();
    for hop in [http::header::CONNECTION, http::header::TRANSFER_ENCODING] {
        parts.headers.remove(hop);
    }
    Ok(Response::from_parts(parts, Full::new(body)))
}

/// The server, CA and token of the current context of `kubeconfig`.
fn upstream(kubeconfig: &Path) -> Upstream {
    let text = std::fs::read_to_string(kubeconfig)
        .unwrap_or_else(|e| panic!("reading {}: {e}", kubeconfig.display()));
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).expect("a kubeconfig in YAML");
    let named = |list: &str, name: &str| -> serde_yaml::Value {
        doc[list]
            .as_sequence()
            .into_iter()
            .flatten()
            .find(|item| item["name"].as_str() == Some(name))
            .map(|item| item[&list[..list.len() - 1]].clone())
            .unwrap_or_else(|| panic!("no {list} entry {name:?} in {}", kubeconfig.display()))
    };
    let current = doc["current-context"].as_str().expect("a current context");
    let context = named("contexts", current);
    let cluster = named("clusters", context["cluster"].as_str().expect("a cluster"));
    let user = named("users", context["user"].as_str().expect("a user"));
    let server: http::Uri = cluster["server"]
        .as_str()
        .expect("a server URL")
        .parse()
        .expect("a valid server URL");
    let ca_pem = match (
        cluster["certificate-authority-data"].as_str(),
        cluster["certificate-authority"].as_str(),
    ) {
        (Some(data), _) => {
            use base64::Engine;
            let pem = base64::engine::general_purpose::STANDARD
                .decode(data)
                .expect("base64 CA data");
            String::from_utf8(pem).expect("a PEM CA")
        }
        (None, Some(file)) => {
            std::fs::read_to_string(kubeconfig.parent().unwrap_or(Path::new(".")).join(file))
                .unwrap_or_else(|e| panic!("reading the CA {file}: {e}"))
        }
        (None, None) => panic!("the kubeconfig names no CA for its server"),
    };
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(kube_test_server::tls::pem_to_der(&ca_pem))
        .expect("the server's CA");
    let mut tls =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Upstream {
        host: server.host().expect("a server host").to_string(),
        port: server.port_u16().unwrap_or(443),
        tls: Arc::new(tls),
        token: user["token"].as_str().expect("a bearer token").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(token: &str) -> http::HeaderMap {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        headers
    }

    #[test]
    fn a_token_with_an_expiry_is_forwarded_bare_until_it_expires() {
        let later = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 60;
        let mut current = bearer(&format!("abc~{later}"));
        assert_eq!(expiring(&mut current), Token::Current);
        assert_eq!(current[http::header::AUTHORIZATION], "Bearer abc");
        assert_eq!(expiring(&mut bearer("abc~1000")), Token::Expired);
        let mut plain = bearer("abc");
        assert_eq!(expiring(&mut plain), Token::Plain);
        assert_eq!(plain[http::header::AUTHORIZATION], "Bearer abc");
    }
}
