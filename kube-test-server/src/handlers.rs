//! Object handlers: GET, LIST, POST, PUT, PATCH, DELETE and DELETECOLLECTION on the stored
//! kinds, with the apiserver's order of checks (decode, options, namespace lifecycle,
//! validation, storage) so the same request fails the same way.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::admission;
use crate::allocation;
use crate::controllers;
use crate::crd;
use crate::exchange::{Ctx, Reply};
use crate::index::Id;
use crate::kinds;
use crate::meta;
use crate::policies;
use crate::resources::{self, DeleteAnswer, Deletion, Generation, ResourceType};
use crate::semantics::{self, Selectors, WriteInfo};
use crate::state::Shared;
use crate::status::{self, ApiError};
use crate::store::Store;
use crate::strategy;
use crate::typed_patch;

/// One request on a stored resource type.
pub struct Call<'a> {
    pub st: &'a Shared,
    pub ctx: &'a Ctx,
    pub rt: ResourceType,
    pub version: String,
    /// The namespace in the URL ("" for cluster-scoped kinds and cluster-wide lists).
    pub namespace: String,
    pub name: Option<String>,
    /// The kind a CustomResourceDefinition serves: its schema replaces the built-in registry
    /// code (decoding, defaults, validation).
    pub custom: Option<crd::CustomType>,
}

/// How a write records itself in managedFields.
#[derive(Clone, Copy)]
pub enum Recording<'a> {
    /// An Update by the request's manager, optionally through a subresource.
    Update(Option<&'a str>),
    /// Server-side apply already recorded it.
    Applied,
}

