//! Writes of objects whose keyed lists hold a key twice (a container's env `A` twice, a port
//! twice). kube-apiserver stores such objects when created or updated, so hashicorp/kubernetes
//! (which never uses server-side apply) takes such a configuration; server-side apply refuses
//! it ("failed to create typed patch object ... duplicate entries for key"), every time.
//!
//! Creates are POSTs anyway ([`objects::create_for_apply`]), which take such lists. An update
//! is detected by that refusal, so other objects cost no schema lookup. It is then written as
//! what server-side apply would make of the object with each key once (a dry run: what the
//! configuration dropped goes, other managers' fields stay, their conflicts are refused as
//! usual), with the later entries put back where the configuration has them, sent as a PUT
//! carrying the uid and resourceVersion the guard checked, as field manager `tofu-live`, whose
//! fields the write's `Update` entry then hands to its `Apply` entry ([`objects::hand_over`]):
//! the next apply, once the configuration holds each key once, owns them and replaces the
//! entries with its one.

use kube::Client;
use kube_estate::ApiError;
use serde_json::{Map, Value as Json};

use crate::context::Context;
use crate::objects::{self, Manager, Precondition, Target};
use crate::openapi::Node;

/// How the items of one keyed list are told apart: their key fields, an omitted one by its
/// default (a port's `protocol` is `TCP`), as the server keys them.
#[derive(Clone, Debug)]
struct ListKeys {
    names: Vec<String>,
    defaults: Map<String, Json>,
}

impl ListKeys {
    fn of(list: Node<'_>) -> Option<ListKeys> {
        let names = list.list_map_keys()?;
        let item = list.items();
        let defaults = names
            .iter()
            .filter_map(|k| Some((k.clone(), item?.property(k)?.default()?.clone())))
            .collect();
        Some(ListKeys { names, defaults })
    }

    fn key(&self, item: &Json) -> Map<String, Json> {
        self.names
            .iter()
            .filter_map(|k| Some((k.clone(), item.get(k).or_else(|| self.defaults.get(k))?.clone())))
            .collect()
    }
}

/// One step from an object to one of its keyed lists.
#[derive(Clone, Debug)]
enum Step {
    Field(String),
    /// The item of a keyed list with this key.
    Item(ListKeys, Map<String, Json>),
}

/// A keyed list that holds a key twice: where, how its items are keyed, its entries as written.
struct Twice {
    path: Vec<Step>,
    keys: ListKeys,
    entries: Vec<Json>,
}

/// `value` with every keyed list holding each key once (its first entry), and the lists that
/// held one twice, inner lists before the lists holding them.
fn once(value: &Json, node: Node<'_>, path: &mut Vec<Step>, twice: &mut Vec<Twice>) -> Json {
    match value {
        Json::Object(fields) => Json::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    let Some(child) = node.property(k).or_else(|| node.values()) else {
                        return (k.clone(), v.clone());
                    };
                    path.push(Step::Field(k.clone()));
                    let v = once(v, child, path, twice);
                    path.pop();
                    (k.clone(), v)
                })
                .collect(),
        ),
        // Only keyed lists are merged item by item; any other is written whole.
        Json::Array(items) => {
            let (Some(keys), Some(item)) = (ListKeys::of(node), node.items()) else {
                return value.clone();
            };
            let mut seen = Vec::new();
            let mut kept = Vec::new();
            for entry in items {
                let key = keys.key(entry);
                if seen.contains(&key) {
                    continue;
                }
                seen.push(key.clone());
                path.push(Step::Item(keys.clone(), key));
                kept.push(once(entry, item, path, twice));
                path.pop();
            }
            if kept.len() < items.len() {
                twice.push(Twice {
                    path: path.clone(),
                    keys,
                    entries: items.clone(),
                });
            }
            Json::Array(kept)
        }
        other => other.clone(),
    }
}

fn at<'a>(mut value: &'a mut Json, path: &[Step]) -> Option<&'a mut Json> {
    for step in path {
        value = match step {
            Step::Field(name) => value.get_mut(name)?,
            Step::Item(keys, key) => value
                .as_array_mut()?
                .iter_mut()
                .find(|item| keys.key(item) == *key)?,
        };
    }
    Some(value)
}

