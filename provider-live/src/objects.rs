//! Kubernetes API access for single objects: get, server-side apply, create (for
//! `generate_name`), merge patch, delete, list, and polling one object until it is as
//! awaited. Writes to an existing object carry a [`Precondition`] (the uid and
//! resourceVersion its guard checked), so an object changed or replaced in between is never
//! overwritten or deleted. Idempotent calls are retried on connection errors, 429 and 5xx; the
//! `generateName` create only when the server provably did nothing ([`crate::create`] finds out
//! what it did otherwise). Every failure is a typed [`ApiError`] naming the object (or the
//! collection and selector) and the verb.

use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
};
use kube_estate::{ApiError, Failure, ObjectRef, with_retry, with_retry_unprocessed};
use serde_json::Value as Json;

use crate::timeouts::Timeout;
use kube_estate::Stop;

/// The field manager of every typed resource's writes.
pub const FIELD_MANAGER: &str = "tofu-live";

/// One object's address in the API.
#[derive(Clone, Debug)]
pub struct Target {
    pub resource: ApiResource,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: String,
}

/// How a write treats fields other managers own.
pub struct Manager<'a> {
    pub name: &'a str,
    pub force: bool,
}

/// The object a write or delete was checked against: the server refuses (409) when the object
/// is no longer exactly that one.
#[derive(Clone, Debug, PartialEq)]
pub struct Precondition {
    pub uid: String,
    pub resource_version: String,
}

impl Precondition {
    /// The precondition that `live`, as just read, is still there unchanged.
    pub fn of(live: &Json) -> Option<Precondition> {
        let text = |key: &str| live.pointer(key).and_then(Json::as_str).map(str::to_string);
        Some(Precondition {
            uid: text("/metadata/uid")?,
            resource_version: text("/metadata/resourceVersion")?,
        })
    }
}

impl Target {
    /// Where an object the API returned lives.
    pub fn of(resource: ApiResource, object: &Json) -> Target {
        Target {
            resource,
            namespace: object
                .pointer("/metadata/namespace")
                .and_then(Json::as_str)
                .map(str::to_string),
            name: object
                .pointer("/metadata/name")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string(),
        }
    }

    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef {
            kind: self.resource.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// The import id hashicorp uses: `namespace/name`, or the bare name when cluster-scoped.
    pub fn import_id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }

    fn api(&self, client: &Client) -> Api<DynamicObject> {
        api(client, &self.resource, self.namespace.as_deref())
    }

    fn error(&self, verb: &str) -> impl FnOnce(Failure) -> ApiError + '_ {
        let object = self.object_ref();
        let verb = verb.to_string();
        move |e| ApiError::from_kube(e, &object, &verb)
    }
}

