//! Resource `records_outputs`: records this estate's outputs, one Secret per output in
//! namespace `tofu-records-<estate>`, and grants its `readers` `get` on exactly those
//! Secrets (or, for a reader given `outputs`, on those outputs' Secrets only). Unchanged
//! outputs are left alone; the serial grows with every change, and a changed output keeps
//! its last `history` versions.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::Secret;
use kube_estate::{Configured, Connection, Estate};
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, Diagnostic, Diagnostics, ImportRequest,
    ImportResponse, Number, PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema, Type,
    Value,
};

use crate::grants::{Grant, all_match_or_headless, grants, live_grants, readers_of, validate_readers};
use crate::head;
use crate::record::{self, DEFAULT_HISTORY, Output, Recorded, Stamp, records_same, secret_name};
use crate::store::Store;

pub struct OutputsResource {
    configured: Arc<Configured>,
}

impl OutputsResource {
    pub fn new(configured: Arc<Configured>) -> OutputsResource {
        OutputsResource { configured }
    }

    fn connection(&self) -> Result<&Connection, Diagnostics> {
        self.configured.get().map_err(Diagnostics::from)
    }
}

/// The two attributes outputs come from, and whether their outputs are sensitive.
const SOURCES: [(&str, bool); 2] = [("values", false), ("sensitive_values", true)];

/// The outputs a (wholly known) resource value records, in name order.
fn outputs_of(value: &Value) -> Vec<Output> {
    let mut outputs: Vec<Output> = SOURCES
        .iter()
        .flat_map(|(attribute, sensitive)| {
            value
                .get(attribute)
                .entries()
                .into_iter()
                .flatten()
                .map(|(name, v)| Output {
                    name: name.clone(),
                    value: v.clone(),
                    sensitive: *sensitive,
                })
        })
        .collect();
    outputs.sort_by(|a, b| a.name.cmp(&b.name));
    outputs
}

/// Checks `values` and `sensitive_values`: objects or maps, each name in one of them only,
/// and no two names recorded under the same Secret.
fn validate_outputs(config: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (attribute, _) in SOURCES {
        let value = config.get(attribute);
        if value.is_null() || value.is_unknown() {
            continue;
        }
        let Some(entries) = value.entries() else {
            diags.push(
                Diagnostic::error(
                    "Invalid outputs",
                    format!(
                        "{attribute} must be an object of output values, e.g. {{ gateway_host = \"...\" }}."
                    ),
                )
                .at(AttributePath::root(attribute)),
            );
            continue;
        };
        for name in entries.keys() {
            let at = AttributePath::root(attribute).key(name);
            if !names.insert(name.clone()) {
                diags.push(
                    Diagnostic::error(
                        "Output recorded twice",
                        format!("Output {name:?} is in both values and sensitive_values: keep it in one."),
                    )
                    .at(at),
                );
                continue;
            }
            let secret = secret_name(name);
            if let Some(other) = seen.insert(secret.clone(), name.clone()) {
                diags.push(
                    Diagnostic::error(
                        "Output names collide",
                        format!(
                            "Outputs {other:?} and {name:?} would both be recorded as Secret {secret:?} \
                             (names are lowercased and every character other than a letter or digit \
                             becomes '-'). Rename one of them."
                        ),
                    )
                    .at(at),
                );
            }
        }
    }
    diags
}

/// The most versions `history` may keep: each lives in its output's Secret, which
/// Kubernetes holds to 1 MiB.
const MAX_HISTORY: i64 = 100;

/// The versions each output keeps, from a (valid) resource value.
fn history_of(value: &Value) -> usize {
    value
        .get("history")
        .as_i64()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(DEFAULT_HISTORY)
}

fn validate_history(config: &Value) -> Diagnostics {
    let history = config.get("history");
    if history.is_null() || history.is_unknown() {
        return Diagnostics::new();
    }
    match history.as_i64() {
        Some(n) if (1..=MAX_HISTORY).contains(&n) => Diagnostics::new(),
        _ => Diagnostic::error(
            "Invalid history",
            format!(
                "history is how many versions of each output are kept, the current one included: a \
                 whole number from 1 to {MAX_HISTORY}."
            ),
        )
        .at(AttributePath::root("history"))
        .into(),
    }
}

