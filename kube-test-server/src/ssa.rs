//! Server-side apply and `managedFields` bookkeeping (FieldsV1), after structured-merge-diff.
//!
//! Field sets are sets of paths (`f:` fields, `k:` associative-list keys, `v:` set values).
//! An apply owns exactly the fields of its configuration; an update owns the fields it added or
//! changed compared with the previous object. For a create the "previous object" is the zero
//! Go struct of the kind, which is why `f:labels` carries `"."` but `f:spec` does not.

mod field_set;
mod managed_fields;
mod merge;
#[cfg(test)]
mod tests;

use serde_json::{Value, json};

use crate::schema;
use field_set::{Diff, Element, FieldSet, Path, Schema, compare, to_set};
use managed_fields::{Entry, decode_entries, path_string, store_entries, without_managed_fields};
use merge::{is_item_key, merge, remove_path};

/// The result of a successful apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyOutcome {
    /// The new object, defaulted, with `metadata.managedFields` updated.
    pub object: Value,
    /// False for a no-op apply: the server keeps the stored object and its resourceVersion.
    pub changed: bool,
}

/// An apply that would overwrite fields other managers own (HTTP 409).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyConflict {
    /// `(field, manager)`, e.g. `(".data.a", "tofu-live")`, sorted by manager then field.
    pub causes: Vec<(String, String)>,
    /// How the apiserver names each cause's manager (`"scaler" using apps/v1` for updates).
    described: Vec<String>,
}

impl ApplyConflict {
    /// The `Status.message`, e.g. `Apply failed with 1 conflict: conflict with "x": .data.a`.
    pub fn message(&self) -> String {
        let n = self.causes.len();
        if n == 1 {
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                self.described[0], self.causes[0].0
            );
        }
        let mut lines = Vec::new();
        for (i, (field, _)) in self.causes.iter().enumerate() {
            if i == 0 || self.described[i] != self.described[i - 1] {
                lines.push(format!("conflicts with {}:", self.described[i]));
            }
            lines.push(format!("- {field}"));
        }
        format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
    }

    /// The 409 `Status` body (12-server-side-apply step 3).
    pub fn status(&self) -> Value {
        let causes: Vec<Value> = self
            .causes
            .iter()
            .zip(&self.described)
            .map(|((field, _), who)| {
                json!({"reason": "FieldManagerConflict", "message": format!("conflict with {who}"), "field": field})
            })
            .collect();
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message(), "reason": "Conflict", "details": {"causes": causes}, "code": 409
        })
    }
}

/// Paths the field manager never tracks for this write.
fn ignored(path: &Path, kind: &str, subresource: Option<&str>, creating: bool) -> bool {
    let names: Vec<&str> = path
        .iter()
        .map(|e| match e {
            Element::Field(f) => f.as_str(),
            _ => "",
        })
        .collect();
    let top = names.first().copied().unwrap_or("");
    match subresource {
        // A status write may also change annotations (the Deployment controller's revision).
        Some("status") => return top != "status" && names.get(..2) != Some(&["metadata", "annotations"][..]),
        Some("scale") => return names.get(..2) != Some(&["spec", "replicas"][..]),
        _ => {}
    }
    if matches!(top, "apiVersion" | "kind" | "status") {
        return true;
    }
    if top == "metadata"
        && matches!(
            names.get(1).copied(),
            Some(
                "name"
                    | "namespace"
                    | "uid"
                    | "resourceVersion"
                    | "generation"
                    | "creationTimestamp"
                    | "managedFields"
                    | "selfLink"
                    | "deletionTimestamp"
                    | "deletionGracePeriodSeconds"
            )
        )
    {
        return true;
    }
    // Set by the registry after the field manager ran, so never owned by the creator.
    creating
        && match (kind, names.get(..2)) {
            ("Namespace", Some(["spec", "finalizers"])) => true,
            ("Service", Some(["spec", f])) => {
                matches!(*f, "clusterIP" | "clusterIPs" | "ipFamilies" | "ipFamilyPolicy")
            }
            _ => false,
        }
}

/// The zero value of the kind's Go struct as the apiserver serialises it: the baseline a
/// create is compared with.
fn zero_object(object: &Value) -> Value {
    let mut zero = schema::of_object(object).map_or_else(|| json!({}), |t| t.zero());
    zero["metadata"] = json!({});
    zero
}

fn diff_of(old: &Value, new: &Value, schema: &Schema, keep: impl Fn(&Path) -> bool) -> Diff {
    let mut diff = Diff::default();
    compare(Some(old), Some(new), &Vec::new(), &[], schema, &mut diff);
    for set in [&mut diff.added, &mut diff.modified, &mut diff.removed] {
        set.retain(&keep);
    }
    diff
}

