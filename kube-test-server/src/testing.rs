//! `/_test/...`: endpoints for tests, admin only and outside RBAC.
//!
//! - `GET /_test/requests`: request counters; `DELETE` resets them.
//! - `POST /_test/faults` `{resource, kind: latency|429|500|conflict|drop, count, verb?, latencyMs?}`;
//!   `GET` lists pending faults; `DELETE` clears them.
//! - `POST /_test/users` `{name, groups}` -> `{token}`.

use http::Method;
use serde_json::{Value, json};

use crate::exchange::{Ctx, Reply};
use crate::state::Shared;
use crate::status;
use crate::telemetry::Fault;

pub fn handle(st: &Shared, ctx: &Ctx, path: &str) -> Reply {
    if !ctx.user.is_admin() {
        return status::failure(403, "Forbidden", "test endpoints are for the admin only", None).into();
    }
    let body: Value = serde_json::from_slice(&ctx.body).unwrap_or(Value::Null);
    match (&ctx.method, path.trim_end_matches('/')) {
        (&Method::GET, "requests") => Reply::json(200, st.telemetry.counters()),
        (&Method::DELETE, "requests") => {
            st.telemetry.reset_counters();
            Reply::json(200, json!({}))
        }
        (&Method::GET, "faults") => Reply::json(200, st.telemetry.faults()),
        (&Method::DELETE, "faults") => {
            st.telemetry.clear_faults();
            Reply::json(200, json!({}))
        }
        (&Method::POST, "faults") => match serde_json::from_value::<Fault>(body) {
            Ok(f) => {
                st.telemetry.add_fault(f);
                Reply::json(201, st.telemetry.faults())
            }
            Err(e) => status::bad_request(&format!("invalid fault: {e}")).into(),
        },
        (&Method::POST, "users") => {
            let Some(name) = body["name"].as_str() else {
                return status::bad_request("invalid user: name is required").into();
            };
            let groups: Vec<String> = body["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|g| g.as_str().map(String::from))
                .collect();
            Reply::json(201, json!({"token": st.auth.add_user(name, &groups)}))
        }
        _ => Reply::text(404, "404 page not found\n"),
    }
}
