//! CustomResourceDefinitions (apiextensions.k8s.io/v1) and the kinds they serve, as the real
//! apiserver's apiextensions part does it (compared with a v1.36 apiserver, see below):
//!
//! - the definition's own registry: defaults (`conversion`, `names.singular`/`listKind`;
//!   `defaults/apiextensions.rs`), validation of the basics (name = plural.group, scope, exactly
//!   one storage version, a schema per version; `validation/apiextensions.rs`), the initial
//!   status, and deletion behind the
//!   `customresourcecleanup` finalizer, which deletes every object of the kind first;
//! - the establishing controller: shortly after a write it accepts the names (unless another
//!   definition of the group uses them) and sets `NamesAccepted` and `Established`;
//! - while established, each served version is a stored type ([`CustomType`]) at its
//!   group/version with legacy and aggregated discovery, and its structural schema prunes,
//!   defaults and type-checks the objects ([`structural`]).
//!
//! The served types are read from the stored definitions on each request, so a saved store
//! serves its kinds again after a restart.
//!
//! No transcript in `kube-golden/` records CRD traffic, so this was compared by hand (curl and
//! `kubectl -v=8`) with the shared v1.36 apiserver (openshift/kubernetes 8e16b12), CRD
//! `widgets.h4probe.example.com`: the create answer (201, `status` with `conditions: null`,
//! empty `acceptedNames`, `storedVersions`; `spec.conversion` defaulted; schema keys in Go
//! order, properties sorted) and the status a moment later (`NamesAccepted`/`NoConflicts`,
//! `Established`/`InitialNamesAccepted`, accepted names); the 422 bodies for a wrong name, an
//! unknown scope, two or no storage versions, a version without schema; legacy discovery
//! (`/apis`, `/apis/GROUP`, `/apis/GROUP/VERSION` with verbs in the server's order and
//! `storageVersionHash`) and aggregated discovery (`responseKind` with group and version); a
//! custom object's create (keys sorted, defaults filled, unknown fields pruned and reported
//! as `Warning` headers, `metadata` pruned to ObjectMeta), its 422 type errors, the Strict
//! decoding error, LIST items keeping `kind`/`apiVersion`, the DELETE `Status`, the 415 for a
//! strategic merge patch and the 500s of server-side apply for undeclared or mistyped
//! fields; the DELETE of the definition (200 with the object, `deletionTimestamp` and the
//! cleanup finalizer) and what follows: the `Terminating` condition, a create refused (403),
//! discovery listing only reads and deletes, an object with a finalizer of its own marked
//! deleted and holding the definition until that finalizer goes; then the definition, its
//! objects and its kind are gone. Not modelled: name conflicts beyond plural/kind in the
//! group, conversion webhooks, `additionalPrinterColumns`, the scale subresource, CEL
//! `x-kubernetes-validations`, OpenAPI documents of custom kinds, list and map types of the
//! structural schema in server-side apply (lists are atomic), and the definition's own
//! OpenAPI (its status conditions are recorded in managedFields as an atomic list).

mod structural;

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::defaults::order_keys;
use crate::meta;
use crate::resources::{self, ResourceType};
use crate::semantics::{self, WriteInfo};
use crate::state::Shared;
use crate::status::{self, ApiError};
use crate::store::Store;
use crate::validation;

use structural::Node;

/// The finalizer that holds a deleted definition until its objects are gone.
const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
/// How long the establishing controller takes to notice a new definition.
const ESTABLISH_DELAY: Duration = Duration::from_millis(150);
/// How long the finalizer controller takes to start on a deleted definition, and to look
/// again while objects of its kind wait for their own finalizers.
const CLEANUP_DELAY: Duration = Duration::from_millis(200);

const CUSTOM_VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// One served version of an established definition.
#[derive(Debug, Clone)]
pub struct CustomType {
    pub rt: ResourceType,
    pub version: String,
    /// The version's `openAPIV3Schema`.
    schema: Value,
    singular: String,
    short_names: Value,
    categories: Value,
    storage_version: String,
    /// The definition is being deleted: its objects can be read and deleted, not created.
    pub terminating: bool,
}

