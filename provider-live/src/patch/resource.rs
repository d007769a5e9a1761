//! A patch-style type as the engine sees it: schema, validation, plan, apply, read and import,
//! over the shared machinery of [`PatchResource`].

use async_trait::async_trait;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Diagnostic, Diagnostics, IdentitySchema,
    ImportRequest, ImportResponse, PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema,
    Type, Value,
};

use super::*;
use crate::identity::{self, IdentityKind};

impl PatchResource {
    /// The kind the type's identity names, when hashicorp's type declares one.
    fn identity_kind(&self) -> Option<IdentityKind<'static>> {
        let info = self.info();
        match &info.target {
            TargetKind::Fixed(fixed) if info.identity => Some(IdentityKind {
                type_name: info.type_name,
                api_version: fixed.api_version,
                kind: fixed.kind,
                namespaced: fixed.namespaced,
            }),
            _ => None,
        }
    }
}

#[async_trait]
impl Resource for PatchResource {
    fn type_name(&self) -> &'static str {
        self.info().type_name
    }

    fn aliases(&self) -> &'static [&'static str] {
        self.info().aliases
    }

    /// hashicorp's patch-style resources are SDKv2 ones too (a null label is dropped, not refused).
    fn legacy_type_system(&self) -> bool {
        crate::facts::is_sdk_v2(self.info().type_name)
    }

    fn schema(&self) -> Schema {
        let info = self.info();
        let mut block = self.kind.block();
        block.description = info.description.to_string();
        block.attributes.insert(
            0,
            Attribute::optional_computed(
                "id",
                Type::String,
                "The identity of the edited object, as hashicorp spells it.",
            ),
        );
        if info.manager_attributes {
            block.attributes.push(Attribute::optional_computed(
                "field_manager",
                Type::String,
                "The field manager whose fields these are. Default `tofu-live-<estate>-<type>`, so that \
                 estates and resource types never remove each other's fields.",
            ));
            block.attributes.push(Attribute::optional(
                "force",
                Type::Bool,
                "Take over fields another field manager owns, instead of failing with a conflict.",
            ));
        }
        block.blocks.insert(0, self.metadata_block());
        let _ = crate::facts::annotate(info.type_name, &mut block);
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = self.kind.validate(config);
        if self.info().metadata == MetaShape::Account {
            let meta = meta(config);
            if let Some(name) = meta.get("name").as_str().filter(|n| *n != "default") {
                out.push(
                    Diagnostic::error(
                        "Not the default service account",
                        format!("metadata.name is {name:?}: this resource manages the service account \"default\"."),
                    )
                    .at(metadata::path_of(config, "name")),
                );
            }
            out.extend(forbid_estate_label(
                meta.get("labels"),
                metadata::path_of(config, "labels"),
            ));
        }
        if config
            .get("field_manager")
            .as_str()
            .is_some_and(|m| m.trim().is_empty())
        {
            out.push(
                Diagnostic::error("Empty field manager", "field_manager must name a field manager.")
                    .at(AttributePath::root("field_manager")),
            );
        }
        out.extend(timeouts::validate(config).into_iter().collect());
        out
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        // Planned from the configuration alone: without a connection (known only at apply) too.
        let estate = self.ctx.plan_estate().map_err(diag)?;
        let schema = self.schema();
        let prior = Some(&req.prior_state).filter(|p| !p.is_null());
        let mut planned = plan::unknown_computed(&schema.block, &req.proposed_new_state, prior);
        let shape = self.info().metadata;
        if let Some(meta) = metadata::of_mut(&mut planned) {
            let defaulted: &[&str] = match shape {
                MetaShape::Account => &["name", "namespace"],
                MetaShape::NameDefaultNamespace => &["namespace"],
                _ => &[],
            };
            // Only a value the configuration leaves null is defaulted: one known only at apply
            // (a namespace created in the same run) stays unknown, or the engine refuses the plan.
            let configured = metadata::of(&req.config);
            for field in defaulted {
                if configured.get(field).is_null() {
                    let value = match *field {
                        "namespace" => self.ctx.planned_namespace(),
                        // The account `default`, which every namespace has.
                        _ => Value::string("default"),
                    };
                    meta.set(field, value);
                }
            }
        }
        if self.info().manager_attributes && req.config.get("field_manager").is_null() {
            let manager = prior
                .map(|p| p.get("field_manager").clone())
                .filter(|m| !m.is_null())
                .unwrap_or_else(|| match estate {
                    Some(estate) => Value::string(default_manager(estate, self.info().manages)),
                    None => Value::unknown(),
                });
            planned.set("field_manager", manager);
        }
        if req.config.get("id").is_null() {
            planned.set(
                "id",
                self.id_of(&planned)
                    .map(Value::string)
                    .unwrap_or_else(Value::unknown),
            );
        }
        let mut response = PlanResponse::default();
        if let Some(prior) = prior {
            if planned != *prior && shape == MetaShape::Account {
                plan::metadata_will_change(&mut planned);
            }
            response.requires_replace = Self::replace_paths(prior, &planned);
        }
        response.planned_state = planned;
        Ok(response)
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        lifecycle::apply(&req, self.destroy(&req), async |_, _| self.write(&req).await).await
    }

    async fn read(&self, req: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        if let Some(deferred) = self.ctx.offline() {
            return Ok(deferred.unrefreshed(req));
        }
        let conn = self.ctx.connection().map_err(diag)?;
        let current = &req.current_state;
        let gone = |object: String| ReadResponse {
            new_state: Value::Null,
            private: Vec::new(),
            diagnostics: Diagnostics::from(Diagnostic::warning(
                format!("{object} is gone"),
                format!(
                    "The object {} edits no longer exists, so it was removed from the state. Recreate the \
                     object, or remove the resource from the configuration.",
                    self.info().type_name
                ),
            )),
        };
        let Some(target) = self.resolve(current).await? else {
            let (api_version, kind) = self.kind.target_kind(current).unwrap_or_default();
            return Ok(gone(format!("Kind {kind} of {api_version}")));
        };
        match objects::get(&conn.client, &target).await.map_err(diag)? {
            Some(live) => Ok(ReadResponse {
                new_state: self.state_of(&live, current),
                private: req.private,
                diagnostics: Diagnostics::new(),
            }),
            None => Ok(gone(target.object_ref().to_string())),
        }
    }

    fn identity_schema(&self) -> Option<IdentitySchema> {
        self.identity_kind().map(|kind| identity::schema(kind.namespaced))
    }

    fn identity(&self, state: &Value) -> Option<Value> {
        identity::of_typed(self.identity_kind()?, state)
    }

    fn import_id(&self, given: &Value) -> Result<String, Diagnostics> {
        let kind = self
            .identity_kind()
            .ok_or_else(|| not_importable(self.info().type_name))?;
        identity::typed_import_id(kind, given)
    }

    async fn import(&self, req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let TargetKind::Fixed(fixed) = &self.info().target else {
            return Err(not_importable(&req.type_name));
        };
        if !self.kind.importable() {
            return Err(not_importable(&req.type_name));
        }
        let conn = self.ctx.connection().map_err(diag)?;
        let (namespace, name) = crate::resource::parse_import_id(&req.id, fixed.namespaced).map_err(diag)?;
        let located = Value::object([(
            "metadata",
            Value::List(vec![Value::object([
                ("name", Value::string(name)),
                ("namespace", Value::from(namespace)),
            ])]),
        )]);
        let target = self.resolve_served(&located).await?;
        // No prior: the object's user-written labels and annotations show, as on any import.
        lifecycle::import(&conn.client, &target, req.type_name, |live| {
            let mut state = self.state_of(live, &Value::Null);
            let id = self.id_of(&state);
            state.set("id", Value::from(id));
            state
        })
        .await
    }
}