fn api(client: &Client, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

/// Plain JSON of an object, with apiVersion and kind even where the server left them out
/// (list items).
fn to_json(mut object: DynamicObject, resource: &ApiResource) -> Json {
    object.types = Some(kube::api::TypeMeta {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
    });
    serde_json::to_value(object).unwrap_or_default()
}

/// The object, or `None` when it does not exist.
pub async fn get(client: &Client, target: &Target) -> Result<Option<Json>, ApiError> {
    let api = target.api(client);
    let found = with_retry(|| api.get_opt(&target.name))
        .await
        .map_err(target.error("get"))?;
    Ok(found.map(|o| to_json(o, &target.resource)))
}

/// Server-side apply of `body` (a whole object) as `manager`, to the object `precondition`
/// names (`None`: a create).
pub async fn apply(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &Manager<'_>,
    precondition: Option<&Precondition>,
) -> Result<Json, ApiError> {
    send_apply(client, target, body, manager, precondition, false).await
}

/// What [`apply`] would make of the object, without writing it (`dryRun=All`).
pub async fn apply_dry_run(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &Manager<'_>,
    precondition: Option<&Precondition>,
) -> Result<Json, ApiError> {
    send_apply(client, target, body, manager, precondition, true).await
}

async fn send_apply(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &Manager<'_>,
    precondition: Option<&Precondition>,
    dry_run: bool,
) -> Result<Json, ApiError> {
    let api = target.api(client);
    let mut params = PatchParams::apply(manager.name);
    if manager.force {
        params = params.force();
    }
    params.dry_run = dry_run;
    let mut body = body.clone();
    if let (Some(p), Some(meta)) = (
        precondition,
        body.get_mut("metadata").and_then(Json::as_object_mut),
    ) {
        meta.insert("uid".into(), Json::from(p.uid.as_str()));
        meta.insert("resourceVersion".into(), Json::from(p.resource_version.as_str()));
    }
    let patch = Patch::Apply(&body);
    let applied = with_retry(|| api.patch(&target.name, &params, &patch))
        .await
        .map_err(target.error("apply"))?;
    Ok(to_json(applied, &target.resource))
}

/// Creates `body` (used when the server picks the name from `generateName`): one POST, sent
/// again only when the server provably did not act on it. `target` names the object by its
/// `generateName` prefix.
pub async fn create(client: &Client, target: &Target, body: &Json, manager: &str) -> Result<Json, ApiError> {
    // A 5xx or a lost answer may come after the server created the object: sending it again
    // could create a second one under another generated name.
    let named = Target {
        name: format!("{}…", target.name),
        ..target.clone()
    };
    post(client, &named, body, manager).await
}

/// `body` as the client sends it whole (a POST or PUT), and the parameters of that write as
/// field manager `manager`; a body that is no object is `target`'s error.
fn whole_write(
    target: &Target,
    body: &Json,
    manager: &str,
) -> Result<(DynamicObject, PostParams), Box<ApiError>> {
    let object = serde_json::from_value(body.clone()).map_err(|e| ApiError::Other {
        object: target.object_ref(),
        code: 0,
        message: e.to_string(),
    })?;
    let params = PostParams {
        field_manager: Some(manager.to_string()),
        ..PostParams::default()
    };
    Ok((object, params))
}

/// Creates `body` under the name `target` gives it with a POST as field manager `manager`.
/// Sent again only when the server provably did nothing: a repeat after a create that landed
/// would be refused as existing.
pub async fn post(client: &Client, target: &Target, body: &Json, manager: &str) -> Result<Json, ApiError> {
    let api = target.api(client);
    let (object, params) = whole_write(target, body, manager).map_err(|e| *e)?;
    let created = with_retry_unprocessed(|| api.create(&params, &object))
        .await
        .map_err(target.error("create"))?;
    Ok(to_json(created, &target.resource))
}

/// Creates `body` under the name `target` gives it, as `manager`'s server-side apply would, but
/// only where no object of that name exists: a POST, whose fields are then handed to
/// `manager`'s apply ([`handed_to_apply`]). An apply would land on an object a neighbour created
/// after the guard looked (another estate's, under the same field manager) and take it over.
pub async fn create_for_apply(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &str,
) -> Result<Json, ApiError> {
    let created = post(client, target, body, manager).await?;
    Ok(handed_to_apply(client, target, created, body, manager).await)
}

/// The object `created` (by a POST of `body` as `manager`) with the fields `body` sets handed
/// to `manager`'s server-side apply ([`hand_over`]), as an apply creating it would own them:
/// the server's defaults stay nobody's, so another manager may take them over (`kubectl
/// scale`) without a conflict. A later apply can remove what the configuration drops. Should
/// that fail, the object stays as created: it exists, and only such removals are left to
/// another manager's care.
pub async fn handed_to_apply(
    client: &Client,
    target: &Target,
    created: Json,
    body: &Json,
    manager: &str,
) -> Json {
    let named = Target::of(target.resource.clone(), &created);
    match hand_over(client, &named, created.clone(), manager, Some(body)).await {
        Ok(claimed) => claimed,
        Err(e) => {
            tracing::warn!("after creating {}: {e}", named.object_ref());
            created
        }
    }
}

/// How many times a hand-over is tried while the object keeps moving.
const HAND_OVER_TRIES: usize = 5;

/// Hands what a write by `manager` set (those of `body`'s fields, with `body`) to its apply
/// ([`claim_for_apply`]). The object's controller may write it right after (a Deployment's
/// revision annotation, its status), which the hand-over's resourceVersion refuses: the object
/// is read again, and the write's entry, still there, handed over from that.
pub async fn hand_over(
    client: &Client,
    target: &Target,
    written: Json,
    manager: &str,
    body: Option<&Json>,
) -> Result<Json, ApiError> {
    let mut object = written;
    let mut tries = 1;
    loop {
        match claim_for_apply(client, target, &object, manager, body).await {
            Err(ApiError::Conflict { .. }) if tries < HAND_OVER_TRIES => {
                tries += 1;
                object = get(client, target).await?.ok_or_else(|| ApiError::NotFound {
                    object: target.object_ref(),
                })?;
            }
            result => return result,
        }
    }
}

/// Replaces the object with `object` (a PUT as field manager `manager`), which carries the
/// uid and resourceVersion it was checked at: sent again, it is refused rather than repeated.
pub async fn replace(
    client: &Client,
    target: &Target,
    object: &Json,
    manager: &str,
) -> Result<Json, ApiError> {
    let api = target.api(client);
    let (object, params) = whole_write(target, object, manager).map_err(|e| *e)?;
    let replaced = with_retry(|| api.replace(&target.name, &params, &object))
        .await
        .map_err(target.error("update"))?;
    Ok(to_json(replaced, &target.resource))
}

/// Approves a CertificateSigningRequest (its `approval` subresource), as `kubectl certificate
/// approve` does.
pub async fn approve(
    client: &Client,
    target: &Target,
    request: &Json,
    message: &str,
) -> Result<Json, ApiError> {
    let api = target.api(client);
    let mut body = request.clone();
    let condition = serde_json::json!({
        "type": "Approved",
        "status": "True",
        "reason": "AutoApproved",
        "message": message,
    });
    match body
        .pointer_mut("/status/conditions")
        .and_then(Json::as_array_mut)
    {
        Some(conditions) => conditions.push(condition),
        None => body["status"] = serde_json::json!({"conditions": [condition]}),
    }
    let params = PostParams::default();
    let approved = with_retry(|| api.replace_subresource("approval", &target.name, &params, &body))
        .await
        .map_err(target.error("approve"))?;
    Ok(to_json(approved, &target.resource))
}

/// A JSON merge patch (removes keys other managers own, which server-side apply cannot).
pub async fn merge_patch(client: &Client, target: &Target, patch: &Json) -> Result<Json, ApiError> {
    let api = target.api(client);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    let patch = Patch::Merge(patch);
    let patched = with_retry(|| api.patch(&target.name, &params, &patch))
        .await
        .map_err(target.error("patch"))?;
    Ok(to_json(patched, &target.resource))
}

/// Hands the fields a POST create or a PUT set to `manager`'s server-side apply. The write
/// recorded them under an `Update` entry of `manager`, which a later apply by the same manager
/// can neither change nor drop; the entry becomes an `Apply` entry (joined to the one `manager`
/// has, as one manager holds one of each), as kubectl rewrites it when an object moves to
/// server-side apply (a request that sets managedFields keeps them as given).
/// With `body`, only the fields it sets are handed over (see [`handed_to_apply`]).
/// Returns the object as patched, or as written when there is nothing to hand over.
pub async fn claim_for_apply(
    client: &Client,
    target: &Target,
    created: &Json,
    manager: &str,
    body: Option<&Json>,
) -> Result<Json, ApiError> {
    let Some(entries) = created
        .pointer("/metadata/managedFields")
        .and_then(Json::as_array)
    else {
        return Ok(created.clone());
    };
    let ours = |e: &Json| {
        e["manager"] == manager
            && e["operation"] == "Update"
            && e["subresource"].as_str().unwrap_or("").is_empty()
    };
    let Some(update) = entries.iter().position(ours) else {
        return Ok(created.clone());
    };
    let mut entries = entries.clone();
    let mut entry = entries.remove(update);
    // Paths recorded in another version than the body's cannot be matched with it: the entry is
    // handed over whole.
    let same_version = |body: &&Json| body.get("apiVersion") == entry.get("apiVersion");
    if let (Some(body), Some(fields)) = (body.filter(same_version), entry["fieldsV1"].as_object()) {
        entry["fieldsV1"] = Json::Object(crate::ownership::within(fields, body));
    }
    let applied = entries.iter_mut().find(|e| {
        e["manager"] == manager
            && e["operation"] == "Apply"
            && e["subresource"].as_str().unwrap_or("").is_empty()
    });
    match applied {
        Some(applied) => {
            if let (Some(into), Some(fields)) =
                (applied["fieldsV1"].as_object_mut(), entry["fieldsV1"].as_object())
            {
                crate::ownership::merge(into, fields);
            }
        }
        None => {
            entry["operation"] = Json::from("Apply");
            entries.insert(update, entry);
        }
    }
    let patch = serde_json::json!({"metadata": {
        "managedFields": entries,
        "resourceVersion": created.pointer("/metadata/resourceVersion"),
    }});
    merge_patch(client, target, &patch).await
}

/// A JSON merge patch of the object (or of its `subresource`, e.g. `scale`) as field manager
/// `manager`: what the actions write, under managers of their own. A precondition goes in the
/// patch's `metadata` (uid, resourceVersion). Returns what the server answered (for a
/// subresource, its own kind).
pub async fn patch_as(
    client: &Client,
    target: &Target,
    patch: &Json,
    manager: &str,
    subresource: Option<&str>,
) -> Result<Json, ApiError> {
    let api = target.api(client);
    let params = PatchParams {
        field_manager: Some(manager.to_string()),
        ..PatchParams::default()
    };
    let patch = Patch::Merge(patch);
    let patched = match subresource {
        None => with_retry(|| api.patch(&target.name, &params, &patch)).await,
        Some(sub) => with_retry(|| api.patch_subresource(sub, &target.name, &params, &patch)).await,
    }
    .map_err(target.error("patch"))?;
    Ok(match subresource {
        None => to_json(patched, &target.resource),
        Some(_) => serde_json::to_value(patched).unwrap_or_default(),
    })
}

/// Deletes the object `precondition` names with background propagation; an object already
/// gone is fine.
pub async fn delete(client: &Client, target: &Target, precondition: &Precondition) -> Result<(), ApiError> {
    delete_propagating(client, target, precondition, false).await
}

/// [`delete`], with foreground propagation when `foreground`: the object stays, being deleted,
/// until the objects it owns are gone.
pub async fn delete_propagating(
    client: &Client,
    target: &Target,
    precondition: &Precondition,
    foreground: bool,
) -> Result<(), ApiError> {
    let api = target.api(client);
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some(precondition.uid.clone()),
            resource_version: Some(precondition.resource_version.clone()),
        }),
        ..if foreground {
            DeleteParams::foreground()
        } else {
            DeleteParams::background()
        }
    };
    match with_retry(|| api.delete(&target.name, &params)).await {
        Ok(_) => Ok(()),
        Err(Failure {
            error: kube::Error::Api(status),
            ..
        }) if status.is_not_found() => Ok(()),
        Err(e) => Err(target.error("delete")(e)),
    }
}

