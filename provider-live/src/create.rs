//! Creates whose name the server picks (`generate_name`), exactly once.
//!
//! Such a create cannot be sent again blindly: when its answer is lost (a broken connection, a
//! 5xx or a gateway's 504 after the server acted) the object may exist under a name nobody
//! heard, and a second create makes a second object. So every create carries a token, the
//! label [`TOKEN_LABEL`], and an unknown outcome is resolved in the same apply by listing the
//! estate's objects with that token: exactly one found is adopted (extras, which only a create
//! that landed after the lookup can leave, are deleted), none found means the create is sent
//! again. When even the lookup fails, the apply fails saying so and the resource is saved as
//! tainted with the token in its private state
//! ([`crate::private_state::PrivateState::PendingCreate`]): the next refresh looks it up the
//! same way ([`resolve`]), and the next apply replaces what it found.

use kube::Client;
use kube::api::ListParams;
use kube_estate::{ApiError, Estate, retry};
use plugin_runtime::{Diagnostic, Value};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::objects::{self, Precondition, Target};

/// The label each `generate_name` create stamps with its token. It stays on the object; import
/// and refresh do not show it.
pub const TOKEN_LABEL: &str = "tofu-create-token";

/// Creates (one POST at a time) before a create whose lookups keep finding nothing gives up.
const CREATES: u32 = 10;

/// Why a create the server names failed.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// It failed, and the server did not create the object.
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Unresolved(Box<Unresolved>),
}

/// A create whose outcome is unknown: it got no answer, and the lookup by its token failed too.
#[derive(Debug, thiserror::Error)]
#[error("the create of {what} may have succeeded: {create}; looking it up failed: {lookup}")]
pub struct Unresolved {
    what: String,
    create: ApiError,
    lookup: ApiError,
    pending: Pending,
}

impl CreateError {
    /// The create to resolve later, when its outcome is unknown.
    pub fn pending(&self) -> Option<&Pending> {
        match self {
            CreateError::Unresolved(unresolved) => Some(&unresolved.pending),
            CreateError::Api(_) => None,
        }
    }
}

impl From<CreateError> for Diagnostic {
    fn from(e: CreateError) -> Diagnostic {
        let unresolved = match e {
            CreateError::Api(e) => return e.into(),
            CreateError::Unresolved(unresolved) => *unresolved,
        };
        let Unresolved {
            what,
            create,
            lookup,
            pending,
        } = unresolved;
        let create = Diagnostic::from(create);
        let lookup = Diagnostic::from(lookup);
        Diagnostic::error(
            format!("The create of {what} may have succeeded"),
            format!(
                "The create got no answer, so the object may exist under a name the server \
                 picked:\n  {}\n  {}\nLooking it up by its create token failed too:\n  {}\n  \
                 {}\n\nNothing is created twice: the resource is saved as tainted, the next \
                 plan looks the object up by its label {TOKEN_LABEL}={} and the next apply \
                 replaces it (or creates it, if it does not exist).",
                create.summary,
                create.detail.replace('\n', "\n  "),
                lookup.summary,
                lookup.detail.replace('\n', "\n  "),
                pending.token,
            ),
        )
    }
}

/// A create whose outcome is not known yet, as the private state of the tainted resource. Its
/// JSON (in this field order) is in saved states: see [`crate::private_state`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub api_version: String,
    pub kind: String,
    pub plural: String,
    pub namespace: Option<String>,
    pub token: String,
}

impl Pending {
    fn target(&self) -> Target {
        let (group, version) = self
            .api_version
            .split_once('/')
            .unwrap_or(("", &self.api_version));
        Target {
            resource: kube::api::ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                api_version: self.api_version.clone(),
                kind: self.kind.clone(),
                plural: self.plural.clone(),
            },
            namespace: self.namespace.clone(),
            name: String::new(),
        }
    }
}

/// Creates `body` at `target` (named by its `generateName` prefix) as `manager` for `estate`:
/// the created object, exactly one, whatever answers were lost on the way.
pub async fn generated(
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &str,
    estate: &Estate,
) -> Result<Json, CreateError> {
    let token = new_token();
    let mut body = body.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(Json::as_object_mut) {
        let labels = meta
            .entry("labels")
            .or_insert_with(|| Json::Object(Default::default()));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(TOKEN_LABEL.into(), Json::from(token.as_str()));
        }
    }
    let pending = Pending {
        api_version: target.resource.api_version.clone(),
        kind: target.resource.kind.clone(),
        plural: target.resource.plural.clone(),
        namespace: target.namespace.clone(),
        token,
    };
    let mut unknown = false;
    let mut last = None;
    for creates in 1..=CREATES {
        let error = match objects::create(client, target, &body, manager).await {
            Ok(created) => {
                if unknown && let Err(e) = sweep(client, &pending, estate, &created).await {
                    // The object is made; only a duplicate from a lost create landing late could
                    // be left, labelled with the token: `terraform query` finds it.
                    tracing::warn!("after creating {}: {e}", target.object_ref());
                }
                return Ok(objects::handed_to_apply(client, target, created, &body, manager).await);
            }
            // The server did not create it.
            Err(e) if !e.is_uncertain() => return Err(e.into()),
            Err(e) => e,
        };
        unknown = true;
        match adopt(client, &pending, estate).await {
            Ok(Some(found)) => {
                return Ok(objects::handed_to_apply(client, target, found, &body, manager).await);
            }
            Ok(None) => last = Some(error),
            Err(lookup) => {
                let named = Target {
                    name: format!("{}…", target.name),
                    ..target.clone()
                };
                return Err(CreateError::Unresolved(Box::new(Unresolved {
                    what: named.object_ref().to_string(),
                    create: error,
                    lookup,
                    pending,
                })));
            }
        }
        if creates < CREATES && retry::pause(creates).await.is_err() {
            break;
        }
    }
    Err(last.expect("a create failed before the loop ended").into())
}

