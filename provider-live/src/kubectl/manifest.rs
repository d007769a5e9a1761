//! `kubectl_manifest`: one object of any kind, written as YAML, as the kubectl providers'
//! resource of that name, and guarded as every object of this provider is: stamped with its
//! estate's label, adopted after a lost state, never written over another estate's object,
//! and refused at apply when the plan is stale.
//!
//! The writes are server-side applies under `field_manager` (`kubectl`). Without
//! `server_side_apply` they take over fields other managers set, as the providers'
//! client-side apply overwrites them; with it, a conflict is an error unless
//! `force_conflicts`. An existing object without an estate label is applied over and stamped,
//! as `kubectl apply` does (with a warning); another estate's is refused.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use kube_estate::ESTATE_LABEL;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, AttributePath, Diagnostic, Diagnostics, ImportRequest, ImportResponse,
    MoveSource, PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema, Value,
};
use serde_json::{Map, Value as Json};

use super::body::{self, Body};
use super::drift::{self, Settings, Show};
use super::fingerprint;
use super::manifest_schema::{self, FIELD_MANAGER};
use super::wait_for::{self, WaitFor};
use super::yaml;
use crate::context::Context;
use crate::discovery::DiscoveryError;
use crate::guard::{self, Check};
use crate::lifecycle::{self, GuardedWrite, diag};
use crate::objects::{self, Manager, Pace, Readiness, Target};
use crate::ownership::{self, Ownership};
use crate::private_state::PrivateState;
use crate::{locate, metadata, timeouts};

const TYPE_NAME: &str = "kubectl_manifest";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Attributes whose change makes the drift unknown until the apply.
const DRIFT_INPUTS: [&str; 6] = [
    "yaml_body",
    "override_namespace",
    "ignore_fields",
    "mask_paths",
    "show_drift_values",
    "drift_engine",
];

pub struct KubectlManifest {
    ctx: Arc<Context>,
}

impl KubectlManifest {
    pub fn new(ctx: Arc<Context>) -> KubectlManifest {
        KubectlManifest { ctx }
    }
}

fn strings(value: &Value, name: &str) -> Vec<String> {
    value
        .get(name)
        .elements()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn flag(value: &Value, name: &str, default: bool) -> bool {
    value.get(name).as_bool().unwrap_or(default)
}

fn manager_of(value: &Value) -> &str {
    value.get("field_manager").as_str().unwrap_or(FIELD_MANAGER)
}

/// The body that a plan or state must hold by now (its `yaml_body` known).
fn body_of(value: &Value) -> Result<Body, Diagnostics> {
    Body::of(value).map_err(diag)?.ok_or_else(|| {
        diag(
            Diagnostic::error("Invalid kubectl_manifest", "yaml_body is not known")
                .at(AttributePath::root("yaml_body")),
        )
    })
}

fn guard_check<'a>(
    object: &'a kube_estate::ObjectRef,
    estate: &'a str,
    import_id: &'a str,
    creating: bool,
    manager: &'a str,
) -> Check<'a> {
    Check {
        object,
        estate,
        type_name: TYPE_NAME,
        import_id,
        creating,
        manager,
        uid: None,
        takes_unlabelled: true,
    }
}

/// The drift of `live` from what `value` applies, by its settings (the client engine).
fn drift_of(value: &Value, desired: &Json, live: &Json) -> String {
    let (ignore, masks) = (strings(value, "ignore_fields"), strings(value, "mask_paths"));
    let settings = Settings {
        ignore: &ignore,
        masks: &masks,
        show: Show::parse(value.get("show_drift_values").as_str()).unwrap_or(Show::None),
    };
    drift::drift(desired, live, &settings)
}

