//! `kubernetes_manifest`: any apiVersion/kind, written as a manifest and applied with
//! server-side apply (field manager `field_manager.name`, default "Terraform"), stamped with
//! the estate label like every typed resource and guarded the same way.
//!
//! `object` is the live object seen through the manifest's shape: only the paths the
//! manifest sets, so server defaults never show as a diff while a change to a configured
//! value does. `computed_fields` names paths whose differences are ignored. A Secret's
//! values never show in `object` (see [`secret`]).
//!
//! After a write, the `wait` block and hashicorp's older `wait_for = { fields = { … } }` hold
//! the apply until the object is as they say (a field path's value matching a regular
//! expression, `"*"` for any value; a status condition; a finished rollout), bounded by
//! `timeouts.create` / `timeouts.update`: dependents then see the object ready.
//!
//! Values are sent in the types the API's OpenAPI schema gives their paths (see [`typed`]):
//! `port = { number = "80" }` goes as the integer 80, and a value that reads as no such type
//! is refused at plan, naming its path.

mod kubectl;
mod listing;
mod secret;
mod shape;
mod typed;
mod wait_block;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kube_estate::ESTATE_LABEL;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, Diagnostic, Diagnostics, IdentitySchema,
    ImportRequest, ImportResponse, MoveSource, NestedBlock, Nesting, PlanRequest, PlanResponse, ReadRequest,
    ReadResponse, Resource, Schema, Type, Value,
};
use serde_json::{Map, Value as Json};

use crate::context::Context;
use crate::discovery::{DiscoveryError, Resolved};
use crate::guard::{self, Check};
use crate::identity::{self, ObjectIdentity};
use crate::lifecycle::{self, GuardedWrite, diag};
use crate::list::Listable;
use crate::objects::{self, Manager, Target};
use crate::openapi::KindSchema;
use crate::ownership::Ownership;
use crate::private_state::PrivateState;
use crate::{locate, metadata, plan, timeouts};
pub(crate) use shape::as_manifest;
use shape::{Step, matches, object_value, stated_by};
use wait_block::{WaitBlock, validate_waits};

const DEFAULT_FIELD_MANAGER: &str = "Terraform";
const DEFAULT_COMPUTED_FIELDS: [&str; 2] = ["metadata.annotations", "metadata.labels"];
const DEFAULT_TIMEOUT: Duration = timeouts::DEFAULT;
/// How long an apply waits for the API server to publish the schema of a kind it already
/// serves (a CustomResourceDefinition created a moment ago: about half a second on a real one).
const SCHEMA_WAIT: Duration = Duration::from_secs(5);

pub struct Manifest {
    ctx: Arc<Context>,
}

fn computed_fields(value: &Value) -> Vec<String> {
    match value.get("computed_fields") {
        Value::Null => DEFAULT_COMPUTED_FIELDS.iter().map(|s| s.to_string()).collect(),
        list => list
            .elements()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
    }
}

/// The field manager of a manifest's writes (`field_manager.name`).
fn manager_of(value: &Value) -> &str {
    single(value, "field_manager")
        .get("name")
        .as_str()
        .unwrap_or(DEFAULT_FIELD_MANAGER)
}

/// `manifest` in the types of `schema` (as written without one); Err names every value that
/// reads as no value of its type.
fn typed_manifest(
    schema: Option<&KindSchema>,
    identity: &ObjectIdentity,
    manifest: &Json,
) -> Result<Json, Diagnostics> {
    let Some(schema) = schema else {
        return Ok(manifest.clone());
    };
    typed::conform(manifest, schema.root()).map_err(|mismatches| {
        let what = format!("{} {}", identity.api_version, identity.kind);
        mismatches.iter().map(|m| m.diagnostic(&what)).collect()
    })
}

/// The first element of a list block (`Null` when absent).
fn single<'a>(value: &'a Value, block: &str) -> &'a Value {
    value.get(block).elements().first().unwrap_or(&Value::Null)
}

impl Manifest {
    pub fn new(ctx: Arc<Context>) -> Manifest {
        Manifest { ctx }
    }

    async fn target(
        &self,
        client: &kube::Client,
        identity: &ObjectIdentity,
    ) -> Result<Target, DiscoveryError> {
        locate::target(&self.ctx, client, identity).await
    }

    /// The OpenAPI schema of the manifest's kind (`None` when the server publishes none).
    async fn kind_schema(
        &self,
        client: &kube::Client,
        identity: &ObjectIdentity,
    ) -> Result<Option<KindSchema>, Diagnostics> {
        self.ctx
            .openapi
            .kind(client, &identity.api_version, &identity.kind)
            .await
            .map_err(diag)
    }

