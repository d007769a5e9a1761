//! The steps on one object that `kubernetes_manifest` and the typed resources share: the
//! guarded look before a plan, the guarded write and delete, the refresh, the import, and
//! the apply response. Each resource only says where its object lives and how it reads.
//!
//! A guarded write or delete carries the uid and resourceVersion of the object its guard
//! admitted. When the server refuses because the object moved in between, the guard looks
//! once more (the move may be another actor's field, which the guard does not mind) and the
//! call is tried once more; a second refusal ends it with [`GuardError::Moving`]. A refusal
//! after a try whose answer was lost may be that try's own write: when applying the body
//! again would change nothing ([`landed`]), the write is done.
//!
//! An apply's requests retry within the operation's `timeouts` ([`apply`]); the refresh of a
//! `generate_name` create whose outcome was unknown finds the object by its token
//! ([`crate::create`]).

use std::time::{Duration, Instant};

use kube::Client;
use kube_estate::{ApiError, Connection, retry};
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Diagnostic, Diagnostics, ImportResponse, PlanResponse, ReadRequest,
    ReadResponse, Value,
};
use serde_json::Value as Json;

use crate::context::Context;
use crate::create;
use crate::duplicate_keys;
use crate::fields::{Field, attribute_path};
use crate::guard::{self, ATTEMPTS, Check, GuardError};
use crate::objects::{self, Manager, Precondition, Target};
use crate::private_state::PrivateState;
use crate::{strategy, timeouts, tolerations, zero_fields};

/// Any error as the diagnostics a resource call returns.
pub fn diag(e: impl Into<Diagnostic>) -> Diagnostics {
    Diagnostics::from(e.into())
}

/// Refuses a write the guard forbids; warns when it adopts the object.
fn admit(
    check: &Check<'_>,
    live: Option<&Json>,
    seen: &PrivateState,
    out: &mut Diagnostics,
    made_here: bool,
) -> Result<(), Diagnostics> {
    // An object of this estate that appeared while this run went on was made by another apply:
    // not adopted, as a stopped run's leftovers are.
    if check.creating
        && !made_here
        && let Some(object) = live
        && crate::metadata::estate_of(object) == Some(check.estate)
        && let Some(created) = created_during_this_run(object)
    {
        return Err(diag(GuardError::TwoStates {
            object: check.object.clone(),
            estate: check.estate.to_string(),
            created,
        }));
    }
    // What a create of ours whose answer was lost made is no change behind the plan's back.
    let seen = if made_here { &PrivateState::Empty } else { seen };
    if check.decide(live, seen).map_err(diag)? {
        out.push(match live.and_then(crate::metadata::estate_of) {
            Some(_) => guard::adopt_warning(check.object, check.estate),
            None => guard::take_over_warning(check.object, check.estate),
        });
    }
    Ok(())
}

/// The object's creation time, when it was created after this run of the engine began: not by
/// an earlier run that stopped, whose objects are adopted, but by another apply running beside
/// this one. Creation times have whole seconds, and the run's start is known to a few
/// milliseconds: one in the second the run began, or the next, counts as before it. Unknown
/// where the engine's start is (see [`plugin_runtime::engine_run`]).
fn created_during_this_run(live: &Json) -> Option<String> {
    let started = plugin_runtime::engine_run::engine_started()?;
    let started = started.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    let created = live.pointer("/metadata/creationTimestamp")?.as_str()?;
    let at = time::OffsetDateTime::parse(created, &time::format_description::well_known::Rfc3339).ok()?;
    (at.unix_timestamp() > i64::try_from(started).ok()? + 1).then(|| created.to_string())
}

/// A plan's look at the object (through the read cache): guarded against `seen`, the private
/// state of the refresh (empty: none), and recording its own fingerprint for apply.
pub async fn plan_guard(
    ctx: &Context,
    conn: &Connection,
    target: &Target,
    check: &Check<'_>,
    seen: &[u8],
    response: &mut PlanResponse,
) -> Result<(), Diagnostics> {
    let seen = PrivateState::decode(seen).map_err(diag)?;
    let live = ctx
        .cache
        .get(&conn.client, target, &conn.estate)
        .await
        .map_err(diag)?;
    // An object on its way out is no object to adopt: a create waits until it is gone (the
    // replacement's create, planned again at apply while the old Pod terminates).
    let live = live.filter(|o| !(check.creating && being_deleted(o)));
    admit(check, live.as_ref(), &seen, &mut response.diagnostics, false)?;
    // An object in state without the label (another provider's state, an import) gets it now.
    if !check.creating
        && let Some(object) = &live
        && crate::metadata::estate_of(object).is_none()
    {
        response
            .diagnostics
            .push(guard::stamp_warning(check.object, check.estate));
    }
    response.planned_private = guard::fingerprint(live.as_ref(), check.manager, &seen).encode();
    Ok(())
}

