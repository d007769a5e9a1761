//! Adopt, never steal; and never apply a stale plan.
//!
//! Who may write an object is decided by its estate label alone ([`decide`]). What a plan saw
//! of the live object is carried to apply as a fingerprint ([`fingerprint`]) of what this
//! configuration manages: the object's identity (uid), its estate label and the fields our
//! field manager owns. Apply reads the object again and refuses when that moved since the
//! plan; fields other actors own (an autoscaler's `replicas`, `kubectl rollout restart`'s
//! annotation) never make a plan stale.

use std::collections::BTreeMap;

use kube_estate::ObjectRef;
use plugin_runtime::Diagnostic;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use crate::metadata;
use crate::ownership::{self, FieldSet, Ownership};
use crate::private_state::PrivateState;
use crate::seen::Seen;

/// How many times a guarded call is sent before a moving object ends it. Controllers rewrite
/// some objects' status several times a second while their Pods come and go (a
/// PodDisruptionBudget during a destroy), and each attempt reads the object again first.
pub const ATTEMPTS: usize = 5;

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
    #[error("{object} was replaced by another object of the same name")]
    Replaced {
        object: ObjectRef,
        expected: String,
        found: String,
    },
    #[error("{object} kept changing while it was being written")]
    Moving { object: ObjectRef, verb: &'static str },
    /// The estate's own object, created by another apply while this one ran.
    #[error("{object} was created by another apply of estate \"{estate}\" while this one ran")]
    TwoStates {
        object: ObjectRef,
        estate: String,
        created: String,
    },
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
            GuardError::Replaced {
                object,
                expected,
                found,
            } => format!(
                "The state records {object} with uid {expected}, but the object now in the cluster has \
                 uid {found}: it was deleted and created again outside this run. It was left untouched. \
                 Run plan again (with refresh) to review it."
            ),
            GuardError::Moving { object, verb } => format!(
                "The Kubernetes API refused to {verb} {object} because it changed between this \
                 provider's check and its write, {attempts} times in a row (resourceVersion \
                 precondition). Nothing was written. Run the command again; if another tool keeps \
                 rewriting the object, find out which (its managedFields name it).",
                attempts = ATTEMPTS
            ),
            GuardError::TwoStates {
                object,
                estate,
                created,
            } => format!(
                "{object} carries this estate's label tofu-estate={estate}, but it was created at \
                 {created}, after this run of the engine started: another apply made it. Two states \
                 claim one estate (two workspaces, or two copies of one configuration, name the same \
                 `estate`). It was left untouched and not adopted, so this state never deletes what \
                 the other created. Give each state its own estate, for example \
                 `estate = \"<name>-${{terraform.workspace}}\"`. (An object an earlier, stopped run \
                 left behind is adopted: it was created before this run began.)"
            ),
        };
        Diagnostic::error(summary, detail)
    }
}

/// The warning a plan and an apply give when they adopt an object. The summary is the same for
/// every object, so the engine folds the warnings of a large recovery into one ("and 999 more
/// similar warnings"); the detail names the object.
pub fn adopt_warning(object: &ObjectRef, estate: &str) -> Diagnostic {
    Diagnostic::warning(
        "Adopting an existing object of this estate",
        format!(
            "{object} already exists and carries this estate's label tofu-estate={estate} (an earlier \
             apply created it but its state was not saved). It is adopted: the configuration is \
             applied over it instead of creating it again."
        ),
    )
}

/// The warning for a create that takes over an existing object without an estate label, as
/// `kubectl apply` would ([`Check::takes_unlabelled`]).
pub fn take_over_warning(object: &ObjectRef, estate: &str) -> Diagnostic {
    Diagnostic::warning(
        "Taking over an existing object",
        format!(
            "{object} already exists and carries no estate label. It is applied over, as `kubectl \
             apply` does, and stamped tofu-estate={estate}."
        ),
    )
}

/// The warning a plan gives for an object in state that carries no estate label (its state was
/// written by hashicorp/kubernetes, or it was imported): apply stamps it, and changes nothing
/// else for it. The summary is the same for every object, so the engine folds them into one
/// that counts the others ("and 2 more similar warnings elsewhere").
pub fn stamp_warning(object: &ObjectRef, estate: &str) -> Diagnostic {
    Diagnostic::warning(
        format!("The next apply stamps the estate label tofu-estate={estate}"),
        format!(
            "{object} carries no tofu-estate label yet: its state was written by another provider \
             (hashicorp/kubernetes) or it was imported. The next apply adds the label \
             tofu-estate={estate} to it (the `estate` attribute shows it, `labels` never does) and \
             changes nothing the configuration sets. The same goes for each object counted below."
        ),
    )
}

