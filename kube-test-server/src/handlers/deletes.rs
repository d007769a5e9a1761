//! DELETE and DELETECOLLECTION: delete options and preconditions, finalizers and graceful
//! deletion, and what each answers.

use super::body::{dry_run_value, parse_body};
use super::call::Call;
use crate::controllers;
use crate::crd;
use crate::exchange::{Ctx, Reply};
use crate::meta;
use crate::resources::{self, DeleteAnswer, Deletion};
use crate::status::{self, ApiError};
use crate::store::Store;
use serde_json::{Map, Value, json};

impl<'a> Call<'a> {
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

    pub(super) fn check_preconditions(&self, opts: &DeleteOptions, old: &Value) -> Result<(), ApiError> {
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
