//! Data source `terraform_estate_outputs`: another estate's recorded outputs, read with
//! `get` by name when `names` is given (k names, k GETs, a few at a time, no `list`
//! permission needed) or with one list of the estate's output Secrets otherwise. A read
//! never writes anything.
//!
//! What is read can be pinned and checked: `serial` reads the outputs as they were at that
//! apply of the producer (from each output's history), `min_serial` and `max_age` refuse
//! outputs older than the consumer accepts. `versions` gives each output's serial and time,
//! for `precondition`s and for `records_seen`, which warns of upstream changes.
//! A reader granted some outputs only still reads those; the others are refused by name.

mod outputs_read_error;
mod pinning;

use crate::head;
use crate::rbac_refusal::{RbacRefusal, identity};
use crate::record::{self, Recorded, secret_name};
use crate::store::Store;
use async_trait::async_trait;
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Secret;
use kube_estate::{ApiError, Configured, Connection, Estate};
use plugin_runtime::duration;
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostic, Diagnostics, Number, ReadDataRequest,
    ReadDataResponse, Schema, Type, Value,
};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use outputs_read_error::OutputsReadError;
use pinning::{Wanted, select};

/// How many times the outputs are read while commits keep landing under the read.
const READS: u32 = 3;

/// How many GETs a read by name has in flight at once.
const GETS_IN_FLIGHT: usize = 8;

pub struct EstateOutputs {
    configured: Arc<Configured>,
}

impl EstateOutputs {
    pub fn new(configured: Arc<Configured>) -> EstateOutputs {
        EstateOutputs { configured }
    }
}

/// What one read found.
struct Found {
    recorded: Vec<Recorded>,
    /// Names asked for that are not recorded.
    missing: Vec<String>,
}

/// What a read by name got for each name.
enum Got {
    Found(Box<Recorded>),
    Missing(String),
    /// Recorded, but only by an apply that has not committed yet (or committed after the head
    /// was read).
    Ahead(String),
    Refused {
        name: String,
        verb: String,
        message: String,
    },
}

impl EstateOutputs {
    async fn fetch(&self, conn: &Connection, config: &Value) -> Result<ReadDataResponse, OutputsReadError> {
        let estate = Estate::parse(config.get("estate").as_str().unwrap_or_default())?;
        let store = Store::new(conn.client.clone(), estate.clone());
        let names: Option<Vec<String>> = match config.get("names") {
            Value::Null => None,
            names => Some(
                names
                    .elements()
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect(),
            ),
        };
        // A refused read: nothing is refused where nothing is recorded (an estate destroyed
        // took its grants with it), so that case reads as "not recorded" instead.
        let refused = |verb: String, message: String, outputs: Vec<String>, granted: Vec<String>| async {
            let namespace = store.get_namespace().await;
            if let Ok(None) = namespace.map(|ns| ns.filter(|n| n.metadata.deletion_timestamp.is_none())) {
                return Ok(Found {
                    recorded: Vec::new(),
                    missing: names.clone().unwrap_or_default(),
                });
            }
            Err(OutputsReadError::Refused(Box::new(RbacRefusal {
                reader_estate: conn.estate.clone(),
                estate: estate.clone(),
                identity: identity(&conn.client, &message).await,
                verb,
                secret_names: outputs.iter().map(|n| secret_name(n)).collect(),
                outputs,
                granted,
                server_message: message,
            })))
        };
        // The outputs as of the estate's last commit; read again should a commit land while
        // they are read and the history no longer reach back to the one read first.
        let mut committed = head::committed_serial(&store).await?;
        let mut reads = 1;
        let found = loop {
            let (found, ahead) = self
                .read_at(&store, names.as_deref(), committed, &refused)
                .await?;
            let now = match ahead {
                true if reads < READS => head::committed_serial(&store).await?,
                _ => committed,
            };
            if now == committed {
                break found;
            }
            committed = now;
            reads += 1;
        };
        respond(config, &estate, found, time::OffsetDateTime::now_utc())
    }