/// The manifest the server would make of `body` (drift engine `server`): a dry run of the
/// apply, with the label the apply sends (without it, the server would plan the label's removal);
/// the manifest itself when the dry run fails.
async fn server_view(
    client: &kube::Client,
    target: &Target,
    body: &Json,
    value: &Value,
    estate: &str,
) -> Json {
    let manager = Manager {
        name: manager_of(value),
        force: true,
    };
    objects::apply_dry_run(client, target, &labelled(body, estate), &manager, None)
        .await
        .unwrap_or_else(|_| body.clone())
}

/// `manifest` with the estate label.
fn labelled(manifest: &Json, estate: &str) -> Json {
    let mut body = manifest.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Json::as_object_mut) {
        let labels = meta.entry("labels").or_insert_with(|| Json::Object(Map::new()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(ESTATE_LABEL.into(), Json::from(estate));
        }
    }
    body
}

/// The fingerprints of the kubectl providers' older schemas: a write fills those the plan left
/// unknown, a refresh takes the live one anew, and either fills those a state lacks.
const FINGERPRINTS: [&str; 2] = ["yaml_incluster", "live_manifest_incluster"];

/// What the writes of field manager `manager` set on `live`, as far as the fields it owns tell
/// (identity included, the estate label not): the manifest the fingerprints of a refresh or an
/// import are taken over, so that an imported object's match those its write left. `None` when
/// that manager never wrote it.
fn written_by(live: &Json, manager: &str) -> Option<Json> {
    let owned = Ownership::of(live, manager).into_ours()?;
    let mut written = ownership::project(live, &owned);
    let object = written.as_object_mut()?;
    for key in ["apiVersion", "kind"] {
        object.insert(key.into(), live[key].clone());
    }
    let meta = object
        .entry("metadata")
        .or_insert_with(|| Json::Object(Map::new()))
        .as_object_mut()?;
    for key in ["name", "namespace"] {
        if let Some(value) = live["metadata"].get(key) {
            meta.insert(key.into(), value.clone());
        }
    }
    if let Some(labels) = meta.get_mut("labels").and_then(Json::as_object_mut) {
        labels.remove(ESTATE_LABEL);
        if labels.is_empty() {
            meta.remove("labels");
        }
    }
    Some(written)
}

/// `state` with what the live object says: its path, uid, estate, drift and fingerprints of
/// `manifest`'s fields.
fn observed(mut state: Value, manifest: &Json, live: &Json, drift: String, applied: bool) -> Value {
    // Taken over what the writes left (the same after a write, a refresh or an import), or
    // over the manifest when its manager never wrote the object (a state moved in).
    let written = written_by(live, manager_of(&state));
    let print = fingerprint::of(
        written.as_ref().unwrap_or(manifest),
        live,
        &strings(&state, "ignore_fields"),
    );
    for name in FINGERPRINTS {
        let missing = state.get(name).is_null() || state.get(name).is_unknown();
        if missing || (!applied && name == "live_manifest_incluster") {
            state.set(name, Value::string(&print));
        }
    }
    let uid = live
        .pointer("/metadata/uid")
        .and_then(Json::as_str)
        .map(str::to_string);
    state.set("id", Value::string(yaml::self_link(live)));
    if applied {
        state.set("uid", Value::from(uid.clone()));
    }
    state.set("live_uid", Value::from(uid));
    state.set("drift", Value::string(drift));
    state.set(
        "estate",
        Value::from(metadata::estate_of(live).map(str::to_string)),
    );
    state
}