/// Polls until the object is gone (a namespace finishing its deletion).
pub async fn wait_gone(client: &Client, target: &Target, timeout: Duration) -> Result<(), WaitError> {
    wait_until(client, target, timeout, "be deleted", |live| live.is_none())
        .await
        .map(drop)
}

/// Polls the object (`None`: absent) every 500 ms until `done` says so, or `timeout` passes;
/// `what` says what is awaited. Returns the object as last read.
pub async fn wait_until(
    client: &Client,
    target: &Target,
    timeout: Duration,
    what: &str,
    done: impl Fn(Option<&Json>) -> bool,
) -> Result<Option<Json>, WaitError> {
    let check = |live: Option<&Json>| {
        if done(live) {
            Readiness::Ready
        } else {
            Readiness::Waiting(String::new())
        }
    };
    poll(
        client,
        target,
        None,
        Pace::new(Duration::from_millis(500), timeout),
        what,
        check,
    )
    .await
}

/// What one look at the object found.
pub enum Readiness {
    Ready,
    /// Not yet, and why (shown if the wait times out; may be empty).
    Waiting(String),
    /// Never will be, and why.
    Failed(String),
}

/// How often a poll reads the object, for how long, and what cuts it short.
pub struct Pace {
    pub interval: Duration,
    pub timeout: Duration,
    pub stop: &'static Stop,
}

