//! `TypedResource<K>`: one `plugin_runtime::Resource` for every typed kind. It adds `id`,
//! `estate` and `metadata` to the kind's schema and does what every kind shares: estate
//! stamping, adopt/refuse, the stale-plan guard, plan/apply/read/import and deletes.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use plugin_runtime::rules;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, Block, Diagnostic, Diagnostics, IdentitySchema, ImportRequest,
    ImportResponse, MoveSource, PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema,
    StateUpgrade, Type, Value,
};
use serde_json::{Map, Value as Json};

use crate::context::Context;
use crate::create;
use crate::discovery::Resolved;
use crate::guard::{self, Check};
use crate::kind::{Kind, KindInfo, api_resource};
use crate::lifecycle::{self, GuardedWrite, diag};
use crate::list::Listable;
use crate::objects::{self, FIELD_MANAGER, Manager, Target};
use crate::ownership::Ownership;
use crate::private_state::PrivateState;
use crate::{facts, identity, metadata, moves, plan, timeouts, unset};

pub struct TypedResource<K: Kind> {
    kind: K,
    ctx: Arc<Context>,
    /// The resource's schema, built on first use: every plan, read and write needs it, and
    /// building it anew for each object cost more than the rest.
    schema: OnceLock<Schema>,
}

/// Parses a `terraform import` id: `namespace/name` for namespaced kinds, `name` otherwise.
pub fn parse_import_id(id: &str, namespaced: bool) -> Result<(Option<String>, String), Diagnostic> {
    let parts: Vec<&str> = id.split('/').collect();
    match (namespaced, parts.as_slice()) {
        (true, [ns, name]) if !ns.is_empty() && !name.is_empty() => {
            Ok((Some(ns.to_string()), name.to_string()))
        }
        (false, [name]) if !name.is_empty() => Ok((None, name.to_string())),
        _ => Err(Diagnostic::error(
            "Invalid import id",
            format!(
                "{id:?} is not a valid id here: expected {}.",
                if namespaced {
                    "\"<namespace>/<name>\", e.g. \"shop/app-config\""
                } else {
                    "the object's name"
                }
            ),
        )),
    }
}

impl<K: Kind> TypedResource<K> {
    pub fn new(kind: K, ctx: Arc<Context>) -> TypedResource<K> {
        TypedResource {
            kind,
            ctx,
            schema: OnceLock::new(),
        }
    }

    /// The kind's block with `id`, `estate`, `metadata` and hashicorp's facts.
    fn built(&self) -> &Schema {
        self.schema.get_or_init(|| {
            let info = self.info();
            let mut block = self.kind.block();
            block.description = info.description.to_string();
            let id_doc = if info.namespaced {
                "`<namespace>/<name>` of the object."
            } else {
                "The object's name."
            };
            block
                .attributes
                .insert(0, Attribute::optional_computed("id", Type::String, id_doc));
            block.attributes.insert(
                1,
                Attribute::computed(
                    "estate",
                    Type::String,
                    "The estate whose label `tofu-estate` the object carries (null when unlabelled). \
                     Every apply stamps the provider's estate.",
                ),
            );
            metadata::add_to(&mut block, info);
            // The catalog's facts are checked against every schema by a test; one that no
            // longer fits is left out rather than failing the provider.
            let _ = facts::annotate(info.type_name, &mut block);
            Schema::new(facts::schema_version(info.type_name), block)
        })
    }

    /// The resource's schema block.
    fn block(&self) -> &Block {
        &self.built().block
    }

