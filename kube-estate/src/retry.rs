//! Retries for a failing API server: a request that got no answer (a refused or broken
//! connection), a 429 or a 5xx is sent again after a jittered exponential backoff (or the
//! server's Retry-After, from the header or the Status body), a bounded number of times within a
//! bounded time, never past the operation's timeout ([`until`]) and never after Ctrl-C
//! ([`Stop`]). The last error comes back as a [`Failure`] that says how many tries were made and
//! why they ended, for the diagnostic.
//!
//! Whether a request may be sent again when its outcome is unknown is the caller's word
//! ([`Repeat`]): a read, a server-side apply, a delete or a write carrying a resourceVersion
//! precondition leaves the cluster as one would; a create whose name the server picks does not,
//! and is sent again only when the server provably did nothing (a 429, or no connection made).
//!
//! The client is built with kube's own retry layer off, so this is the one retry policy.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::stop::Stop;

/// Whether a request may be sent again when the server may have acted on it already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// Sending it twice leaves the cluster as sending it once.
    Idempotent,
    /// It must not run twice: sent again only after a 429 or when no connection was made.
    Once,
}

/// How many attempts, and how long the waits between them may add up to.
#[derive(Clone, Copy, Debug)]
struct Limits {
    attempts: u32,
    /// The first backoff; each next one doubles, up to `max_delay`, then jittered.
    first_delay: Duration,
    max_delay: Duration,
    total_wait: Duration,
}

/// At 20 % of requests failing, 8 attempts fail together once in 400,000 requests; a dead
/// server costs about 15 s of waiting before the error.
const LIMITS: Limits = Limits {
    attempts: 8,
    first_delay: Duration::from_millis(200),
    max_delay: Duration::from_secs(4),
    total_wait: Duration::from_secs(20),
};

/// The provider block's `api_retry_timeout` in milliseconds (0: the default, [`LIMITS`]). One
/// provider configuration is one plugin process, so the process holds one.
static RETRY_TIMEOUT_MS: AtomicU64 = AtomicU64::new(0);

/// Sets how long a request may wait between its tries (`api_retry_timeout`).
pub fn set_retry_timeout(timeout: Duration) {
    RETRY_TIMEOUT_MS.store(
        u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// This process's limits: [`LIMITS`], or as many more tries as a longer `api_retry_timeout`
/// fills at the longest backoff.
fn limits() -> Limits {
    limits_for(RETRY_TIMEOUT_MS.load(Ordering::Relaxed))
}

fn limits_for(retry_timeout_ms: u64) -> Limits {
    match retry_timeout_ms {
        0 => LIMITS,
        ms => {
            let total_wait = Duration::from_millis(ms);
            let filled = total_wait.as_secs() / (LIMITS.max_delay.as_secs() / 2).max(1) + 2;
            Limits {
                attempts: LIMITS.attempts.max(u32::try_from(filled).unwrap_or(u32::MAX)),
                total_wait,
                ..LIMITS
            }
        }
    }
}

/// What one failed attempt says about the request.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Attempt {
    /// Not worth repeating: the server answered with a client error, or its answer was unusable.
    Final,
    /// The server did not act: a 429 (with its Retry-After), or no connection could be made.
    NotProcessed(Option<Duration>),
    /// The server may have acted: a 5xx (with its Retry-After), or the connection broke after
    /// the request went out.
    Unknown(Option<Duration>),
}

/// Why retrying ended with the last attempt's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The error is not one a retry could mend.
    Final,
    /// The request must not run twice, and the server may have acted on it.
    NotRepeatable,
    /// The attempts or the time allowed for retries were used up (or the server's Retry-After
    /// asked for longer).
    Budget,
    /// The operation's timeout would have passed before the next attempt.
    Deadline,
    /// The run was interrupted (Ctrl-C).
    Stopped,
    /// Requests before this one could not reach the API server at all: it was tried once.
    Unreachable,
}

/// A request that failed, with what its attempts saw.
#[derive(Debug)]
pub struct Failure {
    /// The last attempt's error.
    pub error: kube::Error,
    /// Attempts made, the last one included.
    pub tries: u32,
    /// Time spent waiting between them.
    pub waited: Duration,
    /// Some attempt may have reached the server and acted (no answer, or a 5xx): a create may
    /// have created, a write may have written.
    pub uncertain: bool,
    /// Why the attempts stopped.
    pub ended: Ended,
}