impl Pace {
    /// Until `timeout`, or until the engine stops this process ([`Stop::process`]).
    pub fn new(interval: Duration, timeout: Duration) -> Pace {
        Pace {
            interval,
            timeout,
            stop: Stop::process(),
        }
    }
}

/// Reads the object (`None`: absent) until `check` finds it ready or failed, or the next read
/// would come after the timeout. `seen` is the object as the caller just read it: checked
/// before the first read. `what` says what is awaited ("finish its rollout"); a timeout names
/// it with the last reason the object was not ready. Returns the object as last read.
pub async fn poll(
    client: &Client,
    target: &Target,
    seen: Option<Json>,
    pace: Pace,
    what: &str,
    check: impl Fn(Option<&Json>) -> Readiness,
) -> Result<Option<Json>, WaitError> {
    let deadline = Instant::now() + pace.timeout;
    let mut live = match seen {
        Some(object) => Some(object),
        None => get(client, target).await?,
    };
    loop {
        let reason = match check(live.as_ref()) {
            Readiness::Ready => return Ok(live),
            Readiness::Failed(reason) => {
                return Err(WaitError::Failed {
                    object: target.object_ref(),
                    reason,
                });
            }
            Readiness::Waiting(reason) => reason,
        };
        if Instant::now() + pace.interval > deadline {
            let what = if reason.is_empty() {
                what.to_string()
            } else {
                format!("{what} ({reason})")
            };
            return Err(WaitError::Timeout(Timeout {
                object: target.object_ref(),
                what,
                after: pace.timeout,
            }));
        }
        tokio::select! {
            () = tokio::time::sleep(pace.interval) => {}
            () = pace.stop.requested() => {
                return Err(WaitError::Stopped {
                    object: target.object_ref(),
                    what: what.to_string(),
                });
            }
        }
        live = get(client, target).await?;
    }
}

