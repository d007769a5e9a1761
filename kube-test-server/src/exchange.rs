//! One exchange as the handlers see it: what they need of the HTTP request ([`Ctx`]) and the
//! answer they give ([`Reply`]) before it is written.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderMap, Method, Response, StatusCode};
use http_body_util::Full;
use http_body_util::combinators::UnsyncBoxBody;
use serde_json::Value;

use crate::auth::UserInfo;
use crate::request::Query;
use crate::status::ApiError;

pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// Everything a handler needs from the HTTP request.
pub struct Ctx {
    pub method: Method,
    pub query: Query,
    pub headers: HeaderMap,
    pub body: Bytes,
    pub user: UserInfo,
}

impl Ctx {
    fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The media type of the body, without parameters.
    pub fn content_type(&self) -> &str {
        self.header("content-type").split(';').next().unwrap_or("").trim()
    }

    pub fn user_agent(&self) -> &str {
        self.header("user-agent")
    }

    /// `fieldManager`, or the User-Agent's product name as the apiserver derives it.
    pub fn manager(&self) -> String {
        match self.query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => self.user_agent().split('/').next().unwrap_or("").to_string(),
        }
    }

    pub fn accept(&self) -> &str {
        self.header("accept")
    }
}

pub enum Body {
    Json(Value),
    Text(String),
    Stream(ResponseBody),
}

/// A response before it is written.
pub struct Reply {
    pub code: u16,
    pub content_type: String,
    pub body: Body,
    pub warnings: Vec<String>,
}

impl Reply {
    pub fn json(code: u16, value: Value) -> Self {
        Self {
            code,
            content_type: "application/json".into(),
            body: Body::Json(value),
            warnings: Vec::new(),
        }
    }

    pub fn text(code: u16, text: &str) -> Self {
        Self {
            code,
            content_type: "text/plain; charset=utf-8".into(),
            body: Body::Text(text.into()),
            warnings: Vec::new(),
        }
    }

    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    pub fn page_not_found() -> Self {
        Self::text(404, "404 page not found\n")
    }
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply::json(e.code, e.body)
    }
}

/// The HTTP response of a reply: its status, content type, `Retry-After` for a 429, and its
/// warnings as `Warning: 299` headers.
pub fn render(reply: Reply) -> Response<ResponseBody> {
    let body = match reply.body {
        Body::Json(v) => full(serde_json::to_vec(&v).expect("JSON values serialise")),
        Body::Text(t) => full(t.into_bytes()),
        Body::Stream(s) => s,
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::from_u16(reply.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = resp.headers_mut();
    if let Ok(ct) = reply.content_type.parse() {
        headers.insert(http::header::CONTENT_TYPE, ct);
    }
    if reply.code == 429 {
        headers.insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    }
    for w in reply.warnings {
        let escaped = w.replace('\\', "\\\\").replace('"', "\\\"");
        if let Ok(v) = format!("299 - \"{escaped}\"").parse() {
            headers.append("warning", v);
        }
    }
    resp
}

pub fn full(bytes: Vec<u8>) -> ResponseBody {
    UnsyncBoxBody::new(Full::new(Bytes::from(bytes)))
}