impl From<kube::Error> for Failure {
    /// One attempt, made outside [`with_retry`].
    fn from(error: kube::Error) -> Failure {
        Failure {
            uncertain: matches!(classify(&error).0, Attempt::Unknown(_)),
            error,
            tries: 1,
            waited: Duration::ZERO,
            ended: Ended::Final,
        }
    }
}

tokio::task_local! {
    /// When the operation running in this task must end (its `timeouts`).
    static DEADLINE: Instant;
}

/// Runs `operation` with retries that never wait past `deadline`.
pub async fn until<F: Future>(deadline: Instant, operation: F) -> F::Output {
    DEADLINE.scope(deadline, operation).await
}

/// Runs an idempotent `op` until it succeeds, fails with an error not worth retrying, or the
/// budget, the operation's deadline or a stop ends the retries.
pub async fn with_retry<T, F, Fut>(op: F) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    retry(Repeat::Idempotent, op).await
}

/// Runs `op`, which must not run twice (a `generateName` create), retrying only the attempts
/// the server provably did not act on.
pub async fn with_retry_unprocessed<T, F, Fut>(op: F) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    retry(Repeat::Once, op).await
}

/// Runs `op` as `repeat` allows, with this process's limits, reachability, deadline and stop.
pub async fn retry<T, F, Fut>(repeat: Repeat, op: F) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    static REACHABILITY: Reachability = Reachability::new();
    run(repeat, &limits(), &REACHABILITY, op, wait, jitter).await
}

/// Waits before try `tries + 1` of a request that is repeated by hand (a create the server
/// names, sent again once a lookup showed the last one created nothing): the jittered backoff,
/// within the operation's deadline and until a stop.
pub async fn pause(tries: u32) -> Result<(), Ended> {
    wait(backoff(&limits(), tries, jitter)).await
}

/// The backoff after `tries` failed tries.
fn backoff(limits: &Limits, tries: u32, jitter: impl Fn(Duration) -> Duration) -> Duration {
    let doubled = limits
        .first_delay
        .saturating_mul(2u32.saturating_pow(tries.saturating_sub(1)));
    jitter(doubled).min(limits.max_delay)
}

/// Sleeps `delay` unless the deadline would pass first or this process is stopped meanwhile.
async fn wait(delay: Duration) -> Result<(), Ended> {
    wait_until_stopped(Stop::process(), delay).await
}

/// Sleeps `delay` unless the deadline would pass first or `stop` comes meanwhile.
async fn wait_until_stopped(stop: &Stop, delay: Duration) -> Result<(), Ended> {
    if DEADLINE
        .try_with(|deadline| Instant::now() + delay > *deadline)
        .unwrap_or(false)
    {
        return Err(Ended::Deadline);
    }
    tokio::select! {
        () = tokio::time::sleep(delay) => Ok(()),
        () = stop.requested() => Err(Ended::Stopped),
    }
}

/// "Equal jitter": half the backoff, plus up to the other half at random, so that the many
/// requests one fault broke do not all come back at the same moment.
fn jitter(backoff: Duration) -> Duration {
    backoff / 2 + backoff.mul_f64(fastrand::f64() / 2.0)
}

/// Whether the API server could be reached lately. When a request spent its whole budget
/// without a connection, the server is down: the requests after it are tried once each (so a
/// run against a stopped server ends after one budget, not one per request) until any request
/// gets an answer again.
struct Reachability(AtomicBool);

impl Reachability {
    const fn new() -> Reachability {
        Reachability(AtomicBool::new(false))
    }

