//! Reads within one engine run share one LIST per kind and namespace (with the estate's
//! label selector); objects the LIST did not cover (unlabelled, another estate's, absent),
//! and kinds the identity may not list, are read with GET. Any write clears the cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::Client;
use kube_estate::ApiError;
use serde_json::Value as Json;
use tokio::sync::OnceCell;

use crate::objects::{self, Target};

/// (apiVersion, plural, namespace)
type Key = (String, String, Option<String>);

enum Listing {
    Items(HashMap<String, Json>),
    /// The LIST was forbidden (403): read object by object.
    Unlistable,
}

#[derive(Default)]
pub struct ReadCache {
    lists: Mutex<HashMap<Key, Arc<OnceCell<Listing>>>>,
}

impl ReadCache {
    /// The live object, or `None` when absent.
    pub async fn get(
        &self,
        client: &Client,
        target: &Target,
        selector: &str,
    ) -> Result<Option<Json>, ApiError> {
        let key = (
            target.resource.api_version.clone(),
            target.resource.plural.clone(),
            target.namespace.clone(),
        );
        let cell = self
            .lists
            .lock()
            .expect("cache lock")
            .entry(key)
            .or_default()
            .clone();
        let listing = cell
            .get_or_try_init(|| async {
                match objects::list(client, &target.resource, target.namespace.as_deref(), selector).await {
                    Ok(items) => Ok(Listing::Items(
                        items
                            .into_iter()
                            .filter_map(|o| Some((name_of(&o)?.to_string(), o)))
                            .collect(),
                    )),
                    Err(e) if e.is_forbidden() => Ok(Listing::Unlistable),
                    Err(e) => Err(e),
                }
            })
            .await?;
        if let Listing::Items(items) = listing
            && let Some(object) = items.get(&target.name)
        {
            return Ok(Some(object.clone()));
        }
        objects::get(client, target).await
    }

    /// Forgets every listing: called after any write.
    pub fn invalidate(&self) {
        self.lists.lock().expect("cache lock").clear();
    }
}

fn name_of(object: &Json) -> Option<&str> {
    object.pointer("/metadata/name")?.as_str()
}
