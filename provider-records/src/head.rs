//! The estate's head: one Secret, `records-head`, holding the serial of the last apply whose
//! outputs were all written (its commit), and the apply writing now, if one is (its claim).
//!
//! An apply claims the head before it writes any output Secret and commits it after the last,
//! each time with the head's resourceVersion as precondition: of two applies writing one
//! estate at once (two workspaces by mistake), one claims and the other is refused before it
//! writes anything. While an apply writes, output Secrets hold versions newer than the head's
//! serial; a reader takes each output's version in force at that serial
//! ([`Recorded::at_commit`]), so it sees the outputs of one apply whole, never a mix. An
//! output an apply removes is marked first ([`REMOVED_ANNOTATION`]) and deleted after the
//! commit, so readers of the serial before still find it.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_estate::{ApiError, ESTATE_LABEL, Estate};
use plugin_runtime::Diagnostic;

pub use crate::record::HEAD_SECRET;
use crate::record::{APPLIED_AT_ANNOTATION, RecordError, Recorded, SERIAL_ANNOTATION, Stamp};
use crate::store::Store;

/// The claim of the apply writing: `<serial> <token> <since, RFC 3339>[ <engine run>]`.
const CLAIM_ANNOTATION: &str = "tofu-records/writing";
/// On an output Secret: the serial of the apply that removed the output (it is deleted once
/// that apply committed).
pub const REMOVED_ANNOTATION: &str = "tofu-records/removed-at";
/// How long a claim holds without its commit: an apply stopped while writing leaves its
/// claim, and the next one may write after this. A write of records takes seconds. A claim
/// whose engine run is known to have ended (on this machine) lapses at once: an apply that
/// failed because the server went away could not take its claim back.
const CLAIM_LAPSES: Duration = Duration::from_secs(60);

/// What the head says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Head {
    /// The last apply whose outputs were all written.
    pub committed: Option<Stamp>,
    pub claim: Option<Claim>,
}

/// An apply writing the records now.
#[derive(Clone, Debug, PartialEq)]
pub struct Claim {
    pub serial: u64,
    token: String,
    since: String,
    /// The engine run that claimed ([`plugin_runtime::engine_run::engine_run_id`]).
    run: Option<String>,
}

impl Claim {
    fn new(serial: u64, since: &str) -> Claim {
        Claim {
            serial,
            token: format!("{:016x}", fastrand::u64(..)),
            since: since.to_string(),
            run: plugin_runtime::engine_run::engine_run_id(),
        }
    }

    fn lapsed(&self, now: time::OffsetDateTime) -> bool {
        let stamp = Stamp {
            serial: self.serial,
            applied_at: self.since.clone(),
        };
        let ended = || {
            self.run
                .as_deref()
                .and_then(plugin_runtime::engine_run::has_ended)
                == Some(true)
        };
        stamp.age(now).map_or(true, |age| age > CLAIM_LAPSES) || ended()
    }
}

impl Head {
    /// The head a Secret holds.
    pub fn of(secret: &Secret) -> Result<Head, RecordError> {
        let fail = |reason: String| RecordError {
            namespace: secret.metadata.namespace.clone().unwrap_or_default(),
            secret: HEAD_SECRET.to_string(),
            reason,
        };
        let annotations = secret.metadata.annotations.clone().unwrap_or_default();
        let committed = match (
            annotations.get(SERIAL_ANNOTATION),
            annotations.get(APPLIED_AT_ANNOTATION),
        ) {
            (Some(serial), Some(at)) => Some(Stamp {
                serial: serial
                    .parse()
                    .map_err(|_| fail(format!("annotation {SERIAL_ANNOTATION} is not a number")))?,
                applied_at: at.clone(),
            }),
            _ => None,
        };
        let claim = match annotations.get(CLAIM_ANNOTATION) {
            None => None,
            Some(text) => {
                let mut parts = text.split(' ');
                match (parts.next().map(str::parse), parts.next(), parts.next()) {
                    (Some(Ok(serial)), Some(token), Some(since)) => Some(Claim {
                        serial,
                        token: token.to_string(),
                        since: since.to_string(),
                        run: parts.next().map(str::to_string),
                    }),
                    _ => return Err(fail(format!("annotation {CLAIM_ANNOTATION} is not a claim"))),
                }
            }
        };
        Ok(Head { committed, claim })
    }