    fn down(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set_down(&self, down: bool) {
        self.0.store(down, Ordering::Relaxed);
    }
}

/// The loop, with the wait and the jitter passed in so that the tests count the delays instead
/// of sleeping (and need no paused tokio clock, whose `test-util` feature would build tokio
/// twice).
async fn run<T, F, Fut, W, Waited>(
    repeat: Repeat,
    limits: &Limits,
    reachability: &Reachability,
    mut op: F,
    mut wait: W,
    jitter: impl Fn(Duration) -> Duration,
) -> Result<T, Failure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
    W: FnMut(Duration) -> Waited,
    Waited: Future<Output = Result<(), Ended>>,
{
    let down = reachability.down();
    let attempts = if down { 1 } else { limits.attempts };
    let mut tries = 0;
    let mut waited = Duration::ZERO;
    let mut uncertain = false;
    loop {
        tries += 1;
        let error = match op().await {
            Ok(v) => {
                reachability.set_down(false);
                return Ok(v);
            }
            Err(error) => error,
        };
        let (attempt, answered) = classify(&error);
        if answered {
            reachability.set_down(false);
        }
        let end = |ended, uncertain| {
            move |error| Failure {
                error,
                tries,
                waited,
                uncertain,
                ended,
            }
        };
        let hint = match attempt {
            Attempt::Final => return Err(end(Ended::Final, uncertain)(error)),
            Attempt::NotProcessed(hint) => hint,
            Attempt::Unknown(hint) => {
                uncertain = true;
                if repeat == Repeat::Once {
                    return Err(end(Ended::NotRepeatable, uncertain)(error));
                }
                hint
            }
        };
        // The server's word on when to come back is taken as given, if the budget allows it.
        let delay = hint.unwrap_or_else(|| backoff(limits, tries, &jitter));
        if tries >= attempts || waited + delay > limits.total_wait {
            if !answered {
                reachability.set_down(true);
            }
            let ended = if down { Ended::Unreachable } else { Ended::Budget };
            return Err(end(ended, uncertain)(error));
        }
        tracing::debug!(tries, ?delay, "retrying a Kubernetes API request after: {error}");
        if let Err(ended) = wait(delay).await {
            return Err(end(ended, uncertain)(error));
        }
        waited += delay;
    }
}

/// What a failed attempt says, and whether the server answered at all.
fn classify(error: &kube::Error) -> (Attempt, bool) {
    match error {
        kube::Error::Api(status) => {
            let hint = Some(status.details.as_ref().map_or(0, |d| d.retry_after_seconds))
                .filter(|s| *s > 0)
                .map(|s| Duration::from_secs(s.into()));
            let attempt = match status.code {
                _ if crate::typed_patch::refusal(status.code, &status.message).is_some() => Attempt::Final,
                // A webhook the server could not call: the server answered, and will again.
                _ if failed_webhook(&status.message).is_some() => Attempt::Final,
                // A refusal the API server made because etcd, or the server itself, did not
                // answer (an allocation of a Service's cluster IP while etcd restarts is a 422
                // with its gRPC error; while the server shuts down, one with its own loopback
                // connection refused): not the object's fault, and nothing was stored.
                _ if status.code < 500 && storage_unavailable(&status.message) => Attempt::NotProcessed(None),
                429 => Attempt::NotProcessed(hint),
                500..=599 => Attempt::Unknown(hint),
                _ => Attempt::Final,
            };
            (attempt, true)
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => match connection(error) {
            // A certificate refused, a protocol not spoken: trying again changes nothing.
            Connection::Tls => (Attempt::Final, true),
            Connection::NotMade => (Attempt::NotProcessed(None), false),
            Connection::Broken => (Attempt::Unknown(None), false),
        },
        _ => (Attempt::Final, true),
    }
}

/// The webhook an API server could not call (`failed calling webhook "x": ...`, as
/// kube-apiserver reports a `failurePolicy: Fail` webhook that did not answer).
pub(crate) fn failed_webhook(message: &str) -> Option<String> {
    let rest = message.split_once("failed calling webhook \"")?.1;
    Some(rest.split_once('"')?.0.to_string())
}

/// Whether a refusal's message is etcd's gRPC "unavailable" (`rpc error: code = Unavailable`)
/// or one of its leader and timeout errors, which kube-apiserver passes on inside a 422 or 500,
/// or a connection the server could not make to itself (`dial tcp …: connect: connection
/// refused`, an IP allocation while it shuts down).
fn storage_unavailable(message: &str) -> bool {
    [
        "rpc error: code = Unavailable",
        "etcdserver: leader changed",
        "etcdserver: request timed out",
    ]
    .iter()
    .any(|m| message.contains(m))
        || (message.contains("dial tcp") && message.contains("connect: connection refused"))
}

/// How a request's connection failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Connection {
    /// TLS refused the server or the client: a setting, not a fault.
    Tls,
    /// The request never left: no connection could be made (refused, unreachable), so the
    /// server saw nothing of it.
    NotMade,
    /// The connection broke while the request was sent or answered.
    Broken,
}

/// `error` and the errors io::Errors inside it wrap: an io::Error shows its inner error but
/// does not chain to it.
fn wrapped<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| {
        e.downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .map(|inner| inner as &(dyn std::error::Error + 'static))
    })
}

/// How the connection of a request that got no answer failed.
pub(crate) fn connection(error: &kube::Error) -> Connection {
    let mut not_made = false;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if wrapped(e).any(|e| e.downcast_ref::<rustls::Error>().is_some()) {
            return Connection::Tls;
        }
        if let Some(client) = e.downcast_ref::<hyper_util::client::legacy::Error>() {
            not_made |= client.is_connect();
        }
        source = e.source();
    }
    if not_made {
        Connection::NotMade
    } else {
        Connection::Broken
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::future::ready;

    use kube::core::Status;
    use kube::core::response::StatusDetails;

    use super::*;

    fn status(code: u16) -> kube::Error {
        kube::Error::Api(Status::failure("x", "").with_code(code).boxed())
    }

    /// A 429 whose Status body says when to come back.
    fn throttled(retry_after_seconds: u32) -> kube::Error {
        let details = StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes: vec![],
            retry_after_seconds,
        };
        kube::Error::Api(
            Status::failure("slow down", "TooManyRequests")
                .with_code(429)
                .with_details(details)
                .boxed(),
        )
    }