    fn info(&self) -> &'static KindInfo {
        self.kind.info()
    }

    /// Where the object lives, once its name and namespace are known.
    fn target(&self, meta: &Value) -> Option<Target> {
        let name = meta.get("name").as_str()?.to_string();
        let namespace = match (self.info().namespaced, meta.get("namespace")) {
            (false, _) => None,
            (true, Value::String(ns)) => Some(ns.clone()),
            (true, Value::Null) => Some(self.ctx.default_namespace()?.to_string()),
            (true, _) => return None,
        };
        Some(Target {
            resource: api_resource(self.info()),
            namespace,
            name,
        })
    }

    /// The resource value for a live object; `prior` decides which labels, annotations and
    /// optional blocks show (`Null` on import). Fields other managers own never show.
    fn state_of(&self, live: &Json, prior: &Value) -> Value {
        let info = self.info();
        let ownership = Ownership::of(live, FIELD_MANAGER);
        let mut object = ownership.without_foreign(live);
        for field in self.kind.server_filled(live) {
            if ownership.owns(field) {
                continue;
            }
            if let (Some(filled), Some(fields)) = (live.get(*field), object.as_object_mut()) {
                fields.insert(field.to_string(), filled.clone());
            }
        }
        let object = &object;
        // An import has no prior to say which optional fields are the user's: the fields some
        // manager wrote are, the server's defaults are not.
        let (claimed, owned);
        let kind_prior = if prior.is_null() {
            let mut mine = ownership.claimed(object);
            self.kind.unclaim(&mut mine);
            claimed = self.kind.from_object(&mine, &Value::Null);
            owned = mine;
            &claimed
        } else {
            owned = Json::Null;
            prior
        };
        let mut state = match self.kind.from_object(object, kind_prior) {
            v @ Value::Object(_) => v,
            _ => Value::object(Vec::<(String, Value)>::new()),
        };
        if prior.is_null() {
            self.kind.imported(live, &mut state);
        }
        let mut meta = metadata::from_json(object, metadata::of(prior), info.namespaced, self.ctx.ignore());
        if prior.is_null() {
            // An import takes the labels and annotations some manager wrote, not those the
            // server added itself (a pod's topology labels, copied from its node).
            let written = metadata::from_json(&owned, &Value::Null, info.namespaced, self.ctx.ignore());
            meta.set("labels", written.get("labels").clone());
            meta.set("annotations", written.get("annotations").clone());
        }
        let id = self.target(&meta).map(|t| t.import_id());
        state.set("id", Value::from(id));
        state.set(
            "estate",
            Value::from(metadata::estate_of(object).map(str::to_string)),
        );
        state.set("metadata", metadata::wrap(info, meta));
        // What the object lacks reads as hashicorp's default: Kubernetes omits a field left at
        // its zero value, and the Terraform-only settings (`wait_for_rollout`) are not in it.
        let read = plan::conform(self.block(), state);
        let defaulted = rules::with_defaults(self.block(), &read, &|_| true);
        let mut state = unset::keep_local_unset(&read, defaulted, prior, &|v| self.kind.to_object(v).ok());
        if facts::is_sdk_v2(info.type_name) {
            facts::sdk_read_zeros(self.block(), &mut state);
            if prior.is_null() {
                facts::read_empty_absent(info.type_name, &mut state);
                facts::imported_values(info.type_name, &mut state);
            }
        }
        state
    }

    /// The guard's checks; `prior` is the prior state (`Null` for a create), whose uid the
    /// live object must still have.
    fn check<'a>(
        &self,
        target: &'a CheckTarget,
        estate: &'a str,
        type_name: &'a str,
        prior: &'a Value,
    ) -> Check<'a> {
        Check {
            object: &target.object,
            estate,
            type_name,
            import_id: &target.import_id,
            creating: prior.is_null(),
            manager: FIELD_MANAGER,
            uid: metadata::of(prior).get("uid").as_str(),
            takes_unlabelled: false,
        }
    }

    /// Creates or updates the object as planned. Errors before anything was written come back
    /// as `Err`; a failed wait after the write is a diagnostic beside the written state.
    /// Returns the new state and its private data: the fingerprint a refresh of the unchanged
    /// object will record too, so a saved plan stays valid when nothing moved.
    async fn write(
        &self,
        req: &ApplyRequest,
        seen: &PrivateState,
        diagnostics: &mut Diagnostics,
    ) -> Result<(Value, PrivateState), Diagnostics> {
        let info = self.info();
        let conn = self.ctx.connection().map_err(diag)?;
        let client = &conn.client;
        let planned = &req.planned_state;
        let meta = metadata::of(planned);
        let body = self.body(planned, &req.config, conn.estate.as_str())?;
        // Only Terraform's own settings changed (`wait_for_rollout`, `timeouts`, after an import
        // too): the object already is what the configuration says, so nothing is written.
        let unchanged = !req.prior_state.is_null()
            && req.prior_state.get("estate").as_str() == Some(conn.estate.as_str())
            && self
                .body(&req.prior_state, &req.config, conn.estate.as_str())
                .is_ok_and(|before| before == body);

        let applied = match self.target(meta) {
            Some(target) => {
                let named = CheckTarget::of(&target);
                let check = self.check(&named, conn.estate.as_str(), &req.type_name, &req.prior_state);
                let write = GuardedWrite {
                    target: &target,
                    check: &check,
                    seen,
                    body: &body,
                    manager: Manager {
                        name: FIELD_MANAGER,
                        force: true,
                    },
                    unchanged,
                    timeout: timeouts::of(&req.planned_state, "create", timeouts::DEFAULT),
                    fields: crate::catalog::entry(info.type_name).map(|e| e.fields()),
                    webhook_retries: 0,
                    drop_undeclared: false,
                };
                let applied = lifecycle::guarded_apply(&self.ctx, client, write, diagnostics).await?;
                match stray_keys(&body, &applied) {
                    Some(patch) => objects::merge_patch(client, &target, &patch)
                        .await
                        .map_err(diag)?,
                    None => applied,
                }
            }
            None => {
                // Only `generate_name` leaves the name unknown: the server picks it on create.
                let target = Target {
                    resource: api_resource(info),
                    namespace: meta.get("namespace").as_str().map(str::to_string),
                    name: meta.get("generate_name").as_str().unwrap_or_default().to_string(),
                };
                match create::generated(client, &target, &body, FIELD_MANAGER, &conn.estate).await {
                    Ok(created) => {
                        self.ctx
                            .cache
                            .wrote(&Target::of(target.resource.clone(), &created));
                        created
                    }
                    Err(e) => match e.pending().cloned().map(PrivateState::PendingCreate) {
                        // The outcome is unknown: saved (as tainted) with the token the next
                        // refresh looks the object up by.
                        Some(private) => {
                            diagnostics.push(e.into());
                            return Ok((create::unknowns_to_null(planned), private));
                        }
                        None => return Err(diag(e)),
                    },
                }
            }
        };
        let applied = match self.kind.wait_ready(client, &applied, planned).await {
            Ok(Some(ready)) if self.kind.local_once_ready() => {
                // What it gave is in the state; the object is not needed any more (as
                // hashicorp's, and the cluster's cleaner would delete it within the hour).
                let target = Target::of(api_resource(info), &ready);
                if let Some(precondition) = objects::Precondition::of(&ready) {
                    objects::delete(client, &target, &precondition)
                        .await
                        .map_err(diag)?;
                }
                ready
            }
            Ok(ready) => ready.unwrap_or(applied),
            Err(d) => {
                diagnostics.push(d);
                applied
            }
        };
        let observed = self.state_of(&applied, planned);
        // A legacy-SDK resource's state is what the server reads back, as hashicorp's is (the
        // engine accepts it); otherwise every value the plan promised stays as planned.
        let state = if self.legacy_type_system() {
            observed
        } else {
            plan::settle(planned, &observed)
        };
        Ok((
            state,
            guard::fingerprint(Some(&applied), FIELD_MANAGER, &PrivateState::Empty),
        ))
    }

    /// The server-side-apply body of a resource value: what the configuration sets, with the
    /// metadata stamped with `estate`.
    fn body(&self, value: &Value, config: &Value, estate: &str) -> Result<Json, Diagnostics> {
        let info = self.info();
        let mut body = Map::new();
        body.insert("apiVersion".into(), Json::from(info.api_version));
        body.insert("kind".into(), Json::from(info.kind));
        body.insert(
            "metadata".into(),
            Json::Object(metadata::to_json(metadata::of(value), estate)),
        );
        // hashicorp sends its defaults; those Kubernetes treats as unset (Go's zero values)
        // stay out, as the server would drop them and read them back as absent.
        let config = rules::with_defaults(self.block(), config, &|v| !v.is_zero());
        let configured = plan::configured_only(self.block(), value, &config);
        body.extend(self.kind.to_object(&configured)?);
        Ok(Json::Object(body))
    }

    async fn destroy(&self, req: &ApplyRequest) -> Result<(), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let Some(target) = self.target(metadata::of(&req.prior_state)) else {
            return Ok(());
        };
        let named = CheckTarget::of(&target);
        let check = self.check(&named, conn.estate.as_str(), &req.type_name, &req.prior_state);
        let wait = self.kind.delete_wait(&req.prior_state);
        lifecycle::delete(&self.ctx, &conn.client, &target, &check, wait).await
    }
}