/// The names of the outputs a configuration records, when both attributes are known.
fn recorded_names(config: &Value) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for (attribute, _) in SOURCES {
        let value = config.get(attribute);
        if value.is_null() {
            continue;
        }
        names.extend(value.entries()?.keys().cloned());
    }
    Some(names)
}

/// Output name -> Secret name, for the outputs a value records.
fn secrets_of(outputs: &[Output]) -> BTreeMap<String, String> {
    outputs
        .iter()
        .map(|o| (o.name.clone(), secret_name(&o.name)))
        .collect()
}

/// The current time as the records carry it: RFC 3339, UTC, whole seconds.
fn now() -> String {
    let format = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    time::OffsetDateTime::now_utc()
        .format(&format)
        .expect("a UTC time always formats")
}

fn serial_of(value: &Value) -> u64 {
    value
        .get("serial")
        .as_i64()
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(0)
}

fn serial_value(serial: u64) -> Value {
    Value::Number(Number::Int(i64::try_from(serial).unwrap_or(i64::MAX)))
}

/// The newest stamp among records.
fn latest<'a>(recorded: impl IntoIterator<Item = &'a Recorded>) -> Option<&'a Stamp> {
    recorded.into_iter().map(|r| &r.stamp).max_by_key(|s| s.serial)
}

/// The estate a state records: its `id`, which stays the estate it was applied for even
/// when the provider block now names another (the plan then replaces the resource).
fn estate_of(state: &Value, conn: &Connection) -> Result<Estate, Diagnostic> {
    match state.get("id").as_str() {
        Some(id) => Estate::parse(id).map_err(|e| Diagnostic::error("Invalid records state", e.to_string())),
        None => Ok(conn.estate.clone()),
    }
}

/// The estate's records as they are: decoded output Secrets by Secret name.
async fn live_records(store: &Store) -> Result<BTreeMap<String, (Secret, Recorded)>, Diagnostic> {
    let mut out = BTreeMap::new();
    for secret in store.list_outputs().await? {
        let recorded = record::from_secret(&secret)?;
        out.insert(
            secret.metadata.name.clone().unwrap_or_default(),
            (secret, recorded),
        );
    }
    Ok(out)
}

/// The live value of an outputs attribute: the state's own value while it says the same
/// (so a map stays a map), otherwise an object of what is recorded.
fn reconcile(state: &Value, live: BTreeMap<String, Value>) -> Value {
    match state.entries() {
        Some(entries) if *entries == live => state.clone(),
        _ if live.is_empty() && state.is_null() => Value::Null,
        _ => Value::Object(live),
    }
}

impl OutputsResource {
    async fn write(&self, prior: &Value, planned: &Value) -> Result<Value, Diagnostic> {
        let conn = self.configured.get()?;
        let estate = &conn.estate;
        let store = Store::new(conn.client.clone(), estate.clone());
        let outputs = outputs_of(planned);
        let readers = readers_of(planned.get("readers"))?;
        let keep = history_of(planned);

        store.ensure_namespace().await?;
        let (head, head_secret) = head::read(&store).await?;
        let mut live = live_records(&store).await?;
        // Records written before heads existed are all committed.
        let committed = head
            .committed
            .clone()
            .or_else(|| latest(live.values().map(|(_, r)| r)).cloned());
        let committed_serial = committed.as_ref().map_or(0, |s| s.serial);
        let stamp = Stamp {
            serial: serial_of(prior).max(committed_serial) + 1,
            applied_at: now(),
        };
        let mut writes = Vec::new();
        for output in &outputs {
            let existing = live.remove(&secret_name(&output.name));
            // A version newer than the commit (an apply stopped before its commit) is written
            // again, so this apply's commit covers it.
            let same = existing
                .as_ref()
                .is_some_and(|(s, r)| records_same(s, output) && r.stamp.serial <= committed_serial);
            if same {
                continue;
            }
            // A Secret recording another output under this name (renamed by hand) has no
            // history for this one; versions after the commit were never read.
            let history = existing
                .as_ref()
                .filter(|(_, r)| r.output.name == output.name)
                .and_then(|(_, r)| r.clone().at_commit(committed_serial))
                .map(|r| r.history_after(keep))
                .unwrap_or_default();
            writes.push((
                record::to_secret(estate, output, &stamp, &history),
                existing.map(|(s, _)| s),
            ));
        }
        let removed: Vec<Secret> = live.into_values().map(|(s, _)| s).collect();
        let changed = !writes.is_empty() || !removed.is_empty();
        if changed {
            let claimed = head::claim(
                &store,
                estate,
                (head, head_secret),
                stamp.serial,
                &stamp.applied_at,
            )
            .await
            .map_err(Diagnostic::from)?;
            for (want, existing) in &writes {
                store.put(want, existing.as_ref()).await?;
            }
            for secret in &removed {
                store
                    .put(&head::marked_removed(secret, stamp.serial), Some(secret))
                    .await?;
            }
            head::commit(&store, estate, claimed, &stamp)
                .await
                .map_err(Diagnostic::from)?;
            for secret in &removed {
                store
                    .delete::<Secret>(secret.metadata.name.as_deref().unwrap_or_default())
                    .await?;
            }
        }
        store
            .put_grants(grants(estate, &readers, &secrets_of(&outputs)))
            .await?;

        let mut state = planned.clone();
        if state.get("serial").is_unknown() {
            let (serial, applied_at) = if changed {
                (stamp.serial, stamp.applied_at)
            } else {
                // Nothing to write (the records were already there, e.g. after lost state):
                // keep the stamp they carry.
                let applied_at = prior.get("applied_at").as_str().map(str::to_string);
                let live_applied_at = committed.map(|s| s.applied_at);
                (
                    committed_serial.max(serial_of(prior)),
                    applied_at.or(live_applied_at).unwrap_or(stamp.applied_at),
                )
            };
            state.set("serial", serial_value(serial));
            state.set("applied_at", Value::String(applied_at));
        }
        Ok(state)
    }

