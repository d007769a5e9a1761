//! Reads within one engine run share one LIST per kind and namespace (with the estate's
//! label selector). Objects that LIST did not cover (unlabelled, another estate's, absent) are
//! read with GET, the first few of them: from then on one more LIST, of every object that is
//! not the estate's, answers the rest, so a plan of N creates reads no object N times (a
//! GET of an absent object was the provider's largest cost in such an apply) and one read of
//! a stray object in a crowded namespace still costs one GET. An object in neither listing was
//! absent when they were made: a plan's read is advice, the guarded write reads it again.
//! Kinds the identity may not list are read with GET, and so are the objects of a listing that
//! failed (after its retries): the read that made the LIST reports its error, once, and each
//! other read is a request of its own, which may well succeed.
//!
//! An object this provider wrote (created, applied, patched) is read with GET from then on: the
//! listing shows it as it was. The listing stays for the others, which a write of one object
//! does not change: an apply of N objects re-plans each one before writing it, and forgetting
//! every listing at each write would LIST the whole collection N times (quadratic in N). A
//! delete still forgets every listing, as deleting a namespace (or a CRD) takes other objects
//! with it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kube::Client;
use kube_estate::{ApiError, Estate};
use serde_json::Value as Json;
use tokio::sync::OnceCell;

use crate::objects::{self, Listed, Target};

/// (apiVersion, plural, namespace)
type Key = (String, String, Option<String>);

enum Listing {
    /// Each listed object by name, as JSON text: far smaller than the parsed object (a plan over
    /// 10,000 ConfigMaps peaked at 41 MiB instead of 82), and parsing it again on a read costs
    /// about what the copy a read hands out cost anyway.
    Items(HashMap<String, Box<str>>),
    /// The LIST was forbidden (403), or failed: read object by object.
    Unlistable,
}

/// Reads of objects the estate's listing lacks that go to GET, per kind and namespace, before
/// the rest of the collection is listed instead.
const GETS_BEFORE_LISTING_THE_REST: usize = 3;

/// What the cache holds of one kind and namespace.
#[derive(Default)]
struct Collection {
    /// The estate's objects.
    ours: OnceCell<Listing>,
    /// Every other object, listed once `misses` passed [`GETS_BEFORE_LISTING_THE_REST`].
    others: OnceCell<Listing>,
    misses: AtomicUsize,
}

#[derive(Default)]
pub struct ReadCache {
    lists: Mutex<HashMap<Key, Arc<Collection>>>,
    /// Objects written since the listings were forgotten: (key, name).
    written: Mutex<HashSet<(Key, String)>>,
}

impl ReadCache {
    /// The live object, or `None` when absent, for a configuration of `estate`.
    pub async fn get(
        &self,
        client: &Client,
        target: &Target,
        estate: &Estate,
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
        let collection = self
            .lists
            .lock()
            .expect("cache lock")
            .entry(key)
            .or_default()
            .clone();
        let ours = listed(&collection.ours, client, target, &estate.selector()).await?;
        let Listing::Items(items) = ours else {
            return objects::get(client, target).await;
        };
        if let Some(object) = parsed(items, &target.name) {
            return Ok(Some(object));
        }
        if collection.misses.fetch_add(1, Ordering::Relaxed) < GETS_BEFORE_LISTING_THE_REST {
            return objects::get(client, target).await;
        }
        let others = listed(&collection.others, client, target, &estate.others_selector()).await?;
        match others {
            Listing::Items(items) => Ok(parsed(items, &target.name)),
            Listing::Unlistable => objects::get(client, target).await,
        }
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

/// The listing `cell` holds, made now with `selector` when it holds none. A LIST that fails
/// leaves [`Listing::Unlistable`]: its error goes to this read alone, and the reads sharing it
/// go object by object rather than each repeating the failed LIST (and its error).
async fn listed<'a>(
    cell: &'a OnceCell<Listing>,
    client: &Client,
    target: &Target,
    selector: &str,
) -> Result<&'a Listing, ApiError> {
    let mut failed = None;
    let listing = cell
        .get_or_init(|| async {
            list(client, target, selector).await.unwrap_or_else(|e| {
                failed = Some(e);
                Listing::Unlistable
            })
        })
        .await;
    match failed {
        Some(e) => Err(e),
        None => Ok(listing),
    }
}

/// Lists the collection of `target` with `selector`.
async fn list(client: &Client, target: &Target, selector: &str) -> Result<Listing, ApiError> {
    let mut items = HashMap::new();
    let listed = objects::list(
        client,
        &target.resource,
        target.namespace.as_deref(),
        selector,
        |listed| match listed {
            Listed::Object(o) => {
                if let Some(name) = name_of(&o) {
                    items.insert(name.to_string(), o.to_string().into_boxed_str());
                }
            }
            Listed::Restarted => items.clear(),
        },
    )
    .await;
    match listed {
        Ok(()) => Ok(Listing::Items(items)),
        Err(e) if e.is_forbidden() => Ok(Listing::Unlistable),
        Err(e) => Err(e),
    }
}

/// The object `items` holds under `name` (text this cache wrote, which always parses).
fn parsed(items: &HashMap<String, Box<str>>, name: &str) -> Option<Json> {
    serde_json::from_str(items.get(name)?).ok()
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