    /// What a refused connection looks like: hyper's client error for a failed connect.
    async fn refused() -> kube::Error {
        let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http::<http_body_util::Empty<bytes::Bytes>>();
        // Port 1 on loopback: nothing listens there.
        let error = client
            .get("http://127.0.0.1:1/".parse().unwrap())
            .await
            .expect_err("nothing listens on port 1");
        kube::Error::Service(Box::new(error))
    }

    /// A connection broken after the request went out (what hyper reports as a closed
    /// connection, not a connect error).
    fn reset() -> kube::Error {
        kube::Error::Service("connection reset by peer".into())
    }

    /// One run of `run`: the errors the attempts fail with (`None`: success), and how the waits
    /// end (`stop_after`: the wait after that many waits reports a stop).
    struct Script {
        repeat: Repeat,
        limits: Limits,
        stop_after: Option<usize>,
        deadline_after: Option<Duration>,
    }

    impl Script {
        fn new(repeat: Repeat) -> Script {
            Script {
                repeat,
                limits: LIMITS,
                stop_after: None,
                deadline_after: None,
            }
        }

        /// Runs the attempts `errors` (then success) against `reachability`: the result (the
        /// attempt number that succeeded), and each wait.
        async fn play(
            &self,
            reachability: &Reachability,
            errors: Vec<kube::Error>,
        ) -> (Result<u32, Failure>, Vec<Duration>) {
            let errors = RefCell::new(errors.into_iter());
            let calls = Cell::new(0u32);
            let waits = RefCell::new(Vec::new());
            let result = run(
                self.repeat,
                &self.limits,
                reachability,
                || {
                    calls.set(calls.get() + 1);
                    let next = errors.borrow_mut().next();
                    let n = calls.get();
                    ready(next.map_or(Ok(n), Err))
                },
                |delay| {
                    let mut waits = waits.borrow_mut();
                    let total: Duration = waits.iter().sum();
                    let outcome = if self.stop_after == Some(waits.len()) {
                        Err(Ended::Stopped)
                    } else if self.deadline_after.is_some_and(|d| total + delay > d) {
                        Err(Ended::Deadline)
                    } else {
                        waits.push(delay);
                        Ok(())
                    };
                    ready(outcome)
                },
                // No randomness in the tests: the upper end of each jittered backoff.
                |backoff| backoff,
            )
            .await;
            (result, waits.into_inner())
        }
    }