/// Whether the API server is deleting the object: its finalizers are still running.
fn being_deleted(live: &Json) -> bool {
    live.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
}

/// Whether the server refused a call because the object moved since it was read: its
/// precondition no longer held ("Operation cannot be fulfilled ...", kube-golden 03, 16), or,
/// for a create (`creating`), any conflict or "already exists": the object appeared in between.
fn moved(e: &kube_estate::ApiError, creating: bool) -> bool {
    match e {
        kube_estate::ApiError::Conflict { message, .. } => {
            creating || message.starts_with("Operation cannot be fulfilled")
        }
        kube_estate::ApiError::AlreadyExists { .. } => creating,
        _ => false,
    }
}

/// One server-side apply of `body` by `manager` to the object at `target`, guarded by `check`
/// against `seen`, the plan's private state.
pub struct GuardedWrite<'a> {
    pub target: &'a Target,
    pub check: &'a Check<'a>,
    pub seen: &'a PrivateState,
    pub body: &'a Json,
    pub manager: Manager<'a>,
    /// The object needs no write (only Terraform's own settings changed): once the guard has
    /// admitted it, the live object is returned as it is.
    pub unchanged: bool,
    /// How long a create waits for an object of its name that is still being deleted (the
    /// delete of a replace whose finalizers are still running).
    pub timeout: Duration,
    /// The resource's fields, to point a refusal at the attribute the API server named
    /// (`None`: a manifest, whose paths are the API's own).
    pub fields: Option<&'static [Field]>,
    /// How many more times a write an admission webhook did not answer is tried (3 s apart,
    /// doubling up to 30 s): `kubectl_manifest`'s `apply_retry_count`, for a webhook that is
    /// still starting (cert-manager's, applied in the same run). Other refusals never are.
    pub webhook_retries: u32,
    /// Fields the object's schema does not declare are left out of the write with a warning,
    /// as client-side apply's server drops them, instead of failing it as server-side apply
    /// does: `kubectl_manifest` without `server_side_apply`.
    pub drop_undeclared: bool,
}

/// The wait before webhook retry `n` (1-based).
fn webhook_backoff(n: u32) -> Duration {
    Duration::from_secs(3u64.saturating_mul(1 << n.saturating_sub(1).min(4)).min(30))
}

