//! Which version of each recorded output a read returns: the one in force at `serial`, else
//! the current one, checked against `min_serial` and `max_age`.

use super::outputs_read_error::OutputsReadError;
use crate::record::{RecordError, Recorded, Version, secret_name};
use kube_estate::Estate;
use plugin_runtime::Value;
use plugin_runtime::duration;
use std::time::Duration;

/// The pinning and freshness a configuration asks for.
pub(super) struct Wanted {
    pub(super) serial: Option<u64>,
    pub(super) min_serial: Option<u64>,
    pub(super) max_age: Option<(String, Duration)>,
}

impl Wanted {
    pub(super) fn of(config: &Value) -> Wanted {
        let serial = |k: &str| config.get(k).as_i64().and_then(|n| u64::try_from(n).ok());
        Wanted {
            serial: serial("serial"),
            min_serial: serial("min_serial"),
            max_age: config
                .get("max_age")
                .as_str()
                .and_then(|text| Some((text.to_string(), duration::parse(text).ok()?))),
        }
    }
}

/// The version of each recorded output the configuration asks for: the one in force at
/// `serial`, else the current one; then checked against `min_serial` and `max_age`.
pub(super) fn select(
    wanted: &Wanted,
    estate: &Estate,
    recorded: &[Recorded],
    now: time::OffsetDateTime,
) -> Result<Vec<(String, Version)>, OutputsReadError> {
    let mut selected = Vec::new();
    for r in recorded {
        let version = match wanted.serial {
            Some(serial) => r.at(serial).map_err(|kept| OutputsReadError::SerialGone {
                estate: estate.clone(),
                serial,
                output: r.output.name.clone(),
                kept,
            })?,
            None => r.current(),
        };
        selected.push((r.output.name.clone(), version));
    }
    let Some(newest) = selected
        .iter()
        .map(|(_, v)| &v.stamp)
        .max_by_key(|s| s.serial)
        .cloned()
    else {
        return Ok(selected);
    };
    if let Some(min_serial) = wanted.min_serial.filter(|min| newest.serial < *min) {
        return Err(OutputsReadError::BelowMinSerial {
            estate: estate.clone(),
            min_serial,
            newest,
        });
    }
    if let Some((text, max_age)) = &wanted.max_age {
        let mut stale = Vec::new();
        for (name, version) in &selected {
            let age = version.stamp.age(now).map_err(|reason| RecordError {
                namespace: estate.records_namespace(),
                secret: secret_name(name),
                reason,
            })?;
            if age > *max_age {
                stale.push((name.clone(), age, version.stamp.applied_at.clone()));
            }
        }
        if !stale.is_empty() {
            stale.sort_by_key(|(_, age, _)| std::cmp::Reverse(*age));
            return Err(OutputsReadError::TooOld {
                estate: estate.clone(),
                max_age: text.clone(),
                stale,
                last_apply: newest,
            });
        }
    }
    Ok(selected)
}