impl KubectlManifest {
    async fn write(
        &self,
        req: &ApplyRequest,
        seen: &PrivateState,
        diagnostics: &mut Diagnostics,
    ) -> Result<(Value, PrivateState), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let planned = &req.planned_state;
        let body = body_of(planned)?;
        let creating = req.prior_state.is_null();
        let operation = if creating { "create" } else { "update" };
        let timeout = timeouts::of(planned, operation, DEFAULT_TIMEOUT);
        let target = locate::target_awaiting(&self.ctx, &conn.client, &body.identity, timeout)
            .await
            .map_err(diag)?;
        let (object, import_id) = (target.object_ref(), body.import_id());
        let check = guard_check(
            &object,
            conn.estate.as_str(),
            &import_id,
            creating,
            manager_of(planned),
        );
        let manager = Manager {
            name: manager_of(planned),
            force: !flag(planned, "server_side_apply", false) || flag(planned, "force_conflicts", false),
        };
        let manager_name = manager.name;
        let write = GuardedWrite {
            target: &target,
            check: &check,
            seen,
            body: &labelled(&body.manifest, conn.estate.as_str()),
            manager,
            unchanged: false,
            timeout,
            fields: None,
            webhook_retries: self.ctx.apply_retry_count(),
            drop_undeclared: !flag(planned, "server_side_apply", false),
        };
        let applied = lifecycle::guarded_apply(&self.ctx, &conn.client, write, diagnostics).await?;
        let wait_for = WaitFor::of(planned).map_err(diag)?;
        let rollout = flag(planned, "wait_for_rollout", true);
        let mut live = applied.clone();
        if rollout || wait_for.is_some() {
            match wait(
                &conn.client,
                &target,
                &applied,
                timeout,
                rollout,
                wait_for.as_ref(),
            )
            .await
            {
                Ok(found) => live = found,
                Err(e) => diagnostics.push(e),
            }
        }
        let desired = match planned.get("drift_engine").as_str() {
            Some("server") => {
                server_view(
                    &conn.client,
                    &target,
                    &body.manifest,
                    planned,
                    conn.estate.as_str(),
                )
                .await
            }
            _ => body.manifest.clone(),
        };
        let drift = drift_of(planned, &desired, &live);
        let state = observed(planned.clone(), &body.manifest, &live, drift, true);
        Ok((
            state,
            guard::fingerprint(Some(&applied), manager_name, &PrivateState::Empty),
        ))
    }

    async fn destroy(&self, req: &ApplyRequest) -> Result<(), Diagnostics> {
        let prior = &req.prior_state;
        if flag(prior, "apply_only", false) {
            return Ok(());
        }
        let conn = self.ctx.connection().map_err(diag)?;
        let body = body_of(prior)?;
        let target = match locate::target(&self.ctx, &conn.client, &body.identity).await {
            Ok(target) => target,
            // Its kind is gone (the CustomResourceDefinition was deleted): so are its objects.
            Err(DiscoveryError::Unknown { .. }) => return Ok(()),
            Err(e) => return Err(diag(e)),
        };
        let (object, import_id) = (target.object_ref(), body.import_id());
        let check = guard_check(
            &object,
            conn.estate.as_str(),
            &import_id,
            false,
            manager_of(prior),
        );
        let wait = flag(prior, "wait", false);
        let foreground = match prior.get("delete_cascade").as_str() {
            Some(policy) => policy == "Foreground",
            None => wait,
        };
        let timeout = wait.then(|| timeouts::of(prior, "delete", DEFAULT_TIMEOUT));
        lifecycle::delete_propagating(&self.ctx, &conn.client, &target, &check, timeout, foreground).await
    }

    /// The state of an imported object: its manifest as `yaml_body`, without what the server
    /// keeps of it (times, versions, uid, managers, status) nor the estate label.
    fn imported_state(&self, live: &Json) -> Value {
        let mut manifest = live.clone();
        if let Some(object) = manifest.as_object_mut() {
            object.remove("status");
            if let Some(meta) = object.get_mut("metadata").and_then(Json::as_object_mut) {
                for key in [
                    "creationTimestamp",
                    "resourceVersion",
                    "selfLink",
                    "uid",
                    "managedFields",
                    "generation",
                ] {
                    meta.remove(key);
                }
                for (map, key) in [
                    ("annotations", "kubectl.kubernetes.io/last-applied-configuration"),
                    ("labels", ESTATE_LABEL),
                ] {
                    if let Some(entries) = meta.get_mut(map).and_then(Json::as_object_mut) {
                        entries.remove(key);
                        if entries.is_empty() {
                            meta.remove(map);
                        }
                    }
                }
            }
        }
        let text = yaml::to_yaml(&manifest);
        let mut state = Value::object([
            ("yaml_body", Value::string(&text)),
            ("force_new", Value::Bool(false)),
            ("upgrade_api_version", Value::Bool(false)),
            ("server_side_apply", Value::Bool(false)),
            ("field_manager", Value::string(FIELD_MANAGER)),
            ("force_conflicts", Value::Bool(false)),
            ("apply_only", Value::Bool(false)),
            ("wait", Value::Bool(false)),
            ("wait_for_rollout", Value::Bool(true)),
            ("validate_schema", Value::Bool(true)),
            ("show_drift_values", Value::string("none")),
            ("drift_engine", Value::string("client")),
        ]);
        if let Ok(Some(body)) = Body::of(&state) {
            self.describe(&mut state, &body);
        }
        observed(state, &manifest, live, String::new(), true)
    }

    /// Sets what `body` says of the object: its parsed, masked text and its identity.
    fn describe(&self, planned: &mut Value, body: &Body) {
        if let Ok(parsed) = body.parsed(&strings(planned, "sensitive_fields")) {
            planned.set("yaml_body_parsed", Value::string(parsed));
        }
        let id = &body.identity;
        planned.set("api_version", Value::string(&id.api_version));
        planned.set("kind", Value::string(&id.kind));
        planned.set("name", Value::string(&id.name));
        planned.set("namespace", Value::from(id.namespace.clone()));
    }
}