/// Writes, to the object exactly as the guard saw it. A create is a POST, never an apply: an
/// object that appeared in between (a neighbour's, perhaps of another estate) makes the server
/// answer "already exists", which brings the guard back to decide about it.
pub async fn guarded_apply(
    ctx: &Context,
    client: &Client,
    write: GuardedWrite<'_>,
    out: &mut Diagnostics,
) -> Result<Json, Diagnostics> {
    let GuardedWrite {
        target,
        check,
        seen,
        body,
        manager,
        unchanged,
        timeout,
        fields,
        webhook_retries,
        drop_undeclared,
    } = write;
    // A create of ours whose answer was lost may have made the object found next.
    let mut made_here = false;
    let (mut attempt, mut webhook_failures) = (0, 0);
    while attempt < ATTEMPTS {
        attempt += 1;
        let mut live = objects::get(client, target).await.map_err(diag)?;
        // An object on its way out is no object to adopt: the create waits until it is gone.
        if check.creating && live.as_ref().is_some_and(being_deleted) {
            objects::wait_gone(client, target, timeout).await.map_err(diag)?;
            live = None;
        }
        let mut warnings = Diagnostics::new();
        admit(check, live.as_ref(), seen, &mut warnings, made_here)?;
        if attempt == 1 && webhook_failures == 0 {
            out.extend(warnings);
        }
        if let Some(live) = live.as_ref().filter(|_| unchanged) {
            return Ok(live.clone());
        }
        let precondition = live.as_ref().and_then(Precondition::of);
        let manager = Manager {
            name: manager.name,
            force: manager.force && precondition.is_some(),
        };
        // An update keeps what the live object holds that means the same as the body.
        let admitted = tolerations::with_admitted(body, live.as_ref());
        let body = admitted.as_ref().unwrap_or(body);
        let aligned = zero_fields::aligned(body, live.as_ref());
        let body = aligned.as_ref().unwrap_or(body);
        // A strategy switch that must first own the block the server defaulted (`strategy`).
        let mut applied = match strategy::bridge(body, live.as_ref()) {
            Some(first) => {
                match objects::apply(client, target, &first, &manager, precondition.as_ref()).await {
                    Ok(bridged) => {
                        let precondition = Precondition::of(&bridged);
                        objects::apply(client, target, body, &manager, precondition.as_ref()).await
                    }
                    failed => failed,
                }
            }
            // A create must not land on an object that appeared since the get.
            None if live.is_none() => objects::create_for_apply(client, target, body, manager.name).await,
            None => objects::apply(client, target, body, &manager, precondition.as_ref()).await,
        };
        // Server-side apply refuses a keyed list holding a key twice; such objects are written
        // another way (see `duplicate_keys`).
        applied = match applied {
            Err(refusal)
                if refusal.is_duplicate_keys()
                    && let Some(p) = precondition.as_ref() =>
            {
                duplicate_keys::write(ctx, client, target, body, &manager, p, refusal).await
            }
            other => other,
        };
        // The server names one such field per refusal.
        let mut left_out = Vec::new();
        while drop_undeclared
            && left_out.len() < MAX_UNDECLARED
            && let Some(fields) = applied.as_ref().err().and_then(ApiError::undeclared_fields)
        {
            left_out.extend(fields);
            let declared = without(body, &left_out);
            applied = objects::apply(client, target, &declared, &manager, precondition.as_ref()).await;
        }
        if !left_out.is_empty() {
            out.push(undeclared_warning(check, &left_out));
        }
        ctx.cache.wrote(target);
        if let Err(e) = &applied
            && e.is_uncertain()
            && moved(e, false)
            && let Some(live) = landed(client, target, body, &manager).await.map_err(diag)?
        {
            applied = Ok(live);
        }
        match applied {
            // A webhook's silence is no move of the object: tried again as asked.
            Err(ApiError::WebhookFailed { .. }) if webhook_failures < webhook_retries => {
                webhook_failures += 1;
                attempt -= 1;
                tokio::time::sleep(webhook_backoff(webhook_failures)).await;
                continue;
            }
            // A create whose answer was lost is looked up again: if it landed, the object is
            // the estate's own, and the guard adopts it.
            Err(e) if live.is_none() && e.is_uncertain() && attempt < ATTEMPTS => {
                made_here = true;
                continue;
            }
            Err(e) if moved(&e, live.is_none()) && attempt < ATTEMPTS => continue,
            Err(e) if moved(&e, false) => break,
            result => return result.map_err(|e| refused(e, fields)),
        }
    }
    Err(diag(GuardError::Moving {
        object: check.object.clone(),
        verb: "write",
    }))
}

/// How many undeclared fields a write leaves out before it gives up (one more try each).
const MAX_UNDECLARED: usize = 32;

/// What a write without the fields its object's schema does not declare says of them.
fn undeclared_warning(check: &Check<'_>, fields: &[Vec<String>]) -> Diagnostic {
    // Sorted: the server names them in no fixed order.
    let mut named: Vec<String> = fields.iter().map(|f| format!("\"{}\"", f.join("."))).collect();
    named.sort();
    Diagnostic::warning(
        format!("{}: unknown fields left out", check.object),
        format!(
            "The schema of {} declares no field {}, so the API server keeps none: the write went \
             ahead without them, as `kubectl apply` does. Remove them from the manifest.",
            check.object,
            named.join(", ")
        ),
    )
}

/// `body` without the fields at `paths` (map keys from the root).
fn without(body: &Json, paths: &[Vec<String>]) -> Json {
    let mut body = body.clone();
    for path in paths {
        if let Some((last, parents)) = path.split_last() {
            let parent = parents
                .iter()
                .try_fold(&mut body, |node, key| node.get_mut(key.as_str()));
            if let Some(map) = parent.and_then(Json::as_object_mut) {
                map.remove(last.as_str());
            }
        }
    }
    body
}

