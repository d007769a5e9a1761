//! GET and LIST: one object, or a page of a list with its selectors and `continue` token.

use super::call::Call;
use crate::exchange::Reply;
use crate::index::Id;
use crate::meta;
use crate::semantics::Selectors;
use crate::status::{self, ApiError};
use base64::Engine;
use serde_json::{Value, json};

impl<'a> Call<'a> {
    pub fn get(&self) -> Result<Reply, ApiError> {
        let store = self.st.store();
        let obj = store
            .get(&self.rt.key(), &self.namespace, self.name())
            .ok_or_else(|| status::not_found(self.target()))?;
        Ok(Reply::json(200, self.present(obj)))
    }

    pub fn list(&self) -> Result<Reply, ApiError> {
        let q = &self.ctx.query;
        let selectors = self.selectors()?;
        let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
        let token = q
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(ContinueToken::decode)
            .transpose()?;
        let store = self.st.store();
        let rv = token.as_ref().map(|t| t.rv).unwrap_or_else(|| store.current_rv());
        let start = token.as_ref().map(|t| t.start_after(&self.namespace));
        let mut items = Vec::new();
        let mut remaining = 0usize;
        let mut last_key = None;
        let key = self.rt.key();
        let candidates: Box<dyn Iterator<Item = (&Id, &Value)>> = match selectors.label_equalities() {
            Some(pairs) => Box::new(store.with_labels(&key, self.list_namespace(), pairs).into_iter()),
            None => Box::new(store.entries(&key, self.list_namespace())),
        };
        for (key, obj) in candidates {
            if start.as_ref().is_some_and(|s| key <= s) || !selectors.matches(obj) {
                continue;
            }
            if limit > 0 && items.len() == limit {
                remaining += 1;
                if !selectors.is_empty() {
                    break;
                }
                continue;
            }
            let mut item = self.present(obj);
            // Unstructured lists keep each item's kind and apiVersion.
            if let Some(m) = item.as_object_mut().filter(|_| !self.rt.custom) {
                m.shift_remove("kind");
                m.shift_remove("apiVersion");
            }
            last_key = Some(key.clone());
            items.push(item);
        }
        let mut list_meta = json!({"resourceVersion": rv.to_string()});
        if remaining > 0 {
            let (ns, name) = last_key.expect("a full page has a last item");
            let start = if self.namespace.is_empty() && self.rt.namespaced {
                format!("{ns}/{name}")
            } else {
                name
            };
            list_meta["continue"] = json!(
                ContinueToken {
                    rv,
                    start,
                    continued: token.is_some()
                }
                .encode()
            );
            if selectors.is_empty() {
                list_meta["remainingItemCount"] = json!(remaining);
            }
        }
        let mut list = json!({
            "kind": format!("{}List", self.rt.kind),
            "apiVersion": self.rt.api_version(&self.version),
            "metadata": list_meta,
            "items": items,
        });
        if self.rt.custom {
            meta::sort_keys(&mut list);
        }
        Ok(Reply::json(200, list))
    }

    pub(super) fn list_namespace(&self) -> Option<&str> {
        (self.rt.namespaced && !self.namespace.is_empty()).then_some(self.namespace.as_str())
    }

    pub fn selectors(&self) -> Result<Selectors, ApiError> {
        let q = &self.ctx.query;
        Selectors::parse(q.get("labelSelector"), q.get("fieldSelector"), self.rt.kind)
    }
}

/// A `continue` token: base64 of `{"v":"meta.k8s.io/v1","rv":N,"start":"KEY\u0000"}`.
#[derive(Debug)]
pub struct ContinueToken {
    pub rv: u64,
    /// The last returned key (`name`, or `namespace/name` in cluster-wide lists).
    pub start: String,
    /// Whether this page itself was a continuation (the apiserver then adds a leading `/`).
    pub continued: bool,
}

impl ContinueToken {
    pub fn encode(&self) -> String {
        let slash = if self.continued { "/" } else { "" };
        let text =
            json!({"v": "meta.k8s.io/v1", "rv": self.rv, "start": format!("{slash}{}\u{0}", self.start)})
                .to_string();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(text)
    }

    pub fn decode(token: &str) -> Result<Self, ApiError> {
        let bad = || {
            status::failure(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
                None,
            )
        };
        let trimmed = token.trim_end_matches('=');
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(trimmed)
            .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed))
            .map_err(|_| bad())?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        let start = v["start"].as_str().ok_or_else(bad)?;
        let start = start
            .trim_start_matches('/')
            .trim_end_matches('\u{0}')
            .to_string();
        Ok(Self {
            rv: v["rv"].as_u64().ok_or_else(bad)?,
            start,
            continued: true,
        })
    }

    /// The (namespace, name) key after which the page starts.
    pub(super) fn start_after(&self, url_namespace: &str) -> (String, String) {
        match self.start.split_once('/') {
            Some((ns, name)) if url_namespace.is_empty() => (ns.to_string(), name.to_string()),
            _ => (url_namespace.to_string(), self.start.clone()),
        }
    }
}
