//! Patch-style resources (`kubernetes_labels`, `kubernetes_annotations`, `kubernetes_env`,
//! `kubernetes_config_map_v1_data`, `kubernetes_secret_v1_data`, `kubernetes_node_taint`,
//! `kubernetes_default_service_account`): they edit objects the estate does not own.
//!
//! So they never behave like owners: they never stamp the estate label on their target, never
//! create, adopt, replace or delete it, and need no stale-plan guard (they claim no object).
//! Each claims only its own fields, by server-side apply under its own field manager
//! (`field_manager`, `force`): a field another manager owns is a conflict that names that
//! manager unless `force` is set. Destroy applies, under the same manager, an object carrying
//! none of those fields, so the server drops exactly what only this manager owned (and its
//! `managedFields` entry with it). A missing target is an error naming it on create, and
//! takes the resource out of state on refresh. A refresh reads only the fields the prior
//! state holds (the labels, env vars, taints it set): other managers' changes never show as
//! a diff, a change to one of its own fields does.
//!
//! The default field manager is `tofu-live-<estate>-<what>` (hashicorp's is `Terraform`): a
//! server-side apply declares a manager's whole intent, so two writers sharing a manager
//! remove each other's fields. With the estate in the name, two estates labelling the same
//! Namespace do not fight; with the type in it, `kubernetes_labels` and
//! `kubernetes_annotations` of one estate on one object do not either. `field_manager` is
//! optional and computed: the plan shows the manager in use, and state keeps it (so a
//! renamed estate, or a state migrated from hashicorp's `Terraform`, keeps releasing the
//! fields it wrote).
//!
//! What differs per type is a small description ([`PatchKind`]) in the submodules.

mod default_service_account;
mod env;
mod error;
mod kind;
mod maps;
mod resource;
mod taint;

pub use error::PatchError;
pub use kind::{FixedKind, MetaShape, PatchInfo, PatchKind, TargetKind};

use std::sync::Arc;

use kube::Client;
use kube::api::ApiResource;
use kube_estate::ApiError;
use plugin_runtime::rules;
use plugin_runtime::{
    ApplyRequest, Attribute, AttributePath, Block, Diagnostic, Diagnostics, NestedBlock, Resource, Type,
    Value,
};
use serde_json::{Map, Value as Json};

use crate::context::Context;
use crate::discovery::DiscoveryError;
use crate::lifecycle::{self, diag};
use crate::metadata::of as meta;
use crate::objects::{self, Manager, Target};
use crate::ownership::{self, FieldSet};
use crate::private_state::PrivateState;
use crate::{metadata, plan, timeouts};

/// Every patch-style resource type, sharing the provider's context.
pub fn resources(ctx: &Arc<Context>) -> Vec<Arc<dyn Resource>> {
    let kinds: Vec<Arc<dyn PatchKind>> = vec![
        Arc::new(&maps::LABELS),
        Arc::new(&maps::ANNOTATIONS),
        Arc::new(&maps::CONFIG_MAP_DATA),
        Arc::new(&maps::SECRET_DATA),
        Arc::new(env::Env),
        Arc::new(taint::NodeTaint),
        Arc::new(default_service_account::DefaultServiceAccount),
    ];
    kinds
        .into_iter()
        .map(|kind| {
            Arc::new(PatchResource {
                kind,
                ctx: ctx.clone(),
            }) as Arc<dyn Resource>
        })
        .collect()
}

/// The field manager a resource writes as when `field_manager` is not set.
pub fn default_manager(estate: &str, manages: &str) -> String {
    format!("tofu-live-{estate}-{manages}")
}

/// One patch-style resource type.
pub struct PatchResource {
    kind: Arc<dyn PatchKind>,
    ctx: Arc<Context>,
}

/// `value` at `path` inside a JSON object (`None` when absent).
fn json_at<'a>(object: &'a Json, path: &[&str]) -> Option<&'a Json> {
    path.iter().try_fold(object, |at, key| at.get(*key))
}

/// Inserts `value` at `path` into `object`, creating the objects on the way.
fn insert_at(object: &mut Map<String, Json>, path: &[&str], value: Json) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut at = object;
    for key in parents {
        let next = at
            .entry(key.to_string())
            .or_insert_with(|| Json::Object(Map::new()));
        if !next.is_object() {
            *next = Json::Object(Map::new());
        }
        at = next.as_object_mut().expect("just made an object");
    }
    at.insert(last.to_string(), value);
}