/// A refused write as its diagnostic; an object the API server found invalid points at the
/// attribute it named first, in the summary too (`(at spec[0].scale_target_ref[0].api_version)`),
/// so the user sees what to change in the configuration, not only the API's field path.
fn refused(e: ApiError, fields: Option<&'static [Field]>) -> Diagnostics {
    let at = match (&e, fields) {
        (ApiError::Invalid { causes, .. }, Some(fields)) => causes
            .first()
            .and_then(|(field, _)| attribute_path(fields, field)),
        _ => None,
    };
    let diagnostic = Diagnostic::from(e);
    match at {
        Some(path) => Diagnostic {
            summary: format!("{} (at {path})", diagnostic.summary),
            ..diagnostic
        }
        .at(path)
        .into(),
        None => diagnostic.into(),
    }
}

/// The object at `target` when it already is what applying `body` as `manager` would make of it:
/// a write whose answer was lost, and whose repetition the server refused because the object
/// had moved since its precondition, landed. Asked of the server with a dry run, which
/// defaults and normalizes as the write did; `None` too when the object moves again before the
/// dry run (on a real cluster a new Deployment's controller writes its status meanwhile).
async fn landed(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &Manager<'_>,
) -> Result<Option<Json>, kube_estate::ApiError> {
    let Some(live) = objects::get(client, target).await? else {
        return Ok(None);
    };
    let precondition = Precondition::of(&live);
    let manager = Manager {
        name: manager.name,
        force: manager.force && precondition.is_some(),
    };
    let would = match objects::apply_dry_run(client, target, body, &manager, precondition.as_ref()).await {
        Ok(would) => would,
        // It moved again since this read (a controller writing its status): no telling yet,
        // and the guard's next attempt reads it afresh.
        Err(e) if moved(&e, false) => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok((comparable(&would) == comparable(&live)).then_some(live))
}

/// An object without what a write that changes nothing may still touch: its resourceVersion and
/// the times in its managedFields.
fn comparable(object: &Json) -> Json {
    let mut object = object.clone();
    if let Some(meta) = object.get_mut("metadata").and_then(Json::as_object_mut) {
        meta.remove("resourceVersion");
        for entry in meta
            .get_mut("managedFields")
            .and_then(Json::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(entry) = entry.as_object_mut() {
                entry.remove("time");
            }
        }
    }
    object
}

/// Deletes the object unless another estate owns it or it is not the object the state
/// records (absent: nothing to do), then waits for it to be gone when `wait` says how long.
pub async fn delete(
    ctx: &Context,
    client: &Client,
    target: &Target,
    check: &Check<'_>,
    wait: Option<Duration>,
) -> Result<(), Diagnostics> {
    delete_propagating(ctx, client, target, check, wait, false).await
}

/// [`delete`], with foreground propagation when `foreground` (the object's dependents go
/// first; a wait then ends once they and it are gone).
pub async fn delete_propagating(
    ctx: &Context,
    client: &Client,
    target: &Target,
    check: &Check<'_>,
    wait: Option<Duration>,
    foreground: bool,
) -> Result<(), Diagnostics> {
    let mut deleted = false;
    for _ in 0..ATTEMPTS {
        let live = objects::get(client, target).await.map_err(diag)?;
        check.before_delete(live.as_ref()).map_err(diag)?;
        let Some(precondition) = live.as_ref().and_then(Precondition::of) else {
            return Ok(());
        };
        let result = objects::delete_propagating(client, target, &precondition, foreground).await;
        ctx.cache.invalidate();
        match result {
            Err(e) if moved(&e, false) => continue,
            result => {
                result.map_err(diag)?;
                deleted = true;
                break;
            }
        }
    }
    if !deleted {
        return Err(diag(GuardError::Moving {
            object: check.object.clone(),
            verb: "delete",
        }));
    }
    if let Some(timeout) = wait {
        objects::wait_gone(client, target, timeout).await.map_err(diag)?;
    }
    Ok(())
}

/// Applies a plan: `destroy` when it plans no object, else `write`, which is given the plan's
/// private state, adds its warnings to the diagnostics it is given and returns the new state
/// and its private state. On failure the prior state stays. Retries of its requests end before
/// the operation's timeout (`timeouts.create`, `update` or `delete`, 10 minutes when the
/// resource has none).
pub async fn apply(
    req: &ApplyRequest,
    destroy: impl Future<Output = Result<(), Diagnostics>>,
    write: impl AsyncFnOnce(&PrivateState, &mut Diagnostics) -> Result<(Value, PrivateState), Diagnostics>,
) -> ApplyResponse {
    let (operation, settings) = match (req.prior_state.is_null(), req.planned_state.is_null()) {
        (_, true) => ("delete", &req.prior_state),
        (true, false) => ("create", &req.planned_state),
        (false, false) => ("update", &req.planned_state),
    };
    let planned = PrivateState::decode(&req.planned_private);
    // A destroy needs no view of the object: unreadable private state only stops a write.
    let default = planned
        .as_ref()
        .unwrap_or(&PrivateState::Empty)
        .default_timeout(operation);
    let deadline = Instant::now() + timeouts::of(settings, operation, default);
    let mut diagnostics = Diagnostics::new();
    let outcome = retry::until(deadline, async {
        if req.planned_state.is_null() {
            destroy.await.map(|()| (Value::Null, PrivateState::Empty))
        } else {
            write(&planned.map_err(diag)?, &mut diagnostics).await
        }
    })
    .await;
    let (new_state, private) = outcome.unwrap_or_else(|d| {
        diagnostics.extend(d);
        (req.prior_state.clone(), PrivateState::Empty)
    });
    ApplyResponse {
        new_state,
        private: private.encode(),
        diagnostics,
    }
}

/// How a resource refreshes: `manager` is the field manager whose fields the recorded
/// fingerprint covers; `kept_when_gone`, that an object found gone leaves the state as it is
/// (a kind whose object is deleted once it gave its result: `Behaviour::local_once_ready`).
pub struct Refresh<'a> {
    pub manager: &'a str,
    pub kept_when_gone: bool,
}