impl CustomType {
    fn node(&self) -> Node<'_> {
        Node(&self.schema)
    }

    /// Paths of the fields the schema prunes from `obj` (the decoder's warnings).
    pub fn unknown_fields(&self, obj: &Value) -> Vec<String> {
        structural::prune(self.node(), &mut obj.clone())
    }

    pub fn prune(&self, obj: &mut Value) {
        structural::prune(self.node(), obj);
    }

    pub fn apply_defaults(&self, obj: &mut Value) {
        structural::default(self.node(), obj);
    }

    /// The registry's create shaping: with a status subresource, a create sets no status.
    pub fn prepare_create(&self, obj: &mut Value) {
        if self.rt.status
            && let Some(m) = obj.as_object_mut()
        {
            m.shift_remove("status");
        }
    }

    /// With a status subresource, a write to the main resource keeps the stored status.
    pub fn prepare_update(&self, old: &Value, new: &mut Value) {
        if !self.rt.status {
            return;
        }
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.shift_remove("status");
                }
            }
        }
    }

    /// Metadata and schema validation; Err is the 422.
    pub fn validate(&self, obj: &Value) -> Result<(), ApiError> {
        // Custom objects' names are DNS subdomains whatever the kind: the rule of no built-in
        // kind (`""`), which the name of the custom one might shadow.
        let mut errors = validation::validate_metadata("", obj);
        errors.extend(structural::validate(self.node(), obj));
        if errors.is_empty() {
            return Ok(());
        }
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        Err(ApiError {
            code: 422,
            body: validation::invalid_status(self.rt.kind, self.rt.group, name, &errors),
        })
    }

    /// Server-side apply first makes a typed object of the configuration: a field the schema
    /// does not declare, or a mistyped value, fails the request (500, as on the real server).
    pub fn check_apply(&self, config: &Value) -> Result<(), ApiError> {
        match structural::typed_patch_error(self.node(), config) {
            Some(error) => Err(crate::typed_patch::failure(
                config,
                &self.rt.api_version(&self.version),
                self.rt.kind,
                &[error],
            )),
            None => Ok(()),
        }
    }

    /// Refuses a create of object `name` while the definition is being deleted.
    pub fn check_create(&self, name: &str) -> Result<(), ApiError> {
        if !self.terminating {
            return Ok(());
        }
        Err(status::forbidden(
            self.rt.target(Some(name)),
            "create not allowed while custom resource definition is terminating",
        ))
    }

    /// The verbs discovery lists: only reads and deletes while the definition is being deleted.
    fn verbs(&self) -> Vec<&'static str> {
        let kept = |v: &&str| matches!(*v, "delete" | "deletecollection" | "get" | "list" | "watch");
        CUSTOM_VERBS
            .into_iter()
            .filter(|v| !self.terminating || kept(v))
            .collect()
    }

    fn discovery_entry(&self) -> Value {
        let mut r = Map::new();
        r.insert("name".into(), json!(self.rt.resource));
        r.insert("singularName".into(), json!(self.singular));
        r.insert("namespaced".into(), json!(self.rt.namespaced));
        r.insert("kind".into(), json!(self.rt.kind));
        r.insert("verbs".into(), json!(self.verbs()));
        if is_non_empty(&self.short_names) {
            r.insert("shortNames".into(), self.short_names.clone());
        }
        if is_non_empty(&self.categories) {
            r.insert("categories".into(), self.categories.clone());
        }
        r.insert(
            "storageVersionHash".into(),
            json!(storage_version_hash(
                self.rt.group,
                &self.storage_version,
                self.rt.kind
            )),
        );
        Value::Object(r)
    }

    fn aggregated_entry(&self) -> Value {
        let response_kind = json!({"group": self.rt.group, "version": self.version, "kind": self.rt.kind});
        let mut r = Map::new();
        r.insert("resource".into(), json!(self.rt.resource));
        r.insert("responseKind".into(), response_kind.clone());
        r.insert(
            "scope".into(),
            json!(if self.rt.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            }),
        );
        r.insert("singularResource".into(), json!(self.singular));
        r.insert("verbs".into(), json!(self.verbs()));
        if is_non_empty(&self.short_names) {
            r.insert("shortNames".into(), self.short_names.clone());
        }
        if is_non_empty(&self.categories) {
            r.insert("categories".into(), self.categories.clone());
        }
        if self.rt.status {
            r.insert(
                "subresources".into(),
                json!([{"subresource": "status", "responseKind": response_kind, "verbs": ["get", "patch", "update"]}]),
            );
        }
        Value::Object(r)
    }
}

