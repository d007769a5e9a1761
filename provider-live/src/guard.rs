//! Adopt, never steal; and never apply a stale plan.
//!
//! Who may write an object is decided by its estate label alone ([`decide`]). What a plan saw
//! of the live object is carried to apply as a fingerprint of its content ([`fingerprint`]):
//! apply reads the object again and refuses when the content moved since the plan.

use std::collections::BTreeMap;

use kube_estate::ObjectRef;
use plugin_runtime::Diagnostic;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::metadata;

/// What a write may do with the object that exists (or not) under a resource's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing there: create it.
    Create,
    /// It carries this estate's label: take it over (a killed apply, a lost state).
    Adopt,
    /// It carries another estate's label: hands off.
    Refuse(String),
    /// It carries no estate label: only an explicit import may take it.
    Unlabelled,
}

/// The decision for the live object (`None`: absent) and this provider's estate.
pub fn decide(live: Option<&Json>, estate: &str) -> Decision {
    match live.map(metadata::estate_of) {
        None => Decision::Create,
        Some(Some(e)) if e == estate => Decision::Adopt,
        Some(Some(other)) => Decision::Refuse(other.to_string()),
        Some(None) => Decision::Unlabelled,
    }
}

/// Why a write was refused.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("{object} belongs to estate \"{owner}\"")]
    Foreign {
        object: ObjectRef,
        owner: String,
        estate: String,
    },
    #[error("{object} already exists and belongs to no estate")]
    Unlabelled {
        object: ObjectRef,
        type_name: String,
        import_id: String,
    },
    #[error("The approved plan no longer matches the live system")]
    Stale { object: ObjectRef },
}

impl From<GuardError> for Diagnostic {
    fn from(e: GuardError) -> Diagnostic {
        let summary = e.to_string();
        let detail = match e {
            GuardError::Foreign {
                object,
                owner,
                estate,
            } => format!(
                "{object} carries the label tofu-estate={owner}: it is managed by estate \"{owner}\", \
                 not by this estate (\"{estate}\"). It was left untouched. Choose another name, or \
                 remove it from estate \"{owner}\" first."
            ),
            GuardError::Unlabelled {
                object,
                type_name,
                import_id,
            } => format!(
                "{object} exists but carries no tofu-estate label, so it was not created by an estate. \
                 It is not adopted silently: import it to manage it here, with\n  \
                 terraform import {type_name}.<name> {import_id:?}\nor an import block:\n  \
                 import {{\n    to = {type_name}.<name>\n    id = {import_id:?}\n  }}"
            ),
            GuardError::Stale { object } => format!(
                "{object} changed in the cluster after this plan read it, so the plan was not applied \
                 and nothing was written. Run plan again (with refresh) to review the change against the \
                 live object, or restore the object to what the plan saw and apply the same plan."
            ),
        };
        Diagnostic::error(summary, detail)
    }
}

/// The warning a plan and an apply give when they adopt an object.
pub fn adopt_warning(object: &ObjectRef, estate: &str) -> Diagnostic {
    Diagnostic::warning(
        format!("Adopting existing {object}"),
        format!(
            "{object} already exists and carries this estate's label tofu-estate={estate} (an earlier \
             apply created it but its state was not saved). It is adopted: the configuration is \
             applied over it instead of creating it again."
        ),
    )
}

/// A fingerprint of what a plan saw of the object: its content without the fields the server
/// moves on its own (resourceVersion, managedFields, generation, status). `None`: absent.
pub fn fingerprint(live: Option<&Json>) -> Vec<u8> {
    let Some(object) = live else {
        return b"absent".to_vec();
    };
    let mut content = object.clone();
    if let Some(map) = content.as_object_mut() {
        for key in ["status", "apiVersion", "kind"] {
            map.remove(key);
        }
        if let Some(meta) = map.get_mut("metadata").and_then(Json::as_object_mut) {
            for key in ["resourceVersion", "managedFields", "generation"] {
                meta.remove(key);
            }
        }
    }
    let canonical = serde_json::to_vec(&sorted(&content)).expect("JSON always serializes");
    let digest = Sha256::digest(&canonical);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}").into_bytes()
}

