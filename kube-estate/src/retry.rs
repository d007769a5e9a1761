//! Retries for an overloaded or failing API server: 429 and 5xx answers are tried again
//! with exponential backoff (or the server's Retry-After hint), a bounded number of times
//! within a bounded time, so a plan never hangs on a sick cluster.
//!
//! Only a request that may safely be sent twice is retried on a 5xx ([`with_retry`]): a 500
//! can come after the server acted. A request that is not idempotent (a create whose name the
//! server picks from `generateName`) is retried only on 429, which the server answers before
//! doing anything ([`with_retry_unprocessed`]).
//!
//! The client is built with kube's own retry layer off, so this is the one retry policy.

use std::future::Future;
use std::time::Duration;

/// At most this many calls in all.
const MAX_ATTEMPTS: u32 = 5;
/// First wait; each next wait doubles.
const FIRST_DELAY: Duration = Duration::from_millis(200);
/// A server's Retry-After hint is honoured up to this long.
const MAX_DELAY: Duration = Duration::from_secs(4);
/// Total time spent waiting, over all retries.
const MAX_TOTAL_WAIT: Duration = Duration::from_secs(10);

/// Runs an idempotent `op` until it succeeds, fails with an error not worth retrying, or the
/// budget of attempts and waiting time is spent; the last error is returned.
pub async fn with_retry<T, F, Fut>(op: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    retry(op, retry_hint, tokio::time::sleep).await
}

/// Runs `op`, which must not run twice (a `generateName` create), retrying only the answers
/// that prove the server did nothing (429).
pub async fn with_retry_unprocessed<T, F, Fut>(op: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    retry(
        op,
        |err| match err {
            kube::Error::Api(status) if status.code == 429 => retry_hint(err),
            _ => None,
        },
        tokio::time::sleep,
    )
    .await
}

/// The loop, with the wait passed in so that the tests count the delays instead of sleeping
/// (and need no paused tokio clock, whose `test-util` feature would build tokio twice).
async fn retry<T, F, Fut, S, Wait>(
    mut op: F,
    retry_hint: impl Fn(&kube::Error) -> Option<Option<Duration>>,
    mut sleep: S,
) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
    S: FnMut(Duration) -> Wait,
    Wait: Future<Output = ()>,
{
    let mut waited = Duration::ZERO;
    let mut attempt = 1;
    loop {
        let err = match op().await {
            Ok(v) => return Ok(v),
            Err(err) => err,
        };
        let Some(hint) = retry_hint(&err) else {
            return Err(err);
        };
        let delay = hint
            .unwrap_or_else(|| FIRST_DELAY * 2u32.pow(attempt - 1))
            .min(MAX_DELAY);
        if attempt >= MAX_ATTEMPTS || waited + delay > MAX_TOTAL_WAIT {
            return Err(err);
        }
        tracing::debug!(
            attempt,
            ?delay,
            "retrying Kubernetes API call after {}",
            status_code(&err)
        );
        sleep(delay).await;
        waited += delay;
        attempt += 1;
    }
}

/// `None` when the error is final; `Some(hint)` when it is worth retrying, with the
/// server's Retry-After (`details.retryAfterSeconds`) when it gave one.
fn retry_hint(err: &kube::Error) -> Option<Option<Duration>> {
    match err {
        kube::Error::Api(status) if status.code == 429 || (500..=599).contains(&status.code) => Some(
            status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                .map(|s| Duration::from_secs(s.into())),
        ),
        _ => None,
    }
}

fn status_code(err: &kube::Error) -> u16 {
    match err {
        kube::Error::Api(status) => status.code,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::future::ready;
    use std::sync::atomic::{AtomicU32, Ordering};

    use kube::core::Status;
    use kube::core::response::StatusDetails;

    use super::*;

    fn status(code: u16) -> kube::Error {
        kube::Error::Api(Status::failure("x", "").with_code(code).boxed())
    }

    /// `retry` with `hint`, its waits added up instead of slept: the result and the total wait.
    async fn timed<T, F, Fut>(
        op: F,
        hint: impl Fn(&kube::Error) -> Option<Option<Duration>>,
    ) -> (Result<T, kube::Error>, Duration)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        let waited = Cell::new(Duration::ZERO);
        let result = retry(op, hint, |delay| {
            waited.set(waited.get() + delay);
            ready(())
        })
        .await;
        (result, waited.get())
    }

    /// A fake call failing with `code` for the first `failures` calls: the result, the number
    /// of calls and the total wait.
    async fn run(code: u16, failures: u32) -> (Result<u32, kube::Error>, u32, Duration) {
        let calls = AtomicU32::new(0);
        let (result, waited) = timed(
            || {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                async move { if n <= failures { Err(status(code)) } else { Ok(n) } }
            },
            retry_hint,
        )
        .await;
        (result, calls.load(Ordering::SeqCst), waited)
    }

    #[tokio::test]
    async fn retries_throttling_and_server_errors_until_success() {
        let (r, calls, _) = run(429, 2).await;
        assert_eq!(r.unwrap(), 3);
        assert_eq!(calls, 3);
        let (r, calls, _) = run(503, 4).await;
        assert_eq!(r.unwrap(), 5);
        assert_eq!(calls, 5);
    }

    #[tokio::test]
    async fn gives_up_after_five_attempts() {
        let (r, calls, waited) = run(500, 100).await;
        assert!(matches!(r, Err(kube::Error::Api(s)) if s.code == 500));
        assert_eq!(calls, MAX_ATTEMPTS);
        // 200 + 400 + 800 + 1600 ms of backoff.
        assert_eq!(waited, Duration::from_millis(3000));
    }

    #[tokio::test]
    async fn a_request_that_must_not_run_twice_is_retried_on_429_only() {
        for (code, expected_calls) in [(500, 1), (503, 1), (429, 2)] {
            let calls = AtomicU32::new(0);
            let r = with_retry_unprocessed(|| {
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                async move { if n <= 1 { Err(status(code)) } else { Ok(n) } }
            })
            .await;
            assert_eq!(calls.load(Ordering::SeqCst), expected_calls, "{code}");
            assert_eq!(r.is_ok(), code == 429, "{code}");
        }
    }

    #[tokio::test]
    async fn client_errors_are_not_retried() {
        for code in [400, 403, 404, 409, 422] {
            let (r, calls, waited) = run(code, 100).await;
            assert!(r.is_err());
            assert_eq!(calls, 1, "{code}");
            assert_eq!(waited, Duration::ZERO, "{code}");
        }
    }

    #[tokio::test]
    async fn honours_retry_after_within_the_budget() {
        let calls = AtomicU32::new(0);
        let (r, waited): (Result<(), kube::Error>, _) = timed(
            || {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    let details = StatusDetails {
                        name: String::new(),
                        group: String::new(),
                        kind: String::new(),
                        uid: String::new(),
                        causes: vec![],
                        retry_after_seconds: 3,
                    };
                    Err(kube::Error::Api(
                        Status::failure("slow down", "TooManyRequests")
                            .with_code(429)
                            .with_details(details)
                            .boxed(),
                    ))
                }
            },
            retry_hint,
        )
        .await;
        assert!(r.is_err());
        // 3 s waits: three fit in the 10 s budget, a fourth would not.
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(waited, Duration::from_secs(9));
    }
}