/// The fingerprint of `live` (`None`: absent), the private state one step (a refresh, a plan,
/// an apply) hands the next: a digest of the object's uid, estate label and the values of the
/// fields field manager `manager` owns now and those the step before recorded in `carried`
/// (its private state). The field paths travel with the digest, so a field of ours that
/// another actor rewrote (and so took over) still counts, and reverting its value makes the
/// same plan valid again.
pub fn fingerprint(live: Option<&Json>, manager: &str, carried: &PrivateState) -> PrivateState {
    let Some(object) = live else {
        return PrivateState::Absent;
    };
    let mut fields = Ownership::of(object, manager).into_ours();
    if let PrivateState::Seen(Seen {
        fields: Some(before), ..
    }) = carried
    {
        let into = fields.get_or_insert_with(FieldSet::new);
        ownership::merge(into, before);
    }
    let fields = fields.map(|f| match sorted(&Json::Object(f)) {
        Json::Object(f) => f,
        _ => unreachable!("a sorted object is an object"),
    });
    let sha256 = digest(object, fields.as_ref());
    PrivateState::Seen(Seen::new(fields, &sha256))
}

/// Whether `live` is still what `seen`, the private state an earlier step recorded, saw.
fn unchanged(live: Option<&Json>, seen: &PrivateState) -> bool {
    match seen {
        // No step recorded a view: nothing to hold the object to. Nor did hashicorp's SDK, in a
        // state it wrote that no refresh of ours has replaced.
        PrivateState::Empty | PrivateState::SdkV2(_) => true,
        PrivateState::Absent => live.is_none(),
        PrivateState::Seen(seen) => live.is_some_and(|o| seen.matches(&digest(o, seen.fields.as_ref()))),
        // A create whose outcome is unknown saw no object this one could be shown to be.
        PrivateState::PendingCreate(_) => false,
    }
}

/// The SHA-256 of the canonical JSON of what the fingerprint covers.
fn digest(object: &Json, fields: Option<&FieldSet>) -> [u8; 32] {
    let content = match fields {
        Some(fields) => serde_json::json!({
            "uid": object.pointer("/metadata/uid"),
            "estate": metadata::estate_of(object),
            "owned": ownership::project(object, fields),
        }),
        None => whole_content(object),
    };
    let canonical = serde_json::to_vec(&sorted(&content)).expect("JSON always serializes");
    Sha256::digest(&canonical).into()
}

fn whole_content(object: &Json) -> Json {
    let mut content = object.clone();
    if let Some(map) = content.as_object_mut() {
        for key in ["status", "apiVersion", "kind"] {
            map.remove(key);
        }
        if let Some(meta) = map.get_mut("metadata").and_then(Json::as_object_mut) {
            for key in ["resourceVersion", "managedFields", "generation"] {
                meta.remove(key);
            }
            // Keys Kubernetes writes itself move with status (an autoscaling/v1 HPA's
            // conditions annotation): no change of anyone's, nor is the map they alone make.
            for key in ["labels", "annotations"] {
                if let Some(map) = meta.get_mut(key).and_then(Json::as_object_mut) {
                    map.retain(|k, _| !metadata::server_key(k));
                    if map.is_empty() {
                        meta.remove(key);
                    }
                }
            }
        }
    }
    content
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
    /// The field manager whose fields the fingerprint covers.
    pub manager: &'a str,
    /// The uid the state records for the object, when it records one: another uid means the
    /// object was replaced behind the state's back.
    pub uid: Option<&'a str>,
    /// A create may take over an existing object that carries no estate label (stamping it),
    /// as `kubectl apply` does, instead of refusing it (`kubectl_manifest`).
    pub takes_unlabelled: bool,
}