/// Holds the apply until the object rolled out and its `wait_for` holds, or `timeout` passes;
/// a failure names what was missing and what its pods say.
async fn wait(
    client: &kube::Client,
    target: &Target,
    applied: &Json,
    timeout: Duration,
    rollout: bool,
    wait_for: Option<&WaitFor>,
) -> Result<Json, Diagnostic> {
    let check = wait_for::check(rollout, wait_for);
    let last = Mutex::new(applied.clone());
    let seen = |live: Option<&Json>| match live {
        Some(object) => {
            *last.lock().unwrap_or_else(PoisonError::into_inner) = object.clone();
            check(object)
        }
        None => Readiness::Failed("it was deleted while the apply waited for it".into()),
    };
    let pace = Pace::new(Duration::from_secs(1), timeout);
    let what = "finish its rollout and meet its wait_for";
    let outcome = objects::poll(client, target, Some(applied.clone()), pace, what, seen).await;
    let last = last.into_inner().unwrap_or_else(PoisonError::into_inner);
    match outcome {
        Ok(found) => Ok(found.unwrap_or(last)),
        Err(e) => {
            let mut diagnostic = Diagnostic::from(e);
            // The kubectl providers' words first (gavinbunney's and alekc v3's summary, alekc
            // v2's "Wait returned an error"): their users' checks look for them.
            diagnostic.detail = format!(
                "Wait returned an error: {}. {}",
                diagnostic.summary, diagnostic.detail
            );
            diagnostic.summary = format!("failed to wait for resource {}", target.object_ref());
            let kind = last["kind"].as_str().unwrap_or_default();
            if let Some(pods) = crate::readiness::diagnosis::explain(client, kind, &last).await {
                diagnostic.detail = format!("{} Pods: {pods}.", diagnostic.detail);
            }
            Err(diagnostic)
        }
    }
}