    async fn destroy(&self, prior: &Value) -> Result<(), Diagnostic> {
        let conn = self.configured.get()?;
        let store = Store::new(conn.client.clone(), estate_of(prior, conn)?);
        for secret in store.list_outputs().await? {
            store
                .delete::<Secret>(secret.metadata.name.as_deref().unwrap_or_default())
                .await?;
        }
        store.delete::<Secret>(head::HEAD_SECRET).await?;
        // Readers granted keep their grant, and so the namespace: their gets then find no
        // Secret and tell them "not recorded". Deleting the namespace would take the grant
        // with it, and a reader that may not look at namespaces could only be told "refused"
        // (RBAC answers before the lookup). Applying `readers = []` first removes both.
        if store.live_grants().await?.1.is_empty() {
            store.put_grants(Vec::new()).await?;
            store.delete_namespace_if_unused().await?;
        }
        Ok(())
    }

    async fn refresh(&self, state: &Value) -> Result<Value, Diagnostic> {
        let conn = self.configured.get()?;
        let estate = &estate_of(state, conn)?;
        let store = Store::new(conn.client.clone(), estate.clone());
        if store.get_namespace().await?.is_none() {
            return Ok(Value::Null);
        }
        let committed = head::committed_serial(&store).await?;
        let live = live_records(&store).await?;
        let recorded: Vec<Recorded> = live
            .into_values()
            .filter_map(|(secret, r)| head::visible(&secret, r, committed))
            .collect();
        let mut by_sensitivity: [BTreeMap<String, Value>; 2] = Default::default();
        for r in &recorded {
            by_sensitivity[usize::from(r.output.sensitive)]
                .insert(r.output.name.clone(), r.output.value.clone());
        }
        let [plain, sensitive] = by_sensitivity;

        let mut new = state.clone();
        new.set("id", Value::string(estate.as_str()));
        new.set("namespace", Value::string(store.namespace()));
        new.set("values", reconcile(state.get("values"), plain));
        new.set(
            "sensitive_values",
            reconcile(state.get("sensitive_values"), sensitive),
        );
        if state.get("serial").is_null()
            && let Some(stamp) = latest(&recorded)
        {
            new.set("serial", serial_value(stamp.serial));
            new.set("applied_at", Value::string(&stamp.applied_at));
        }

        // The grants the state implies, for the outputs the state names.
        let state_readers = readers_of(state.get("readers")).unwrap_or_default();
        let secrets = secrets_of(&outputs_of(state));
        let want = grants(estate, &state_readers, &secrets);
        let (roles, bindings) = store.live_grants().await?;
        if !all_match_or_headless(&want, &roles, &bindings) {
            let live = live_grants(&roles, &bindings, &secrets);
            new.set("readers", drifted_readers(state.get("readers"), &live));
        }
        Ok(new)
    }
}

