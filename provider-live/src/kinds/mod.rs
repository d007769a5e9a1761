//! The typed kinds served by this provider: what particular kinds do beyond their fields.
//!
//! Most kinds are data, served by [`generic`]: the kind catalog ([`crate::catalog`]) gives their
//! field tables, which [`crate::fields`] converts, and [`crate::behaviour`] what their
//! Kubernetes kind does beyond that (waits, immutable fields, slow deletes, and the code of a
//! few kinds). The few whose values need their own rules (Secret and ConfigMap data, a
//! Namespace's deletion, a ServiceAccount's tokens, a token request) have a module each.
//! [`resources`] serves them all as typed resources.

mod config_map;
mod generic;
mod namespace;
mod secret;
pub(crate) mod service_account;
pub(crate) mod token_request;

use std::sync::Arc;

use plugin_runtime::{Resource, Value};
use serde_json::Value as Json;

use crate::catalog;
use crate::context::Context;
use crate::list::Listable;
use crate::resource::TypedResource;

/// Every typed kind, as resources sharing the provider's context.
pub fn resources(ctx: &Arc<Context>) -> Vec<Arc<dyn Resource>> {
    let mut out: Vec<Arc<dyn Resource>> = listable(ctx)
        .into_iter()
        .map(|r| r as Arc<dyn Resource>)
        .collect();
    out.push(Arc::new(token_request::TokenRequest::new(ctx.clone())));
    out
}

/// The typed kinds whose objects can be listed: every one but the token request, which names
/// no object.
pub fn listable(ctx: &Arc<Context>) -> Vec<Arc<dyn Listable>> {
    let mut out: Vec<Arc<dyn Listable>> = vec![
        Arc::new(TypedResource::new(
            namespace::Namespace(&namespace::NAMESPACE),
            ctx.clone(),
        )),
        Arc::new(TypedResource::new(
            namespace::Namespace(&namespace::NAMESPACE_V1),
            ctx.clone(),
        )),
        Arc::new(TypedResource::new(config_map::ConfigMap, ctx.clone())),
        Arc::new(secret::SecretResource::new(ctx.clone())),
        Arc::new(TypedResource::new(service_account::ServiceAccount, ctx.clone())),
    ];
    out.extend(catalog::entries().iter().map(|entry| {
        let kind = generic::CatalogKind::new(entry, crate::behaviour::of(&entry.info));
        Arc::new(TypedResource::new(kind, ctx.clone())) as Arc<dyn Listable>
    }));
    out
}

/// An immutable ConfigMap's or Secret's contents: once `immutable` is true, the API server
/// refuses any change of them, so hashicorp replaces the object instead (its CustomizeDiff).
pub(crate) fn immutable_contents(prior: &Value) -> Vec<plugin_runtime::AttributePath> {
    if prior.get("immutable").as_bool() != Some(true) {
        return Vec::new();
    }
    ["data", "binary_data", "immutable"]
        .into_iter()
        .map(plugin_runtime::AttributePath::root)
        .collect()
}

/// A map-of-strings attribute read from a live JSON object (`data`, `binaryData`), by the
/// rules that keep other writers' keys from turning into diffs: a map the prior does not
/// manage (null in a prior resource) stays null; an absent or empty live map keeps the
/// prior's empty map; otherwise the live map (every key, so drift shows). On import (`prior`
/// resource `Null`) the live map as it is.
pub(crate) fn read_string_map(live: Option<&Json>, prior_resource: &Value, attribute: &str) -> Value {
    let prior = prior_resource.get(attribute);
    let live = live.and_then(Json::as_object).filter(|m| !m.is_empty());
    match live {
        None if matches!(prior, Value::Map(m) if m.is_empty()) => prior.clone(),
        None => Value::Null,
        Some(_) if !prior_resource.is_null() && prior.is_null() => Value::Null,
        Some(m) => Value::string_map(
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))),
        ),
    }
}

/// A map-of-strings attribute as the JSON object sent to the API (`None` when null).
pub(crate) fn write_string_map(value: &Value) -> Option<Json> {
    let entries = value.entries()?;
    Some(Json::Object(
        entries
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), Json::from(v.as_str()?))))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_maps_show_drift_only_where_the_user_manages_them() {
        let prior = Value::object([("data", Value::string_map([("a", "1")])), ("other", Value::Null)]);
        let live = json!({"a": "2", "b": "3"});
        assert_eq!(
            read_string_map(Some(&live), &prior, "data"),
            Value::string_map([("a", "2"), ("b", "3")])
        );
        assert_eq!(read_string_map(Some(&live), &prior, "other"), Value::Null);
        assert_eq!(
            read_string_map(Some(&live), &Value::Null, "other"),
            Value::string_map([("a", "2"), ("b", "3")])
        );
        let empty = Value::object([("data", Value::Map(Default::default()))]);
        assert_eq!(
            read_string_map(None, &empty, "data"),
            Value::Map(Default::default())
        );
        assert_eq!(
            write_string_map(&Value::string_map([("k", "v")])),
            Some(json!({"k": "v"}))
        );
        assert_eq!(write_string_map(&Value::Null), None);
    }
}
