//! What a Kubernetes kind does beyond converting its fields, as data: `catalog/behaviour.tsv`
//! (hand-written, each row with its source) gives per kind the attribute paths the API server
//! refuses to change (a change plans a replacement instead of failing at apply), the wait after
//! a write (which readiness check of [`readiness`], switched by which flag, for how long) and
//! whether a delete waits for the object to be gone. [`of`] makes a catalog type's
//! [`Behaviour`] from its kind's rows and its kind's code, if it has any ([`Special`]).
//!
//! The table is read once, the first time a type's behaviour is asked for; a malformed row is a
//! defect of the checked-in file, which a unit test reads whole.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use plugin_runtime::{AttributePath, Diagnostic, Value};
use serde_json::{Map, Value as Json};

pub(crate) mod special;

use crate::kind::{Behaviour, KindInfo};
use crate::readiness::{self, Readiness};
use crate::timeouts;
use special::Special;

const TABLE: &str = include_str!("../catalog/behaviour.tsv");

/// A wait after a create or update: the `wait*` rows of a kind.
struct Wait {
    check: fn(&Json) -> Readiness,
    /// The Terraform-only attribute that switches it; none: it always waits.
    flag: Option<&'static str>,
    /// Whether it waits when the flag is not set.
    default: bool,
    /// hashicorp's timeout for it, when the `timeouts` block sets none.
    timeout: Duration,
    /// What the object waits to do ("finish its rollout").
    what: &'static str,
    /// A JSON pointer and the string there for which it waits (a Service's type LoadBalancer);
    /// other objects do not wait.
    only_if: Option<(&'static str, &'static str)>,
    /// An object deleted meanwhile is done (a Job's `ttl_seconds_after_finished`), not an error.
    done_if_gone: bool,
}

/// A kind's rows.
#[derive(Default)]
struct Facts {
    immutable: Vec<&'static str>,
    wait: Option<Wait>,
    deletes_slowly: bool,
    local_once_ready: bool,
}

/// The table, by kind.
fn table() -> &'static HashMap<&'static str, Facts> {
    static TABLE_BY_KIND: OnceLock<HashMap<&'static str, Facts>> = OnceLock::new();
    TABLE_BY_KIND.get_or_init(|| parse(TABLE).unwrap_or_else(|e| panic!("catalog/behaviour.tsv: {e}")))
}

/// The rows of `text`, by kind; the error names the line and what is wrong with it.
fn parse(text: &'static str) -> Result<HashMap<&'static str, Facts>, String> {
    let mut rows: HashMap<&'static str, Vec<(&'static str, &'static str)>> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let [kind, fact, argument, _source] = line.split('\t').collect::<Vec<_>>()[..] else {
            return Err(format!("line {}: not 4 tab-separated columns: {line:?}", n + 1));
        };
        rows.entry(kind).or_default().push((fact, argument));
    }
    rows.into_iter()
        .map(|(kind, rows)| {
            facts(&rows)
                .map(|f| (kind, f))
                .map_err(|e| format!("{kind}: {e}"))
        })
        .collect()
}

/// One kind's facts from its `(fact, argument)` rows.
fn facts(rows: &[(&'static str, &'static str)]) -> Result<Facts, String> {
    let one = |name: &str| rows.iter().find(|(f, _)| *f == name).map(|(_, a)| *a);
    let flag = |name: &str| -> Result<Option<bool>, String> {
        one(name)
            .map(|a| {
                a.parse::<bool>()
                    .map_err(|_| format!("{name} {a:?} is not true or false"))
            })
            .transpose()
    };
    let known = [
        "immutable",
        "wait",
        "wait_flag",
        "wait_default",
        "wait_timeout",
        "wait_for",
        "wait_only_if",
        "wait_done_if_gone",
        "deletes_slowly",
        "local_once_ready",
    ];
    if let Some((fact, _)) = rows.iter().find(|(f, _)| !known.contains(f)) {
        return Err(format!("unknown fact {fact:?}"));
    }
    let wait = match one("wait") {
        None if rows.iter().any(|(f, _)| f.starts_with("wait_")) => {
            return Err("wait_* rows without a wait row".to_string());
        }
        None => None,
        Some(check) => Some(Wait {
            check: readiness::named(check).ok_or_else(|| format!("no readiness check named {check:?}"))?,
            flag: one("wait_flag"),
            default: flag("wait_default")?.unwrap_or(true),
            timeout: match one("wait_timeout") {
                Some(t) => {
                    plugin_runtime::duration::parse(t).map_err(|e| format!("wait_timeout {t:?}: {e}"))?
                }
                None => timeouts::DEFAULT,
            },
            what: one("wait_for").ok_or("a wait without its wait_for row")?,
            only_if: one("wait_only_if")
                .map(|a| {
                    a.split_once('=')
                        .filter(|(pointer, _)| pointer.starts_with('/'))
                        .ok_or_else(|| format!("wait_only_if {a:?} is not /pointer=value"))
                })
                .transpose()?,
            done_if_gone: flag("wait_done_if_gone")?.unwrap_or(false),
        }),
    };
    Ok(Facts {
        immutable: rows
            .iter()
            .filter(|(f, _)| *f == "immutable")
            .map(|(_, path)| *path)
            .collect(),
        wait,
        deletes_slowly: flag("deletes_slowly")?.unwrap_or(false),
        local_once_ready: flag("local_once_ready")?.unwrap_or(false),
    })
}