/// Configuration errors of the kubectl providers' attributes, each at its path.
fn validate_settings(config: &Value) -> Diagnostics {
    let mut out: Diagnostics = timeouts::validate(config).into_iter().collect();
    let choice = |name: &str, allowed: &[&str], out: &mut Diagnostics| {
        if let Some(v) = config.get(name).as_str()
            && !allowed.contains(&v)
        {
            out.push(
                Diagnostic::error(
                    format!("Invalid {name}"),
                    format!("{v:?} is not one of {}.", allowed.join(", ")),
                )
                .at(AttributePath::root(name)),
            );
        }
    };
    choice("show_drift_values", &["none", "hash", "full"], &mut out);
    choice("drift_engine", &["client", "server"], &mut out);
    choice("delete_cascade", &["Background", "Foreground"], &mut out);
    if let Err(e) = WaitFor::of(config) {
        out.push(e.into());
    }
    match Body::of(config) {
        Err(e) => out.push(e.into()),
        Ok(Some(body)) => {
            if let Err(e) = body.parsed(&strings(config, "sensitive_fields")) {
                out.push(e.into());
            }
            if body
                .manifest
                .pointer("/metadata/labels")
                .and_then(|l| l.get(ESTATE_LABEL))
                .is_some()
            {
                out.push(
                    Diagnostic::error(
                        "The estate label is set by the provider",
                        format!(
                            "Remove \"{ESTATE_LABEL}\" from the labels in yaml_body: every object carries it."
                        ),
                    )
                    .at(AttributePath::root("yaml_body")),
                );
            }
        }
        Ok(None) => {}
    }
    out
}

