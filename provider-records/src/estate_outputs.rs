//! Data source `terraform_estate_outputs`: another estate's recorded outputs, read with
//! `get` by name when `names` is given (k names, k GETs, no `list` permission needed) or
//! with one list of the estate's output Secrets otherwise. A read never writes anything.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::Secret;
use kube_estate::{ApiError, Configured, Connection, Estate};
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostic, Diagnostics, Number, ReadDataRequest,
    ReadDataResponse, Schema, Type, Value,
};

use crate::record::{self, RecordError, Recorded, secret_name};
use crate::refusal::{Refusal, identity};
use crate::store::Store;

pub struct EstateOutputs {
    configured: Arc<Configured>,
}

impl EstateOutputs {
    pub fn new(configured: Arc<Configured>) -> EstateOutputs {
        EstateOutputs { configured }
    }
}

/// Why outputs could not be read.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error(transparent)]
    Estate(#[from] kube_estate::EstateError),
    #[error("outputs of estate {estate} are not recorded")]
    NotRecorded { estate: Estate, missing: Vec<String> },
    #[error("refused")]
    Refused(Box<Refusal>),
    #[error(transparent)]
    Undecodable(#[from] RecordError),
    #[error(transparent)]
    Api(Box<ApiError>),
}

impl From<ApiError> for ReadError {
    fn from(e: ApiError) -> ReadError {
        ReadError::Api(Box::new(e))
    }
}

impl From<ReadError> for Diagnostic {
    fn from(err: ReadError) -> Diagnostic {
        match err {
            ReadError::Estate(e) => {
                Diagnostic::error("Invalid estate", e.to_string()).at(AttributePath::root("estate"))
            }
            ReadError::NotRecorded { estate, missing } => {
                let namespace = estate.records_namespace();
                let which = if missing.is_empty() {
                    format!(
                        "No outputs of estate \"{estate}\" are recorded: namespace \"{namespace}\" holds none."
                    )
                } else {
                    let names: Vec<String> = missing.iter().map(|n| format!("{n:?}")).collect();
                    let (noun, verb) = if missing.len() == 1 {
                        ("Output", "is")
                    } else {
                        ("Outputs", "are")
                    };
                    format!(
                        "{noun} {} of estate \"{estate}\" {verb} not recorded in namespace \"{namespace}\".",
                        names.join(", ")
                    )
                };
                Diagnostic::error(
                    format!("Outputs of estate \"{estate}\" are not recorded"),
                    format!(
                        "{which}\nEstate \"{estate}\" records its outputs when it applies a records_outputs \
                         resource: it may not have applied yet, it may not record these outputs, or it \
                         was destroyed. Give `defaults` to plan without them."
                    ),
                )
            }
            ReadError::Refused(r) => (*r).into(),
            ReadError::Undecodable(e) => e.into(),
            ReadError::Api(e) => (*e).into(),
        }
    }
}

/// What one read found.
struct Found {
    recorded: Vec<Recorded>,
    /// Names asked for that are not recorded.
    missing: Vec<String>,
}

impl EstateOutputs {
    async fn fetch(&self, conn: &Connection, config: &Value) -> Result<ReadDataResponse, ReadError> {
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
        let refused = |e: ApiError, secret_names: Vec<String>| async {
            let ApiError::Forbidden { verb, message, .. } = e else {
                return Err(e.into());
            };
            let namespace = store.get_namespace().await;
            if let Ok(None) = namespace.map(|ns| ns.filter(|n| n.metadata.deletion_timestamp.is_none())) {
                return Ok(Found {
                    recorded: Vec::new(),
                    missing: names.clone().unwrap_or_default(),
                });
            }
            Err(ReadError::Refused(Box::new(Refusal {
                reader_estate: conn.estate.clone(),
                estate: estate.clone(),
                identity: identity(&conn.client, &message).await,
                verb,
                secret_names,
                server_message: message,
            })))
        };
        let found = match &names {
            Some(names) => match get_each(&store, names).await {
                Ok(found) => found,
                Err(ReadError::Api(e)) => refused(*e, names.iter().map(|n| secret_name(n)).collect()).await?,
                Err(other) => return Err(other),
            },
            None => match store.list_outputs().await {
                Ok(secrets) => Found {
                    recorded: secrets
                        .iter()
                        .map(record::from_secret)
                        .collect::<Result<_, _>>()?,
                    missing: Vec::new(),
                },
                Err(e) => refused(e, Vec::new()).await?,
            },
        };
        respond(config, &estate, found)
    }
}

/// Reads each named output with one get.
async fn get_each(store: &Store, names: &[String]) -> Result<Found, ReadError> {
    let mut found = Found {
        recorded: Vec::new(),
        missing: Vec::new(),
    };
    for name in names {
        let secret = store.get::<Secret>(&secret_name(name)).await?;
        match secret.map(|s| record::from_secret(&s)).transpose()? {
            // A Secret of that name recording another output does not count.
            Some(r) if r.output.name == *name => found.recorded.push(r),
            _ => found.missing.push(name.clone()),
        }
    }
    Ok(found)
}

/// The data source's state from what was found, `defaults` filling in what is not recorded.
fn respond(config: &Value, estate: &Estate, found: Found) -> Result<ReadDataResponse, ReadError> {
    let defaults: BTreeMap<String, Value> = config.get("defaults").entries().cloned().unwrap_or_default();
    let missing: Vec<String> = found
        .missing
        .into_iter()
        .filter(|n| !defaults.contains_key(n))
        .collect();
    if !missing.is_empty()
        || (found.recorded.is_empty() && defaults.is_empty() && config.get("names").is_null())
    {
        return Err(ReadError::NotRecorded {
            estate: estate.clone(),
            missing,
        });
    }
    let sensitive_names: BTreeSet<&str> = found
        .recorded
        .iter()
        .filter(|r| r.output.sensitive)
        .map(|r| r.output.name.as_str())
        .collect();
    let mut values: BTreeMap<String, Value> = defaults
        .into_iter()
        .filter(|(k, _)| !sensitive_names.contains(k.as_str()))
        .collect();
    let mut sensitive = BTreeMap::new();
    for r in &found.recorded {
        let target = if r.output.sensitive {
            &mut sensitive
        } else {
            &mut values
        };
        target.insert(r.output.name.clone(), r.output.value.clone());
    }
    let latest = found.recorded.iter().map(|r| &r.stamp).max_by_key(|s| s.serial);
    let mut state = config.clone();
    state.set("values", Value::Object(values));
    state.set("sensitive_values", Value::Object(sensitive));
    state.set(
        "as_of",
        latest.map(|s| Value::string(&s.applied_at)).unwrap_or_default(),
    );
    state.set(
        "serial",
        latest
            .map(|s| Value::Number(Number::Int(i64::try_from(s.serial).unwrap_or(i64::MAX))))
            .unwrap_or_default(),
    );
    let diagnostics = match latest {
        Some(s) => Diagnostic::warning(
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
        None => Diagnostics::new(),
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
                "as_of",
                Type::String,
                "When the estate last changed the outputs read (RFC 3339, UTC).",
            ))
            .attribute(Attribute::computed(
                "serial",
                Type::Number,
                "The serial of that apply.",
            )),
        )
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut diags = Diagnostics::new();
        if let Some(estate) = config.get("estate").as_str()
            && let Err(e) = Estate::parse(estate)
        {
            diags.push(ReadError::Estate(e).into());
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
    use crate::record::{Output, Stamp};

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
        }
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
        let r = respond(&config(None, Value::Null), &estate(), found).unwrap();
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
        let err = respond(&config(Some(&["a", "b"]), Value::Null), &estate(), found())
            .err()
            .unwrap();
        let d = Diagnostic::from(err);
        assert_eq!(d.summary, "Outputs of estate \"network\" are not recorded");
        assert!(d.detail.starts_with(
            "Output \"b\" of estate \"network\" is not recorded in namespace \"tofu-records-network\"."
        ));

        let defaults = Value::object([("b", Value::int(2)), ("a", Value::int(0))]);
        let r = respond(&config(Some(&["a", "b"]), defaults), &estate(), found()).unwrap();
        assert_eq!(
            r.state.get("values"),
            &Value::object([("a", Value::int(1)), ("b", Value::int(2))])
        );

        let empty = Found {
            recorded: vec![],
            missing: vec![],
        };
        let d = Diagnostic::from(
            respond(&config(None, Value::Null), &estate(), empty)
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
}
