//! Resource `records_seen`: what this estate last applied with of another estate's outputs,
//! so its plan warns, naming them, when outputs changed upstream since.
//!
//! A data source has no prior state (the engine reads it afresh each plan and keeps nothing
//! of the last one), so "changed since my last apply" needs something the consumer applies.
//! This resource is that: it holds `data.terraform_estate_outputs.x.versions` (each output's
//! serial and time) in the consumer's own state, and its plan compares the versions read now
//! with those applied last. Nothing is written to the cluster and no permission is needed
//! beyond the reads the data source already makes; the change also shows as an ordinary
//! in-place update of this resource, and applying it marks the changes as seen.

use std::collections::BTreeMap;

use async_trait::async_trait;
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, Block, Diagnostic, Diagnostics, ImportRequest, ImportResponse,
    PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema, Type, Value,
};

use crate::estate_outputs::versions_type;

#[derive(Default)]
pub struct SeenResource;

/// An output's version as `versions` gives it: serial and time, for the message.
fn version(v: &Value) -> String {
    let serial = v
        .get("serial")
        .as_i64()
        .map_or("?".to_string(), |s| s.to_string());
    match v.get("as_of").as_str() {
        Some(at) => format!("serial {serial} ({at})"),
        None => format!("serial {serial}"),
    }
}

/// How the outputs read now differ from those applied last, one line each, in name order;
/// empty when nothing changed or either side is not known yet.
pub fn changes(seen: &Value, now: &Value) -> BTreeMap<String, String> {
    let (Some(seen), Some(now)) = (seen.entries(), now.entries()) else {
        return BTreeMap::new();
    };
    if !now.values().all(Value::is_wholly_known) {
        return BTreeMap::new();
    }
    let mut out = BTreeMap::new();
    for (name, v) in now {
        match seen.get(name) {
            Some(old) if old.get("serial") == v.get("serial") => {}
            Some(old) => {
                out.insert(name.clone(), format!("{} -> {}", version(old), version(v)));
            }
            None => {
                out.insert(name.clone(), format!("newly read, {}", version(v)));
            }
        }
    }
    for name in seen.keys().filter(|n| !now.contains_key(*n)) {
        out.insert(name.clone(), "no longer read".to_string());
    }
    out
}

/// The warning naming the outputs that changed upstream, if any did.
fn warning(estate: &str, changed: &BTreeMap<String, String>) -> Option<Diagnostic> {
    if changed.is_empty() {
        return None;
    }
    let names: Vec<String> = changed.keys().map(|n| format!("{n:?}")).collect();
    let lines: Vec<String> = changed
        .iter()
        .map(|(n, what)| format!("  {n:?}: {what}"))
        .collect();
    Some(Diagnostic::warning(
        format!(
            "Outputs of estate \"{estate}\" changed since this estate's last apply: {}",
            names.join(", ")
        ),
        format!(
            "{}\nApplying this plan uses the new values and records them as seen.",
            lines.join("\n")
        ),
    ))
}

#[async_trait]
impl Resource for SeenResource {
    fn type_name(&self) -> &'static str {
        "records_seen"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new(
                "Remembers which versions of another estate's outputs this estate last applied with, \
                 so its plan warns, naming the outputs, when they changed upstream since. Set \
                 `versions = data.terraform_estate_outputs.<name>.versions`. Nothing is written to \
                 the cluster. Import with the estate's name.",
            )
            .attribute(Attribute::computed("id", Type::String, "The estate read."))
            .attribute(Attribute::required(
                "estate",
                Type::String,
                "The estate whose outputs are read, for the warning.",
            ))
            .attribute(Attribute::required(
                "versions",
                versions_type(),
                "The `versions` of the `terraform_estate_outputs` data source reading that estate.",
            )),
        )
    }

    async fn plan(&self, request: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let mut planned = request.proposed_new_state;
        if planned.is_null() {
            return Ok(PlanResponse {
                planned_state: planned,
                ..PlanResponse::default()
            });
        }
        planned.set("id", planned.get("estate").clone());
        let prior = &request.prior_state;
        let diagnostics = if prior.is_null() {
            Diagnostics::new()
        } else {
            let estate = planned.get("estate").as_str().unwrap_or_default().to_string();
            warning(&estate, &changes(prior.get("versions"), planned.get("versions")))
                .map(Diagnostics::from)
                .unwrap_or_default()
        };
        Ok(PlanResponse {
            planned_state: planned,
            diagnostics,
            ..PlanResponse::default()
        })
    }

    async fn apply(&self, request: ApplyRequest) -> ApplyResponse {
        ApplyResponse::as_planned(request)
    }

    async fn read(&self, request: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        Ok(ReadResponse::unchanged(request))
    }

    async fn import(&self, request: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        let state = Value::object([
            ("id", Value::string(&request.id)),
            ("estate", Value::string(&request.id)),
            ("versions", Value::Null),
        ]);
        Ok(ImportResponse::one(request.type_name, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(entries: &[(&str, i64)]) -> Value {
        Value::Map(
            entries
                .iter()
                .map(|(n, s)| {
                    let v = Value::object([
                        ("serial", Value::int(*s)),
                        ("as_of", Value::string(format!("2026-12-02T12:00:0{s}Z"))),
                    ]);
                    (n.to_string(), v)
                })
                .collect(),
        )
    }

    #[test]
    fn changes_name_changed_new_and_dropped_outputs() {
        let seen = versions(&[("a", 1), ("b", 1), ("gone", 1)]);
        let now = versions(&[("a", 1), ("b", 3), ("new", 2)]);
        let changed = changes(&seen, &now);
        assert_eq!(changed.keys().collect::<Vec<_>>(), ["b", "gone", "new"]);
        assert_eq!(
            changed["b"],
            "serial 1 (2026-12-02T12:00:01Z) -> serial 3 (2026-12-02T12:00:03Z)"
        );
        let d = warning("network", &changed).unwrap();
        assert_eq!(
            d.summary,
            "Outputs of estate \"network\" changed since this estate's last apply: \"b\", \"gone\", \"new\""
        );
        assert!(changes(&seen, &seen).is_empty());
        assert!(warning("network", &BTreeMap::new()).is_none());
        assert!(changes(&seen, &Value::unknown()).is_empty());
    }
}
