//! The steps on one object that `kubernetes_manifest` and the typed resources share: the
//! guarded look before a plan or a write, the guarded delete, the refresh, the import, and
//! the apply response. Each resource only says where its object lives and how it reads.

use std::time::Duration;

use kube::Client;
use kube_estate::Connection;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Diagnostic, Diagnostics, ImportResponse, ImportedResource, PlanResponse,
    ReadRequest, ReadResponse, Value,
};
use serde_json::Value as Json;

use crate::context::Context;
use crate::guard::{self, Check};
use crate::objects::{self, Target};

/// Any error as the diagnostics a resource call returns.
pub fn diag(e: impl Into<Diagnostic>) -> Diagnostics {
    Diagnostics::from(e.into())
}

/// Refuses a write the guard forbids; warns when it adopts the object.
fn admit(
    check: &Check<'_>,
    live: Option<&Json>,
    seen: &[u8],
    out: &mut Diagnostics,
) -> Result<(), Diagnostics> {
    if check.decide(live, seen).map_err(diag)? {
        out.push(guard::adopt_warning(check.object, check.estate));
    }
    Ok(())
}

/// A plan's look at the object (through the read cache): guarded against the refresh's
/// fingerprint `seen`, and recording its own fingerprint for apply.
pub async fn plan_guard(
    ctx: &Context,
    conn: &Connection,
    target: &Target,
    check: &Check<'_>,
    seen: &[u8],
    response: &mut PlanResponse,
) -> Result<(), Diagnostics> {
    let live = ctx
        .cache
        .get(&conn.client, target, &conn.estate.selector())
        .await
        .map_err(diag)?;
    admit(check, live.as_ref(), seen, &mut response.diagnostics)?;
    response.planned_private = guard::fingerprint(live.as_ref());
    Ok(())
}

/// A write's fresh look at the object, guarded against the plan's fingerprint `seen`.
pub async fn write_guard(
    client: &Client,
    target: &Target,
    check: &Check<'_>,
    seen: &[u8],
    out: &mut Diagnostics,
) -> Result<(), Diagnostics> {
    let live = objects::get(client, target).await.map_err(diag)?;
    admit(check, live.as_ref(), seen, out)
}

/// Deletes the object unless another estate owns it (absent: nothing to do), then waits
/// for it to be gone when `wait` says how long.
pub async fn delete(
    ctx: &Context,
    client: &Client,
    target: &Target,
    check: &Check<'_>,
    wait: Option<Duration>,
) -> Result<(), Diagnostics> {
    let live = objects::get(client, target).await.map_err(diag)?;
    check.before_delete(live.as_ref()).map_err(diag)?;
    if live.is_none() {
        return Ok(());
    }
    let deleted = objects::delete(client, target).await;
    ctx.cache.invalidate();
    deleted.map_err(diag)?;
    if let Some(timeout) = wait {
        objects::wait_gone(client, target, timeout).await.map_err(diag)?;
    }
    Ok(())
}

/// Applies a plan: `destroy` when it plans no object, else `write` (which adds its warnings
/// to the diagnostics it is given). On failure the prior state stays.
pub async fn apply(
    req: &ApplyRequest,
    destroy: impl Future<Output = Result<(), Diagnostics>>,
    write: impl AsyncFnOnce(&mut Diagnostics) -> Result<(Value, Vec<u8>), Diagnostics>,
) -> ApplyResponse {
    let mut diagnostics = Diagnostics::new();
    let outcome = if req.planned_state.is_null() {
        destroy.await.map(|()| (Value::Null, Vec::new()))
    } else {
        write(&mut diagnostics).await
    };
    let (new_state, private) = outcome.unwrap_or_else(|d| {
        diagnostics.extend(d);
        (req.prior_state.clone(), Vec::new())
    });
    ApplyResponse {
        new_state,
        private,
        diagnostics,
    }
}

/// Refreshes the state from the live object (gone: `Null`). Without a `target` (the state
/// does not name an object) the state stays as it is.
pub async fn refresh(
    ctx: &Context,
    conn: &Connection,
    target: Option<&Target>,
    req: ReadRequest,
    state_of: impl Fn(&Json, &Value) -> Value,
) -> Result<ReadResponse, Diagnostics> {
    let Some(target) = target else {
        return Ok(ReadResponse {
            new_state: req.current_state,
            private: req.private,
            ..Default::default()
        });
    };
    let live = ctx
        .cache
        .get(&conn.client, target, &conn.estate.selector())
        .await
        .map_err(diag)?;
    let new_state = live
        .as_ref()
        .map(|o| state_of(o, &req.current_state))
        .unwrap_or_default();
    // What this refresh saw: the plan that follows is based on it (see guard::Check::decide).
    let private = live
        .as_ref()
        .map(|o| guard::fingerprint(Some(o)))
        .unwrap_or_default();
    Ok(ReadResponse {
        new_state,
        private,
        diagnostics: Diagnostics::new(),
    })
}

/// Imports the object, which must exist, as the state `state_of` makes of it.
pub async fn import(
    client: &Client,
    target: &Target,
    type_name: String,
    state_of: impl FnOnce(&Json) -> Value,
) -> Result<ImportResponse, Diagnostics> {
    let Some(live) = objects::get(client, target).await.map_err(diag)? else {
        return Err(diag(Diagnostic::error(
            "Cannot import an object that does not exist",
            format!("{} was not found in the cluster.", target.object_ref()),
        )));
    };
    Ok(ImportResponse {
        imported: vec![ImportedResource {
            type_name,
            state: state_of(&live),
            private: Vec::new(),
        }],
        diagnostics: Diagnostics::new(),
    })
}