/// How guard messages name an object.
struct CheckTarget {
    object: kube_estate::ObjectRef,
    import_id: String,
}

impl CheckTarget {
    fn of(target: &Target) -> CheckTarget {
        CheckTarget {
            object: target.object_ref(),
            import_id: target.import_id(),
        }
    }
}

/// Keys other managers added to the flat string maps we write (ConfigMap and Secret `data`):
/// server-side apply leaves fields it does not own, so a merge patch removes them. `None`
/// when there are none.
fn stray_keys(body: &Json, applied: &Json) -> Option<Json> {
    let mut patch = Map::new();
    for (field, ours) in body.as_object()? {
        let Some(ours) = ours.as_object().filter(|m| m.values().all(Json::is_string)) else {
            continue;
        };
        if field == "metadata" {
            continue;
        }
        let Some(live) = applied.get(field).and_then(Json::as_object) else {
            continue;
        };
        let stray: Map<String, Json> = live
            .keys()
            .filter(|k| !ours.contains_key(*k))
            .map(|k| (k.clone(), Json::Null))
            .collect();
        if !stray.is_empty() {
            patch.insert(field.clone(), Json::Object(stray));
        }
    }
    (!patch.is_empty()).then_some(Json::Object(patch))
}

#[async_trait]
impl<K: Kind> Resource for TypedResource<K> {
    fn type_name(&self) -> &'static str {
        self.info().type_name
    }

    fn aliases(&self) -> &'static [&'static str] {
        self.info().aliases
    }

    fn schema(&self) -> Schema {
        self.built().clone()
    }

    fn state_upgrades(&self) -> Vec<StateUpgrade> {
        facts::state_upgrades(self.info().type_name)
    }

    fn accepts_move(&self, source: &MoveSource<'_>) -> bool {
        moves::accepts(source, self.info().type_name, self.info().aliases)
    }

    /// hashicorp's typed resources are SDKv2 ones, whose states hold the read-back.
    fn legacy_type_system(&self) -> bool {
        facts::is_sdk_v2(self.info().type_name)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let meta = metadata::of(config);
        let path = |field: &str| metadata::path_of(config, field);
        let mut out = Diagnostics::new();
        if meta
            .get("labels")
            .entries()
            .is_some_and(|l| l.contains_key(kube_estate::ESTATE_LABEL))
        {
            out.push(
                Diagnostic::error(
                    "The estate label is set by the provider",
                    format!(
                        "Remove \"{}\" from labels: every object this provider writes carries it, \
                         with the estate named in the provider block.",
                        kube_estate::ESTATE_LABEL
                    ),
                )
                .at(path("labels").key(kube_estate::ESTATE_LABEL)),
            );
        }
        if !meta.is_null() && meta.get("name").is_null() && meta.get("generate_name").is_null() {
            out.push(
                Diagnostic::error(
                    "Missing name",
                    "Set `name` (or `generate_name`) in the metadata block.",
                )
                .at(path("name")),
            );
        }
        out.extend(timeouts::validate(config).into_iter().collect());
        // What the object could not be made of (a malformed quantity, a field Kubernetes does
        // not have here) is refused now, not at apply; unknown values wait for apply.
        if let Err(invalid) = self.kind.to_object(config) {
            out.extend(invalid);
        }
        out
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        // Without a connection (a setting known only at apply: the cluster is created in this
        // run) the plan comes from the configuration and the state alone; apply reads first.
        let conn = self.ctx.plan_connection().map_err(diag)?;
        let estate = self.ctx.plan_estate().map_err(diag)?;
        let prior = Some(&req.prior_state).filter(|p| !p.is_null());
        let mut planned = plan::unknown_computed(self.block(), &req.proposed_new_state, prior);
        // Over the `default` of hashicorp's schema, where the provider takes the context's.
        if self.info().namespaced
            && metadata::of(&req.config).get("namespace").is_null()
            && let Some(meta) = metadata::of_mut(&mut planned)
        {
            meta.set("namespace", self.ctx.planned_namespace());
        }
        let estate = match prior {
            // Its object is gone once it gave its result: there is nothing to stamp.
            Some(prior) if self.kind.local_once_ready() => prior.get("estate").clone(),
            _ => estate.map(Value::string).unwrap_or_else(Value::unknown),
        };
        planned.set("estate", estate);
        let target = self.target(metadata::of(&planned));
        planned.set(
            "id",
            target
                .as_ref()
                .map(|t| Value::string(t.import_id()))
                .unwrap_or_else(Value::unknown),
        );

        let mut response = PlanResponse::default();
        if let Some(prior) = prior {
            response.requires_replace = plan::replace_paths(prior, &planned);
            response.requires_replace.extend(plan::changed_paths(
                prior,
                &planned,
                &self.kind.immutable_paths(),
            ));
            // Only when the object itself would change (an import of an immutable Secret reads
            // its binary keys into `data`: the same bytes, no replacement); the engine then keeps
            // the paths whose value changes.
            let after = self.kind.replaced_after(prior);
            if !after.is_empty() && self.kind.to_object(prior).ok() != self.kind.to_object(&planned).ok() {
                response.requires_replace.extend(after);
            }
            if let Some(kept) = unset::settled(prior, &planned, &|v| self.kind.to_object(v).ok()) {
                planned = kept;
            }
            if planned == *prior {
                response.planned_state = planned;
                return Ok(response);
            }
            plan::metadata_will_change(&mut planned);
            if !response.requires_replace.is_empty() {
                // The engine plans the replacement's create separately; that plan checks.
                response.planned_state = planned;
                return Ok(response);
            }
        }
        match (conn, &target) {
            (Some(conn), Some(target)) => {
                let named = CheckTarget::of(target);
                let check = self.check(&named, conn.estate.as_str(), &req.type_name, &req.prior_state);
                lifecycle::plan_guard(&self.ctx, conn, target, &check, &req.prior_private, &mut response)
                    .await?;
            }
            (None, _) => {
                response.planned_private = lifecycle::offline_private(&req.prior_private, prior.is_none())
            }
            (Some(_), None) => {}
        }
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
        let target = self.target(metadata::of(&req.current_state));
        let refresh = lifecycle::Refresh {
            manager: FIELD_MANAGER,
            kept_when_gone: self.kind.local_once_ready(),
        };
        lifecycle::refresh(&self.ctx, conn, target.as_ref(), refresh, req, |o, prior| {
            self.state_of(o, prior)
        })
        .await
    }

    fn identity_schema(&self) -> Option<IdentitySchema> {
        Some(identity::schema(self.info().namespaced))
    }

    /// `None` while the name or namespace is unknown (a create the server names).
    fn identity(&self, state: &Value) -> Option<Value> {
        identity::of_typed(self.info(), state)
    }

    fn import_id(&self, identity: &Value) -> Result<String, Diagnostics> {
        identity::typed_import_id(self.info(), identity)
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let info = self.info();
        let (namespace, name) = parse_import_id(&req.id, info.namespaced).map_err(diag)?;
        let target = Target {
            resource: api_resource(info),
            namespace,
            name,
        };
        lifecycle::import(&conn.client, &target, req.type_name, |live| {
            self.imported_state(live)
        })
        .await
    }
}