#[async_trait]
impl Resource for KubectlManifest {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        manifest_schema::schema()
    }

    /// The kubectl providers' states are this type's own, of their schema version.
    fn accepts_move(&self, source: &MoveSource<'_>) -> bool {
        source.type_name == TYPE_NAME && crate::moves::from_kubectl(source)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        validate_settings(config)
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let conn = self.ctx.plan_connection().map_err(diag)?;
        let estate = self.ctx.plan_estate().map_err(diag)?;
        let mut planned = req.proposed_new_state.clone();
        planned.set("estate", estate.map(Value::string).unwrap_or_else(Value::unknown));
        let mut response = PlanResponse::default();
        let prior = Some(&req.prior_state).filter(|p| !p.is_null());
        let unknown = |planned: &mut Value, names: &[&str]| {
            for name in names {
                planned.set(name, Value::unknown());
            }
        };
        let Some(body) = Body::of(&planned).map_err(diag)? else {
            unknown(
                &mut planned,
                &[
                    "yaml_body_parsed",
                    "api_version",
                    "kind",
                    "name",
                    "namespace",
                    "id",
                    "uid",
                    "live_uid",
                    "drift",
                    "yaml_incluster",
                    "live_manifest_incluster",
                ],
            );
            response.planned_state = planned;
            return Ok(response);
        };
        self.describe(&mut planned, &body);
        if let Some(prior) = prior {
            // The parsed text stays as it was while what it is made of stays (its rendering
            // may differ from the kubectl providers', whose states arrive with theirs).
            let same_text = ["yaml_body", "override_namespace", "sensitive_fields"]
                .iter()
                .all(|a| planned.get(a) == prior.get(a));
            if same_text && !prior.get("yaml_body_parsed").is_null() {
                planned.set("yaml_body_parsed", prior.get("yaml_body_parsed").clone());
            }
            let differs: Vec<&str> = ["api_version", "kind", "name", "namespace"]
                .into_iter()
                .chain(DRIFT_INPUTS)
                .filter(|a| planned.get(a) != prior.get(a))
                .collect();
            let changed = |a: &str| differs.contains(&a);
            let mut replace: Vec<&str> = ["kind", "name", "namespace"]
                .into_iter()
                .filter(|a| changed(a))
                .collect();
            if changed("api_version") && !flag(&planned, "upgrade_api_version", false) {
                replace.push("api_version");
            }
            if changed("yaml_body") && flag(&planned, "force_new", false) {
                replace.push("yaml_body");
            }
            if ["api_version", "kind", "name", "namespace"]
                .iter()
                .any(|a| changed(a))
            {
                unknown(&mut planned, &["id"]);
            }
            if !replace.is_empty() {
                unknown(&mut planned, &["id", "uid", "live_uid", "drift"]);
                unknown(&mut planned, &FINGERPRINTS);
            } else {
                let drifted = prior.get("drift").as_str() != Some("");
                if drifted || DRIFT_INPUTS.iter().any(|a| changed(a)) {
                    unknown(&mut planned, &["drift"]);
                    unknown(&mut planned, &FINGERPRINTS);
                }
                if prior.get("live_uid") != prior.get("uid") {
                    unknown(&mut planned, &["uid", "live_uid"]);
                }
            }
            response.requires_replace = replace.into_iter().map(AttributePath::root).collect();
            if planned == *prior || !response.requires_replace.is_empty() {
                response.planned_state = planned;
                return Ok(response);
            }
        } else {
            unknown(&mut planned, &["id", "uid", "live_uid", "drift"]);
            unknown(&mut planned, &FINGERPRINTS);
        }
        let (Some(conn), Some(estate)) = (conn, estate) else {
            response.planned_private = lifecycle::offline_private(&req.prior_private, prior.is_none());
            response.planned_state = planned;
            return Ok(response);
        };
        let target = match locate::target(&self.ctx, &conn.client, &body.identity).await {
            Ok(target) => target,
            // A kind this run installs (a CRD applied beside it): apply waits for it.
            Err(DiscoveryError::Unknown { .. }) if prior.is_none() => {
                response.planned_state = planned;
                return Ok(response);
            }
            Err(e) => return Err(diag(e)),
        };
        let (object, import_id) = (target.object_ref(), body.import_id());
        let check = guard_check(&object, estate, &import_id, prior.is_none(), manager_of(&planned));
        // The refresh read the object at the state's apiVersion: an upgrade in place reads it at
        // another, which no fingerprint of the refresh's compares with. The plan's own, at the
        // new version, still guards the apply.
        let upgrading = prior.is_some_and(|p| p.get("api_version") != planned.get("api_version"));
        let seen: &[u8] = if upgrading { &[] } else { &req.prior_private };
        lifecycle::plan_guard(&self.ctx, conn, &target, &check, seen, &mut response).await?;
        response.planned_state = planned;
        Ok(response)
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        lifecycle::apply(&req, self.destroy(&req), async |seen, diagnostics| {
            self.write(&req, seen, diagnostics).await
        })
        .await
    }

    async fn read(&self, req: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        if let Some(deferred) = self.ctx.offline() {
            return Ok(deferred.unrefreshed(req));
        }
        let conn = self.ctx.connection().map_err(diag)?;
        let Ok(Some(body)) = Body::of(&req.current_state) else {
            return Ok(ReadResponse {
                new_state: req.current_state,
                private: req.private,
                ..Default::default()
            });
        };
        let target = match locate::target(&self.ctx, &conn.client, &body.identity).await {
            Ok(target) => target,
            // No kind, no object: the CustomResourceDefinition was deleted, and its objects.
            Err(DiscoveryError::Unknown { .. }) => return Ok(ReadResponse::default()),
            Err(e) => return Err(diag(e)),
        };
        let manager = manager_of(&req.current_state).to_string();
        let refresh = lifecycle::Refresh {
            manager: &manager,
            kept_when_gone: false,
        };
        let server = req.current_state.get("drift_engine").as_str() == Some("server");
        let desired = match server {
            true => {
                let estate = conn.estate.as_str();
                server_view(&conn.client, &target, &body.manifest, &req.current_state, estate).await
            }
            false => body.manifest.clone(),
        };
        lifecycle::refresh(&self.ctx, conn, Some(&target), refresh, req, |live, prior| {
            observed(
                prior.clone(),
                &body.manifest,
                live,
                drift_of(prior, &desired, live),
                false,
            )
        })
        .await
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let identity = body::parse_import_id(&req.id).map_err(diag)?;
        let target = locate::target(&self.ctx, &conn.client, &identity)
            .await
            .map_err(diag)?;
        lifecycle::import(&conn.client, &target, req.type_name, |live| {
            self.imported_state(live)
        })
        .await
    }
}