/// Server-side apply of `applied` by `manager` onto `live` (None = create).
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<ApplyOutcome, ApplyConflict> {
    let kind = applied
        .get("kind")
        .or_else(|| live.and_then(|l| l.get("kind")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let schema = Schema {
        root: schema::of_object(applied).or_else(|| live.and_then(schema::of_object)),
    };
    let creating = live.is_none();
    let keep = |p: &Path| !ignored(p, kind, None, creating);
    // What the manager declares: the configuration minus what the server owns.
    let mut config = applied.clone();
    if let Some(c) = config.as_object_mut() {
        c.remove("status");
    }
    if let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|k, _| {
            !matches!(
                k.as_str(),
                "managedFields" | "resourceVersion" | "uid" | "creationTimestamp" | "generation"
            )
        });
    }
    let mut applied_set = FieldSet::new();
    to_set(&config, &Vec::new(), &[], &schema, &mut applied_set);
    applied_set.retain(keep);

    let base = live.map(without_managed_fields).unwrap_or_else(|| json!({}));
    let mut entries = decode_entries(live);
    let previous = entries.iter().position(|e| e.is(manager, "Apply", None));
    let last_applied = previous.map(|i| entries[i].set.clone()).unwrap_or_default();

    let mut merged = merge(Some(&base), &config, &[], &schema);
    // Fields this manager applied before and dropped now go, unless someone still owns them.
    let owned_elsewhere: FieldSet = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != previous)
        .flat_map(|(_, e)| e.set.iter().cloned())
        .chain(applied_set.iter().cloned())
        .collect();
    // Shallowest paths first (a set orders a path before its extensions): a dropped item goes
    // whole. Fields before their item would change the item's key and strand it half-removed.
    for path in last_applied.difference(&applied_set) {
        if !is_item_key(path) && !owned_elsewhere.iter().any(|o| o.starts_with(path)) {
            remove_path(&mut merged, path, &[], &schema);
        }
    }

    // Defaulted before comparing, so `0.1` against a stored `100m` is neither a change nor
    // a conflict, and a repeated apply is a no-op.
    crate::defaults::apply_defaults(kind, &mut merged);
    let diff = diff_of(&base, &merged, &schema, keep);
    let changed_fields: FieldSet = diff.added.union(&diff.modified).cloned().collect();
    // (how the apiserver names the manager, field, manager)
    let mut conflicts: Vec<(String, String, String)> = Vec::new();
    for (_, e) in entries.iter().enumerate().filter(|(i, _)| Some(*i) != previous) {
        for p in e.set.intersection(&changed_fields) {
            conflicts.push((e.describe(), path_string(p), e.manager.clone()));
        }
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort();
        return Err(ApplyConflict {
            causes: conflicts.iter().map(|(_, p, m)| (p.clone(), m.clone())).collect(),
            described: conflicts.into_iter().map(|(d, ..)| d).collect(),
        });
    }
    // Forced: the others lose what this apply changed; removed fields leave every set.
    for (_, e) in entries
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| Some(*i) != previous)
    {
        e.set
            .retain(|p| !changed_fields.contains(p) && !diff.removed.contains(p));
    }

    let object_changed = merged != base;
    let time = match previous {
        Some(i) if !object_changed => entries[i].time.clone(),
        _ => Some(now.to_string()),
    };
    let api_version = merged
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let entry = Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version,
        time,
        subresource: None,
        set: applied_set,
    };
    match previous {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    store_entries(&mut merged, entries);
    let changed = match live {
        None => true,
        Some(l) => {
            object_changed
                || l.pointer("/metadata/managedFields") != merged.pointer("/metadata/managedFields")
        }
    };
    Ok(ApplyOutcome {
        object: merged,
        changed,
    })
}

/// Ownership bookkeeping for a non-apply write by `manager` (operation `Update`): the fields
/// added or changed since `old` (None = create) become the manager's, leave every other
/// manager's set, and removed fields leave all sets. `new` must already carry the server's
/// defaults; its `managedFields` are replaced.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: &str,
) {
    let kind = new.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    let schema = Schema::for_object(new);
    let creating = old.is_none();
    let base = old
        .map(without_managed_fields)
        .unwrap_or_else(|| zero_object(new));
    let diff = diff_of(&base, &without_managed_fields(new), &schema, |p| {
        !ignored(p, &kind, subresource, creating)
    });
    let changed: FieldSet = diff.added.union(&diff.modified).cloned().collect();
    let mut entries = decode_entries(old);
    // The apiserver's Scale view carries only the entries that own `spec.replicas`, and an
    // update of a view without managedFields is not tracked: a scale of replicas nobody owns
    // records no manager (kube-apiserver v1.36; one someone owns moves to the scaler).
    let replicas = vec![Element::Field("spec".into()), Element::Field("replicas".into())];
    if subresource == Some("scale") && !entries.iter().any(|e| e.set.contains(&replicas)) {
        store_entries(new, entries);
        return;
    }
    for e in &mut entries {
        e.set
            .retain(|p| !changed.contains(p) && !diff.removed.contains(p));
    }
    // The scale subresource writes its entry without a time (09-deployment step 9).
    let time = (subresource != Some("scale")).then(|| now.to_string());
    match entries.iter_mut().find(|e| e.is(manager, "Update", subresource)) {
        Some(e) => {
            if !changed.is_empty() {
                e.set.extend(changed);
                e.time = time;
            }
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            api_version: new
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            time,
            subresource: subresource.map(str::to_string),
            set: changed,
        }),
    }
    store_entries(new, entries);
}