/// Object keys in sorted order, so equal content always hashes the same.
fn sorted(value: &Json) -> Json {
    match value {
        Json::Object(m) => {
            let ordered: BTreeMap<&String, Json> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
            Json::Object(ordered.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The checks before a write. `creating`: the plan is a create.
pub struct Check<'a> {
    pub object: &'a ObjectRef,
    pub estate: &'a str,
    pub type_name: &'a str,
    pub import_id: &'a str,
    pub creating: bool,
}

impl Check<'_> {
    /// May this resource write the object? `Ok(true)` means it adopts. `seen` is the
    /// fingerprint an earlier step recorded (the refresh for a plan, the plan for an apply;
    /// empty when there was none): a different object now means that step's view is stale.
    ///
    /// The engine plans again right before it applies, handing the refresh's fingerprint
    /// (stored as the state's private data), so a saved plan is checked there too.
    pub fn decide(&self, live: Option<&Json>, seen: &[u8]) -> Result<bool, GuardError> {
        let adopt = match decide(live, self.estate) {
            Decision::Create => false,
            Decision::Adopt => self.creating,
            Decision::Refuse(owner) => return Err(self.foreign(owner)),
            Decision::Unlabelled if self.creating => {
                return Err(GuardError::Unlabelled {
                    object: self.object.clone(),
                    type_name: self.type_name.to_string(),
                    import_id: self.import_id.to_string(),
                });
            }
            // An unlabelled object already in state was imported: stamping it is the point.
            Decision::Unlabelled => false,
        };
        if !seen.is_empty() && fingerprint(live) != seen {
            return Err(GuardError::Stale {
                object: self.object.clone(),
            });
        }
        Ok(adopt)
    }

    /// Before a delete: never delete another estate's object.
    pub fn before_delete(&self, live: Option<&Json>) -> Result<(), GuardError> {
        match decide(live, self.estate) {
            Decision::Refuse(owner) => Err(self.foreign(owner)),
            _ => Ok(()),
        }
    }

    fn foreign(&self, owner: String) -> GuardError {
        GuardError::Foreign {
            object: self.object.clone(),
            owner,
            estate: self.estate.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(estate: Option<&str>) -> Json {
        match estate {
            Some(e) => json!({"metadata": {"name": "a", "labels": {"tofu-estate": e}}, "data": {"k": "v"}}),
            None => json!({"metadata": {"name": "a"}, "data": {"k": "v"}}),
        }
    }

    fn object() -> ObjectRef {
        ObjectRef {
            kind: "ConfigMap".into(),
            namespace: Some("shop".into()),
            name: "a".into(),
        }
    }

    fn check(object: &ObjectRef, creating: bool) -> Check<'_> {
        Check {
            object,
            estate: "app",
            type_name: "kubernetes_config_map",
            import_id: "shop/a",
            creating,
        }
    }

    #[test]
    fn decisions_follow_the_estate_label() {
        assert_eq!(decide(None, "app"), Decision::Create);
        assert_eq!(decide(Some(&labelled(Some("app"))), "app"), Decision::Adopt);
        assert_eq!(
            decide(Some(&labelled(Some("network"))), "app"),
            Decision::Refuse("network".into())
        );
        assert_eq!(decide(Some(&labelled(None)), "app"), Decision::Unlabelled);
    }

    #[test]
    fn create_adopts_ours_and_refuses_the_rest() {
        let o = object();
        let c = check(&o, true);
        assert!(!c.decide(None, b"").unwrap());
        assert!(c.decide(Some(&labelled(Some("app"))), b"").unwrap());
        let foreign = c.decide(Some(&labelled(Some("network"))), b"").unwrap_err();
        let d = Diagnostic::from(foreign);
        assert!(
            d.summary.contains("network") && d.summary.contains("shop/a"),
            "{d:?}"
        );
        let unlabelled = Diagnostic::from(c.decide(Some(&labelled(None)), b"").unwrap_err());
        assert!(
            unlabelled
                .detail
                .contains("terraform import kubernetes_config_map.<name> \"shop/a\"")
        );
    }

    #[test]
    fn update_stamps_an_imported_unlabelled_object() {
        let o = object();
        assert!(!check(&o, false).decide(Some(&labelled(None)), b"").unwrap());
        assert!(
            check(&o, false)
                .before_delete(Some(&labelled(Some("other"))))
                .is_err()
        );
        assert!(check(&o, false).before_delete(None).is_ok());
    }

    #[test]
    fn fingerprint_ignores_server_bookkeeping_only() {
        let a = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "1", "labels": {"x": "1"}}, "data": {"k": "v"}});
        let b = json!({"data": {"k": "v"}, "metadata": {"labels": {"x": "1"}, "resourceVersion": "9", "name": "a", "managedFields": []}, "status": {}});
        let c = json!({"metadata": {"name": "a", "labels": {"x": "2"}}, "data": {"k": "v"}});
        assert_eq!(fingerprint(Some(&a)), fingerprint(Some(&b)));
        assert_ne!(fingerprint(Some(&a)), fingerprint(Some(&c)));
        assert_ne!(fingerprint(Some(&a)), fingerprint(None));
    }

    #[test]
    fn apply_refuses_a_moved_object_and_accepts_it_once_restored() {
        let o = object();
        let seen = labelled(Some("app"));
        let private = fingerprint(Some(&seen));
        let mut moved = seen.clone();
        moved["data"]["k"] = json!("changed");
        let err = check(&o, false).decide(Some(&moved), &private).unwrap_err();
        assert_eq!(
            Diagnostic::from(err).summary,
            "The approved plan no longer matches the live system"
        );
        assert!(check(&o, false).decide(Some(&seen), &private).is_ok());
        assert!(check(&o, true).decide(Some(&seen), b"absent").is_err());
    }
}
