//! The client's credentials on every request, and what a refusal of them says.
//!
//! A renewable [`Credential`] (an exec plugin's token, a token file) puts its header on each
//! request; when the API server answers 401, it is renewed once and the request sent once
//! more, as client-go does. A 401 that stands (the renewed token refused too, or a credential
//! that cannot be renewed) reaches the client with the identity named in its Status, so the
//! error says whose credential was refused; [`crate::retry`] never tries it again.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode, header};
use kube::client::{Body, DynBody};
use serde_json::{Value, json};
use tower::buffer::Buffer;
use tower::{BoxError, Layer, Service, ServiceExt};

use crate::credential::Credential;
use crate::retry_after::rewritten;

type Answer = Response<Box<DynBody>>;

/// The layer for `kube::client::ClientBuilder::with_layer`.
#[derive(Clone)]
pub(crate) struct AuthorizedLayer {
    /// The renewable credential, `None` where the client's own settings authenticate.
    pub credential: Option<Arc<Credential>>,
    /// The identity a refusal names.
    pub identity: String,
}

impl<S> Layer<S> for AuthorizedLayer
where
    S: Service<Request<Body>, Response = Answer, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    type Service = Authorized<S>;

    fn layer(&self, inner: S) -> Authorized<S> {
        Authorized {
            // Cloneable, so a refused request can be sent again from its future.
            inner: Buffer::new(inner, 1024),
            credential: self.credential.clone(),
            identity: Arc::from(self.identity.as_str()),
        }
    }
}

pub(crate) struct Authorized<S: Service<Request<Body>>> {
    inner: Buffer<Request<Body>, S::Future>,
    credential: Option<Arc<Credential>>,
    identity: Arc<str>,
}

impl<S> Service<Request<Body>> for Authorized<S>
where
    S: Service<Request<Body>, Response = Answer, Error = BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Answer;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Answer, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let inner = self.inner.clone();
        let first = std::mem::replace(&mut self.inner, inner);
        let again = self.inner.clone();
        let credential = self.credential.clone();
        let identity = self.identity.clone();
        Box::pin(async move {
            let Some(credential) = credential else {
                return refused_names(first.oneshot(request).await?, &identity).await;
            };
            let copy = copy_of(&request);
            let used = credential.header().await?;
            request.headers_mut().insert(header::AUTHORIZATION, used.clone());
            let answer = first.oneshot(request).await?;
            if answer.status() != StatusCode::UNAUTHORIZED {
                return Ok(answer);
            }
            let (Some(mut retry), Some(renewed)) = (copy, credential.renewed_after(&used).await?) else {
                return refused_names(answer, &identity).await;
            };
            retry.headers_mut().insert(header::AUTHORIZATION, renewed);
            let answer = again.oneshot(retry).await?;
            refused_names(answer, &identity).await
        })
    }
}

/// The request again, when its body can be sent twice (the client's always can).
fn copy_of(request: &Request<Body>) -> Option<Request<Body>> {
    let body = request.body().try_clone()?;
    let mut copy = Request::new(body);
    *copy.method_mut() = request.method().clone();
    *copy.uri_mut() = request.uri().clone();
    *copy.version_mut() = request.version();
    *copy.headers_mut() = request.headers().clone();
    Some(copy)
}

/// `answer`, its Status naming `identity` when it is a 401.
async fn refused_names(answer: Answer, identity: &str) -> Result<Answer, BoxError> {
    if answer.status() != StatusCode::UNAUTHORIZED {
        return Ok(answer);
    }
    rewritten(answer, |status| naming(status, identity)).await
}

/// The 401's Status with a message that names the refused identity.
fn naming(status: &mut Value, identity: &str) {
    let message = status["message"].as_str().unwrap_or("Unauthorized").to_string();
    status["message"] = json!(format!("{message}: the API server refused {identity}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};

    async fn refused(body: &str, identity: &str) -> Value {
        let body = Full::new(Bytes::from(body.to_string())).map_err(|never| -> BoxError { match never {} });
        let answer = Response::builder()
            .status(401)
            .body(Box::new(body) as Box<DynBody>)
            .unwrap();
        let bytes = refused_names(answer, identity)
            .await
            .unwrap()
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn a_refusal_names_the_identity() {
        let status = refused(
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}"#,
            "the token of the exec plugin `get-token`",
        )
        .await;
        assert_eq!(
            status["message"],
            "Unauthorized: the API server refused the token of the exec plugin `get-token`"
        );
        let plain = refused("go away\n", "kubeconfig user `ci`").await;
        assert_eq!(
            plain["message"],
            "go away: the API server refused kubeconfig user `ci`"
        );
        assert_eq!(plain["code"], 401);
    }
}