/// Where the pod template of a workload kind is (`[]`: the Pod itself).
fn pod_template(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Pod" => Some(&[]),
        "CronJob" => Some(&["spec", "jobTemplate", "spec", "template"]),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "ReplicationController" | "Job" => {
            Some(&["spec", "template"])
        }
        _ => None,
    }
}

/// The paths of an intent as a `FieldsV1` set, to read back only those fields: objects by
/// field, items of lists of objects by their `name` (or, for taints, `key`), anything else
/// whole. Empty maps claim nothing.
fn field_set(intent: &Map<String, Json>) -> FieldSet {
    let mut set = FieldSet::new();
    for (key, value) in intent {
        let node = match value {
            Json::Object(inner) if inner.is_empty() => continue,
            Json::Array(items) if items.is_empty() => continue,
            Json::Object(inner) => Json::Object(field_set(inner)),
            Json::Array(items) => {
                let keyed: Option<Map<String, Json>> = items
                    .iter()
                    .map(|item| {
                        let item = item.as_object()?;
                        let identity = ["name", "key"]
                            .iter()
                            .find_map(|k| item.get(*k).map(|v| (k.to_string(), v.clone())))?;
                        let mut node = field_set(item);
                        node.insert(".".into(), Json::Object(Map::new()));
                        let key = Json::Object(Map::from_iter([identity])).to_string();
                        Some((format!("k:{key}"), Json::Object(node)))
                    })
                    .collect();
                Json::Object(keyed.unwrap_or_default())
            }
            _ => Json::Object(Map::new()),
        };
        set.insert(format!("f:{key}"), node);
    }
    set
}

/// A resource value's `force` (null: false).
fn force_of(value: &Value) -> bool {
    value.get("force").as_bool().unwrap_or(false)
}