    fn to_secret(&self, estate: &Estate) -> Secret {
        let mut annotations = BTreeMap::new();
        if let Some(stamp) = &self.committed {
            annotations.insert(SERIAL_ANNOTATION.to_string(), stamp.serial.to_string());
            annotations.insert(APPLIED_AT_ANNOTATION.to_string(), stamp.applied_at.clone());
        }
        if let Some(c) = &self.claim {
            let mut text = format!("{} {} {}", c.serial, c.token, c.since);
            if let Some(run) = &c.run {
                text = format!("{text} {run}");
            }
            annotations.insert(CLAIM_ANNOTATION.to_string(), text);
        }
        Secret {
            metadata: ObjectMeta {
                name: Some(HEAD_SECRET.to_string()),
                namespace: Some(estate.records_namespace()),
                labels: Some(BTreeMap::from([(
                    ESTATE_LABEL.to_string(),
                    estate.as_str().to_string(),
                )])),
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            type_: Some("Opaque".to_string()),
            ..Secret::default()
        }
    }
}

impl Recorded {
    /// The output as of the estate's commit `serial`: its newest version at or before it, the
    /// versions after it (an apply still writing, or one stopped before its commit) left out.
    /// `None` when the output has no version that old (it is being added).
    pub fn at_commit(self, serial: u64) -> Option<Recorded> {
        if self.stamp.serial <= serial {
            return Some(self);
        }
        let mut older = self.history.into_iter().skip_while(|v| v.stamp.serial > serial);
        let current = older.next()?;
        Some(Recorded {
            output: crate::record::Output {
                value: current.value,
                sensitive: current.sensitive,
                ..self.output
            },
            stamp: current.stamp,
            history: older.collect(),
        })
    }
}

/// The serial of the apply that removed the output `secret` records, if one did.
fn removed_at(secret: &Secret) -> Option<u64> {
    secret
        .metadata
        .annotations
        .as_ref()?
        .get(REMOVED_ANNOTATION)?
        .parse()
        .ok()
}

/// `secret`, the record of an output the apply of `serial` removes, marked so.
pub fn marked_removed(secret: &Secret, serial: u64) -> Secret {
    let mut marked = secret.clone();
    marked
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(REMOVED_ANNOTATION.to_string(), serial.to_string());
    marked
}

/// What a reader at the estate's commit `committed` sees of `recorded`, which `secret`
/// holds: the version in force then, or nothing where the output was not recorded yet or was
/// removed by then. Without a commit (records older than heads), what is there.
pub fn visible(secret: &Secret, recorded: Recorded, committed: Option<u64>) -> Option<Recorded> {
    let Some(committed) = committed else {
        return Some(recorded);
    };
    if removed_at(secret).is_some_and(|removed| removed <= committed) {
        return None;
    }
    recorded.at_commit(committed)
}

/// Why an apply may not write the records.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Another apply holds the claim.
    #[error("Another apply is writing the records of estate \"{estate}\"")]
    Busy { estate: Estate, claim: Claim },
}

impl From<WriteError> for Diagnostic {
    fn from(e: WriteError) -> Diagnostic {
        match e {
            WriteError::Api(e) => e.into(),
            WriteError::Record(e) => e.into(),
            WriteError::Busy {
                ref estate,
                ref claim,
            } => Diagnostic::error(
                e.to_string(),
                format!(
                    "Serial {} of estate \"{estate}\" has been written by another apply since {} \
                     (its claim is on Secret \"{}/{HEAD_SECRET}\"), so this apply wrote nothing. \
                     Two states claim one estate: two workspaces, or two copies of one \
                     configuration, name the same `estate`. Give each its own (for example \
                     `estate = \"<name>-${{terraform.workspace}}\"`). If that apply was stopped \
                     instead, its claim lapses {} s after it started (at once where it ran on \
                     this machine); apply again then.",
                    claim.serial,
                    claim.since,
                    estate.records_namespace(),
                    CLAIM_LAPSES.as_secs()
                ),
            ),
        }
    }
}

/// The head of the estate, read with one get (a default head where there is none yet).
pub async fn read(store: &Store) -> Result<(Head, Option<Secret>), WriteError> {
    let live = store.get::<Secret>(HEAD_SECRET).await?;
    let head = live.as_ref().map(Head::of).transpose()?.unwrap_or_default();
    Ok((head, live))
}

/// A claim this apply holds on the head, to commit.
pub struct Claimed {
    head: Secret,
    claim: Claim,
}