#[async_trait]
impl<K: Kind> Listable for TypedResource<K> {
    async fn collection(&self, _: &Context, _: &Value) -> Result<Resolved, Diagnostics> {
        Ok(Resolved {
            resource: api_resource(self.info()),
            namespaced: self.info().namespaced,
        })
    }

    /// What an import makes: no prior, so the fields some manager wrote show.
    fn imported_state(&self, live: &Json) -> Value {
        self.state_of(live, &Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn import_ids_follow_hashicorp() {
        assert_eq!(
            parse_import_id("shop/app", true).unwrap(),
            (Some("shop".into()), "app".into())
        );
        assert_eq!(parse_import_id("shop", false).unwrap(), (None, "shop".into()));
        assert!(parse_import_id("app", true).is_err());
        assert!(parse_import_id("a/b/c", true).is_err());
        assert!(parse_import_id("/app", true).is_err());
        assert!(parse_import_id("a/b", false).is_err());
    }

    #[test]
    fn stray_keys_are_the_live_keys_of_our_flat_maps_we_did_not_send() {
        let body = json!({"metadata": {"labels": {"a": "1"}}, "data": {"k": "v"}, "spec": {"x": 1}});
        let applied = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "data": {"k": "v", "extra": "e"},
                             "spec": {"x": 1, "y": 2}});
        assert_eq!(
            stray_keys(&body, &applied),
            Some(json!({"data": {"extra": null}}))
        );
        assert_eq!(stray_keys(&body, &body), None);
    }
}
