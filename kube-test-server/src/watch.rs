//! Watches: a newline-delimited stream of `{"type", "object"}` events that closes after
//! `timeoutSeconds` (capped, so a forgotten watch ends soon in tests).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::StreamBody;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Frame;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::exchange::{Body, Reply};
use crate::handlers::Call;
use crate::kinds;
use crate::resources::ResourceType;
use crate::semantics::Selectors;
use crate::status::{self, ApiError};
use crate::store::{Event, EventType};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// What a watch passes through.
struct Filter {
    key: String,
    namespace: Option<String>,
    selectors: Selectors,
    rt: ResourceType,
    version: String,
}

impl Filter {
    fn accepts(&self, e: &Event) -> bool {
        e.key == self.key
            && self.namespace.as_ref().is_none_or(|ns| *ns == e.namespace)
            && self.selectors.matches(&e.object)
    }

    fn line(&self, kind: EventType, obj: &Value) -> Bytes {
        event_line(kind, kinds::present(&self.rt, &self.version, obj))
    }
}

/// One line of the stream: `{"type":...,"object":...}` and a newline.
fn event_line(kind: EventType, object: Value) -> Bytes {
    let mut text = json!({"type": kind, "object": object}).to_string();
    text.push('\n');
    Bytes::from(text)
}

struct WatchState {
    pending: VecDeque<Bytes>,
    rx: broadcast::Receiver<Event>,
    deadline: Instant,
    filter: Filter,
}

pub fn serve(call: &Call) -> Result<Reply, ApiError> {
    let q = &call.ctx.query;
    let selectors = call.selectors()?;
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_TIMEOUT)
        .min(MAX_TIMEOUT);
    let filter = Filter {
        key: call.rt.key(),
        namespace: (call.rt.namespaced && !call.namespace.is_empty()).then(|| call.namespace.clone()),
        selectors,
        rt: call.rt,
        version: call.version.clone(),
    };
    // A watch-list (client-go's streaming list) starts from the current state whatever its
    // resourceVersion, and ends the initial events with a bookmark.
    let initial_events = q.get("sendInitialEvents") == Some("true");
    let from: Option<u64> = match q.get("resourceVersion") {
        _ if initial_events => None,
        None | Some("" | "0") => None,
        Some(rv) => Some(
            rv.parse()
                .map_err(|_| status::bad_request(&format!("invalid resource version: {rv}")))?,
        ),
    };
    let store = call.st.store();
    let mut pending = VecDeque::new();
    let rx = match from {
        None => {
            for obj in store.list(&filter.key, filter.namespace.as_deref()) {
                if filter.selectors.matches(obj) {
                    pending.push_back(filter.line(EventType::Added, obj));
                }
            }
            if initial_events {
                let bookmark = json!({
                    "kind": call.rt.kind,
                    "apiVersion": call.rt.api_version(&call.version),
                    "metadata": {
                        "resourceVersion": store.current_rv().to_string(),
                        "annotations": {"k8s.io/initial-events-end": "true"},
                    },
                });
                pending.push_back(event_line(EventType::Bookmark, bookmark));
            }
            store.watch_from(store.current_rv()).1
        }
        Some(rv) => {
            let (past, rx) = store.watch_from(rv);
            let past = past.ok_or_else(|| {
                status::failure(
                    410,
                    "Expired",
                    &format!("too old resource version: {rv} ({})", store.current_rv()),
                    None,
                )
            })?;
            for e in past.iter().filter(|e| filter.accepts(e)) {
                pending.push_back(filter.line(e.kind, &e.object));
            }
            rx
        }
    };
    drop(store);
    let state = WatchState {
        pending,
        rx,
        deadline: Instant::now() + timeout,
        filter,
    };
    let stream = futures::stream::unfold(state, |mut s| async move {
        if let Some(line) = s.pending.pop_front() {
            return Some((Ok::<_, Infallible>(Frame::data(line)), s));
        }
        loop {
            match tokio::time::timeout_at(s.deadline, s.rx.recv()).await {
                Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => return None,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                Ok(Ok(e)) if s.filter.accepts(&e) => {
                    let line = s.filter.line(e.kind, &e.object);
                    return Some((Ok(Frame::data(line)), s));
                }
                Ok(Ok(_)) => continue,
            }
        }
    });
    let mut reply = Reply::json(200, Value::Null);
    reply.body = Body::Stream(UnsyncBoxBody::new(StreamBody::new(stream)));
    Ok(reply)
}