/// What `readers` shows when the grants in the cluster are not what the state says: the
/// grants found, or anything else that differs from the state so a plan repairs it.
fn drifted_readers(state: &Value, live: &[Grant]) -> Value {
    let live = Value::Tuple(live.iter().map(Grant::to_value).collect());
    if live != *state {
        live
    } else if !state.is_null() {
        Value::Null
    } else {
        Value::Tuple(Vec::new())
    }
}

/// A state value with every attribute present.
fn empty_state(estate: &Estate) -> Value {
    Value::object([
        ("id", Value::string(estate.as_str())),
        ("namespace", Value::string(estate.records_namespace())),
        ("values", Value::Null),
        ("sensitive_values", Value::Null),
        ("readers", Value::Null),
        ("history", Value::Null),
        ("serial", Value::Null),
        ("applied_at", Value::Null),
    ])
}

#[async_trait]
impl Resource for OutputsResource {
    fn type_name(&self) -> &'static str {
        "records_outputs"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new(
                "Records this estate's outputs in the cluster, one Secret per output in namespace \
                 `tofu-records-<estate>`, for other estates to read with `terraform_estate_outputs`. \
                 Each apply claims the estate's head (Secret `records-head`) first and commits it \
                 last: readers see one apply's outputs whole, and a second apply writing the \
                 estate at the same time is refused. Import with the estate's name.",
            )
            .attribute(Attribute::computed(
                "id",
                Type::String,
                "The estate whose outputs these are.",
            ))
            .attribute(Attribute::computed(
                "namespace",
                Type::String,
                "The namespace holding the records, `tofu-records-<estate>`.",
            ))
            .attribute(Attribute::optional(
                "values",
                Type::Dynamic,
                "Outputs by name: any values (strings, numbers, bools, lists, maps, objects); their \
                 types survive the round trip exactly.",
            ))
            .attribute(
                Attribute::optional(
                    "sensitive_values",
                    Type::Dynamic,
                    "Like `values`, for outputs that are sensitive: readers see them as sensitive.",
                )
                .sensitive(),
            )
            .attribute(Attribute::optional(
                "readers",
                Type::Dynamic,
                "Identities that may read these outputs, e.g. `[{ kind = \"User\", name = \"app-planner\" }, \
                 { kind = \"ServiceAccount\", name = \"ci\", namespace = \"tools\" }]` (kind is User, Group \
                 or ServiceAccount). They get one Role with `get` on exactly these Secrets by name (no \
                 `list`), and its RoleBinding. An entry with `outputs = [\"gateway_host\"]` may read those \
                 outputs only: its Role lists their Secrets alone. A destroy keeps the grants (and the \
                 namespace) so readers are told the outputs are not recorded rather than refused; apply \
                 `readers = []` before the destroy to remove the namespace as well.",
            ))
            .attribute(Attribute::optional(
                "history",
                Type::Number,
                "How many versions of each output are kept, the current one included (default 5, at \
                 most 100), each with its serial and apply time, in that output's own Secret. Readers \
                 pin one with `serial` on `terraform_estate_outputs`. A smaller number takes effect at \
                 each output's next change.",
            ))
            .attribute(Attribute::computed(
                "serial",
                Type::Number,
                "Grows with every apply that changes the recorded outputs.",
            ))
            .attribute(Attribute::computed(
                "applied_at",
                Type::String,
                "When the outputs last changed (RFC 3339, UTC).",
            )),
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut diags = validate_outputs(config);
        diags.extend(validate_readers(
            config.get("readers"),
            recorded_names(config).as_ref(),
        ));
        diags.extend(validate_history(config));
        diags
    }

    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        // Outputs plan from the configuration alone, so the cluster need not exist yet (a
        // connection setting known only at apply); the estate then comes from the provider block.
        let estate = match self.configured.deferred() {
            Some(deferred) => deferred.estate.clone(),
            None => Some(self.connection()?.estate.clone()),
        };
        let prior = &request.prior_state;
        let mut planned = request.proposed_new_state;
        let known = |v: Option<String>| v.map(Value::string).unwrap_or_else(Value::unknown);
        planned.set("id", known(estate.as_ref().map(|e| e.as_str().to_string())));
        planned.set("namespace", known(estate.as_ref().map(Estate::records_namespace)));
        let outputs_change = prior.is_null()
            || SOURCES
                .iter()
                .any(|(attribute, _)| prior.get(attribute) != planned.get(attribute));
        if outputs_change {
            planned.set("serial", Value::unknown());
            planned.set("applied_at", Value::unknown());
        }
        let mut requires_replace = Vec::new();
        if let Some(estate) = &estate
            && !prior.is_null()
            && prior.get("id").as_str() != Some(estate.as_str())
        {
            // The provider block now names another estate: its records are elsewhere.
            requires_replace.push(AttributePath::root("id"));
        }
        Ok(PlanResponse {
            planned_state: planned,
            requires_replace,
            ..PlanResponse::default()
        })
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        if request.planned_state.is_null() {
            return match self.destroy(&request.prior_state).await {
                Ok(()) => ApplyResponse::default(),
                Err(d) => ApplyResponse {
                    new_state: request.prior_state,
                    diagnostics: d.into(),
                    ..ApplyResponse::default()
                },
            };
        }
        match self.write(&request.prior_state, &request.planned_state).await {
            Ok(new_state) => ApplyResponse {
                new_state,
                ..ApplyResponse::default()
            },
            Err(d) => ApplyResponse {
                // What was written is found again by the next refresh.
                new_state: request.prior_state,
                diagnostics: d.into(),
                ..ApplyResponse::default()
            },
        }
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        if request.current_state.is_null() {
            return Ok(ReadResponse::default());
        }
        if let Some(deferred) = self.configured.deferred() {
            return Ok(deferred.unrefreshed(request));
        }
        let new_state = self
            .refresh(&request.current_state)
            .await
            .map_err(Diagnostics::from)?;
        Ok(ReadResponse {
            new_state,
            private: request.private,
            ..ReadResponse::default()
        })
    }

    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let estate = &self.connection()?.estate;
        if request.id != estate.as_str() {
            return Err(Diagnostic::error(
                "Cannot import records of another estate",
                format!(
                    "The import id is {:?}, but this provider block is estate {:?}: a records_outputs \
                     resource records its own estate's outputs. Import it with id {:?}.",
                    request.id,
                    estate.as_str(),
                    estate.as_str()
                ),
            )
            .into());
        }
        Ok(ImportResponse::one(request.type_name, empty_state(estate)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_come_from_both_attributes() {
        let config = Value::object([
            (
                "values",
                Value::object([("b", Value::int(1)), ("a", Value::string("x"))]),
            ),
            ("sensitive_values", Value::object([("c", Value::Bool(true))])),
        ]);
        let outputs = outputs_of(&config);
        let names: Vec<(&str, bool)> = outputs.iter().map(|o| (o.name.as_str(), o.sensitive)).collect();
        assert_eq!(names, [("a", false), ("b", false), ("c", true)]);
    }

    #[test]
    fn validation_catches_duplicates_collisions_and_non_objects() {
        let config = Value::object([
            (
                "values",
                Value::object([("a_b", Value::int(1)), ("a-b", Value::int(2)), ("x", Value::Null)]),
            ),
            ("sensitive_values", Value::object([("x", Value::int(3))])),
        ]);
        let paths: Vec<String> = validate_outputs(&config)
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(paths, ["values[\"a_b\"]", "sensitive_values[\"x\"]"]);
        let bad = Value::object([("values", Value::string("nope"))]);
        assert!(validate_outputs(&bad).has_errors());
        let unknown = Value::object([("values", Value::unknown())]);
        assert!(validate_outputs(&unknown).is_empty());
    }

    #[test]
    fn reconcile_keeps_the_state_while_it_matches() {
        let state = Value::string_map([("a", "x")]);
        let live = BTreeMap::from([("a".to_string(), Value::string("x"))]);
        assert_eq!(reconcile(&state, live), state);
        assert_eq!(
            reconcile(&state, BTreeMap::new()),
            Value::object(Vec::<(String, Value)>::new())
        );
        assert_eq!(reconcile(&Value::Null, BTreeMap::new()), Value::Null);
    }

    #[test]
    fn drifted_readers_always_differ_from_the_state() {
        let state = Value::Tuple(vec![crate::grants::Reader::User("a".into()).to_value()]);
        let shown = drifted_readers(&state, &[]);
        assert_ne!(shown, state);
        assert_ne!(drifted_readers(&Value::Null, &[]), Value::Null);
    }

    #[test]
    fn now_is_rfc3339_utc_seconds() {
        let t = now();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T');
    }
}