impl PatchResource {
    fn info(&self) -> &'static PatchInfo {
        self.kind.info()
    }

    /// The namespace a target in a namespaced kind is in.
    fn namespace_of(value: &Value) -> String {
        meta(value)
            .get("namespace")
            .as_str()
            .unwrap_or("default")
            .to_string()
    }

    /// Where the object a resource value edits lives. `Ok(None)`: its kind is not served
    /// (a custom resource whose definition is gone).
    async fn resolve(&self, value: &Value) -> Result<Option<Target>, Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let name = meta(value).get("name").as_str().unwrap_or("default").to_string();
        let (resource, namespaced) = match &self.info().target {
            TargetKind::Fixed(fixed) => (
                ApiResource {
                    group: String::new(),
                    version: fixed.api_version.to_string(),
                    api_version: fixed.api_version.to_string(),
                    kind: fixed.kind.to_string(),
                    plural: fixed.plural.to_string(),
                },
                fixed.namespaced,
            ),
            TargetKind::Configured => {
                let Some((api_version, kind)) = self.kind.target_kind(value) else {
                    return Err(diag(Diagnostic::error(
                        "Unknown target kind",
                        "api_version and kind must be known to write this resource.",
                    )));
                };
                match self
                    .ctx
                    .discovery
                    .resolve(&conn.client, &api_version, &kind)
                    .await
                {
                    Ok(found) => (found.resource, found.namespaced),
                    Err(DiscoveryError::Unknown { .. }) => return Ok(None),
                    Err(e) => return Err(diag(e)),
                }
            }
        };
        let namespace = namespaced.then(|| Self::namespace_of(value));
        Ok(Some(Target {
            resource,
            namespace,
            name,
        }))
    }

    /// [`resolve`](Self::resolve) where the kind must be served.
    async fn resolve_served(&self, value: &Value) -> Result<Target, Diagnostics> {
        match self.resolve(value).await? {
            Some(resolved) => Ok(resolved),
            None => {
                let (api_version, kind) = self.kind.target_kind(value).unwrap_or_default();
                Err(diag(DiscoveryError::Unknown { api_version, kind }))
            }
        }
    }

    /// The `id` of a resource value: hashicorp's for the type.
    fn id_of(&self, value: &Value) -> Option<String> {
        if let Some(id) = self.kind.id(value) {
            return Some(id);
        }
        let meta = meta(value);
        let name = meta.get("name").as_str()?;
        match &self.info().target {
            TargetKind::Configured => {
                let (api_version, kind) = self.kind.target_kind(value)?;
                let mut id = format!("apiVersion={api_version},kind={kind},name={name}");
                if let Some(ns) = meta.get("namespace").as_str() {
                    id.push_str(&format!(",namespace={ns}"));
                }
                Some(id)
            }
            TargetKind::Fixed(f) if f.namespaced => {
                Some(format!("{}/{name}", meta.get("namespace").as_str()?))
            }
            TargetKind::Fixed(_) => Some(name.to_string()),
        }
    }

    /// The field manager a resource value writes as.
    fn manager_of(&self, value: &Value, estate: &str) -> String {
        value
            .get("field_manager")
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| default_manager(estate, self.info().manages))
    }

    /// The apply body: apiVersion, kind, name and namespace, and `fields`.
    fn body(target: &Target, fields: Map<String, Json>) -> Json {
        let mut body = Map::new();
        body.insert(
            "apiVersion".into(),
            Json::from(target.resource.api_version.as_str()),
        );
        body.insert("kind".into(), Json::from(target.resource.kind.as_str()));
        let mut meta = Map::new();
        meta.insert("name".into(), Json::from(target.name.as_str()));
        if let Some(ns) = &target.namespace {
            meta.insert("namespace".into(), Json::from(ns.as_str()));
        }
        for (key, value) in fields {
            match (key.as_str(), value) {
                ("metadata", Json::Object(extra)) => meta.extend(extra),
                (_, value) => {
                    body.insert(key, value);
                }
            }
        }
        body.insert("metadata".into(), Json::Object(meta));
        Json::Object(body)
    }

    /// Server-side apply of `body` as `manager`. A conflict only with `previous` (this
    /// resource's manager before `field_manager` changed) is this resource's own and is
    /// taken over.
    async fn apply_as(
        &self,
        client: &Client,
        target: &Target,
        body: &Json,
        manager: &str,
        force: bool,
        previous: Option<&str>,
    ) -> Result<Json, PatchError> {
        let mut force = force;
        loop {
            let result = objects::apply(client, target, body, &Manager { name: manager, force }, None).await;
            self.ctx.cache.wrote(target);
            match result {
                Ok(applied) => return Ok(applied),
                Err(ApiError::Conflict { object, fields, .. }) if !fields.is_empty() => {
                    if !force && previous.is_some_and(|p| fields.iter().all(|f| f.manager == p)) {
                        force = true;
                        continue;
                    }
                    return Err(PatchError::Conflict {
                        object,
                        fields,
                        forceable: self.info().manager_attributes,
                    });
                }
                Err(ApiError::NotFound { object }) => {
                    return Err(PatchError::Missing {
                        object,
                        type_name: self.info().type_name.to_string(),
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The resource value for the live object: the cluster's side of the fields `prior`
    /// claims, the rest of `prior` as it is.
    /// The resource value read from `live`: the fields the prior's intent claims, or on an
    /// import (`prior` null) all of them.
    fn state_of(&self, live: &Json, prior: &Value) -> Value {
        let view = if prior.is_null() {
            live.clone()
        } else {
            let mask = self.kind.intent(prior).map(|i| field_set(&i)).unwrap_or_default();
            ownership::project(live, &mask)
        };
        let mut state = match prior {
            Value::Null => Value::object(Vec::<(String, Value)>::new()),
            prior => prior.clone(),
        };
        if let Value::Object(read) = self.kind.read(&view, live, prior) {
            for (key, value) in read {
                state.set(&key, value);
            }
        }
        if self.info().metadata == MetaShape::Account {
            let mut meta = metadata::from_json(live, meta(prior), true, self.ctx.ignore());
            if let Value::Object(fields) = &mut meta {
                fields.remove("generate_name");
            }
            state.set("metadata", Value::List(vec![meta]));
        }
        plan::conform(&self.schema().block, state)
    }

    async fn write(&self, req: &ApplyRequest) -> Result<(Value, PrivateState), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let client = &conn.client;
        let planned = &req.planned_state;
        let target = self.resolve_served(planned).await?;
        let missing = || {
            diag(PatchError::Missing {
                object: target.object_ref(),
                type_name: self.info().type_name.to_string(),
            })
        };
        let live = match self
            .kind
            .create_wait(planned)
            .filter(|_| req.prior_state.is_null())
        {
            Some(timeout) => {
                let found = objects::wait_until(client, &target, timeout, "be created by the cluster", |l| {
                    l.is_some()
                })
                .await;
                match found {
                    Ok(live) => live,
                    Err(objects::WaitError::Timeout(_)) => return Err(missing()),
                    Err(e) => return Err(diag(e)),
                }
            }
            None => objects::get(client, &target).await.map_err(diag)?,
        };
        let live = live.ok_or_else(missing)?;
        self.kind.check(&live, planned).map_err(diag)?;
        // What the configuration sets, hashicorp's defaults with it (but Go's zero values, which
        // Kubernetes treats as unset).
        let block = self.schema().block;
        let config = rules::with_defaults(&block, &req.config, &|v| !v.is_zero());
        let mut fields = self
            .kind
            .intent(&plan::configured_only(&block, planned, &config))?;
        self.kind
            .keep_others(&mut fields, &live, &[planned, &req.prior_state]);
        let manager = self.manager_of(planned, conn.estate.as_str());
        let previous = req
            .prior_state
            .get("field_manager")
            .as_str()
            .filter(|p| *p != manager);
        let body = Self::body(&target, fields);
        let applied = self
            .apply_as(client, &target, &body, &manager, force_of(planned), previous)
            .await
            .map_err(diag)?;
        // A new field manager: the old one lets go of what it still holds.
        let applied = match previous {
            Some(old) => self
                .release(client, &target, &applied, old, &req.prior_state)
                .await
                .map_err(diag)?,
            None => applied,
        };
        let state = plan::settle(planned, &self.state_of(&applied, planned));
        Ok((state, PrivateState::Empty))
    }

    /// Applies, as `manager`, an object with none of the fields `prior` claims.
    async fn release(
        &self,
        client: &Client,
        target: &Target,
        live: &Json,
        manager: &str,
        prior: &Value,
    ) -> Result<Json, PatchError> {
        let mut fields = Map::new();
        self.kind.keep_others(&mut fields, live, &[prior]);
        let body = Self::body(target, fields);
        self.apply_as(client, target, &body, manager, force_of(prior), None)
            .await
    }

    async fn destroy(&self, req: &ApplyRequest) -> Result<(), Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let prior = &req.prior_state;
        // A target (or its kind) that is gone holds nothing of ours any more.
        let Some(target) = self.resolve(prior).await? else {
            return Ok(());
        };
        let Some(live) = objects::get(&conn.client, &target).await.map_err(diag)? else {
            return Ok(());
        };
        let manager = self.manager_of(prior, conn.estate.as_str());
        match self.release(&conn.client, &target, &live, &manager, prior).await {
            // Deleted since the look: nothing of ours is left on it.
            Err(PatchError::Missing { .. }) | Ok(_) => Ok(()),
            Err(e) => Err(diag(e)),
        }
    }

    /// The `metadata` block of the type.
    fn metadata_block(&self) -> NestedBlock {
        let shape = self.info().metadata;
        let mut block = Block::new("The metadata of the object to edit.");
        if shape == MetaShape::Account {
            block = block
                .attribute(Attribute::optional(
                    "annotations",
                    Type::map(Type::String),
                    "Annotations to set on the service account.",
                ))
                .attribute(Attribute::optional(
                    "labels",
                    Type::map(Type::String),
                    "Labels to set on the service account (never the estate label `tofu-estate`).",
                ))
                .attribute(Attribute::optional_computed(
                    "name",
                    Type::String,
                    "The service account's name: always `default`.",
                ))
                .attribute(Attribute::optional_computed(
                    "namespace",
                    Type::String,
                    "The namespace whose default service account this is. Default `default`.",
                ))
                .attribute(Attribute::computed(
                    "generation",
                    Type::Number,
                    "A sequence number representing a specific generation of the desired state.",
                ))
                .attribute(Attribute::computed(
                    "resource_version",
                    Type::String,
                    "An opaque value that represents the internal version of the service account.",
                ))
                .attribute(Attribute::computed(
                    "uid",
                    Type::String,
                    "The unique in time and space value for the service account.",
                ));
        } else {
            block = block.attribute(Attribute::required(
                "name",
                Type::String,
                "The name of the object.",
            ));
            match shape {
                MetaShape::NameNamespace => {
                    block = block.attribute(Attribute::optional(
                        "namespace",
                        Type::String,
                        "The namespace of the object (namespaced kinds only). Default `default`.",
                    ))
                }
                MetaShape::NameDefaultNamespace => {
                    block = block.attribute(Attribute::optional_computed(
                        "namespace",
                        Type::String,
                        "The namespace of the object. Default `default`.",
                    ))
                }
                _ => {}
            }
        }
        NestedBlock::exactly_one("metadata", block)
    }

    /// Paths whose change replaces the resource: its target.
    fn replace_paths(prior: &Value, planned: &Value) -> Vec<AttributePath> {
        let (before, after) = (meta(prior), meta(planned));
        let mut paths: Vec<AttributePath> = ["name", "namespace"]
            .into_iter()
            .filter(|k| !after.get(k).is_unknown() && before.get(k) != after.get(k))
            .map(|k| metadata::path_of(planned, k))
            .collect();
        for attribute in ["api_version", "kind"] {
            let (b, a) = (prior.get(attribute), planned.get(attribute));
            if !a.is_unknown() && b != a {
                paths.push(AttributePath::root(attribute));
            }
        }
        paths
    }
}

fn not_importable(type_name: &str) -> Diagnostics {
    diag(Diagnostic::error(
        format!("{type_name} cannot be imported"),
        "It claims only the fields it sets, so there is nothing to import: declare it in the \
         configuration and apply (with `force = true` to take over fields another manager owns).",
    ))
}

/// An error when a label map sets the estate label, which marks the objects an estate owns:
/// a patch-style resource never claims an object.
fn forbid_estate_label(labels: &Value, path: AttributePath) -> Diagnostics {
    let mut out = Diagnostics::new();
    if labels
        .entries()
        .is_some_and(|l| l.contains_key(kube_estate::ESTATE_LABEL))
    {
        out.push(
            Diagnostic::error(
                "The estate label cannot be set here",
                format!(
                    "Remove \"{}\": it marks the objects an estate owns, and a patch-style resource \
                     edits an object without owning it.",
                    kube_estate::ESTATE_LABEL
                ),
            )
            .at(path.key(kube_estate::ESTATE_LABEL)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_estate::{FieldConflict, ObjectRef};
    use serde_json::json;

    #[test]
    fn the_default_manager_names_the_estate_and_the_type() {
        assert_eq!(default_manager("network", "labels"), "tofu-live-network-labels");
    }

    #[test]
    fn an_intent_reads_back_only_its_own_keys_and_items() {
        let intent = json!({
            "metadata": {"labels": {"team": "a"}, "annotations": {}},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "env": [{"name": "A", "value": "1"}]}]}}}
        });
        let set = field_set(intent.as_object().unwrap());
        let live = json!({
            "metadata": {"name": "x", "labels": {"team": "b", "other": "o"}, "annotations": {"n": "1"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [
                {"name": "web", "image": "nginx", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "9"}]},
                {"name": "sidecar", "image": "proxy"}
            ]}}}
        });
        assert_eq!(
            ownership::project(&live, &set),
            json!({
                "metadata": {"labels": {"team": "b"}},
                "spec": {"template": {"spec": {"containers": [{"name": "web", "env": [{"name": "A", "value": "9"}]}]}}}
            })
        );
    }

    #[test]
    fn taints_are_matched_by_key() {
        let intent = json!({"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}});
        let set = field_set(intent.as_object().unwrap());
        let live = json!({"spec": {"taints": [
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
            {"key": "k", "value": "changed", "effect": "NoSchedule"}
        ]}});
        assert_eq!(
            ownership::project(&live, &set),
            json!({"spec": {"taints": [{"key": "k", "value": "changed", "effect": "NoSchedule"}]}})
        );
    }

    #[test]
    fn a_conflict_names_the_other_manager_and_force() {
        let d: Diagnostic = PatchError::Conflict {
            object: ObjectRef::cluster("Namespace", "shop"),
            fields: vec![FieldConflict {
                manager: "other".into(),
                field: ".metadata.labels.team".into(),
            }],
            forceable: true,
        }
        .into();
        assert_eq!(
            d.summary,
            "Field manager conflict on Namespace \"shop\": fields owned by \"other\""
        );
        assert!(d.detail.contains("force = true"), "{}", d.detail);
    }

    #[test]
    fn the_body_carries_the_target_and_the_claimed_fields() {
        let target = Target {
            resource: ApiResource {
                group: String::new(),
                version: "v1".into(),
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                plural: "configmaps".into(),
            },
            namespace: Some("shop".into()),
            name: "cfg".into(),
        };
        let fields = json!({"metadata": {"labels": {"a": "1"}}, "data": {"k": "v"}});
        assert_eq!(
            PatchResource::body(&target, fields.as_object().unwrap().clone()),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cfg", "namespace": "shop", "labels": {"a": "1"}}, "data": {"k": "v"}})
        );
    }
}