/// Why a wait ended without the object being as awaited.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Timeout(#[from] Timeout),
    #[error("{object} failed: {reason}")]
    Failed { object: ObjectRef, reason: String },
    /// The engine was interrupted (Ctrl-C) while `object` was awaited to `what`.
    #[error(
        "the run was interrupted while waiting for {object} to {what}; it was applied, but may not be ready"
    )]
    Stopped { object: ObjectRef, what: String },
}

impl From<WaitError> for plugin_runtime::Diagnostic {
    fn from(e: WaitError) -> Self {
        match e {
            WaitError::Api(e) => e.into(),
            WaitError::Timeout(t) => t.into(),
            WaitError::Failed { ref object, .. } => {
                plugin_runtime::Diagnostic::error(format!("{object} did not become ready"), e.to_string())
            }
            WaitError::Stopped { ref object, .. } => {
                plugin_runtime::Diagnostic::error(format!("Stopped waiting for {object}"), e.to_string())
            }
        }
    }
}

/// Objects per LIST request of [`list`]: the page size kubectl uses.
const PAGE: u32 = 500;

/// What a paged [`list`] hands over.
pub enum Listed {
    Object(Json),
    /// The list starts again from its first page (its `continue` token expired: 410 Gone after
    /// etcd compacted the revision it lists): forget what came before.
    Restarted,
}

/// How often a paged list starts again after its `continue` token expired, before its error
/// stands: compaction runs every five minutes, so more than once is a server that compacts
/// faster than 500 objects a page can be read.
const RESTARTS: u32 = 3;