/// The behaviour of a catalog type, by its Kubernetes kind.
pub fn of(info: &'static KindInfo) -> Box<dyn Behaviour> {
    static NONE: OnceLock<Facts> = OnceLock::new();
    let facts = table()
        .get(info.kind)
        .unwrap_or_else(|| NONE.get_or_init(Facts::default));
    Box::new(Kinded {
        info,
        facts,
        special: Special::of(info.kind, info.api_version),
    })
}

/// `spec.selector` as an attribute path: blocks are lists of one.
fn attribute_path(dotted: &str) -> AttributePath {
    let mut parts = dotted.split('.');
    let mut path = AttributePath::root(parts.next().unwrap_or(dotted));
    for part in parts {
        path = path.index(0).attribute(part);
    }
    path
}

struct Kinded {
    info: &'static KindInfo,
    facts: &'static Facts,
    special: Option<Special>,
}

#[async_trait::async_trait]
impl Behaviour for Kinded {
    async fn wait_ready(
        &self,
        client: &kube::Client,
        object: &Json,
        planned: &Value,
    ) -> Result<Option<Json>, Diagnostic> {
        if let Some(special) = &self.special
            && let Some(outcome) = special.wait_ready(client, object, planned).await
        {
            return outcome;
        }
        let Some(wait) = &self.facts.wait else {
            return Ok(None);
        };
        if let Some(flag) = wait.flag
            && !planned.get(flag).as_bool().unwrap_or(wait.default)
        {
            return Ok(None);
        }
        if let Some((pointer, value)) = wait.only_if
            && object.pointer(pointer).and_then(Json::as_str) != Some(value)
        {
            return Ok(None);
        }
        let operation = if object["metadata"]["generation"].as_i64().unwrap_or(1) <= 1 {
            "create"
        } else {
            "update"
        };
        let timeout = timeouts::of(planned, operation, wait.timeout);
        let found =
            readiness::ready_wait::poll(client, self.info, object, timeout, wait.what, wait.check).await?;
        match found {
            None if !wait.done_if_gone => Err(readiness::ready_wait::gone(self.info, object)),
            found => Ok(found),
        }
    }

    fn delete_wait(&self, resource: &Value) -> Option<Duration> {
        self.facts
            .deletes_slowly
            .then(|| timeouts::of(resource, "delete", timeouts::DEFAULT))
    }

    fn local_once_ready(&self) -> bool {
        self.facts.local_once_ready
    }

    fn immutable_paths(&self) -> Vec<AttributePath> {
        self.facts.immutable.iter().map(|p| attribute_path(p)).collect()
    }

    fn unclaim(&self, object: &mut Json) {
        if let Some(special) = &self.special {
            special.unclaim(object);
        }
    }

    fn imported(&self, object: &Json, state: &mut Value) {
        if let Some(special) = &self.special {
            special.imported(object, state);
        }
    }

    fn complete(&self, object: &mut Map<String, Json>) {
        if let Some(special) = &self.special {
            special.complete(object);
        }
    }

    fn read_view(&self, object: &Json, prior: &Value) -> Option<(Json, Value)> {
        self.special.as_ref()?.read_view(object, prior)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immutable_paths_index_blocks() {
        assert_eq!(attribute_path("spec.selector").to_string(), "spec[0].selector");
        assert_eq!(attribute_path("role_ref").to_string(), "role_ref");
    }

    #[test]
    fn the_table_reads_whole_and_every_kind_is_in_the_catalog() {
        let table = parse(TABLE).expect("catalog/behaviour.tsv reads");
        for kind in table.keys() {
            assert!(
                crate::catalog::entries().iter().any(|e| e.info.kind == *kind),
                "{kind} is no catalog type's kind"
            );
        }
        let deployment = &table["Deployment"];
        assert_eq!(deployment.immutable, ["spec.selector"]);
        let wait = deployment.wait.as_ref().expect("a Deployment waits");
        assert_eq!(
            (wait.flag, wait.default, wait.timeout, wait.what),
            (
                Some("wait_for_rollout"),
                true,
                timeouts::DEFAULT,
                "finish its rollout"
            )
        );
        assert!(deployment.deletes_slowly);
        let service = table["Service"].wait.as_ref().expect("a Service waits");
        assert_eq!(service.only_if, Some(("/spec/type", "LoadBalancer")));
        assert!(table["Job"].wait.as_ref().is_some_and(|w| w.done_if_gone));
        let volume = table["PersistentVolume"].wait.as_ref().expect("a volume waits");
        assert_eq!((volume.flag, volume.timeout), (None, Duration::from_secs(300)));
        assert!(table["Ingress"].wait.as_ref().is_some_and(|w| !w.default));
    }

    #[test]
    fn malformed_rows_are_refused_with_their_kind() {
        let refused = |text: &'static str| parse(text).err().unwrap_or_default();
        assert!(refused("Job\twait\tno_such_check\t-\nJob\twait_for\tx\t-\n").contains("no_such_check"));
        assert!(refused("Job\twait_flag\tf\t-\n").contains("without a wait row"));
        assert!(refused("Job\tdeletes_slowly\tyes\t-\n").contains("Job"));
        assert!(refused("Job\timmutable\n").contains("line 1"));
        assert!(refused("Job\tmutable\tspec\t-\n").contains("unknown fact"));
    }
}
