//! Reads within one engine run share one LIST per kind and namespace (with the estate's
//! label selector); objects the LIST did not cover (unlabelled, another estate's, absent),
//! and kinds the identity may not list, are read with GET.
//!
//! An object this provider wrote (created, applied, patched) is read with GET from then on: the
//! listing shows it as it was. The listing stays for the others, which a write of one object
//! does not change: an apply of N objects re-plans each one before writing it, and forgetting
//! every listing at each write would LIST the whole collection N times (quadratic in N). A
//! delete still forgets every listing, as deleting a namespace (or a CRD) takes other objects
//! with it, and so does a create the server names (its name is known only afterwards).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use kube::Client;
use kube_estate::ApiError;
use serde_json::Value as Json;
use tokio::sync::OnceCell;

use crate::objects::{self, Target};

/// (apiVersion, plural, namespace)
type Key = (String, String, Option<String>);

enum Listing {
    /// Each listed object by name, as JSON text: far smaller than the parsed object (a plan over
    /// 10,000 ConfigMaps peaked at 41 MiB instead of 82), and parsing it again on a read costs
    /// about what the copy a read hands out cost anyway.
    Items(HashMap<String, Box<str>>),
    /// The LIST was forbidden (403): read object by object.
    Unlistable,
}

#[derive(Default)]
pub struct ReadCache {
    lists: Mutex<HashMap<Key, Arc<OnceCell<Listing>>>>,
    /// Objects written since the listings were forgotten: (key, name).
    written: Mutex<HashSet<(Key, String)>>,
}

impl ReadCache {
    /// The live object, or `None` when absent.
    pub async fn get(
        &self,
        client: &Client,
        target: &Target,
        selector: &str,
    ) -> Result<Option<Json>, ApiError> {
        let key = key_of(target);
        if self
            .written
            .lock()
            .expect("cache lock")
            .contains(&(key.clone(), target.name.clone()))
        {
            return objects::get(client, target).await;
        }
        let cell = self
            .lists
            .lock()
            .expect("cache lock")
            .entry(key)
            .or_default()
            .clone();
        let listing = cell
            .get_or_try_init(|| async {
                let mut items = HashMap::new();
                let listed = objects::list(
                    client,
                    &target.resource,
                    target.namespace.as_deref(),
                    selector,
                    |o| {
                        if let Some(name) = name_of(&o) {
                            items.insert(name.to_string(), o.to_string().into_boxed_str());
                        }
                    },
                )
                .await;
                match listed {
                    Ok(()) => Ok(Listing::Items(items)),
                    Err(e) if e.is_forbidden() => Ok(Listing::Unlistable),
                    Err(e) => Err(e),
                }
            })
            .await?;
        // Text this cache wrote always parses; were it not to, a GET reads the object.
        if let Listing::Items(items) = listing
            && let Some(object) = items
                .get(&target.name)
                .and_then(|text| serde_json::from_str(text).ok())
        {
            return Ok(Some(object));
        }
        objects::get(client, target).await
    }

    /// Reads the object at `target` with GET from now on: called after writing it.
    pub fn wrote(&self, target: &Target) {
        self.written
            .lock()
            .expect("cache lock")
            .insert((key_of(target), target.name.clone()));
    }

    /// Forgets every listing: called after a delete, which may take other objects with it.
    pub fn invalidate(&self) {
        // Listings made from now on show every write so far.
        let mut lists = self.lists.lock().expect("cache lock");
        lists.clear();
        self.written.lock().expect("cache lock").clear();
    }
}

fn key_of(target: &Target) -> Key {
    (
        target.resource.api_version.clone(),
        target.resource.plural.clone(),
        target.namespace.clone(),
    )
}

fn name_of(object: &Json) -> Option<&str> {
    object.pointer("/metadata/name")?.as_str()
}