/// Puts a list's later entries of a key back into `object` (the server's answer for the list
/// with each key once): the configuration's order, each key's first entry as the server made
/// it, then the items only others set.
fn restore(object: &mut Json, twice: &Twice) {
    let Some(list) = at(object, &twice.path).and_then(Json::as_array_mut) else {
        return;
    };
    let mut firsts = Vec::new();
    let mut restored = Vec::with_capacity(twice.entries.len());
    for entry in &twice.entries {
        let key = twice.keys.key(entry);
        if firsts.contains(&key) {
            restored.push(entry.clone());
            continue;
        }
        let made = list.iter().find(|i| twice.keys.key(i) == key);
        restored.push(made.unwrap_or(entry).clone());
        firsts.push(key);
    }
    restored.extend(
        list.iter()
            .filter(|i| !firsts.contains(&twice.keys.key(i)))
            .cloned(),
    );
    *list = restored;
}

/// Writes `body` as server-side apply by `manager` would, for an object whose keyed lists hold
/// a key twice, which apply itself refused with `refusal`: updated from the object
/// `precondition` names. (A create is a POST, which takes such lists as they are.)
pub async fn write(
    ctx: &Context,
    client: &Client,
    target: &Target,
    body: &Json,
    manager: &Manager<'_>,
    precondition: &Precondition,
    refusal: ApiError,
) -> Result<Json, ApiError> {
    let resource = &target.resource;
    let Some(schema) = ctx
        .openapi
        .kind(client, &resource.api_version, &resource.kind)
        .await?
    else {
        return Err(refusal);
    };
    let mut twice = Vec::new();
    let single = once(body, schema.root(), &mut Vec::new(), &mut twice);
    let mut object = objects::apply_dry_run(client, target, &single, manager, Some(precondition)).await?;
    for list in &twice {
        restore(&mut object, list);
    }
    if let Some(meta) = object.get_mut("metadata").and_then(Json::as_object_mut) {
        meta.insert("uid".into(), Json::from(precondition.uid.as_str()));
        meta.insert(
            "resourceVersion".into(),
            Json::from(precondition.resource_version.as_str()),
        );
    }
    let replaced = objects::replace(client, target, &object, manager.name).await?;
    objects::hand_over(client, target, replaced, manager.name, None).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::KindSchema;
    use serde_json::json;

    fn schema() -> KindSchema {
        KindSchema::of(
            json!({
                "Pod": {"properties": {"spec": {"$ref": "#/components/schemas/Spec"}},
                        "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Pod"}]},
                "Spec": {"properties": {"containers": {"type": "array", "items": {"$ref": "#/components/schemas/Container"},
                    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}}},
                "Container": {"properties": {
                    "name": {"type": "string"},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "env": {"type": "array", "items": {"$ref": "#/components/schemas/Env"},
                        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
                    "ports": {"type": "array", "items": {"$ref": "#/components/schemas/Port"},
                        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["containerPort", "protocol"]}}},
                "Env": {"properties": {"name": {"type": "string"}, "value": {"type": "string"}}},
                "Port": {"properties": {"containerPort": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}
            }),
            "Pod",
        )
    }

    /// Each key once for the dry run; the server's answer (defaults filled in, another
    /// manager's entry) with the later entries put back in the configuration's order.
    #[test]
    fn keys_held_twice_are_written_once_then_put_back() {
        let schema = schema();
        let body = json!({"spec": {"containers": [{"name": "c", "args": ["x", "x"],
            "env": [{"name": "A", "value": "1"}, {"name": "B"}, {"name": "A", "value": "2"}],
            "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"}]}]}});
        let mut twice = Vec::new();
        let single = once(&body, schema.root(), &mut Vec::new(), &mut twice);
        assert_eq!(
            single,
            json!({"spec": {"containers": [{"name": "c", "args": ["x", "x"],
                "env": [{"name": "A", "value": "1"}, {"name": "B"}],
                "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]}]}})
        );
        assert_eq!(twice.len(), 2);
        let mut answer = json!({"spec": {"containers": [{"name": "c", "args": ["x", "x"],
            "env": [{"name": "A", "value": "1"}, {"name": "B"}, {"name": "INJECTED", "value": "y"}],
            "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "UDP"}]}]}});
        for list in &twice {
            restore(&mut answer, list);
        }
        assert_eq!(
            answer,
            json!({"spec": {"containers": [{"name": "c", "args": ["x", "x"],
                "env": [{"name": "A", "value": "1"}, {"name": "B"}, {"name": "A", "value": "2"},
                        {"name": "INJECTED", "value": "y"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80, "protocol": "TCP"},
                          {"containerPort": 80, "protocol": "UDP"}]}]}})
        );
    }
}