/// Claims the head (as read: `head`, `live`) for serial `serial`, or says who holds it.
pub async fn claim(
    store: &Store,
    estate: &Estate,
    (head, live): (Head, Option<Secret>),
    serial: u64,
    now: &str,
) -> Result<Claimed, WriteError> {
    let clock = time::OffsetDateTime::now_utc();
    if let Some(held) = head.claim.as_ref().filter(|c| !c.lapsed(clock)) {
        return Err(WriteError::Busy {
            estate: estate.clone(),
            claim: held.clone(),
        });
    }
    let claim = Claim::new(serial, now);
    let want = Head {
        claim: Some(claim.clone()),
        ..head
    }
    .to_secret(estate);
    match store.put_exact(&want, live.as_ref()).await {
        Ok(head) => Ok(Claimed { head, claim }),
        // Another apply claimed it between our read and our write, or our own write landed
        // and its answer was lost.
        Err(ApiError::Conflict { .. } | ApiError::AlreadyExists { .. }) => {
            let (now_head, now_live) = read(store).await?;
            if let Some(head) =
                now_live.filter(|_| now_head.claim.as_ref().is_some_and(|c| c.token == claim.token))
            {
                return Ok(Claimed { head, claim });
            }
            Err(WriteError::Busy {
                estate: estate.clone(),
                claim: now_head.claim.unwrap_or(claim),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// Commits the serial `claimed` was claimed for, as of `stamp`: readers see this apply's outputs
/// from now on.
pub async fn commit(
    store: &Store,
    estate: &Estate,
    claimed: Claimed,
    stamp: &Stamp,
) -> Result<(), WriteError> {
    let want = Head {
        committed: Some(stamp.clone()),
        claim: None,
    }
    .to_secret(estate);
    match store.put_exact(&want, Some(&claimed.head)).await {
        Ok(_) => Ok(()),
        // Our claim lapsed and another apply took the head over.
        Err(ApiError::Conflict { .. }) => {
            let (now_head, _) = read(store).await?;
            Err(WriteError::Busy {
                estate: estate.clone(),
                claim: now_head.claim.unwrap_or(claimed.claim),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// The committed serial a reader reads at: `None` where the estate has no head (records
/// written before heads existed) or the reader may not get it (grants written before heads
/// existed); the current versions are read then.
pub async fn committed_serial(store: &Store) -> Result<Option<u64>, ApiError> {
    match store.get::<Secret>(HEAD_SECRET).await {
        Ok(Some(secret)) => Ok(Head::of(&secret).ok().and_then(|h| h.committed).map(|s| s.serial)),
        Ok(None) | Err(ApiError::Forbidden { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Output, Version};
    use plugin_runtime::Value;

    fn stamp(serial: u64) -> Stamp {
        Stamp {
            serial,
            applied_at: format!("2026-12-06T00:00:{serial:02}Z"),
        }
    }

    fn recorded(versions: &[(u64, &str)]) -> Recorded {
        let version = |(serial, value): &(u64, &str)| Version {
            value: Value::string(*value),
            sensitive: false,
            stamp: stamp(*serial),
        };
        let current = version(&versions[0]);
        Recorded {
            output: Output {
                name: "host".into(),
                value: current.value,
                sensitive: false,
            },
            stamp: current.stamp,
            history: versions[1..].iter().map(version).collect(),
        }
    }

    #[test]
    fn a_reader_sees_the_version_in_force_at_the_commit() {
        let r = recorded(&[(7, "c"), (5, "b"), (2, "a")]);
        assert_eq!(r.clone().at_commit(7), Some(r.clone()));
        assert_eq!(r.clone().at_commit(9), Some(r.clone()));
        let at_six = r.clone().at_commit(6).expect("a version at 6");
        assert_eq!(at_six.output.value, Value::string("b"));
        assert_eq!(at_six.stamp.serial, 5);
        assert_eq!(at_six.history.len(), 1);
        assert_eq!(
            r.clone().at_commit(1),
            None,
            "the output did not exist at serial 1"
        );
    }

    #[test]
    fn heads_round_trip_through_their_secret() {
        let estate = Estate::parse("shop").unwrap();
        let head = Head {
            committed: Some(stamp(4)),
            claim: Some(Claim::new(5, "2026-12-06T00:01:00Z")),
        };
        let secret = head.to_secret(&estate);
        assert_eq!(secret.metadata.name.as_deref(), Some(HEAD_SECRET));
        assert_eq!(Head::of(&secret).unwrap(), head);
        assert_eq!(
            Head::of(&Head::default().to_secret(&estate)).unwrap(),
            Head::default()
        );
    }

    #[test]
    fn a_claim_lapses_after_a_minute() {
        let claim = Claim::new(3, "2026-12-06T00:00:00Z");
        let at =
            |s: &str| time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap();
        assert!(!claim.lapsed(at("2026-12-06T00:00:59Z")));
        assert!(claim.lapsed(at("2026-12-06T00:01:01Z")));
    }

    #[test]
    fn a_claim_names_its_run_and_one_elsewhere_lapses_by_time_only() {
        let since = "2026-12-06T00:00:00Z";
        let at = time::OffsetDateTime::parse(since, &time::format_description::well_known::Rfc3339).unwrap();
        // Outside an engine (no handshake cookie) a claim names no run.
        let claim = Claim::new(3, since);
        assert_eq!(claim.run, None);
        let secret = Head {
            committed: None,
            claim: Some(Claim {
                run: Some("0123456789abcdef.1.2".to_string()),
                ..claim
            }),
        }
        .to_secret(&Estate::parse("shop").unwrap());
        let read = Head::of(&secret).unwrap().claim.unwrap();
        assert_eq!(read.run.as_deref(), Some("0123456789abcdef.1.2"));
        assert!(!read.lapsed(at), "a run on another machine holds its claim");
    }
}