/// The object an earlier create with `pending`'s token made, if one did: the oldest, the others
/// (which only creates landing after a lookup can leave) deleted.
async fn adopt(client: &Client, pending: &Pending, estate: &Estate) -> Result<Option<Json>, ApiError> {
    let mut found = find(client, pending, estate).await?;
    if found.is_empty() {
        return Ok(None);
    }
    let kept = found.remove(0);
    delete_all(client, pending, &found).await?;
    Ok(Some(kept))
}

/// Deletes every object with `pending`'s token but `created`: after a create whose earlier
/// tries got no answer, one of those may have landed after its lookup.
async fn sweep(client: &Client, pending: &Pending, estate: &Estate, created: &Json) -> Result<(), ApiError> {
    let uid = |o: &Json| {
        o.pointer("/metadata/uid")
            .and_then(Json::as_str)
            .map(str::to_string)
    };
    let extras: Vec<Json> = find(client, pending, estate)
        .await?
        .into_iter()
        .filter(|o| uid(o) != uid(created))
        .collect();
    delete_all(client, pending, &extras).await
}

async fn delete_all(client: &Client, pending: &Pending, objects: &[Json]) -> Result<(), ApiError> {
    for object in objects {
        if let Some(precondition) = Precondition::of(object) {
            let target = Target::of(pending.target().resource, object);
            objects::delete(client, &target, &precondition).await?;
        }
    }
    Ok(())
}

/// The estate's objects with `pending`'s token, oldest first.
async fn find(client: &Client, pending: &Pending, estate: &Estate) -> Result<Vec<Json>, ApiError> {
    let target = pending.target();
    let selector = format!("{},{TOKEN_LABEL}={}", estate.selector(), pending.token);
    let params = ListParams::default().labels(&selector);
    let mut found =
        objects::list_with(client, &target.resource, target.namespace.as_deref(), &params).await?;
    let text = |o: &Json, key: &str| {
        o.pointer(key)
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string()
    };
    found.sort_by_key(|o| (text(o, "/metadata/creationTimestamp"), text(o, "/metadata/name")));
    Ok(found)
}

/// The object a pending create made, if any (the oldest, should there be several): what the
/// refresh of a resource saved as [`Pending`] finds.
pub async fn resolve(client: &Client, pending: &Pending, estate: &Estate) -> Result<Option<Json>, ApiError> {
    Ok(find(client, pending, estate).await?.into_iter().next())
}

/// 20 random lowercase letters and digits: a label value no two creates share.
fn new_token() -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..20)
        .map(|_| char::from(CHARS[fastrand::usize(..CHARS.len())]))
        .collect()
}

/// `value` with every unknown made null: the state of a create whose outcome is unknown.
pub fn unknowns_to_null(value: &Value) -> Value {
    match value {
        Value::Unknown(_) => Value::Null,
        Value::List(items) => Value::List(items.iter().map(unknowns_to_null).collect()),
        Value::Set(items) => Value::Set(items.iter().map(unknowns_to_null).collect()),
        Value::Tuple(items) => Value::Tuple(items.iter().map(unknowns_to_null).collect()),
        Value::Map(entries) => Value::Map(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), unknowns_to_null(v)))
                .collect(),
        ),
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(k, v)| (k.clone(), unknowns_to_null(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_label_values_and_differ() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 20);
        assert!(a.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    }

    #[test]
    fn an_unknown_outcome_leaves_no_unknown_in_state() {
        let planned = Value::object([
            ("id", Value::unknown()),
            (
                "metadata",
                Value::List(vec![Value::object([
                    ("generate_name", Value::string("gen-")),
                    ("name", Value::unknown()),
                ])]),
            ),
        ]);
        let state = unknowns_to_null(&planned);
        assert!(state.is_wholly_known());
        assert!(state.get("id").is_null());
        assert_eq!(
            state.get("metadata").elements()[0].get("generate_name"),
            &Value::string("gen-")
        );
    }
}