    /// The schema of the manifest's kind. A CustomResourceDefinition's appears in the OpenAPI
    /// documents a moment after its kind is served, so for a served kind a missing one is
    /// asked for again, up to [`SCHEMA_WAIT`].
    async fn schema_of(
        &self,
        client: &kube::Client,
        identity: &ObjectIdentity,
    ) -> Result<Option<KindSchema>, Diagnostics> {
        let started = std::time::Instant::now();
        loop {
            let schema = self.kind_schema(client, identity).await?;
            if schema.is_some()
                || started.elapsed() >= SCHEMA_WAIT
                || self.target(client, identity).await.is_err()
            {
                return Ok(schema);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The state for a live object; fields other managers own never show. `manifest` is the
    /// prior's manifest in the types of `schema`, the kind's.
    fn state_of(&self, live: &Json, prior: &Value, manifest: &Json, schema: Option<&KindSchema>) -> Value {
        let live = &Ownership::of(live, manager_of(prior)).without_foreign(live);
        let mut state = prior.clone();
        state.set(
            "object",
            object_value(live, manifest, schema.map(KindSchema::root)),
        );
        state.set(
            "estate",
            Value::from(metadata::estate_of(live).map(str::to_string)),
        );
        state
    }

    /// Returns the new state and its private data: the fingerprint a refresh of the unchanged
    /// object will record too, so a saved plan stays valid when nothing moved.
    async fn write(
        &self,
        req: &ApplyRequest,
        seen: &PrivateState,
        diagnostics: &mut Diagnostics,
    ) -> Result<(Value, PrivateState), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let estate = conn.estate.as_str();
        let planned = &req.planned_state;
        let manifest = planned.get("manifest").to_json();
        let identity = ObjectIdentity::of_manifest(&manifest).map_err(diag)?;
        let operation = if req.prior_state.is_null() {
            "create"
        } else {
            "update"
        };
        let timeout = timeouts::of(planned, operation, DEFAULT_TIMEOUT);
        let target = locate::target_awaiting(&self.ctx, &conn.client, &identity, timeout)
            .await
            .map_err(diag)?;
        let schema = self.schema_of(&conn.client, &identity).await?;
        let manifest = typed_manifest(schema.as_ref(), &identity, &manifest)?;
        let object = target.object_ref();
        let import_id = identity.manifest_import_id();
        let check = Check {
            object: &object,
            estate,
            type_name: "kubernetes_manifest",
            import_id: &import_id,
            creating: req.prior_state.is_null(),
            manager: manager_of(planned),
            uid: None,
            takes_unlabelled: false,
        };
        let mut body = manifest.clone();
        if let Some(meta) = body.get_mut("metadata").and_then(Json::as_object_mut) {
            let labels = meta.entry("labels").or_insert_with(|| Json::Object(Map::new()));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert(ESTATE_LABEL.into(), Json::from(estate));
            }
        }
        let manager = Manager {
            name: manager_of(planned),
            force: single(planned, "field_manager")
                .get("force_conflicts")
                .as_bool()
                .unwrap_or(false),
        };
        let manager_name = manager.name;
        let write = GuardedWrite {
            target: &target,
            check: &check,
            seen,
            body: &body,
            manager,
            unchanged: false,
            timeout: timeouts::of(planned, "create", DEFAULT_TIMEOUT),
            fields: None,
            webhook_retries: 0,
            drop_undeclared: false,
        };
        let applied = lifecycle::guarded_apply(&self.ctx, &conn.client, write, diagnostics).await?;
        let state = plan::settle(
            planned,
            &self.state_of(&applied, planned, &manifest, schema.as_ref()),
        );
        if let Some(wait) = WaitBlock::of_resource(planned) {
            let done = |live: Option<&Json>| live.is_some_and(|o| wait.satisfied(o));
            if let Err(e) =
                objects::wait_until(&conn.client, &target, timeout, "meet its wait conditions", done).await
            {
                diagnostics.push(e.into());
            }
        }
        Ok((
            state,
            guard::fingerprint(Some(&applied), manager_name, &PrivateState::Empty),
        ))
    }

    async fn destroy(&self, req: &ApplyRequest) -> Result<(), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let identity =
            ObjectIdentity::of_manifest(&req.prior_state.get("manifest").to_json()).map_err(diag)?;
        let target = match self.target(&conn.client, &identity).await {
            Ok(target) => target,
            // Its kind is gone (the CustomResourceDefinition was deleted): so are its objects.
            Err(DiscoveryError::Unknown { .. }) => return Ok(()),
            Err(e) => return Err(diag(e)),
        };
        let object = target.object_ref();
        let import_id = identity.manifest_import_id();
        let check = Check {
            object: &object,
            estate: conn.estate.as_str(),
            type_name: "kubernetes_manifest",
            import_id: &import_id,
            creating: false,
            manager: manager_of(&req.prior_state),
            uid: None,
            takes_unlabelled: false,
        };
        let timeout = timeouts::of(&req.prior_state, "delete", DEFAULT_TIMEOUT);
        lifecycle::delete(&self.ctx, &conn.client, &target, &check, Some(timeout)).await
    }
}