/// Refreshes the state from the live object (gone: `Null`, unless [`Refresh::kept_when_gone`]).
/// Without a `target` (the state does not name an object) the state stays as it is, unless it
/// is a `generate_name` create whose outcome was unknown: then the object its token finds is
/// the live object.
pub async fn refresh(
    ctx: &Context,
    conn: &Connection,
    target: Option<&Target>,
    Refresh {
        manager,
        kept_when_gone,
    }: Refresh<'_>,
    req: ReadRequest,
    state_of: impl Fn(&Json, &Value) -> Value,
) -> Result<ReadResponse, Diagnostics> {
    // Unreadable private state carries nothing: this refresh records what it sees anew.
    let private = PrivateState::decode(&req.private).unwrap_or_else(|e| {
        tracing::warn!("refreshing {}: ignoring its private state: {e}", req.type_name);
        PrivateState::Empty
    });
    let live = match (target, &private) {
        (Some(target), _) => ctx
            .cache
            .get(&conn.client, target, &conn.estate)
            .await
            .map_err(diag)?,
        (None, PrivateState::PendingCreate(pending)) => create::resolve(&conn.client, pending, &conn.estate)
            .await
            .map_err(diag)?,
        (None, _) => {
            return Ok(ReadResponse {
                new_state: req.current_state,
                private: req.private,
                ..Default::default()
            });
        }
    };
    if live.is_none() && kept_when_gone {
        return Ok(ReadResponse {
            new_state: req.current_state,
            private: req.private,
            ..Default::default()
        });
    }
    let new_state = live
        .as_ref()
        .map(|o| state_of(o, &req.current_state))
        .unwrap_or_default();
    // What this refresh saw: the plan that follows is based on it (see guard::Check::decide).
    let private = match &live {
        Some(object) => guard::fingerprint(Some(object), manager, &private),
        None => PrivateState::Empty,
    };
    Ok(ReadResponse {
        new_state,
        private: private.encode(),
        diagnostics: Diagnostics::new(),
    })
}

/// The private data of a plan made without the cluster: the last refresh's view of an object in
/// state, or "absent" for a create, so apply refuses what no longer matches (an object that
/// appeared meanwhile under another estate's label, or changed since the state was saved).
pub fn offline_private(prior_private: &[u8], creating: bool) -> Vec<u8> {
    if creating {
        PrivateState::Absent.encode()
    } else {
        prior_private.to_vec()
    }
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
    Ok(ImportResponse::one(type_name, state_of(&live)))
}