impl Check<'_> {
    /// May this resource write the object? `Ok(true)` means it adopts. `seen` is the private
    /// state an earlier step recorded (the refresh for a plan, the plan for an apply): a
    /// different object now means that step's view is stale.
    ///
    /// The engine plans again right before it applies, handing the refresh's fingerprint
    /// (stored as the state's private data), so a saved plan is checked there too.
    pub fn decide(&self, live: Option<&Json>, seen: &PrivateState) -> Result<bool, GuardError> {
        let adopt = match decide(live, self.estate) {
            Decision::Create => false,
            Decision::Adopt => self.creating,
            Decision::Refuse(owner) => return Err(self.foreign(owner)),
            Decision::Unlabelled if self.creating && self.takes_unlabelled => true,
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
        self.same_object(live)?;
        if !unchanged(live, seen) {
            return Err(GuardError::Stale {
                object: self.object.clone(),
            });
        }
        Ok(adopt)
    }

    /// Before a delete: never delete another estate's object, nor one that replaced ours.
    pub fn before_delete(&self, live: Option<&Json>) -> Result<(), GuardError> {
        match decide(live, self.estate) {
            Decision::Refuse(owner) => Err(self.foreign(owner)),
            _ => self.same_object(live),
        }
    }

    /// The live object is the one the state records (when it records a uid).
    fn same_object(&self, live: Option<&Json>) -> Result<(), GuardError> {
        let found = live
            .and_then(|o| o.pointer("/metadata/uid"))
            .and_then(Json::as_str);
        match (self.uid, found) {
            (Some(expected), Some(found)) if expected != found => Err(GuardError::Replaced {
                object: self.object.clone(),
                expected: expected.to_string(),
                found: found.to_string(),
            }),
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

    const NOTHING: &PrivateState = &PrivateState::Empty;

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
            manager: "tofu-live",
            uid: None,
            takes_unlabelled: false,
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
        assert!(!c.decide(None, NOTHING).unwrap());
        assert!(c.decide(Some(&labelled(Some("app"))), NOTHING).unwrap());
        let foreign = c.decide(Some(&labelled(Some("network"))), NOTHING).unwrap_err();
        let d = Diagnostic::from(foreign);
        assert!(
            d.summary.contains("network") && d.summary.contains("shop/a"),
            "{d:?}"
        );
        let unlabelled = Diagnostic::from(c.decide(Some(&labelled(None)), NOTHING).unwrap_err());
        assert!(
            unlabelled
                .detail
                .contains("terraform import kubernetes_config_map.<name> \"shop/a\"")
        );
    }

    #[test]
    fn update_stamps_an_imported_unlabelled_object() {
        let o = object();
        assert!(!check(&o, false).decide(Some(&labelled(None)), NOTHING).unwrap());
        assert!(
            check(&o, false)
                .before_delete(Some(&labelled(Some("other"))))
                .is_err()
        );
        assert!(check(&o, false).before_delete(None).is_ok());
    }

    #[test]
    fn fingerprint_of_an_object_never_written_ignores_server_bookkeeping_only() {
        let a = json!({"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "1", "labels": {"x": "1"}}, "data": {"k": "v"}});
        let b = json!({"data": {"k": "v"}, "metadata": {"labels": {"x": "1"}, "resourceVersion": "9", "name": "a", "managedFields": []}, "status": {}});
        let c = json!({"metadata": {"name": "a", "labels": {"x": "2"}}, "data": {"k": "v"}});
        let seen = fingerprint(Some(&a), "tofu-live", NOTHING);
        assert!(unchanged(Some(&b), &seen));
        assert!(!unchanged(Some(&c), &seen));
        assert!(!unchanged(None, &seen));
        assert!(unchanged(None, &fingerprint(None, "tofu-live", NOTHING)));
        // An autoscaling/v1 HPA's status, seen as annotations, is no change of anyone's.
        let hpa = |conditions: &str| {
            json!({"metadata": {"name": "api", "annotations": {
                "autoscaling.alpha.kubernetes.io/conditions": conditions, "team": "web"}},
                "spec": {"maxReplicas": 3}})
        };
        let seen = fingerprint(Some(&hpa("[]")), "tofu-live", NOTHING);
        assert!(unchanged(Some(&hpa("[{\"type\":\"AbleToScale\"}]")), &seen));
        // Before the controller's first status write the object has no annotations at all.
        let bare = json!({"metadata": {"name": "api"}, "spec": {"maxReplicas": 3}});
        let seen = fingerprint(Some(&bare), "tofu-live", NOTHING);
        let written = json!({"metadata": {"name": "api", "annotations": {
            "autoscaling.alpha.kubernetes.io/conditions": "[]"}}, "spec": {"maxReplicas": 3}});
        assert!(unchanged(Some(&written), &seen));
    }

    /// A Deployment we applied, with `replicas` and a template annotation another manager owns.
    fn managed(replicas: i64, image: &str, restarted: &str) -> Json {
        json!({
            "metadata": {"name": "web", "uid": "u-1", "resourceVersion": "5",
                "labels": {"tofu-estate": "app"},
                "managedFields": [
                    {"manager": "tofu-live", "operation": "Apply", "fieldsV1": {
                        "f:metadata": {"f:labels": {"f:tofu-estate": {}}},
                        "f:spec": {"f:template": {"f:spec": {"f:containers": {
                            "k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}}},
                    {"manager": "kubectl", "operation": "Update", "subresource": "scale",
                     "fieldsV1": {"f:spec": {"f:replicas": {}}}},
                    {"manager": "kubectl-rollout", "operation": "Update", "fieldsV1": {
                        "f:spec": {"f:template": {"f:metadata": {"f:annotations": {
                            ".": {}, "f:kubectl.kubernetes.io/restartedAt": {}}}}}}}
                ]},
            "spec": {"replicas": replicas, "template": {
                "metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": restarted}},
                "spec": {"containers": [{"name": "web", "image": image}]}}}
        })
    }

    #[test]
    fn fingerprint_covers_only_what_our_manager_owns() {
        let object = managed(1, "nginx:1", "t1");
        let seen = fingerprint(Some(&object), "tofu-live", NOTHING);
        assert!(
            unchanged(Some(&managed(5, "nginx:1", "t2")), &seen),
            "scaled and restarted"
        );
        assert!(
            !unchanged(Some(&managed(1, "nginx:2", "t1")), &seen),
            "our image changed"
        );
        let mut replaced = object.clone();
        replaced["metadata"]["uid"] = json!("u-2");
        assert!(
            !unchanged(Some(&replaced), &seen),
            "another object of the same name"
        );
        let mut relabelled = object.clone();
        relabelled["metadata"]["labels"]["tofu-estate"] = json!("other");
        assert!(!unchanged(Some(&relabelled), &seen));
    }

    #[test]
    fn a_field_another_manager_took_over_still_counts_and_a_revert_restores_the_plan() {
        let object = managed(1, "nginx:1", "t1");
        let refreshed = fingerprint(Some(&object), "tofu-live", NOTHING);
        // `kubectl set image` rewrote the image: kubectl owns it now, not us.
        let mut taken = managed(1, "nginx:2", "t1");
        taken["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"] = json!({});
        assert!(!unchanged(Some(&taken), &refreshed));
        taken["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1");
        assert!(unchanged(Some(&taken), &refreshed), "reverted");
        // A plan made now still covers the image, carried from the refresh.
        let planned = fingerprint(Some(&taken), "tofu-live", &refreshed);
        taken["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:3");
        assert!(!unchanged(Some(&taken), &planned));
    }

    #[test]
    fn a_replaced_object_is_neither_written_nor_deleted() {
        let o = object();
        let mut c = check(&o, false);
        c.uid = Some("u-0");
        let live = managed(1, "nginx:1", "t1");
        let err = c.before_delete(Some(&live)).unwrap_err();
        assert!(matches!(err, GuardError::Replaced { .. }), "{err:?}");
        assert!(Diagnostic::from(err).detail.contains("u-0"));
        assert!(matches!(
            c.decide(Some(&live), NOTHING),
            Err(GuardError::Replaced { .. })
        ));
        c.uid = Some("u-1");
        assert!(c.before_delete(Some(&live)).is_ok());
        assert!(c.before_delete(None).is_ok());
    }

    #[test]
    fn neither_hashicorps_sdk_data_nor_a_pending_create_is_a_view_of_the_object() {
        let o = object();
        let live = labelled(Some("app"));
        let sdk = PrivateState::decode(br#"{"schema_version":"1"}"#).unwrap();
        assert!(check(&o, false).decide(Some(&live), &sdk).is_ok());
        let pending = PrivateState::PendingCreate(crate::create::Pending {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
            namespace: Some("shop".into()),
            token: "t".into(),
        });
        let err = check(&o, false).decide(Some(&live), &pending).unwrap_err();
        assert!(matches!(err, GuardError::Stale { .. }), "{err:?}");
        // A refresh after it records its own view, carrying nothing from it.
        assert_eq!(
            fingerprint(Some(&live), "tofu-live", &pending),
            fingerprint(Some(&live), "tofu-live", NOTHING)
        );
    }

    #[test]
    fn apply_refuses_a_moved_object_and_accepts_it_once_restored() {
        let o = object();
        let seen = labelled(Some("app"));
        let private = fingerprint(Some(&seen), "tofu-live", NOTHING);
        let mut moved = seen.clone();
        moved["data"]["k"] = json!("changed");
        let err = check(&o, false).decide(Some(&moved), &private).unwrap_err();
        assert_eq!(
            Diagnostic::from(err).summary,
            "The approved plan no longer matches the live system"
        );
        assert!(check(&o, false).decide(Some(&seen), &private).is_ok());
        assert!(
            check(&o, true)
                .decide(Some(&seen), &PrivateState::Absent)
                .is_err()
        );
    }
}