/// The plan's warning for a manifest whose kind the server does not serve yet.
fn not_served_yet(e: &DiscoveryError, identity: &ObjectIdentity) -> Diagnostic {
    Diagnostic::warning(
        e.to_string(),
        format!(
            "{}/{} {:?} is planned from the configuration as written and checked at apply, which \
             first waits (up to `timeouts.create`) for a CustomResourceDefinition to serve the kind, \
             e.g. one created earlier in the same apply (depends_on).",
            identity.api_version, identity.kind, identity.name
        ),
    )
    .at(AttributePath::root("manifest"))
}

/// The plan's warning for a manifest planned without the cluster (a connection setting known
/// only at apply): the same summary for every manifest, so the engine folds them.
fn planned_offline(deferred: &kube_estate::Deferred, identity: &ObjectIdentity) -> Diagnostic {
    Diagnostic::warning(
        "Manifest planned without the cluster",
        format!(
            "{}/{} {:?} is planned from the configuration as written, its object unknown until apply: \
             {}, so the kind and the live object are checked then (apply first waits up to \
             `timeouts.create` for a kind not served yet).",
            identity.api_version,
            identity.kind,
            identity.name,
            deferred.reason()
        ),
    )
    .at(AttributePath::root("manifest"))
}

#[async_trait]
impl Resource for Manifest {
    fn type_name(&self) -> &'static str {
        "kubernetes_manifest"
    }

    /// From hashicorp's `kubernetes_manifest` (the same state), or a kubectl provider's
    /// `kubectl_manifest` (its `yaml_body` becomes `manifest`).
    fn accepts_move(&self, source: &MoveSource<'_>) -> bool {
        kubectl::is_kubectl_manifest(source) || crate::moves::accepts(source, self.type_name(), &[])
    }

    fn translate_move(&self, source: &MoveSource<'_>, stored: &Json) -> Option<Result<Value, Diagnostics>> {
        kubectl::is_kubectl_manifest(source).then(|| {
            let manifest = kubectl::manifest_of(stored).map_err(diag)?;
            let state = Value::object([("manifest", Value::from_json(&manifest))]);
            Ok(plan::conform(&self.schema().block, state))
        })
    }

    fn identity_schema(&self) -> Option<IdentitySchema> {
        Some(identity::manifest_schema())
    }

    fn identity(&self, state: &Value) -> Option<Value> {
        identity::of_manifest(state)
    }

    fn import_id(&self, identity: &Value) -> Result<String, Diagnostics> {
        identity::manifest_import_id(identity)
    }

    fn schema(&self) -> Schema {
        let field_manager = Block::new("Configure field manager options.")
            .attribute(Attribute::optional(
                "name",
                Type::String,
                "The name to use for the field manager when creating and updating the resource. Default `Terraform`.",
            ))
            .attribute(Attribute::optional("force_conflicts", Type::Bool, "Force changes against conflicts."));
        let condition = Block::new("A status condition to wait for.")
            .attribute(Attribute::optional(
                "type",
                Type::String,
                "The type of condition.",
            ))
            .attribute(Attribute::optional(
                "status",
                Type::String,
                "The condition status.",
            ));
        let wait = Block::new("Configure waiter options.")
            .attribute(Attribute::optional(
                "rollout",
                Type::Bool,
                "Wait for rollout to complete on resources that support `kubectl rollout status`.",
            ))
            .attribute(Attribute::optional(
                "fields",
                Type::map(Type::String),
                "A map of paths to fields to wait for a specific field value (a regular expression).",
            ))
            .block(NestedBlock::new("condition", Nesting::List, condition));
        let timeouts = ["create", "update", "delete"]
            .iter()
            .fold(Block::new("Timeouts."), |b, op| {
                b.attribute(Attribute::optional(
                    op,
                    Type::String,
                    &format!("Timeout for the {op} operation."),
                ))
            });
        let block = Block::new(
            "A Kubernetes object of any kind, described by a manifest in HCL and applied with server-side \
             apply; it carries the estate label `tofu-estate` like every object of this provider.",
        )
        .attribute(Attribute::required(
            "manifest",
            Type::Dynamic,
            "A Kubernetes manifest describing the desired state of the resource in HCL format.",
        ))
        .attribute(Attribute::optional_computed(
            "object",
            Type::Dynamic,
            "The resulting resource state, as returned by the API server, through the manifest's shape.",
        ))
        .attribute(
            Attribute::optional(
                "wait_for",
                Type::Dynamic,
                "A map of attribute paths and desired patterns to be matched. After each apply the provider \
                 will wait for all attributes listed here to reach a value that matches the desired pattern. \
                 Deprecated: use the `wait` block.",
            )
            .nested(
                Nesting::Single,
                vec![Attribute::optional(
                    "fields",
                    Type::map(Type::String),
                    "A map of paths to fields (`status.phase`, `status.conditions[0].type`) and the regular \
                     expression each value must match; `\"*\"` matches any value.",
                )],
            )
            .deprecated(),
        )
        .attribute(Attribute::optional(
            "computed_fields",
            Type::list(Type::String),
            "List of manifest fields whose values can be altered by the API server during 'apply'. \
             Defaults to: [\"metadata.annotations\", \"metadata.labels\"]",
        ))
        .attribute(Attribute::computed(
            "estate",
            Type::String,
            "The estate whose label `tofu-estate` the object carries (null when unlabelled).",
        ))
        .block(NestedBlock::at_most_one("field_manager", field_manager))
        .block(NestedBlock::at_most_one("wait", wait))
        .block(NestedBlock::at_most_one("timeouts", timeouts));
        Schema::new(crate::facts::schema_version(self.type_name()), block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out: Diagnostics = timeouts::validate(config).into_iter().collect();
        out.extend(validate_waits(config).into_iter().collect());
        let manifest = config.get("manifest");
        if !manifest.is_wholly_known() {
            return out;
        }
        let json = manifest.to_json();
        if let Err(d) = ObjectIdentity::of_manifest(&json) {
            out.push(d);
        }
        if let Some(d) = secret::plan_output_warning(&json) {
            out.push(d);
        }
        if json
            .pointer("/metadata/labels")
            .and_then(|l| l.get(ESTATE_LABEL))
            .is_some()
        {
            out.push(
                Diagnostic::error(
                    "The estate label is set by the provider",
                    format!("Remove \"{ESTATE_LABEL}\" from the manifest's labels: every object carries it."),
                )
                .at(AttributePath::root("manifest")
                    .attribute("metadata")
                    .attribute("labels")),
            );
        }
        out
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let conn = self.ctx.plan_connection().map_err(diag)?;
        let estate = self.ctx.plan_estate().map_err(diag)?;
        let mut planned = req.proposed_new_state.clone();
        planned.set("estate", estate.map(Value::string).unwrap_or_else(Value::unknown));
        let mut response = PlanResponse::default();
        let manifest = planned.get("manifest");
        if !manifest.is_wholly_known() {
            planned.set("object", Value::unknown());
            response.planned_state = planned;
            return Ok(response);
        }
        let desired = manifest.to_json();
        let identity = ObjectIdentity::of_manifest(&desired).map_err(diag)?;
        // Typed as the server will see it (as written without the cluster: apply types it).
        let schema = match conn {
            Some(conn) => self.schema_of(&conn.client, &identity).await?,
            None => None,
        };
        let desired = typed_manifest(schema.as_ref(), &identity, &desired)?;
        let prior = Some(&req.prior_state).filter(|p| !p.is_null());
        if let Some(prior) = prior {
            let before_manifest = prior.get("manifest").to_json();
            let before = ObjectIdentity::of_manifest(&before_manifest).ok();
            if before.as_ref() != Some(&identity) {
                response.requires_replace = vec![AttributePath::root("manifest")];
            }
            let before_manifest =
                typed_manifest(schema.as_ref(), &identity, &before_manifest).unwrap_or(before_manifest);
            let node = schema.as_ref().map(KindSchema::root);
            if !matches(
                &stated_by(&prior.get("object").to_json(), node),
                &stated_by(&secret::expected(&desired, &before_manifest), node),
                &computed_fields(&planned),
            ) {
                planned.set("object", Value::unknown());
            }
            if planned == *prior {
                response.planned_state = planned;
                return Ok(response);
            }
            if !response.requires_replace.is_empty() {
                planned.set("object", Value::unknown());
                response.planned_state = planned;
                return Ok(response);
            }
        } else {
            planned.set("object", Value::unknown());
        }
        // Without a connection (known only at apply): planned as written, checked at apply.
        let (Some(conn), Some(estate)) = (conn, estate) else {
            if let Some(deferred) = self.ctx.offline() {
                response.diagnostics.push(planned_offline(deferred, &identity));
            }
            response.planned_private = lifecycle::offline_private(&req.prior_private, prior.is_none());
            response.planned_state = planned;
            return Ok(response);
        };
        let target = match self.target(&conn.client, &identity).await {
            Ok(target) => target,
            // A kind this run installs (a CRD another resource creates): apply waits for it
            // and checks then.
            Err(e @ DiscoveryError::Unknown { .. }) if prior.is_none() => {
                response.diagnostics.push(not_served_yet(&e, &identity));
                response.planned_state = planned;
                return Ok(response);
            }
            Err(e) => return Err(diag(e)),
        };
        let object = target.object_ref();
        let import_id = identity.manifest_import_id();
        let check = Check {
            object: &object,
            estate,
            type_name: &req.type_name,
            import_id: &import_id,
            creating: prior.is_none(),
            manager: manager_of(&planned),
            uid: None,
            takes_unlabelled: false,
        };
        lifecycle::plan_guard(
            &self.ctx,
            conn,
            &target,
            &check,
            &req.prior_private,
            &mut response,
        )
        .await?;
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
        let manifest = req.current_state.get("manifest").to_json();
        let mut typed = manifest.clone();
        let mut schema = None;
        // A state whose manifest names no object stays as it is.
        let target = match ObjectIdentity::of_manifest(&manifest) {
            Ok(identity) => match self.target(&conn.client, &identity).await {
                Ok(target) => {
                    schema = self.kind_schema(&conn.client, &identity).await?;
                    if let Ok(t) = typed_manifest(schema.as_ref(), &identity, &manifest) {
                        typed = t;
                    }
                    Some(target)
                }
                // No kind, no object: the CustomResourceDefinition was deleted, and its
                // objects with it.
                Err(DiscoveryError::Unknown { .. }) => {
                    return Ok(ReadResponse {
                        new_state: Value::Null,
                        ..Default::default()
                    });
                }
                Err(e) => return Err(diag(e)),
            },
            Err(_) => None,
        };
        let manager = manager_of(&req.current_state).to_string();
        let refresh = lifecycle::Refresh {
            manager: &manager,
            kept_when_gone: false,
        };
        lifecycle::refresh(&self.ctx, conn, target.as_ref(), refresh, req, |o, prior| {
            self.state_of(o, prior, &typed, schema.as_ref())
        })
        .await
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let identity = ObjectIdentity::from_manifest_import_id(&req.id).map_err(diag)?;
        let target = self.target(&conn.client, &identity).await.map_err(diag)?;
        lifecycle::import(&conn.client, &target, req.type_name, |live| {
            self.imported_state(live)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::shape::{parse_path, project};
    use super::*;
    use serde_json::json;

    #[test]
    fn import_ids_name_the_object() {
        let id = ObjectIdentity::from_manifest_import_id("apiVersion=v1,kind=ConfigMap,namespace=x,name=y")
            .unwrap();
        assert_eq!(
            id,
            ObjectIdentity {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some("x".into()),
                name: "y".into()
            }
        );
        assert_eq!(
            id.manifest_import_id(),
            "apiVersion=v1,kind=ConfigMap,namespace=x,name=y"
        );
        let cluster =
            ObjectIdentity::from_manifest_import_id("apiVersion=v1,kind=Namespace,name=shop").unwrap();
        assert_eq!(cluster.namespace, None);
        assert!(ObjectIdentity::from_manifest_import_id("v1/ConfigMap/x/y").is_err());
    }

    #[test]
    fn projection_hides_server_defaults_and_keeps_configured_values() {
        let manifest = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "handoff", "namespace": "platform"}, "data": {"k": "v"}});
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "handoff", "namespace": "platform", "uid": "u", "labels": {"tofu-estate": "app"}},
            "data": {"k": "v"}});
        assert_eq!(project(&live, &manifest), manifest);
        let mut drifted = live.clone();
        drifted["data"]["k"] = json!("changed");
        assert!(!matches(&project(&drifted, &manifest), &manifest, &[]));
    }

    #[test]
    fn computed_fields_are_left_out_of_the_comparison() {
        let a = json!({"metadata": {"annotations": {"x": "1"}}, "spec": {"replicas": 2}});
        let b = json!({"metadata": {"annotations": {"x": "2"}}, "spec": {"replicas": 2}});
        assert!(matches(&a, &b, &["metadata.annotations".into()]));
        assert!(!matches(&a, &b, &[]));
        assert_eq!(
            parse_path(r#"metadata.annotations["a/b"].x[0]"#),
            vec![
                Step::Key("metadata".into()),
                Step::Key("annotations".into()),
                Step::Key("a/b".into()),
                Step::Key("x".into()),
                Step::Index(0)
            ]
        );
    }

    #[test]
    fn imported_manifest_drops_server_bookkeeping_and_the_estate_label() {
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "status": {},
            "metadata": {"name": "h", "uid": "u", "resourceVersion": "1", "labels": {"tofu-estate": "app"}},
            "data": {"k": "v"}});
        assert_eq!(
            as_manifest(&live),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "h"}, "data": {"k": "v"}})
        );
    }

    #[test]
    fn wait_for_fields_wait_like_the_wait_block() {
        let wait_for = |fields: Value| {
            Value::object([
                ("wait", Value::List(vec![])),
                ("wait_for", Value::object([("fields", fields)])),
            ])
        };
        let wait = WaitBlock::of_resource(&wait_for(Value::string_map([
            ("status.phase", "Running"),
            ("status.podIP", "*"),
            ("status.ready", "^true$"),
            ("status.restarts", "^0$"),
            ("status.load", "^0.500000$"),
        ])))
        .expect("a wait");
        let running = json!({"status": {"phase": "Running", "podIP": "10.0.0.7", "ready": true,
            "restarts": 0, "load": 0.5}});
        assert!(wait.satisfied(&running));
        let mut pending = running.clone();
        pending["status"]["phase"] = json!("Pending");
        assert!(!wait.satisfied(&pending));
        let mut no_ip = running.clone();
        no_ip["status"].as_object_mut().unwrap().remove("podIP");
        assert!(!wait.satisfied(&no_ip), "\"*\" needs the field to be there");

        // Together with a `wait` block, both must hold.
        let mut both = wait_for(Value::string_map([("status.phase", "Running")]));
        both.set(
            "wait",
            Value::List(vec![Value::object([(
                "fields",
                Value::string_map([("status.podIP", "^10\\.")]),
            )])]),
        );
        let wait = WaitBlock::of_resource(&both).expect("a wait");
        assert!(wait.satisfied(&running));
        let mut elsewhere = running.clone();
        elsewhere["status"]["podIP"] = json!("192.168.0.1");
        assert!(!wait.satisfied(&elsewhere));

        assert!(WaitBlock::of_resource(&Value::object([("wait", Value::List(vec![]))])).is_none());
    }

    #[test]
    fn bad_wait_patterns_are_configuration_errors() {
        let config = Value::object([(
            "wait_for",
            Value::object([("fields", Value::string_map([("status.phase", "(Running")]))]),
        )]);
        let errors = validate_waits(&config);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].attribute.as_ref().unwrap().to_string(),
            "wait_for.fields[\"status.phase\"]"
        );
        let schema = Manifest::new(Arc::default()).schema();
        let wait_for = schema.block.find_attribute("wait_for").expect("wait_for");
        let nested = wait_for.nested.as_ref().expect("a nested attribute");
        assert_eq!(nested.nesting, Nesting::Single);
        assert!(nested.attributes[0].optional && wait_for.optional);
    }

    #[test]
    fn wait_conditions_and_fields() {
        let wait = WaitBlock::of(&Value::object([
            ("rollout", Value::Bool(false)),
            ("fields", Value::string_map([("status.phase", "^Active$")])),
            (
                "condition",
                Value::List(vec![Value::object([
                    ("type", Value::string("Ready")),
                    ("status", Value::string("True")),
                ])]),
            ),
        ]))
        .unwrap();
        let ready =
            json!({"status": {"phase": "Active", "conditions": [{"type": "Ready", "status": "True"}]}});
        let not_ready =
            json!({"status": {"phase": "Active", "conditions": [{"type": "Ready", "status": "False"}]}});
        assert!(wait.satisfied(&ready));
        assert!(!wait.satisfied(&not_ready));
    }
}