impl<'a> Call<'a> {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    pub fn target(&self) -> status::Target<'_> {
        self.rt.target(self.name.as_deref())
    }

    /// The object as the client asked to see it (served version, canonical key order).
    pub fn present(&self, obj: &Value) -> Value {
        kinds::present(&self.rt, &self.version, obj)
    }

    pub fn write_info<'b>(
        &'b self,
        manager: &'b str,
        subresource: Option<&'b str>,
        time: &'b str,
    ) -> WriteInfo<'b> {
        WriteInfo {
            manager,
            subresource,
            time,
        }
    }

    // ---- reads ----

    pub fn get(&self) -> Result<Reply, ApiError> {
        let store = self.st.store();
        let obj = store
            .get(&self.rt.key(), &self.namespace, self.name())
            .ok_or_else(|| status::not_found(self.target()))?;
        Ok(Reply::json(200, self.present(obj)))
    }

    pub fn list(&self) -> Result<Reply, ApiError> {
        let q = &self.ctx.query;
        let selectors = self.selectors()?;
        let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
        let token = q
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(ContinueToken::decode)
            .transpose()?;
        let store = self.st.store();
        let rv = token.as_ref().map(|t| t.rv).unwrap_or_else(|| store.current_rv());
        let start = token.as_ref().map(|t| t.start_after(&self.namespace));
        let mut items = Vec::new();
        let mut remaining = 0usize;
        let mut last_key = None;
        let key = self.rt.key();
        let candidates: Box<dyn Iterator<Item = (&Id, &Value)>> = match selectors.label_equalities() {
            Some(pairs) => Box::new(store.with_labels(&key, self.list_namespace(), pairs).into_iter()),
            None => Box::new(store.entries(&key, self.list_namespace())),
        };
        for (key, obj) in candidates {
            if start.as_ref().is_some_and(|s| key <= s) || !selectors.matches(obj) {
                continue;
            }
            if limit > 0 && items.len() == limit {
                remaining += 1;
                if !selectors.is_empty() {
                    break;
                }
                continue;
            }
            let mut item = self.present(obj);
            // Unstructured lists keep each item's kind and apiVersion.
            if let Some(m) = item.as_object_mut().filter(|_| !self.rt.custom) {
                m.shift_remove("kind");
                m.shift_remove("apiVersion");
            }
            last_key = Some(key.clone());
            items.push(item);
        }
        let mut list_meta = json!({"resourceVersion": rv.to_string()});
        if remaining > 0 {
            let (ns, name) = last_key.expect("a full page has a last item");
            let start = if self.namespace.is_empty() && self.rt.namespaced {
                format!("{ns}/{name}")
            } else {
                name
            };
            list_meta["continue"] = json!(
                ContinueToken {
                    rv,
                    start,
                    continued: token.is_some()
                }
                .encode()
            );
            if selectors.is_empty() {
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        let mut list = json!({
            "kind": format!("{}List", self.rt.kind),
            "apiVersion": self.rt.api_version(&self.version),
            "metadata": list_meta,
            "items": items,
        });
        if self.rt.custom {
            meta::sort_keys(&mut list);
        }
        Ok(Reply::json(200, list))
    }

    fn list_namespace(&self) -> Option<&str> {
        (self.rt.namespaced && !self.namespace.is_empty()).then_some(self.namespace.as_str())
    }

    pub fn selectors(&self) -> Result<Selectors, ApiError> {
        let q = &self.ctx.query;
        Selectors::parse(q.get("labelSelector"), q.get("fieldSelector"), self.rt.kind)
    }

    // ---- decoding ----

    /// Decodes the request body as an object of this kind; returns it with any warnings.
    pub fn decode_object(&self) -> Result<(Value, Vec<String>), ApiError> {
        let kind = self.rt.kind;
        let mut obj = parse_body(self.ctx, kind)?;
        let Some(map) = obj.as_object_mut() else {
            return Err(status::bad_request(&format!(
                "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                go_json_type(&obj)
            )));
        };
        let body_kind = map
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or(kind)
            .to_string();
        let body_version = map
            .get("apiVersion")
            .and_then(Value::as_str)
            .map(|v| v.rsplit('/').next().unwrap_or(v).to_string())
            .unwrap_or_else(|| self.version.clone());
        if body_kind != kind {
            return Err(status::bad_request(&format!(
                "{body_kind} in version \"{body_version}\" cannot be handled as a {kind}: converting ({body_version}.{body_kind}) to ({}.{kind}): unknown conversion",
                kinds::internal_package(self.rt.group)
            )));
        }
        let api_version = self.rt.api_version(&self.version);
        let schema = crate::schema::of(&api_version, kind).filter(|_| !self.rt.custom);
        let unknown = match &self.custom {
            Some(c) => c.unknown_fields(&obj),
            None => schema.map(|t| t.unknown_fields(&obj)).unwrap_or_default(),
        };
        let mut warnings = Vec::new();
        match self.ctx.query.get("fieldValidation").unwrap_or("Warn") {
            "Strict" if !unknown.is_empty() => {
                let list: Vec<String> = unknown.iter().map(|u| format!("unknown field \"{u}\"")).collect();
                return Err(status::bad_request(&format!(
                    "{kind} in version \"{body_version}\" cannot be handled as a {kind}: strict decoding error: {}",
                    list.join(", ")
                )));
            }
            "Ignore" => {}
            _ => warnings.extend(unknown.iter().map(|u| format!("unknown field \"{u}\""))),
        }
        if let Some(t) = schema {
            t.prune(&mut obj);
        }
        if let Some(c) = &self.custom {
            c.prune(&mut obj);
        }
        let map = obj.as_object_mut().expect("checked to be an object above");
        map.insert("kind".into(), json!(kind));
        map.insert("apiVersion".into(), json!(api_version));
        if !map.get("metadata").is_some_and(Value::is_object) {
            map.insert("metadata".into(), json!({}));
        }
        Ok((obj, warnings))
    }

    /// `dryRun` option: only `All` is valid.
    pub fn dry_run(&self, options_kind: &str) -> Result<bool, ApiError> {
        dry_run_value(self.ctx.query.get("dryRun"), options_kind)
    }

    fn check_body_namespace(&self, obj: &mut Value) -> Result<(), ApiError> {
        if !self.rt.namespaced {
            if let Some(m) = obj["metadata"].as_object_mut() {
                m.shift_remove("namespace");
            }
            return Ok(());
        }
        match obj["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() && ns != self.namespace => Err(status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            _ => {
                obj["metadata"]["namespace"] = json!(self.namespace);
                Ok(())
            }
        }
    }

    /// Admission's namespace lifecycle check for creates.
    fn check_namespace_open(&self, store: &Store, name: &str) -> Result<(), ApiError> {
        if !self.rt.namespaced {
            return Ok(());
        }
        match store.get(&resources::NAMESPACES.key(), "", &self.namespace) {
            None => Err(status::not_found(
                resources::NAMESPACES.target(Some(&self.namespace)),
            )),
            Some(ns) if ns["status"]["phase"] == "Terminating" => Err(status::namespace_terminating(
                self.rt.target(Some(name)),
                &self.namespace,
            )),
            Some(_) => Ok(()),
        }
    }

    // ---- writes ----

    pub fn create(&self) -> Result<Reply, ApiError> {
        let (mut obj, warnings) = self.decode_object()?;
        obj = kinds::from_version(&self.rt, &self.version, &obj);
        let dry = self.dry_run("CreateOptions")?;
        self.check_body_namespace(&mut obj)?;
        let time = meta::now();
        let manager = self.ctx.manager();
        let info = self.write_info(&manager, None, &time);
        let mut store = self.st.store();
        let created = self.insert_new(&mut store, obj, &info, Recording::Update(None), dry)?;
        drop(store);
        if !dry {
            self.after_write(&created);
        }
        let mut warnings = warnings;
        warnings.extend(strategy::warnings(&self.rt, &created));
        Ok(Reply::json(201, self.present(&created)).with_warnings(warnings))
    }

    /// The create path shared by POST and create-by-apply.
    pub fn insert_new(
        &self,
        store: &mut Store,
        mut obj: Value,
        info: &WriteInfo,
        recording: Recording,
        dry: bool,
    ) -> Result<Value, ApiError> {
        let meta_map = obj["metadata"]
            .as_object_mut()
            .expect("decoded objects have metadata");
        let mut name = meta_map
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if name.is_empty()
            && let Some(prefix) = meta_map
                .get("generateName")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
        {
            name = format!("{prefix}{}", meta::name_suffix());
            meta_map.insert("name".into(), json!(name));
        }
        for k in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
            "generation",
            "selfLink",
        ] {
            meta_map.shift_remove(k);
        }
        self.check_namespace_open(store, &name)?;
        if let Some(c) = &self.custom {
            c.check_create(&name)?;
        }
        let sent_labels = obj["metadata"]
            .get("labels")
            .is_some_and(|l| l.as_object().is_some_and(|m| !m.is_empty()));
        match &self.custom {
            Some(c) => c.prepare_create(&mut obj),
            None => kinds::prepare_create(&self.rt, &mut obj),
        }
        self.apply_defaults(&mut obj);
        obj["metadata"]["uid"] = json!(meta::new_uid());
        obj["metadata"]["creationTimestamp"] = json!(info.time);
        if let Recording::Update(sub) = recording
            && self.rt.managed_fields
        {
            let info = WriteInfo {
                subresource: sub,
                ..*info
            };
            semantics::record_update(None, &mut obj, &info);
        }
        if self.custom.is_none() {
            admission::mutate_create(&self.rt, &mut obj, store, &self.namespace)?;
            strategy::prepare_create(&self.rt, &mut obj, &self.ctx.user, info.time, sent_labels);
        }
        // What storage hands back is decoded, so defaulted, once more.
        self.apply_defaults(&mut obj);
        self.validate(&obj, None)?;
        policies::admit(store, &self.policy_write("CREATE", &obj, None))?;
        let charges = admission::charge_quota(&self.rt, &obj, store, &self.namespace)?;
        if store.get(&self.rt.key(), &self.namespace, &name).is_some() {
            return Err(status::already_exists(self.rt.target(Some(&name))));
        }
        if self.rt == resources::SERVICES {
            allocation::allocate(store, &mut obj, None)?;
        }
        if matches!(self.rt.generation, Generation::Tracked | Generation::Fixed) {
            obj["metadata"]["generation"] = json!(1);
        }
        meta::canonicalize(&mut obj);
        if dry {
            return Ok(obj);
        }
        for charge in charges {
            self.store_quota_charge(store, charge, info.time);
        }
        let stored = store.put(&self.rt.key(), obj);
        if self.rt == resources::NAMESPACES {
            controllers::populate_namespace(store, &self.st.ca.cert_pem, &name, info.time);
        }
        Ok(stored)
    }

    /// Defaulting: the built-in kind's, or the custom kind's schema.
    fn apply_defaults(&self, obj: &mut Value) {
        match &self.custom {
            Some(c) => c.apply_defaults(obj),
            None => semantics::apply_defaults(self.rt.kind, obj),
        }
    }

    /// Validation: the built-in kind's, or the custom kind's schema; Err is the 422.
    fn validate(&self, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
        match &self.custom {
            Some(c) => c.validate(obj),
            None => semantics::validate(self.rt.kind, self.rt.group, obj, old),
        }
    }

    /// An apply body that server-side apply can type with the kind's schema.
    fn apply_config(&self) -> Result<Value, ApiError> {
        let config = parse_yaml_body(self.ctx)?;
        if let Some(c) = &self.custom {
            c.check_apply(&config)?;
        } else {
            let api_version = self.rt.api_version(&self.version);
            if let Some(t) = crate::schema::of(&api_version, self.rt.kind) {
                let errors = typed_patch::errors(t, &config);
                if !errors.is_empty() {
                    return Err(typed_patch::failure(&config, &api_version, self.rt.kind, &errors));
                }
            }
        }
        Ok(config)
    }

    /// This request as ValidatingAdmissionPolicies see it.
    fn policy_write<'b>(
        &'b self,
        operation: &'b str,
        object: &'b Value,
        old: Option<&'b Value>,
    ) -> policies::Write<'b> {
        policies::Write {
            rt: &self.rt,
            version: &self.version,
            operation,
            object,
            old,
            namespace: &self.namespace,
            user: &self.ctx.user,
        }
    }

    /// Writes the `used` the quota admission charged, as the apiserver itself.
    fn store_quota_charge(&self, store: &mut Store, charge: admission::QuotaCharge, time: &str) {
        let old = charge.quota.clone();
        let mut updated = charge.quota;
        let stored = store
            .get(
                &resources::RESOURCEQUOTAS.key(),
                &self.namespace,
                updated["metadata"]["name"].as_str().unwrap_or(""),
            )
            .cloned()
            .unwrap_or(old);
        updated["metadata"]["managedFields"] = stored["metadata"]["managedFields"].clone();
        let info = WriteInfo {
            manager: "kube-apiserver",
            subresource: Some("status"),
            time,
        };
        semantics::record_update(Some(&stored), &mut updated, &info);
        meta::canonicalize(&mut updated);
        store.put(&resources::RESOURCEQUOTAS.key(), updated);
    }

    /// Controllers and persistence that follow a committed write.
    pub fn after_write(&self, obj: &Value) {
        if self.rt == resources::CLUSTERROLES {
            controllers::aggregate_cluster_roles(self.st);
        }
        if self.rt == resources::SECRETS {
            controllers::fill_service_account_token(self.st, obj);
        }
        if self.rt == resources::CRDS {
            crd::after_write(self.st, obj);
        }
        self.st.written.notify_one();
    }

    pub fn update(&self) -> Result<Reply, ApiError> {
        let (mut obj, warnings) = self.decode_object()?;
        obj = kinds::from_version(&self.rt, &self.version, &obj);
        let dry = self.dry_run("UpdateOptions")?;
        let body_name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
        if body_name != self.name() {
            return Err(status::bad_request(&format!(
                "the name of the object ({body_name}) does not match the name on the URL ({})",
                self.name()
            )));
        }
        self.check_body_namespace(&mut obj)?;
        let manager = self.ctx.manager();
        let time = meta::now();
        let info = self.write_info(&manager, None, &time);
        let mut store = self.st.store();
        let old = store
            .get(&self.rt.key(), &self.namespace, self.name())
            .cloned()
            .ok_or_else(|| status::not_found(self.target()))?;
        match obj["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
        {
            Some(rv) if Some(rv) != old["metadata"]["resourceVersion"].as_str() => {
                return Err(status::conflict(self.target()));
            }
            None => semantics::require_resource_version(&self.rt, &obj)?,
            _ => {}
        }
        let stored = self.commit_update(&mut store, &old, obj, &info, Recording::Update(None), dry)?;
        drop(store);
        if !dry {
            self.after_write(&stored);
        }
        let mut warnings = warnings;
        warnings.extend(strategy::warnings(&self.rt, &stored));
        Ok(Reply::json(200, self.present(&stored)).with_warnings(warnings))
    }

    /// Finishes a write over `old`: keeps server-owned metadata, defaults, validates, bumps
    /// generation, records managedFields, and stores unless nothing changed or `dry`.
    pub fn commit_update(
        &self,
        store: &mut Store,
        old: &Value,
        mut new: Value,
        info: &WriteInfo,
        recording: Recording,
        dry: bool,
    ) -> Result<Value, ApiError> {
        let old_meta = old["metadata"].as_object().cloned().unwrap_or_default();
        // managedFields a write sets (non-empty, unlike the stored ones) replace the stored
        // ones before this write is recorded on top, as kube-apiserver's field manager does:
        // how a client hands fields from one manager or operation to another.
        let given = new["metadata"]["managedFields"]
            .as_array()
            .filter(|given| {
                !given.is_empty() && Some(*given) != old_meta.get("managedFields").and_then(Value::as_array)
            })
            .map(|given| Value::Array(given.clone()));
        {
            let m = new["metadata"].as_object_mut().expect("objects have metadata");
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
            ] {
                match old_meta.get(k) {
                    Some(v) => m.insert(k.into(), v.clone()),
                    None => m.shift_remove(k),
                };
            }
            if matches!(recording, Recording::Update(_)) {
                match old_meta.get("managedFields") {
                    Some(v) => m.insert("managedFields".into(), v.clone()),
                    None => m.shift_remove("managedFields"),
                };
            }
        }
        new["kind"] = old["kind"].clone();
        new["apiVersion"] = old["apiVersion"].clone();
        let main_resource = !matches!(recording, Recording::Update(Some(_)));
        if main_resource {
            match &self.custom {
                Some(c) => c.prepare_update(old, &mut new),
                None => kinds::prepare_update(&self.rt, old, &mut new),
            }
        }
        self.apply_defaults(&mut new);
        if let Recording::Update(sub) = recording
            && self.rt.managed_fields
        {
            let info = WriteInfo {
                subresource: sub,
                ..*info
            };
            let mut base = old.clone();
            if let Some(given) = given {
                base["metadata"]["managedFields"] = given;
            }
            semantics::record_update(Some(&base), &mut new, &info);
        }
        // The strategy and the allocators act after the field manager: what they change is
        // not the writer's.
        if main_resource && self.custom.is_none() {
            strategy::prepare_update(&self.rt, old, &mut new);
            admission::mutate_update(&self.rt, &mut new);
        }
        self.validate(&new, Some(old))?;
        if main_resource {
            policies::admit(store, &self.policy_write("UPDATE", &new, Some(old)))?;
        }
        let bump = match self.rt.generation {
            Generation::Tracked => kinds::spec_changed(old, &new),
            Generation::SpecOnly => old.get("spec") != new.get("spec"),
            Generation::None | Generation::Fixed => false,
        };
        if bump {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(g + 1);
        }
        if self.rt == resources::SERVICES && main_resource {
            allocation::allocate(store, &mut new, Some(old))?;
        }
        meta::canonicalize(&mut new);
        if same_ignoring_times(old, &new) || dry {
            return Ok(if dry { new } else { old.clone() });
        }
        // The last finalizer of an object being deleted is gone: storage deletes it and
        // answers with the update as it would have been, at the stored resourceVersion.
        let finalizers_left = new["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if new["metadata"].get("deletionTimestamp").is_some() && !finalizers_left {
            let (ns, name) = crate::store::ns_name(&new);
            store.remove(&self.rt.key(), &ns, &name);
            return Ok(new);
        }
        Ok(store.put(&self.rt.key(), new))
    }

    pub fn patch(&self) -> Result<Reply, ApiError> {
        let ct = self.ctx.content_type();
        if self.custom.is_some() && ct == "application/strategic-merge-patch+json" {
            return Err(status::failure(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: \
                 application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
                None,
            ));
        }
        let dry = self.dry_run("PatchOptions")?;
        let apply = ct == "application/apply-patch+yaml";
        let field_manager = self.ctx.query.get("fieldManager").filter(|m| !m.is_empty());
        if apply && field_manager.is_none() {
            return Err(status::invalid_options(
                "PatchOptions",
                "fieldManager",
                "FieldValueRequired",
                "Required value: is required for apply patch",
            ));
        }
        let manager = self.ctx.manager();
        let time = meta::now();
        let info = self.write_info(&manager, None, &time);
        let force = self.ctx.query.flag("force");
        let mut store = self.st.store();
        let old = store.get(&self.rt.key(), &self.namespace, self.name()).cloned();
        let Some(old) = old else {
            if !apply {
                return Err(status::not_found(self.target()));
            }
            let config = self.apply_config()?;
            let (mut obj, _) = semantics::apply(None, &config, &info, force)?;
            obj = kinds::from_version(&self.rt, &self.version, &obj);
            self.check_body_namespace(&mut obj)?;
            obj["metadata"]["name"] = json!(self.name());
            let created = self.insert_new(&mut store, obj, &info, Recording::Applied, dry)?;
            drop(store);
            if !dry {
                self.after_write(&created);
            }
            return Ok(Reply::json(201, self.present(&created))
                .with_warnings(strategy::warnings(&self.rt, &created)));
        };
        let view = kinds::to_version(&self.rt, &self.version, &old);
        let (patched, recording) = if apply {
            let config = self.apply_config()?;
            let (applied, changed) = semantics::apply(Some(&view), &config, &info, force)?;
            if !changed {
                return Ok(Reply::json(200, self.present(&old)));
            }
            (applied, Recording::Applied)
        } else {
            (apply_patch(self.ctx, &view)?, Recording::Update(None))
        };
        let patched = kinds::from_version(&self.rt, &self.version, &patched);
        if let Some(rv) = patched["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
            && Some(rv) != old["metadata"]["resourceVersion"].as_str()
        {
            return Err(status::conflict(self.target()));
        }
        let stored = self.commit_update(&mut store, &old, patched, &info, recording, dry)?;
        drop(store);
        if !dry {
            self.after_write(&stored);
        }
        Ok(Reply::json(200, self.present(&stored)).with_warnings(strategy::warnings(&self.rt, &stored)))
    }

    // ---- deletes ----

    pub fn delete(&self) -> Result<Reply, ApiError> {
        let opts = DeleteOptions::parse(self.ctx)?;
        let mut store = self.st.store();
        let old = store
            .get(&self.rt.key(), &self.namespace, self.name())
            .cloned()
            .ok_or_else(|| status::not_found(self.target()))?;
        self.check_preconditions(&opts, &old)?;
        let answer = self.delete_one(&mut store, old, &opts)?;
        drop(store);
        if self.rt == resources::CLUSTERROLES {
            controllers::aggregate_cluster_roles(self.st);
        }
        self.st.written.notify_one();
        let mut warnings = Vec::new();
        if self.rt == resources::JOBS && opts.propagation.is_none() {
            warnings.push("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning".to_string());
        }
        Ok(Reply::json(200, answer).with_warnings(warnings))
    }

    fn check_preconditions(&self, opts: &DeleteOptions, old: &Value) -> Result<(), ApiError> {
        let details = || {
            let mut d = Map::new();
            d.insert("name".into(), json!(self.name()));
            if !self.rt.group.is_empty() {
                d.insert("group".into(), json!(self.rt.group));
            }
            d.insert("kind".into(), json!(self.rt.kind));
            Value::Object(d)
        };
        let prefix = format!(
            "Operation cannot be fulfilled on {} \"{}\"",
            self.rt.kind,
            self.name()
        );
        if let Some(uid) = &opts.uid {
            let actual = old["metadata"]["uid"].as_str().unwrap_or("");
            if uid != actual {
                return Err(status::conflict_with(
                    &format!(
                        "{prefix}: the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                    ),
                    details(),
                ));
            }
        }
        if let Some(rv) = &opts.resource_version {
            let actual = old["metadata"]["resourceVersion"].as_str().unwrap_or("");
            if rv != actual {
                return Err(status::conflict_with(
                    &format!(
                        "{prefix}: the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                    ),
                    details(),
                ));
            }
        }
        Ok(())
    }

    /// Deletes (or starts deleting) one object and returns what the DELETE answers.
    pub fn delete_one(&self, store: &mut Store, old: Value, opts: &DeleteOptions) -> Result<Value, ApiError> {
        let (ns, name) = crate::store::ns_name(&old);
        let key = self.rt.key();
        let now = meta::now();
        if self.rt == resources::NAMESPACES {
            // NamespaceLifecycle admission keeps the system namespaces.
            if matches!(name.as_str(), "default" | "kube-system" | "kube-public") {
                let t = self.rt.target(Some(&name));
                let message = format!(
                    "{} \"{name}\" is forbidden: this namespace may not be deleted",
                    t.qualified()
                );
                return Err(status::failure(403, "Forbidden", &message, Some(t.details())));
            }
            if old["metadata"].get("deletionTimestamp").is_some() {
                return Ok(self.present(&old));
            }
            let mut obj = old;
            obj["metadata"]["deletionTimestamp"] = json!(now);
            obj["status"]["phase"] = json!("Terminating");
            meta::canonicalize(&mut obj);
            if opts.dry_run {
                return Ok(self.present(&obj));
            }
            let stored = store.put(&key, obj);
            controllers::schedule_namespace_cleanup(self.st, &name);
            return Ok(self.present(&stored));
        }
        if self.rt == resources::CRDS {
            return Ok(self.present(&crd::delete(self.st, store, old, opts.dry_run)));
        }
        if old["metadata"].get("deletionTimestamp").is_some() {
            return Ok(self.present(&old));
        }
        let mut finalizers: Vec<Value> = old["metadata"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // The garbage collector's finalizer for the propagation policy (the registry's
        // default policy when the request names none).
        let gc_finalizer = match opts.propagation.as_deref() {
            Some("Foreground") => Some("foregroundDeletion"),
            Some("Orphan") => Some("orphan"),
            None if self.rt.deletion == Deletion::Orphan => Some("orphan"),
            _ => None,
        };
        if let Some(f) = gc_finalizer
            && !finalizers.iter().any(|x| x == f)
        {
            finalizers.push(json!(f));
        }
        let graceful = self.rt.deletion == Deletion::Graceful;
        if !finalizers.is_empty() || graceful {
            let mut obj = old;
            obj["metadata"]["deletionTimestamp"] = json!(now);
            obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            if !finalizers.is_empty() {
                obj["metadata"]["finalizers"] = json!(finalizers);
            }
            // Graceful deletion bumps any generation the object has.
            if let Some(g) = obj["metadata"]["generation"].as_i64() {
                obj["metadata"]["generation"] = json!(g + 1);
            }
            meta::canonicalize(&mut obj);
            if opts.dry_run {
                return Ok(self.present(&obj));
            }
            if finalizers.is_empty() {
                // A Pod no kubelet runs has nothing to wait for: it goes at once.
                if let Some(gone) = store.remove(&key, &ns, &name) {
                    obj["metadata"]["resourceVersion"] = gone["metadata"]["resourceVersion"].clone();
                }
                return Ok(self.present(&obj));
            }
            let stored = store.put(&key, obj);
            if let Some(f) = gc_finalizer {
                controllers::schedule_finalizer_removal(self.st, self.rt, &ns, &name, f);
            }
            return Ok(self.present(&stored));
        }
        let uid = old["metadata"]["uid"].as_str().unwrap_or("").to_string();
        let gone = if opts.dry_run {
            old
        } else {
            store.remove(&key, &ns, &name).unwrap_or(old)
        };
        Ok(match self.rt.delete_answer {
            DeleteAnswer::Status => status::delete_success(self.rt.target(Some(&name)), &uid),
            DeleteAnswer::Object => self.present(&gone),
        })
    }

    pub fn delete_collection(&self) -> Result<Reply, ApiError> {
        let opts = DeleteOptions::parse(self.ctx)?;
        let selectors = self.selectors()?;
        let mut store = self.st.store();
        let rv = store.current_rv();
        let victims: Vec<Value> = store
            .list(&self.rt.key(), self.list_namespace())
            .filter(|o| selectors.matches(o))
            .cloned()
            .collect();
        let mut items = Vec::new();
        for obj in victims {
            let mut item = self.present(&obj);
            if let Some(m) = item.as_object_mut() {
                m.shift_remove("kind");
                m.shift_remove("apiVersion");
            }
            items.push(item);
            self.delete_one(&mut store, obj, &opts)?;
        }
        drop(store);
        self.st.written.notify_one();
        Ok(Reply::json(
            200,
            json!({
                "kind": format!("{}List", self.rt.kind),
                "apiVersion": self.rt.api_version(&self.version),
                "metadata": {"resourceVersion": rv.to_string()},
                "items": items,
            }),
        ))
    }
}

/// `dryRun` option value check shared by every verb.
pub fn dry_run_value(value: Option<&str>, options_kind: &str) -> Result<bool, ApiError> {
    match value {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(status::invalid_options(
            options_kind,
            "dryRun",
            "FieldValueNotSupported",
            &format!("Unsupported value: [\"{other}\"]: supported values: \"All\""),
        )),
    }
}

/// DeleteOptions from the body (or the query).
pub struct DeleteOptions {
    pub propagation: Option<String>,
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub dry_run: bool,
}

impl DeleteOptions {
    pub fn parse(ctx: &Ctx) -> Result<Self, ApiError> {
        let body: Value = if ctx.body.iter().all(u8::is_ascii_whitespace) {
            json!({})
        } else {
            parse_body(ctx, "DeleteOptions")?
        };
        let dry = body["dryRun"]
            .as_array()
            .and_then(|a| a.first())
            .and_then(Value::as_str);
        Ok(Self {
            propagation: body["propagationPolicy"]
                .as_str()
                .or(ctx.query.get("propagationPolicy"))
                .map(str::to_string),
            uid: body["preconditions"]["uid"].as_str().map(str::to_string),
            resource_version: body["preconditions"]["resourceVersion"]
                .as_str()
                .map(str::to_string),
            dry_run: dry_run_value(dry.or(ctx.query.get("dryRun")), "DeleteOptions")?,
        })
    }
}

/// Whether `new` only differs from `old` in managedFields timestamps (a no-op write).
fn same_ignoring_times(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(fields) = v["metadata"]["managedFields"].as_array_mut() {
            for f in fields {
                if let Some(m) = f.as_object_mut() {
                    m.shift_remove("time");
                }
            }
        }
        v
    };
    strip(old) == strip(new)
}

/// Parses the body as JSON (or YAML when the Content-Type says so).
pub fn parse_body(ctx: &Ctx, kind: &str) -> Result<Value, ApiError> {
    let ct = ctx.content_type();
    if ct == "application/vnd.kubernetes.protobuf" {
        return crate::protobuf::decode(&ctx.body).map_err(|e| status::bad_request(&e.to_string()));
    }
    if ct == "application/yaml" {
        return serde_yaml::from_slice(&ctx.body).map_err(|e| {
            status::bad_request(&format!(
                "the object provided is unrecognized (must be of type {kind}): {e}"
            ))
        });
    }
    serde_json::from_slice(&ctx.body).map_err(|e| {
        let text = String::from_utf8_lossy(&ctx.body);
        let snippet: String = text.chars().take(30).collect();
        let more = if text.chars().count() > 30 { " ..." } else { "" };
        status::bad_request(&format!(
            "the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {} ({snippet}{more})",
            go_json_error(&e)
        ))
    })
}

/// The apply body: YAML (JSON is YAML).
pub fn parse_yaml_body(ctx: &Ctx) -> Result<Value, ApiError> {
    let value: Value = serde_yaml::from_slice(&ctx.body)
        .map_err(|e| status::bad_request(&format!("error decoding YAML: {e}")))?;
    if !value.is_object() {
        return Err(status::bad_request(
            "error decoding YAML: the apply configuration must be an object",
        ));
    }
    Ok(value)
}

/// Applies a merge, JSON or strategic-merge patch body to `current`.
pub fn apply_patch(ctx: &Ctx, current: &Value) -> Result<Value, ApiError> {
    let patch: Value = serde_json::from_slice(&ctx.body)
        .map_err(|e| status::bad_request(&format!("error decoding patch: {}", go_json_error(&e))))?;
    match ctx.content_type() {
        "application/merge-patch+json" => Ok(semantics::merge_patch(current, &patch)),
        "application/json-patch+json" => semantics::json_patch(current, &patch),
        "application/strategic-merge-patch+json" => semantics::strategic_merge_patch(current, &patch),
        _ => Err(status::unsupported_media_type()),
    }
}

/// Go's encoding/json wording for the common parse failures.
fn go_json_error(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Eof => "unexpected end of JSON input".into(),
        _ => format!("invalid character at line {} column {}", e.line(), e.column()),
    }
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        _ => "null",
    }
}

