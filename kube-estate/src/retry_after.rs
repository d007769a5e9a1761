//! A `Retry-After` header, carried into the Status body that the client turns into an error.
//!
//! The client keeps only an error answer's body (a `Status`), and [`crate::retry`] reads the
//! server's hint from its `details.retryAfterSeconds`. kube-apiserver sends both, but proxies and
//! gateways in front of it often send only the header, and often a body that is no Status at all.
//! This layer, the outermost of the client's stack, writes the header's value into the body
//! (making a Status of a plain-text body, its text as the message) when the body does not give
//! one already.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{Response, header};
use http_body_util::{BodyExt, Full};
use kube::client::{Body, DynBody};
use serde_json::{Value, json};
use tower::{BoxError, Layer, Service};

/// The layer for `kube::client::ClientBuilder::with_layer`.
#[derive(Clone, Copy, Default)]
pub struct RetryAfterLayer;

impl<S> Layer<S> for RetryAfterLayer {
    type Service = RetryAfter<S>;

    fn layer(&self, inner: S) -> RetryAfter<S> {
        RetryAfter(inner)
    }
}

#[derive(Clone)]
pub struct RetryAfter<S>(S);

type Answer = Response<Box<DynBody>>;

impl<S> Service<http::Request<Body>> for RetryAfter<S>
where
    S: Service<http::Request<Body>, Response = Answer, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Answer;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let answer = self.0.call(request);
        Box::pin(async move {
            let answer = answer.await?;
            match hint(&answer) {
                Some(seconds) => with_hint(answer, seconds).await,
                None => Ok(answer),
            }
        })
    }
}

/// The seconds an error answer's `Retry-After` header asks for: delta-seconds, or an HTTP date
/// (at least 1 s then, as a date in the past still asks for a retry).
fn hint(answer: &Answer) -> Option<u32> {
    if !(answer.status().is_client_error() || answer.status().is_server_error()) {
        return None;
    }
    let text = answer.headers().get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u32>() {
        return Some(seconds);
    }
    let at = httpdate::parse_http_date(text).ok()?;
    let ahead = at.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO);
    Some(u32::try_from(ahead.as_secs()).unwrap_or(u32::MAX).max(1))
}

/// `answer` with its body a Status that carries `seconds` as `details.retryAfterSeconds`
/// unless it gives a hint already.
async fn with_hint(answer: Answer, seconds: u32) -> Result<Answer, BoxError> {
    rewritten(answer, |status| {
        let details = &mut status["details"];
        if !details.is_object() {
            *details = json!({});
        }
        if details["retryAfterSeconds"].as_u64().unwrap_or(0) == 0 {
            details["retryAfterSeconds"] = json!(seconds);
        }
    })
    .await
}

/// `answer` with its body the Status it is, or one made of its text (as its message), changed
/// by `change`: the client keeps only an error answer's Status.
pub(crate) async fn rewritten(answer: Answer, change: impl FnOnce(&mut Value)) -> Result<Answer, BoxError> {
    let (mut parts, body) = answer.into_parts();
    let bytes = body.collect().await?.to_bytes();
    let mut status = match serde_json::from_slice::<Value>(&bytes) {
        Ok(status @ Value::Object(_)) if status["kind"] == "Status" => status,
        _ => json!({
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": String::from_utf8_lossy(&bytes).trim(),
            "reason": parts.status.canonical_reason().unwrap_or_default().replace(' ', ""),
            "code": parts.status.as_u16(),
        }),
    };
    change(&mut status);
    let body = Full::new(Bytes::from(status.to_string())).map_err(|never| -> BoxError { match never {} });
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(Response::from_parts(parts, Box::new(body) as Box<DynBody>))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(code: u16, retry_after: Option<&str>, body: &str) -> Answer {
        let mut builder = Response::builder().status(code);
        if let Some(value) = retry_after {
            builder = builder.header(header::RETRY_AFTER, value);
        }
        let body = Full::new(Bytes::from(body.to_string())).map_err(|never| -> BoxError { match never {} });
        builder.body(Box::new(body) as Box<DynBody>).unwrap()
    }

    async fn status_of(answer: Answer) -> kube::core::Status {
        let bytes = answer.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn the_header_goes_into_a_plain_text_body() {
        let a = answer(429, Some("7"), "Too many requests, slow down\n");
        assert_eq!(hint(&a), Some(7));
        let status = status_of(with_hint(a, 7).await.unwrap()).await;
        assert_eq!(status.code, 429);
        assert_eq!(status.message, "Too many requests, slow down");
        assert_eq!(status.details.unwrap().retry_after_seconds, 7);
    }

    #[tokio::test]
    async fn the_header_goes_into_a_status_body_without_a_hint_only() {
        let body = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"busy","reason":"ServiceUnavailable","code":503}"#;
        let status = status_of(with_hint(answer(503, Some("2"), body), 2).await.unwrap()).await;
        assert_eq!((status.message.as_str(), status.code), ("busy", 503));
        assert_eq!(status.details.unwrap().retry_after_seconds, 2);
        // The body's own hint stands.
        let body = r#"{"kind":"Status","status":"Failure","code":429,"details":{"retryAfterSeconds":5}}"#;
        let status = status_of(with_hint(answer(429, Some("1"), body), 1).await.unwrap()).await;
        assert_eq!(status.details.unwrap().retry_after_seconds, 5);
    }

    #[test]
    fn hints_come_from_seconds_or_a_date_and_only_on_errors() {
        assert_eq!(hint(&answer(200, Some("3"), "")), None);
        assert_eq!(hint(&answer(429, None, "")), None);
        assert_eq!(hint(&answer(429, Some("soon"), "")), None);
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(61));
        let seconds = hint(&answer(503, Some(&in_a_minute), "")).unwrap();
        assert!((59..=61).contains(&seconds), "{seconds}");
        let past = httpdate::fmt_http_date(SystemTime::UNIX_EPOCH);
        assert_eq!(hint(&answer(503, Some(&past), "")), Some(1));
    }
}
