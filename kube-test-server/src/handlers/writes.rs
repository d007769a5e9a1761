//! POST, PUT and PATCH: defaults, admission, validation and policies, managedFields, and the
//! store, in the apiserver's order; a write that changes nothing is not stored.

use super::body::{apply_patch, parse_yaml_body};
use super::call::{Call, Recording};
use crate::admission;
use crate::allocation;
use crate::controllers;
use crate::crd;
use crate::exchange::Reply;
use crate::kinds;
use crate::meta;
use crate::policies;
use crate::resources::{self, Generation};
use crate::semantics::{self, WriteInfo};
use crate::status::{self, ApiError};
use crate::store::Store;
use crate::strategy;
use crate::typed_patch;
use crate::webhooks;
use serde_json::{Value, json};

impl<'a> Call<'a> {
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
            self.record_update(None, &mut obj, &info);
        }
        if self.custom.is_none() {
            admission::mutate_create(&self.rt, &mut obj, store, &self.namespace)?;
            strategy::prepare_create(&self.rt, &mut obj, &self.ctx.user, info.time, sent_labels);
        }
        if let Some(mutated) = policies::mutate(store, &self.policy_write("CREATE", &obj, None))? {
            obj = mutated;
        }
        // What storage hands back is decoded, so defaulted, once more.
        self.apply_defaults(&mut obj);
        self.validate(&obj, None)?;
        webhooks::call(store, &self.policy_write("CREATE", &obj, None))?;
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
    pub(super) fn apply_defaults(&self, obj: &mut Value) {
        match &self.custom {
            Some(c) => c.apply_defaults(obj),
            None => semantics::apply_defaults(self.rt.kind, obj),
        }
    }

    /// Validation: the built-in kind's, or the custom kind's schema; Err is the 422.
    pub(super) fn validate(&self, obj: &Value, old: Option<&Value>) -> Result<(), ApiError> {
        match &self.custom {
            Some(c) => c.validate(obj),
            None => semantics::validate(self.rt.kind, self.rt.group, obj, old),
        }
    }

    /// An apply body that server-side apply can type with the kind's schema.
    pub(super) fn apply_config(&self) -> Result<Value, ApiError> {
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
    pub(super) fn policy_write<'b>(
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
    pub(super) fn store_quota_charge(&self, store: &mut Store, charge: admission::QuotaCharge, time: &str) {
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

    /// Records a write's `Update` entry in the version the request used, as kube-apiserver does
    /// (an autoscaling/v1 write of an HPA stored as v2 records v1 paths): `old` and `new` are
    /// stored objects.
    fn record_update(&self, old: Option<&Value>, new: &mut Value, info: &WriteInfo) {
        let old = old.map(|o| kinds::to_version(&self.rt, &self.version, o));
        let mut view = kinds::to_version(&self.rt, &self.version, new);
        semantics::record_update(old.as_ref(), &mut view, info);
        let recorded = view["metadata"]
            .as_object_mut()
            .and_then(|m| m.remove("managedFields"));
        if let Some(meta) = new["metadata"].as_object_mut() {
            match recorded {
                Some(entries) => meta.insert("managedFields".into(), entries),
                None => meta.remove("managedFields"),
            };
        }
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
            self.record_update(Some(&base), &mut new, &info);
        }
        // The strategy and the allocators act after the field manager: what they change is
        // not the writer's.
        if main_resource && self.custom.is_none() {
            strategy::prepare_update(&self.rt, old, &mut new);
            admission::mutate_update(&self.rt, &mut new);
        }
        if main_resource
            && let Some(mutated) = policies::mutate(store, &self.policy_write("UPDATE", &new, Some(old)))?
        {
            new = mutated;
            self.apply_defaults(&mut new);
        }
        self.validate(&new, Some(old))?;
        if main_resource {
            webhooks::call(store, &self.policy_write("UPDATE", &new, Some(old)))?;
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
}

/// Whether `new` only differs from `old` in managedFields timestamps (a no-op write).
pub(super) fn same_ignoring_times(old: &Value, new: &Value) -> bool {
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