    /// The outputs `names` (all of them: `None`) as of the estate's commit `committed`, and
    /// whether one was there but only newer than it.
    async fn read_at<R, F>(
        &self,
        store: &Store,
        names: Option<&[String]>,
        committed: Option<u64>,
        refused: &R,
    ) -> Result<(Found, bool), OutputsReadError>
    where
        R: Fn(String, String, Vec<String>, Vec<String>) -> F,
        F: std::future::Future<Output = Result<Found, OutputsReadError>>,
    {
        let mut ahead = false;
        let found = match names {
            Some(names) => {
                let mut found = Found {
                    recorded: Vec::new(),
                    missing: Vec::new(),
                };
                let mut denied: Vec<String> = Vec::new();
                let mut first_refusal = None;
                for got in get_each(store, names, committed).await? {
                    match got {
                        Got::Found(r) => found.recorded.push(*r),
                        Got::Missing(name) => found.missing.push(name),
                        Got::Ahead(name) => {
                            ahead = true;
                            found.missing.push(name);
                        }
                        Got::Refused { name, verb, message } => {
                            denied.push(name);
                            first_refusal.get_or_insert((verb, message));
                        }
                    }
                }
                match first_refusal {
                    Some((verb, message)) => {
                        let granted = found.recorded.iter().map(|r| r.output.name.clone()).collect();
                        refused(verb, message, denied, granted).await?
                    }
                    None => found,
                }
            }
            None => match store.list_outputs().await {
                Ok(secrets) => {
                    let mut recorded = Vec::new();
                    for secret in &secrets {
                        match seen_at(secret, committed)? {
                            Got::Found(r) => recorded.push(*r),
                            Got::Ahead(_) => ahead = true,
                            _ => {}
                        }
                    }
                    Found {
                        recorded,
                        missing: Vec::new(),
                    }
                }
                Err(ApiError::Forbidden { verb, message, .. }) => {
                    refused(verb, message, Vec::new(), Vec::new()).await?
                }
                Err(e) => return Err(e.into()),
            },
        };
        Ok((found, ahead))
    }
}

/// What a reader at the commit `committed` finds in `secret`.
fn seen_at(secret: &Secret, committed: Option<u64>) -> Result<Got, OutputsReadError> {
    let recorded = record::from_secret(secret)?;
    let name = recorded.output.name.clone();
    let newest = recorded.stamp.serial;
    Ok(match head::visible(secret, recorded, committed) {
        Some(r) => Got::Found(Box::new(r)),
        None if committed.is_some_and(|c| newest > c) => Got::Ahead(name),
        None => Got::Missing(name),
    })
}

/// Reads each named output with one get, a few at a time, in the order named, as of the
/// commit `committed`.
async fn get_each(
    store: &Store,
    names: &[String],
    committed: Option<u64>,
) -> Result<Vec<Got>, OutputsReadError> {
    // The futures are made before they are streamed: a closure returning them inside the
    // stream would not be `Send` for every lifetime, as `read` needs.
    let futures: Vec<_> = names.iter().map(|name| get_one(store, name)).collect();
    let gets = stream::iter(futures)
        .buffered(GETS_IN_FLIGHT)
        .collect::<Vec<_>>()
        .await;
    gets.into_iter()
        .map(|(name, got)| {
            Ok(match got {
                Err(ApiError::Forbidden { verb, message, .. }) => Got::Refused {
                    name: name.clone(),
                    verb,
                    message,
                },
                Err(e) => return Err(e.into()),
                Ok(secret) => match secret.map(|s| seen_at(&s, committed)).transpose()? {
                    // A Secret of that name recording another output does not count.
                    Some(Got::Found(r)) if r.output.name == *name => Got::Found(r),
                    Some(Got::Ahead(n)) if n == *name => Got::Ahead(n),
                    _ => Got::Missing(name.clone()),
                },
            })
        })
        .collect()
}

async fn get_one<'a>(store: &Store, name: &'a String) -> (&'a String, Result<Option<Secret>, ApiError>) {
    (name, store.get::<Secret>(&secret_name(name)).await)
}