    #[tokio::test]
    async fn retries_throttling_server_errors_and_connection_errors_until_success() {
        let script = Script::new(Repeat::Idempotent);
        let up = Reachability::new();
        let (r, waits) = script
            .play(&up, vec![status(429), status(503), refused().await, reset()])
            .await;
        assert_eq!(r.unwrap(), 5);
        let ms: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [200, 400, 800, 1600]);
    }

    #[tokio::test]
    async fn connection_errors_tell_whether_the_request_left() {
        assert_eq!(classify(&refused().await), (Attempt::NotProcessed(None), false));
        assert_eq!(classify(&reset()), (Attempt::Unknown(None), false));
        assert_eq!(classify(&status(504)), (Attempt::Unknown(None), true));
        assert_eq!(classify(&status(409)), (Attempt::Final, true));
    }

    #[tokio::test]
    async fn gives_up_after_the_attempts_and_says_why() {
        let script = Script::new(Repeat::Idempotent);
        let up = Reachability::new();
        let (r, waits) = script.play(&up, (0..100).map(|_| status(500)).collect()).await;
        let failure = r.unwrap_err();
        assert_eq!(failure.tries, LIMITS.attempts);
        assert_eq!(failure.ended, Ended::Budget);
        assert!(failure.uncertain);
        // 0.2 + 0.4 + 0.8 + 1.6 + 3.2 + 4 + 4 s of backoff.
        assert_eq!(waits.iter().sum::<Duration>(), Duration::from_millis(14_200));
        assert_eq!(failure.waited, Duration::from_millis(14_200));
        assert!(!up.down(), "the server answered: it is up");
    }

    #[tokio::test]
    async fn the_time_budget_ends_retries_before_the_attempts_do() {
        let mut script = Script::new(Repeat::Idempotent);
        script.limits.total_wait = Duration::from_secs(2);
        let (r, waits) = script
            .play(&Reachability::new(), (0..100).map(|_| status(503)).collect())
            .await;
        // 0.2 + 0.4 + 0.8 fit in 2 s; 1.6 more would not.
        assert_eq!(waits.iter().sum::<Duration>(), Duration::from_millis(1400));
        let failure = r.unwrap_err();
        assert_eq!((failure.tries, failure.ended), (4, Ended::Budget));
    }

    #[tokio::test]
    async fn a_request_that_must_not_run_twice_is_repeated_only_when_the_server_did_nothing() {
        let script = Script::new(Repeat::Once);
        let up = Reachability::new();
        for error in [status(500), status(504), reset()] {
            let (r, waits) = script.play(&up, vec![error]).await;
            let failure = r.unwrap_err();
            assert_eq!((failure.tries, failure.ended), (1, Ended::NotRepeatable));
            assert!(failure.uncertain);
            assert!(waits.is_empty());
        }
        let (r, _) = script.play(&up, vec![status(429), refused().await]).await;
        assert_eq!(r.unwrap(), 3);
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        let script = Script::new(Repeat::Idempotent);
        for code in [400, 403, 404, 409, 422] {
            let (r, waits) = script.play(&Reachability::new(), vec![status(code)]).await;
            let failure = r.unwrap_err();
            assert_eq!((failure.tries, failure.ended), (1, Ended::Final), "{code}");
            assert!(!failure.uncertain, "{code}");
            assert!(waits.is_empty(), "{code}");
        }
    }

    /// Server-side apply's 500 for an object it cannot type (a key twice in a keyed list) is
    /// the same on every try: tried once, never "unavailable".
    #[tokio::test]
    async fn a_typed_patch_refusal_is_not_retried() {
        let message = "failed to create typed patch object (default/d1; apps/v1, Kind=Deployment): \
                       .spec.template.spec.containers[name=\"c\"].env: duplicate entries for key [name=\"A\"]";
        let refusal = || kube::Error::Api(Status::failure(message, "").with_code(500).boxed());
        let script = Script::new(Repeat::Idempotent);
        let (r, waits) = script
            .play(&Reachability::new(), vec![refusal(), refusal()])
            .await;
        let failure = r.unwrap_err();
        assert_eq!((failure.tries, failure.ended), (1, Ended::Final));
        assert!(!failure.uncertain && waits.is_empty());
        // Any other 500 may be the server's trouble: retried.
        let (r, _) = script.play(&Reachability::new(), vec![status(500)]).await;
        assert_eq!(r.unwrap(), 2);
    }

    #[tokio::test]
    async fn retry_after_from_the_body_is_honoured_within_the_budget() {
        let script = Script::new(Repeat::Idempotent);
        let (r, waits) = script
            .play(&Reachability::new(), vec![throttled(3), throttled(3)])
            .await;
        assert_eq!(r.unwrap(), 3);
        assert_eq!(waits, [Duration::from_secs(3); 2]);
        // 3 s waits: six fit in the 20 s budget, a seventh would not.
        let (r, waits) = script
            .play(&Reachability::new(), (0..100).map(|_| throttled(3)).collect())
            .await;
        assert_eq!(waits.len(), 6);
        assert_eq!(r.unwrap_err().ended, Ended::Budget);
        // A Retry-After beyond the budget: the error now rather than a wait past it.
        let (r, waits) = script.play(&Reachability::new(), vec![throttled(60)]).await;
        assert!(waits.is_empty());
        assert_eq!(r.unwrap_err().tries, 1);
    }

    #[tokio::test]
    async fn a_stop_or_the_deadline_ends_the_retries_at_once() {
        let mut script = Script::new(Repeat::Idempotent);
        script.stop_after = Some(1);
        let (r, waits) = script
            .play(&Reachability::new(), (0..100).map(|_| status(503)).collect())
            .await;
        assert_eq!(waits.len(), 1);
        let failure = r.unwrap_err();
        assert_eq!((failure.tries, failure.ended), (2, Ended::Stopped));

        let mut script = Script::new(Repeat::Idempotent);
        script.deadline_after = Some(Duration::from_secs(1));
        let (r, waits) = script
            .play(&Reachability::new(), (0..100).map(|_| status(503)).collect())
            .await;
        // 0.2 + 0.4 s fit before the deadline; 0.8 more would pass it.
        assert_eq!(waits.len(), 2);
        assert_eq!(r.unwrap_err().ended, Ended::Deadline);
    }

    #[tokio::test]
    async fn a_wait_ends_at_ctrl_c_and_never_passes_the_operations_deadline() {
        // Ctrl-C during a minute's wait ends it at once.
        let stop: &'static Stop = Box::leak(Box::default());
        let started = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            stop.request();
        });
        let waited = wait_until_stopped(stop, Duration::from_secs(60)).await;
        assert_eq!(waited, Err(Ended::Stopped));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        // After it, no wait starts.
        assert_eq!(
            wait_until_stopped(stop, Duration::from_millis(1)).await,
            Err(Ended::Stopped)
        );
        // A wait that would end after the operation's timeout does not start; one before it
        // does.
        let deadline = Instant::now() + Duration::from_secs(1);
        let running = Stop::default();
        let waited = until(deadline, wait_until_stopped(&running, Duration::from_secs(5))).await;
        assert_eq!(waited, Err(Ended::Deadline));
        let waited = until(deadline, wait_until_stopped(&running, Duration::from_millis(10))).await;
        assert_eq!(waited, Ok(()));
    }

    #[tokio::test]
    async fn a_server_that_cannot_be_reached_costs_one_budget_then_one_try_per_request() {
        let script = Script::new(Repeat::Idempotent);
        let reachability = Reachability::new();
        let mut errors = Vec::new();
        for _ in 0..100 {
            errors.push(refused().await);
        }
        let (r, _) = script.play(&reachability, errors).await;
        assert_eq!(r.unwrap_err().ended, Ended::Budget);
        assert!(reachability.down());
        let (r, waits) = script.play(&reachability, vec![refused().await]).await;
        let failure = r.unwrap_err();
        assert_eq!((failure.tries, failure.ended), (1, Ended::Unreachable));
        assert!(waits.is_empty());
        // An answer, even an error, shows the server is back.
        let (r, _) = script.play(&reachability, vec![status(404)]).await;
        assert!(r.is_err());
        assert!(!reachability.down());
        let (r, _) = script.play(&reachability, vec![refused().await]).await;
        assert_eq!(r.unwrap(), 2);
    }

    #[test]
    fn a_longer_retry_timeout_gives_the_tries_to_fill_it() {
        assert_eq!(limits_for(0).attempts, LIMITS.attempts);
        let long = limits_for(90_000);
        assert_eq!(long.total_wait, Duration::from_secs(90));
        // Enough tries that the waits, at most 4 s each, reach 90 s.
        assert!(u64::from(long.attempts) * 2 >= 90, "{long:?}");
        assert_eq!(limits_for(5_000).attempts, LIMITS.attempts);
    }

    #[test]
    fn etcd_or_the_server_unavailable_inside_a_refusal_is_tried_again() {
        let refusal = |code: u16, message: &str| {
            kube::Error::Api(Status::failure(message, "Invalid").with_code(code).boxed())
        };
        let allocation = "Service \"ns/web\" is invalid: spec.clusterIPs: Invalid value: [\"\"]: failed to \
                          allocate IP: rpc error: code = Unavailable desc = error reading from server: EOF";
        assert_eq!(classify(&refusal(422, allocation)).0, Attempt::NotProcessed(None));
        let shutting_down = "Service \"ns/web\" is invalid: spec.clusterIPs: Invalid value: [\"\"]: failed \
                             to allocate IP: Post \"https://127.0.0.1:6443/apis/networking.k8s.io/v1/ipaddresses\": \
                             dial tcp 127.0.0.1:6443: connect: connection refused";
        assert_eq!(
            classify(&refusal(422, shutting_down)).0,
            Attempt::NotProcessed(None)
        );
        assert_eq!(
            classify(&refusal(422, "spec.ports: Required value")).0,
            Attempt::Final
        );
    }
}