/// A `continue` token: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}`.
#[derive(Debug)]
pub struct ContinueToken {
    pub rv: u64,
    /// The last returned key (`name`, or `namespace/name` in cluster-wide lists).
    pub start: String,
    /// Whether this page itself was a continuation (the apiserver then adds a leading `/`).
    pub continued: bool,
}

impl ContinueToken {
    pub fn encode(&self) -> String {
        let slash = if self.continued { "/" } else { "" };
        let text =
            json!({"v": "meta.k8s.io/v1", "rv": self.rv, "start": format!("{slash}{}\u{0}", self.start)})
                .to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    pub fn decode(token: &str) -> Result<Self, ApiError> {
        let bad = || {
            status::failure(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                None,
            )
        };
        let trimmed = token.trim_end_matches('=');
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(trimmed)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed))
            .map_err(|_| bad())?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        let start = v["start"].as_str().ok_or_else(bad)?;
        let start = start
            .trim_start_matches('/')
            .trim_end_matches('\u{0}')
            .to_string();
        Ok(Self {
            rv: v["rv"].as_u64().ok_or_else(bad)?,
            start,
            continued: true,
        })
    }

    /// The (namespace, name) key after which the page starts.
    fn start_after(&self, url_namespace: &str) -> (String, String) {
        match self.start.split_once('/') {
            Some((ns, name)) if url_namespace.is_empty() => (ns.to_string(), name.to_string()),
            _ => (url_namespace.to_string(), self.start.clone()),
        }
    }
}