/// Whether a paged list whose page (a first one unless `continued`) failed with `error` starts
/// again from its first page, after `restarts` restarts so far: its `continue` token expired.
pub fn starts_again(error: &ApiError, continued: bool, restarts: u32) -> bool {
    error.is_expired() && continued && restarts < RESTARTS
}

/// Every object of a kind (in one namespace, or cluster-wide) matching `selector`, handed to
/// `each` page by page, in pages of [`PAGE`]: a collection of 10,000 objects is 20 requests,
/// and only one page of them is in memory at once as parsed objects.
pub async fn list(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    selector: &str,
    mut each: impl FnMut(Listed),
) -> Result<(), ApiError> {
    let first = ListParams::default().labels(selector).limit(PAGE);
    let mut params = first.clone();
    let mut restarts = 0;
    loop {
        let (page, next) = match list_page(client, resource, namespace, &params).await {
            Err(e) if starts_again(&e, params.continue_token.is_some(), restarts) => {
                restarts += 1;
                each(Listed::Restarted);
                params = first.clone();
                continue;
            }
            result => result?,
        };
        page.into_iter().map(Listed::Object).for_each(&mut each);
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(()),
        }
    }
}

/// Every object of a kind matching `params` (selectors, limit), in one request.
pub async fn list_with(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    params: &ListParams,
) -> Result<Vec<Json>, ApiError> {
    let (items, _) = list_page(client, resource, namespace, params).await?;
    Ok(items)
}

/// One page of a LIST: the objects matching `params` (whose `limit` and `continue` choose the
/// page), and the token that continues after it (`None` on the last page). An error names the
/// collection and the selectors.
pub async fn list_page(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    params: &ListParams,
) -> Result<(Vec<Json>, Option<String>), ApiError> {
    let api = api(client, resource, namespace);
    let list = with_retry(|| api.list(params)).await.map_err(|e| {
        let selectors = [&params.label_selector, &params.field_selector]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(",");
        ApiError::from_list(e, &resource.kind, namespace, &selectors)
    })?;
    let next = list.metadata.continue_.filter(|token| !token.is_empty());
    Ok((
        list.items.into_iter().map(|o| to_json(o, resource)).collect(),
        next,
    ))
}

/// A client of `server` as its admin, for tests that talk to the API.
#[cfg(test)]
pub(crate) async fn test_client(server: &kube_test_server::TestServer) -> Client {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig("admin")).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    kube_estate::client_builder(&config).unwrap().build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_test_server::{Options, TestServer};

    #[tokio::test]
    async fn a_stop_ends_a_poll_at_once_naming_what_was_awaited() {
        let server = TestServer::start(Options::default());
        let client = test_client(&server).await;
        let target = Target {
            resource: ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
            namespace: Some("default".into()),
            name: "never-ready".into(),
        };
        // Leaked: a pace holds a signal for the whole process.
        let stop: &'static Stop = Box::leak(Box::default());
        let pace = Pace {
            interval: Duration::from_secs(60),
            timeout: Duration::from_secs(600),
            stop,
        };
        let started = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            stop.request();
        });
        let waited = poll(&client, &target, None, pace, "be ready", |_| {
            Readiness::Waiting("not yet".into())
        })
        .await;
        match waited {
            Err(e @ WaitError::Stopped { .. }) => {
                let diagnostic = plugin_runtime::Diagnostic::from(e);
                assert_eq!(
                    diagnostic.summary,
                    "Stopped waiting for ConfigMap \"default/never-ready\""
                );
                assert!(diagnostic.detail.contains("to be ready"), "{}", diagnostic.detail);
            }
            other => panic!("the poll ended with {other:?}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the poll slept on after the stop"
        );
        // Requested before a poll starts: that poll ends at its first wait.
        let pace = Pace {
            interval: Duration::from_secs(60),
            timeout: Duration::from_secs(600),
            stop,
        };
        let waited = poll(&client, &target, None, pace, "be ready", |_| {
            Readiness::Waiting(String::new())
        })
        .await;
        assert!(matches!(waited, Err(WaitError::Stopped { .. })), "{waited:?}");
    }
}