fn is_non_empty(list: &Value) -> bool {
    list.as_array().is_some_and(|l| !l.is_empty())
}

/// Discovery's `storageVersionHash`: the first 8 bytes of SHA-256 of `group/version/kind`.
fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}"));
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

fn condition_true(crd: &Value, kind: &str) -> bool {
    crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

/// The versions of a definition the server serves, storage version first.
fn served_versions(crd: &Value) -> Vec<&Value> {
    let mut versions: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"] == true)
        .collect();
    versions.sort_by_key(|v| v["storage"] != true);
    versions
}

/// Every served version of every established definition in the store.
fn served_types(store: &Store) -> Vec<CustomType> {
    let mut out = Vec::new();
    for crd in store.list(&resources::CRDS.key(), None) {
        if !condition_true(crd, "Established") {
            continue;
        }
        let names = &crd["status"]["acceptedNames"];
        let spec = &crd["spec"];
        let versions = served_versions(crd);
        let version_names: Vec<&str> = versions.iter().filter_map(|v| v["name"].as_str()).collect();
        let storage_version = spec["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default();
        for version in &versions {
            let status = version["subresources"].get("status").is_some();
            let rt = resources::custom(
                spec["group"].as_str().unwrap_or_default(),
                &version_names,
                names["plural"].as_str().unwrap_or_default(),
                names["kind"].as_str().unwrap_or_default(),
                spec["scope"] == "Namespaced",
                status,
            );
            out.push(CustomType {
                rt,
                version: version["name"].as_str().unwrap_or_default().to_string(),
                schema: version["schema"]["openAPIV3Schema"].clone(),
                singular: names["singular"].as_str().unwrap_or_default().to_string(),
                short_names: names["shortNames"].clone(),
                categories: names["categories"].clone(),
                storage_version: storage_version.to_string(),
                terminating: crd["metadata"].get("deletionTimestamp").is_some(),
            });
        }
    }
    out
}

/// The custom type served at `group/version/resource`, if an established definition serves it.
pub fn find(st: &Shared, group: &str, version: &str, resource: &str) -> Option<CustomType> {
    served_types(&st.store())
        .into_iter()
        .find(|t| t.rt.group == group && t.version == version && t.rt.resource == resource)
}

/// The storage keys of the namespaced custom kinds (a deleted namespace takes their objects).
pub fn namespaced_keys(store: &Store) -> Vec<String> {
    let mut keys: Vec<String> = served_types(store)
        .iter()
        .filter(|t| t.rt.namespaced)
        .map(|t| t.rt.key())
        .collect();
    keys.dedup();
    keys
}

/// Whether an established definition serves `group/version`.
pub fn serves(st: &Shared, group: &str, version: &str) -> bool {
    served_types(&st.store())
        .iter()
        .any(|t| t.rt.group == group && t.version == version)
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers first, anything
/// else last in name order.
fn version_order(a: &str, b: &str) -> Ordering {
    fn rank(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let (level, minor) = match &rest[digits..] {
            "" => return Some((3, major, 0)),
            s if s.starts_with("beta") => (2, &s[4..]),
            s if s.starts_with("alpha") => (1, &s[5..]),
            _ => return None,
        };
        Some((level, major, minor.parse().ok()?))
    }
    match (rank(a), rank(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Served custom types by group, then version (in priority order), each with its types.
fn by_group(st: &Shared) -> BTreeMap<String, Vec<(String, Vec<CustomType>)>> {
    let mut groups: BTreeMap<String, Vec<(String, Vec<CustomType>)>> = BTreeMap::new();
    let mut types = served_types(&st.store());
    types.sort_by(|a, b| a.rt.resource.cmp(b.rt.resource));
    for t in types {
        let versions = groups.entry(t.rt.group.to_string()).or_default();
        match versions.iter_mut().find(|(v, _)| *v == t.version) {
            Some((_, list)) => list.push(t),
            None => versions.push((t.version.clone(), vec![t])),
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by(|(a, _), (b, _)| version_order(a, b));
    }
    groups
}

/// A custom group-version with the `openAPIV3Schema` of each of its kinds, for `/openapi/v3`.
pub struct Published {
    pub group: String,
    pub version: String,
    /// Kind and schema.
    pub kinds: Vec<(String, Value)>,
}

/// The custom group-versions the server publishes schemas of.
pub fn openapi_schemas(st: &Shared) -> Vec<Published> {
    by_group(st)
        .into_iter()
        .flat_map(|(group, versions)| {
            versions.into_iter().map(move |(version, types)| Published {
                group: group.clone(),
                version,
                kinds: types
                    .into_iter()
                    .map(|t| (t.rt.kind.to_string(), t.schema))
                    .collect(),
            })
        })
        .collect()
}

fn api_group(name: &str, versions: &[(String, Vec<CustomType>)]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|(v, _)| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = list.first().cloned().unwrap_or(Value::Null);
    json!({"name": name, "versions": list, "preferredVersion": preferred})
}

/// Adds the custom groups to `/apis` (an `APIGroupList`).
pub fn add_groups(st: &Shared, doc: &mut Value) {
    if let Some(groups) = doc["groups"].as_array_mut() {
        groups.extend(by_group(st).iter().map(|(g, v)| api_group(g, v)));
    }
}

/// Adds the custom groups to aggregated discovery of `/apis` (an `APIGroupDiscoveryList`).
pub fn add_aggregated(st: &Shared, doc: &mut Value) {
    let Some(items) = doc["items"].as_array_mut() else {
        return;
    };
    for (group, versions) in by_group(st) {
        let versions: Vec<Value> = versions
            .iter()
            .map(|(v, types)| {
                let resources: Vec<Value> = types.iter().map(CustomType::aggregated_entry).collect();
                json!({"version": v, "resources": resources, "freshness": "Current"})
            })
            .collect();
        items.push(json!({"metadata": {"name": group}, "versions": versions}));
    }
}

/// `/apis/GROUP` of a custom group.
pub fn group(st: &Shared, name: &str) -> Option<Value> {
    let groups = by_group(st);
    let versions = groups.get(name)?;
    let mut doc = json!({"kind": "APIGroup", "apiVersion": "v1"});
    if let (Some(d), Value::Object(g)) = (doc.as_object_mut(), api_group(name, versions)) {
        d.extend(g);
    }
    Some(doc)
}

/// `/apis/GROUP/VERSION` of a custom group (an `APIResourceList`).
pub fn group_version(st: &Shared, group: &str, version: &str) -> Option<Value> {
    let groups = by_group(st);
    let (_, types) = groups.get(group)?.iter().find(|(v, _)| v == version)?;
    let mut resources = Vec::new();
    for t in types {
        resources.push(t.discovery_entry());
        if t.rt.status {
            resources.push(
                json!({"name": format!("{}/status", t.rt.resource), "singularName": "",
                "namespaced": t.rt.namespaced, "kind": t.rt.kind, "verbs": ["get", "patch", "update"]}),
            );
        }
    }
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1",
        "groupVersion": format!("{group}/{version}"), "resources": resources}))
}

// ---- the definition's own registry ----

/// The status a new definition starts with (`PrepareForCreate`): nothing accepted yet, the
/// storage version stored.
pub fn initial_status(obj: &mut Value) {
    let stored: Vec<Value> = obj["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["storage"] == true)
        .map(|v| v["name"].clone())
        .into_iter()
        .collect();
    obj["status"] = json!({
        "conditions": null,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": if stored.is_empty() { Value::Null } else { json!(stored) },
    });
}

fn spawn(fut: impl std::future::Future<Output = ()> + Send + 'static) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(fut);
    }
}

/// After a committed write of a definition: the establishing controller looks at it shortly
/// after, unless its names are accepted and it is established already.
pub fn after_write(st: &Shared, crd: &Value) {
    let settled = (condition_true(crd, "Established")
        && crd["status"]["acceptedNames"] == crd["spec"]["names"])
        || crd["metadata"].get("deletionTimestamp").is_some();
    if settled {
        return;
    }
    let st = st.clone();
    let name = crd["metadata"]["name"].as_str().unwrap_or_default().to_string();
    spawn(async move {
        tokio::time::sleep(ESTABLISH_DELAY).await;
        establish(&st, &name);
        st.written.notify_one();
    });
}

/// A status condition as the controllers write it, keeping the transition time of one that
/// did not change.
fn condition(old: &Value, kind: &str, status: &str, reason: &str, message: &str, time: &str) -> Value {
    let previous = old["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind && c["status"] == status);
    let since = previous
        .and_then(|c| c["lastTransitionTime"].as_str())
        .unwrap_or(time);
    json!({"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message})
}

/// The names another definition of the same group already accepted, if `crd`'s clash.
fn name_conflict(store: &Store, crd: &Value) -> Option<String> {
    let names = &crd["spec"]["names"];
    store
        .list(&resources::CRDS.key(), None)
        .filter(|other| {
            other["metadata"]["name"] != crd["metadata"]["name"]
                && other["spec"]["group"] == crd["spec"]["group"]
        })
        .find_map(|other| {
            let accepted = &other["status"]["acceptedNames"];
            if accepted["plural"] == names["plural"] {
                Some(format!("{} is already in use", json!(names["plural"])))
            } else if accepted["kind"] == names["kind"] {
                Some(format!("{} is already in use", json!(names["kind"])))
            } else {
                None
            }
        })
}

/// The establishing controller's pass over one definition: names accepted (or the conflict),
/// then `Established`, recorded as kube-apiserver's status update.
fn establish(st: &Shared, name: &str) {
    let mut store = st.store();
    let key = resources::CRDS.key();
    let Some(old) = store.get(&key, "", name).cloned() else {
        return;
    };
    if old["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let time = meta::now();
    let mut new = old.clone();
    let conditions = match name_conflict(&store, &old) {
        Some(conflict) => vec![condition(
            &old,
            "NamesAccepted",
            "False",
            "NameConflict",
            &conflict,
            &time,
        )],
        None => {
            new["status"]["acceptedNames"] = old["spec"]["names"].clone();
            vec![
                condition(
                    &old,
                    "NamesAccepted",
                    "True",
                    "NoConflicts",
                    "no conflicts found",
                    &time,
                ),
                condition(
                    &old,
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                    &time,
                ),
            ]
        }
    };
    new["status"]["conditions"] = json!(conditions);
    if new == old {
        return;
    }
    status_write(&mut store, &old, new, &time);
}

/// Stores a controller's status write with its managedFields entry.
fn status_write(store: &mut Store, old: &Value, mut new: Value, time: &str) -> Value {
    if let Some(status) = new["status"].as_object_mut() {
        order_keys(status, &["conditions", "acceptedNames", "storedVersions"]);
    }
    let info = WriteInfo {
        manager: "kube-apiserver",
        subresource: Some("status"),
        time,
    };
    semantics::record_update(Some(old), &mut new, &info);
    meta::canonicalize(&mut new);
    store.put(&resources::CRDS.key(), new)
}

/// A DELETE of a definition: it stays, Terminating behind the cleanup finalizer, until the
/// finalizer controller has deleted its objects. Returns what the DELETE answers.
pub fn delete(st: &Shared, store: &mut Store, old: Value, dry_run: bool) -> Value {
    if old["metadata"].get("deletionTimestamp").is_some() {
        return old;
    }
    let mut obj = old;
    obj["metadata"]["deletionTimestamp"] = json!(meta::now());
    let finalizers = obj["metadata"]["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
        let mut list = finalizers;
        list.push(json!(CLEANUP_FINALIZER));
        obj["metadata"]["finalizers"] = json!(list);
    }
    meta::canonicalize(&mut obj);
    if dry_run {
        return obj;
    }
    let stored = store.put(&resources::CRDS.key(), obj);
    let st = st.clone();
    let name = stored["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    spawn(async move {
        loop {
            tokio::time::sleep(CLEANUP_DELAY).await;
            let done = clean_up(&st, &name);
            st.written.notify_one();
            if done {
                break;
            }
        }
    });
    stored
}

/// One pass of the finalizer controller: marks the definition Terminating and deletes every
/// object of its kind (an object with finalizers of its own is marked deleted and waited
/// for); once none is left, drops the cleanup finalizer, and the definition goes unless other
/// finalizers remain. Returns whether it is done.
fn clean_up(st: &Shared, name: &str) -> bool {
    let mut store = st.store();
    let key = resources::CRDS.key();
    let Some(old) = store.get(&key, "", name).cloned() else {
        return true;
    };
    let time = meta::now();
    let mut crd = old.clone();
    let mut conditions = old["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    conditions.retain(|c| c["type"] != "Terminating");
    conditions.push(condition(
        &old,
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
        &time,
    ));
    crd["status"]["conditions"] = json!(conditions);
    if crd != old {
        crd = status_write(&mut store, &old, crd, &time);
    }
    let objects_key = format!(
        "{}.{}",
        old["status"]["acceptedNames"]["plural"]
            .as_str()
            .unwrap_or_default(),
        old["spec"]["group"].as_str().unwrap_or_default()
    );
    let objects: Vec<Value> = store.list(&objects_key, None).cloned().collect();
    let mut waiting = false;
    for mut object in objects {
        let held = object["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if !held {
            let (namespace, object) = crate::store::ns_name(&object);
            store.remove(&objects_key, &namespace, &object);
            continue;
        }
        waiting = true;
        if object["metadata"].get("deletionTimestamp").is_none() {
            object["metadata"]["deletionTimestamp"] = json!(time);
            object["metadata"]["deletionGracePeriodSeconds"] = json!(0);
            if let Some(g) = object["metadata"]["generation"].as_i64() {
                object["metadata"]["generation"] = json!(g + 1);
            }
            store.put(&objects_key, object);
        }
    }
    if waiting {
        return false;
    }
    if let Some(list) = crd["metadata"]["finalizers"].as_array_mut() {
        list.retain(|f| f != CLEANUP_FINALIZER);
    }
    if crd["metadata"]["finalizers"].as_array().is_none_or(Vec::is_empty) {
        store.remove(&key, "", name);
    } else {
        store.put(&key, crd);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_kubernetes_priority_order() {
        let mut v = vec!["v1alpha1", "v1", "v2beta1", "v1beta2", "v2", "foo", "v1beta1"];
        v.sort_by(|a, b| version_order(a, b));
        assert_eq!(
            v,
            ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
        );
    }

    #[test]
    fn storage_version_hash_matches_the_apiserver() {
        // Recorded from a v1.36 apiserver's discovery of a CRD in group h4probe.example.com.
        assert_eq!(
            storage_version_hash("h4probe.example.com", "v1", "Widget"),
            "QDWKm9OI6RQ="
        );
    }
}