fn number(n: u64) -> Value {
    Value::Number(Number::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

/// The type of `versions`: output name -> `{ serial, as_of }`.
pub fn versions_type() -> Type {
    Type::map(Type::object([("serial", Type::Number), ("as_of", Type::String)]))
}
/// The data source's state from what was found, `defaults` filling in what is not recorded.
fn respond(
    config: &Value,
    estate: &Estate,
    found: Found,
    now: time::OffsetDateTime,
) -> Result<ReadDataResponse, OutputsReadError> {
    let defaults: BTreeMap<String, Value> = config.get("defaults").entries().cloned().unwrap_or_default();
    let missing: Vec<String> = found
        .missing
        .into_iter()
        .filter(|n| !defaults.contains_key(n))
        .collect();
    if !missing.is_empty()
        || (found.recorded.is_empty() && defaults.is_empty() && config.get("names").is_null())
    {
        return Err(OutputsReadError::NotRecorded {
            estate: estate.clone(),
            missing,
        });
    }
    let wanted = Wanted::of(config);
    let selected = select(&wanted, estate, &found.recorded, now)?;
    let sensitive_names: BTreeSet<&str> = selected
        .iter()
        .filter(|(_, v)| v.sensitive)
        .map(|(name, _)| name.as_str())
        .collect();
    let mut values: BTreeMap<String, Value> = defaults
        .into_iter()
        .filter(|(k, _)| !sensitive_names.contains(k.as_str()))
        .collect();
    let mut sensitive = BTreeMap::new();
    let mut versions = BTreeMap::new();
    for (name, v) in &selected {
        let target = if v.sensitive { &mut sensitive } else { &mut values };
        target.insert(name.clone(), v.value.clone());
        versions.insert(
            name.clone(),
            Value::object([
                ("serial", number(v.stamp.serial)),
                ("as_of", Value::string(&v.stamp.applied_at)),
            ]),
        );
    }
    let latest = selected.iter().map(|(_, v)| &v.stamp).max_by_key(|s| s.serial);
    let mut state = config.clone();
    state.set("values", Value::Object(values));
    state.set("sensitive_values", Value::Object(sensitive));
    state.set("versions", Value::typed(&versions_type(), Value::Map(versions)));
    state.set(
        "as_of",
        latest.map(|s| Value::string(&s.applied_at)).unwrap_or_default(),
    );
    if wanted.serial.is_none() {
        state.set("serial", latest.map(|s| number(s.serial)).unwrap_or_default());
    }
    let diagnostics = match (latest, wanted.serial) {
        (Some(s), Some(pinned)) => Diagnostic::warning(
            format!(
                "Outputs of estate \"{estate}\" are pinned to serial {pinned} (recorded at {})",
                s.applied_at
            ),
            format!(
                "They were read from the history kept in namespace \"{}\"; remove `serial` to read the \
                 outputs estate \"{estate}\" recorded last.",
                estate.records_namespace()
            ),
        )
        .into(),
        (Some(s), None) => Diagnostic::warning(
            format!(
                "Outputs of estate \"{estate}\" are as of its last apply at {} (serial {})",
                s.applied_at, s.serial
            ),
            format!(
                "They were read from namespace \"{}\", where estate \"{estate}\" recorded them; \
                 changes it applies later are seen by the next plan here.",
                estate.records_namespace()
            ),
        )
        .into(),
        (None, _) => Diagnostics::new(),
    };
    Ok(ReadDataResponse { state, diagnostics })
}

#[async_trait]
impl DataSource for EstateOutputs {
    fn type_name(&self) -> &'static str {
        "terraform_estate_outputs"
    }

    fn schema(&self) -> Schema {
        Schema::new(
            0,
            Block::new(
                "The outputs another estate recorded with `records_outputs`, read with nothing more \
                 than `get` on its output Secrets (like `terraform_remote_state`, without access to \
                 that estate's state).",
            )
            .attribute(Attribute::required(
                "estate",
                Type::String,
                "The estate whose outputs to read.",
            ))
            .attribute(Attribute::optional(
                "names",
                Type::list(Type::String),
                "The outputs to read, each with `get` by name (no `list` permission needed). Without \
                 it, every recorded output is read with one `list`.",
            ))
            .attribute(Attribute::optional(
                "defaults",
                Type::Dynamic,
                "Values for outputs that are not recorded, as in `terraform_remote_state`.",
            ))
            .attribute(Attribute::optional(
                "min_serial",
                Type::Number,
                "Fail the read unless the newest of the outputs read was recorded at this serial of \
                 the estate or later.",
            ))
            .attribute(Attribute::optional(
                "max_age",
                Type::String,
                "Fail the read when an output read was recorded longer ago than this Go duration \
                 (e.g. \"24h\", \"90m\"); the error names the estate, each output's age and the last \
                 apply. An output's time is that of the last apply that changed it.",
            ))
            .attribute(Attribute::computed(
                "values",
                Type::Dynamic,
                "The outputs (not sensitive) by name, with the types they were recorded with.",
            ))
            .attribute(
                Attribute::computed(
                    "sensitive_values",
                    Type::Dynamic,
                    "The sensitive outputs by name.",
                )
                .sensitive(),
            )
            .attribute(Attribute::computed(
                "versions",
                versions_type(),
                "Each output read, by name: `serial` and `as_of` (RFC 3339, UTC) of the apply that \
                 recorded the value read. For `precondition`s, and for `records_seen`, which warns \
                 when they change.",
            ))
            .attribute(Attribute::computed(
                "as_of",
                Type::String,
                "When the estate last changed the outputs read (RFC 3339, UTC).",
            ))
            .attribute(Attribute::optional_computed(
                "serial",
                Type::Number,
                "The serial of that apply. Set it to read the outputs as they were at that serial of \
                 the estate, from the history each output keeps (`history` on `records_outputs`); \
                 a serial no longer kept fails the read, naming the serials that remain.",
            )),
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if let Some(estate) = config.get("estate").as_str()
            && let Err(e) = Estate::parse(estate)
        {
            diags.push(OutputsReadError::Estate(e).into());
        }
        let mut seen = BTreeSet::new();
        for (i, name) in config.get("names").elements().iter().enumerate() {
            let at = AttributePath::root("names").index(i as i64);
            match name.as_str() {
                Some("") => diags
                    .push(Diagnostic::error("Invalid output name", "An output name is not empty.").at(at)),
                Some(n) if !seen.insert(n) => diags.push(
                    Diagnostic::error("Duplicate output name", format!("{n:?} is listed twice.")).at(at),
                ),
                _ => {}
            }
        }
        let defaults = config.get("defaults");
        if !defaults.is_null() && !defaults.is_unknown() && defaults.entries().is_none() {
            diags.push(
                Diagnostic::error("Invalid defaults", "defaults must be an object of output values.")
                    .at(AttributePath::root("defaults")),
            );
        }
        for attribute in ["serial", "min_serial"] {
            let value = config.get(attribute);
            if value.is_null() || value.is_unknown() {
                continue;
            }
            if value.as_i64().is_none_or(|n| n < 1) {
                diags.push(
                    Diagnostic::error(
                        "Invalid serial",
                        format!("{attribute} is a serial of the estate: a whole number from 1."),
                    )
                    .at(AttributePath::root(attribute)),
                );
            }
        }
        if let Some(text) = config.get("max_age").as_str()
            && let Err(e) = duration::parse(text)
        {
            diags
                .push(Diagnostic::error("Invalid max_age", e.to_string()).at(AttributePath::root("max_age")));
        }
        diags
    }

    async fn read(&self, request: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.configured.get()?;
        self.fetch(conn, &request.config)
            .await
            .map_err(|e| Diagnostic::from(e).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Output, Stamp, Version};

    fn estate() -> Estate {
        Estate::parse("network").unwrap()
    }

    fn recorded(name: &str, value: Value, sensitive: bool, serial: u64) -> Recorded {
        Recorded {
            output: Output {
                name: name.into(),
                value,
                sensitive,
            },
            stamp: Stamp {
                serial,
                applied_at: format!("2026-12-02T12:00:0{serial}Z"),
            },
            history: Vec::new(),
        }
    }

    /// A little after the stamps `recorded` writes.
    fn now() -> time::OffsetDateTime {
        time::macros::datetime!(2026-12-02 12:01:00 UTC)
    }

    fn config(names: Option<&[&str]>, defaults: Value) -> Value {
        Value::object([
            ("estate", Value::string("network")),
            (
                "names",
                names
                    .map(|n| Value::List(n.iter().map(|s| Value::string(*s)).collect()))
                    .unwrap_or_default(),
            ),
            ("defaults", defaults),
            ("values", Value::Null),
            ("sensitive_values", Value::Null),
            ("as_of", Value::Null),
            ("serial", Value::Null),
            ("min_serial", Value::Null),
            ("max_age", Value::Null),
            ("versions", Value::Null),
        ])
    }

    #[test]
    fn values_split_by_sensitivity_and_warn_as_of_latest_apply() {
        let found = Found {
            recorded: vec![
                recorded("gateway_host", Value::string("g"), false, 2),
                recorded("token", Value::string("t"), true, 3),
            ],
            missing: vec![],
        };
        let r = respond(&config(None, Value::Null), &estate(), found, now()).unwrap();
        assert_eq!(
            r.state.get("values"),
            &Value::object([("gateway_host", Value::string("g"))])
        );
        assert_eq!(
            r.state.get("sensitive_values"),
            &Value::object([("token", Value::string("t"))])
        );
        assert_eq!(r.state.get("serial"), &Value::int(3));
        assert_eq!(r.state.get("as_of"), &Value::string("2026-12-02T12:00:03Z"));
        assert_eq!(
            r.state.get("versions").get("gateway_host"),
            &Value::object([
                ("serial", Value::int(2)),
                ("as_of", Value::string("2026-12-02T12:00:02Z")),
            ])
        );
        let d = &r.diagnostics.0[0];
        assert_eq!(
            d.summary,
            "Outputs of estate \"network\" are as of its last apply at 2026-12-02T12:00:03Z (serial 3)"
        );
    }

    #[test]
    fn missing_outputs_are_not_recorded_unless_defaulted() {
        let found = || Found {
            recorded: vec![recorded("a", Value::int(1), false, 1)],
            missing: vec!["b".into()],
        };
        let err = respond(&config(Some(&["a", "b"]), Value::Null), &estate(), found(), now())
            .err()
            .unwrap();
        let d = Diagnostic::from(err);
        assert_eq!(d.summary, "Outputs of estate \"network\" are not recorded");
        assert!(d.detail.starts_with(
            "Output \"b\" of estate \"network\" is not recorded in namespace \"tofu-records-network\"."
        ));

        let defaults = Value::object([("b", Value::int(2)), ("a", Value::int(0))]);
        let r = respond(&config(Some(&["a", "b"]), defaults), &estate(), found(), now()).unwrap();
        assert_eq!(
            r.state.get("values"),
            &Value::object([("a", Value::int(1)), ("b", Value::int(2))])
        );

        let empty = Found {
            recorded: vec![],
            missing: vec![],
        };
        let d = Diagnostic::from(
            respond(&config(None, Value::Null), &estate(), empty, now())
                .err()
                .unwrap(),
        );
        assert!(
            d.detail
                .starts_with("No outputs of estate \"network\" are recorded"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn validate_names_estate_and_defaults() {
        let ds = EstateOutputs::new(Arc::default());
        let mut c = config(Some(&["a", "a", ""]), Value::string("x"));
        c.set("estate", Value::string("Bad_Estate!"));
        let paths: Vec<String> = ds
            .validate(&c)
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(paths, ["estate", "names[1]", "names[2]", "defaults"]);
    }

    /// Output "host" recorded as "a", "b", "c" at serials 1, 2, 3, and "port" at serial 1.
    fn with_history() -> Found {
        let mut host = recorded("host", Value::string("c"), false, 3);
        host.history = ["b", "a"]
            .iter()
            .zip([2u64, 1])
            .map(|(v, serial)| Version {
                value: Value::string(*v),
                sensitive: false,
                stamp: Stamp {
                    serial,
                    applied_at: format!("2026-12-02T12:00:0{serial}Z"),
                },
            })
            .collect();
        Found {
            recorded: vec![host, recorded("port", Value::int(80), false, 1)],
            missing: vec![],
        }
    }

    #[test]
    fn a_pinned_serial_reads_the_versions_in_force_then() {
        let mut c = config(None, Value::Null);
        c.set("serial", Value::int(1));
        let r = respond(&c, &estate(), with_history(), now()).unwrap();
        assert_eq!(
            r.state.get("values"),
            &Value::object([("host", Value::string("a")), ("port", Value::int(80))])
        );
        assert_eq!(r.state.get("serial"), &Value::int(1));
        assert!(r.diagnostics.0[0].summary.contains("pinned to serial 1"));

        c.set("serial", Value::int(2));
        let r = respond(&c, &estate(), with_history(), now()).unwrap();
        assert_eq!(r.state.get("values").get("host"), &Value::string("b"));
        assert_eq!(r.state.get("versions").get("host").get("serial"), &Value::int(2));
        assert_eq!(r.state.get("as_of"), &Value::string("2026-12-02T12:00:02Z"));

        // Trimmed away: the error names the serials that remain.
        let mut found = with_history();
        found.recorded[0].history.pop();
        c.set("serial", Value::int(1));
        let d = Diagnostic::from(respond(&c, &estate(), found, now()).err().unwrap());
        assert_eq!(d.summary, "Serial 1 of estate \"network\" is no longer recorded");
        assert!(
            d.detail
                .starts_with("Output \"host\" of estate \"network\" keeps serials 3, 2 only"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn min_serial_and_max_age_refuse_old_outputs() {
        let mut c = config(None, Value::Null);
        c.set("min_serial", Value::int(3));
        assert!(respond(&c, &estate(), with_history(), now()).is_ok());
        c.set("min_serial", Value::int(4));
        let d = Diagnostic::from(respond(&c, &estate(), with_history(), now()).err().unwrap());
        assert_eq!(
            d.summary,
            "Outputs of estate \"network\" are older than min_serial 4"
        );
        assert!(
            d.detail.contains("serial 3 (applied at 2026-12-02T12:00:03Z)"),
            "{}",
            d.detail
        );

        let mut c = config(None, Value::Null);
        c.set("max_age", Value::string("58s"));
        let d = Diagnostic::from(respond(&c, &estate(), with_history(), now()).err().unwrap());
        assert_eq!(
            d.summary,
            "Outputs of estate \"network\" are older than max_age 58s"
        );
        assert_eq!(
            d.detail,
            "\"port\" is 59s old (recorded at 2026-12-02T12:00:01Z). Estate \"network\" last applied a \
             change to these outputs at 2026-12-02T12:00:03Z (serial 3). Outputs change only when that \
             estate applies a change to them: apply it, or raise max_age."
        );
        c.set("max_age", Value::string("1m"));
        assert!(respond(&c, &estate(), with_history(), now()).is_ok());
        let later = now() + time::Duration::hours(26);
        c.set("max_age", Value::string("24h"));
        let d = Diagnostic::from(respond(&c, &estate(), with_history(), later).err().unwrap());
        assert!(d.detail.starts_with("\"port\" is 26h0m59s old"), "{}", d.detail);
    }

    #[test]
    fn pins_and_ages_are_validated() {
        let ds = EstateOutputs::new(Arc::default());
        let mut c = config(None, Value::Null);
        c.set("serial", Value::int(0));
        c.set("min_serial", Value::Number(Number::Float(1.5)));
        c.set("max_age", Value::string("a day"));
        let paths: Vec<String> = ds
            .validate(&c)
            .0
            .iter()
            .map(|d| d.attribute.as_ref().unwrap().to_string())
            .collect();
        assert_eq!(paths, ["serial", "min_serial", "max_age"]);
    }
}
