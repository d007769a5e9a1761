//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.
//!
//! Strategic merge uses the patch strategies and merge keys of the built-in kinds this server
//! serves (containers by name, Service ports by port, ...); lists without a merge key are
//! replaced, as upstream does.

use serde_json::{Map, Value};

use crate::schema;

/// Why a patch could not be applied. The server answers [`PatchError::status_code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document itself is unusable (not a list of operations, unknown op, ...): 400.
    #[error("{0}")]
    Malformed(String),
    /// A well-formed patch that cannot apply to this object (failed `test`, missing path): 422
    /// with the apiserver's generic message.
    #[error("{0}")]
    Rejected(String),
}

impl PatchError {
    /// The HTTP status the apiserver uses for this error.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Malformed(_) => 400,
            PatchError::Rejected(_) => 422,
        }
    }

    /// The `Status` body the apiserver writes (03-configmap step 10 for a failed `test`).
    pub fn status(&self) -> Value {
        match self {
            PatchError::Malformed(message) => serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": "BadRequest", "code": 400
            }),
            PatchError::Rejected(_) => serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server rejected our request due to an error in our request",
                "reason": "Invalid", "details": {}, "code": 422
            }),
        }
    }
}

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch_map) = patch else {
        return patch.clone();
    };
    let mut result = match target {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    for (key, value) in patch_map {
        if value.is_null() {
            result.remove(key);
        } else {
            let merged = merge_patch(result.get(key).unwrap_or(&Value::Null), value);
            result.insert(key.clone(), merged);
        }
    }
    Value::Object(result)
}

/// RFC 6902 with all six operations.
pub fn json_patch(target: &Value, ops: &Value) -> Result<Value, PatchError> {
    let ops = ops.as_array().ok_or_else(|| {
        PatchError::Malformed("json: cannot unmarshal object into Go value of type jsonpatch.Patch".into())
    })?;
    let mut doc = target.clone();
    for op in ops {
        let name = op.get("op").and_then(Value::as_str).unwrap_or("");
        let path = str_field(op, "path")?;
        match name {
            "add" => add(&mut doc, path, value_field(op)?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, value_field(op)?)?;
            }
            "move" => {
                let from = str_field(op, "from")?;
                let value = remove(&mut doc, from)?;
                add(&mut doc, path, value)?;
            }
            "copy" => {
                let from = str_field(op, "from")?;
                let value = get(&doc, from)?.clone();
                add(&mut doc, path, value)?;
            }
            "test" => {
                if get(&doc, path)? != &value_field(op)? {
                    return Err(PatchError::Rejected(format!(
                        "testing value {path} failed: test failed"
                    )));
                }
            }
            other => return Err(PatchError::Malformed(format!("Unexpected kind: {other}"))),
        }
    }
    Ok(doc)
}

fn str_field<'a>(op: &'a Value, name: &str) -> Result<&'a str, PatchError> {
    op.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| PatchError::Malformed(format!("operation missing {name:?} field")))
}

fn value_field(op: &Value) -> Result<Value, PatchError> {
    op.get("value")
        .cloned()
        .ok_or_else(|| PatchError::Malformed("operation missing \"value\" field".into()))
}

/// Splits a JSON pointer into unescaped tokens.
fn tokens(pointer: &str) -> Result<Vec<String>, PatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let rest = pointer
        .strip_prefix('/')
        .ok_or_else(|| PatchError::Rejected(format!("invalid JSON pointer {pointer:?}")))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn missing(pointer: &str) -> PatchError {
    PatchError::Rejected(format!("doc is missing path: {pointer:?}: missing value"))
}

fn get<'a>(doc: &'a Value, pointer: &str) -> Result<&'a Value, PatchError> {
    let mut current = doc;
    for t in tokens(pointer)? {
        current = match current {
            Value::Object(m) => m.get(&t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }
        .ok_or_else(|| missing(pointer))?;
    }
    Ok(current)
}

/// The container addressed by all but the last token, plus that last token.
fn parent<'a>(doc: &'a mut Value, pointer: &str) -> Result<(&'a mut Value, String), PatchError> {
    let mut toks = tokens(pointer)?;
    let last = toks
        .pop()
        .ok_or_else(|| PatchError::Rejected("cannot address the document root".into()))?;
    let mut current = doc;
    for t in toks {
        current = match current {
            Value::Object(m) => m.get_mut(&t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| missing(pointer))?;
    }
    Ok((current, last))
}

fn add(doc: &mut Value, pointer: &str, value: Value) -> Result<(), PatchError> {
    if pointer.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (container, last) = parent(doc, pointer)?;
    match container {
        Value::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Value::Array(a) => {
            let index = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>().map_err(|_| missing(pointer))?
            };
            if index > a.len() {
                return Err(PatchError::Rejected(format!(
                    "add operation index out of bounds: {index}"
                )));
            }
            a.insert(index, value);
            Ok(())
        }
        _ => Err(missing(pointer)),
    }
}

fn remove(doc: &mut Value, pointer: &str) -> Result<Value, PatchError> {
    let (container, last) = parent(doc, pointer)?;
    match container {
        Value::Object(m) => m.remove(&last).ok_or_else(|| missing(pointer)),
        Value::Array(a) => {
            let index = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < a.len())
                .ok_or_else(|| missing(pointer))?;
            Ok(a.remove(index))
        }
        _ => Err(missing(pointer)),
    }
}

/// How a list field merges under a strategic merge patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStrategy {
    /// Replace the whole list (no patch strategy).
    Replace,
    /// Merge items of maps by this key.
    MergeKey(&'static str),
    /// Merge scalars as a set (e.g. `metadata.finalizers`).
    MergeScalars,
}

/// The patch strategy of the list at `path` (field names from the root), from the schema of
/// the patched object's kind.
fn list_strategy(root: Option<schema::Type>, path: &[String]) -> ListStrategy {
    let Some(t) = root.and_then(|r| r.at(path)) else {
        return ListStrategy::Replace;
    };
    match t.merge_key() {
        Some(key) => ListStrategy::MergeKey(key),
        None if t.merges_scalars() => ListStrategy::MergeScalars,
        None => ListStrategy::Replace,
    }
}

/// A strategic merge patch for a built-in `kind`: like a merge patch, but lists with a merge
/// key merge item by item (`$patch: delete|replace`, `$retainKeys`,
/// `$deleteFromPrimitiveList/<field>` honoured; `$setElementOrder/<field>` ignored).
pub fn strategic_merge_patch(target: &Value, patch: &Value) -> Result<Value, PatchError> {
    if !patch.is_object() {
        return Err(PatchError::Malformed(
            "json: cannot unmarshal array into Go value of type map[string]interface {}".into(),
        ));
    }
    let mut path = Vec::new();
    Ok(merge_map(
        target.as_object(),
        patch.as_object().expect("checked"),
        schema::of_object(target),
        &mut path,
    )?
    .map_or(Value::Object(Map::new()), Value::Object))
}

/// Merges a patch map into an original map; None means the map is deleted (`$patch: delete`).
fn merge_map(
    original: Option<&Map<String, Value>>,
    patch: &Map<String, Value>,
    root: Option<schema::Type>,
    path: &mut Vec<String>,
) -> Result<Option<Map<String, Value>>, PatchError> {
    let mut patch = patch.clone();
    match patch.remove("$patch").as_ref().and_then(Value::as_str) {
        Some("delete") => return Ok(None),
        Some("replace") => {
            patch.retain(|k, _| !k.starts_with('$'));
            return Ok(Some(patch));
        }
        Some("merge") | None => {}
        Some(other) => return Err(PatchError::Malformed(format!("Unknown patch type: {other}"))),
    }
    let retain_keys = patch.remove("$retainKeys");
    let mut result = original.cloned().unwrap_or_default();
    let directives: Vec<String> = patch.keys().filter(|k| k.starts_with('$')).cloned().collect();
    for directive in directives {
        let value = patch.remove(&directive).unwrap_or(Value::Null);
        if let Some(field) = directive.strip_prefix("$deleteFromPrimitiveList/")
            && let (Some(Value::Array(list)), Some(remove)) = (result.get_mut(field), value.as_array())
        {
            list.retain(|item| !remove.contains(item));
        }
    }
    for (key, value) in patch {
        path.push(key.clone());
        match value {
            Value::Null => {
                result.remove(&key);
            }
            Value::Object(p) => match merge_map(result.get(&key).and_then(Value::as_object), &p, root, path)?
            {
                Some(m) => {
                    result.insert(key.clone(), Value::Object(m));
                }
                None => {
                    result.remove(&key);
                }
            },
            Value::Array(p) => {
                let merged = merge_list(result.get(&key).and_then(Value::as_array), &p, root, path)?;
                result.insert(key.clone(), Value::Array(merged));
            }
            scalar => {
                result.insert(key.clone(), scalar);
            }
        }
        path.pop();
    }
    if let Some(Value::Array(keep)) = retain_keys {
        result.retain(|k, _| keep.iter().any(|r| r == k));
    }
    Ok(Some(result))
}

fn merge_list(
    original: Option<&Vec<Value>>,
    patch: &[Value],
    root: Option<schema::Type>,
    path: &mut Vec<String>,
) -> Result<Vec<Value>, PatchError> {
    let original = original.cloned().unwrap_or_default();
    if patch
        .iter()
        .any(|p| p.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return Ok(patch
            .iter()
            .filter(|p| p.get("$patch").is_none())
            .cloned()
            .collect());
    }
    match list_strategy(root, path) {
        ListStrategy::Replace => Ok(patch.to_vec()),
        ListStrategy::MergeScalars => {
            let server_only: Vec<Value> = original.iter().filter(|o| !patch.contains(o)).cloned().collect();
            let mut patch_items: Vec<Value> = Vec::new();
            for p in patch {
                if !patch_items.contains(p) {
                    patch_items.push(p.clone());
                }
            }
            Ok(interleave(server_only, patch_items, &original, |a, b| a == b))
        }
        ListStrategy::MergeKey(key) => {
            let same = |a: &Value, b: &Value| a.get(key).is_some() && a.get(key) == b.get(key);
            let mut patch_items: Vec<Value> = Vec::new();
            let mut deleted: Vec<&Value> = Vec::new();
            for p in patch {
                let Some(item) = p.as_object() else {
                    return Err(PatchError::Malformed(format!(
                        "cannot merge list items without merge key {key}"
                    )));
                };
                if item.get("$patch").and_then(Value::as_str) == Some("delete") {
                    deleted.push(p);
                    continue;
                }
                let existing = original.iter().find(|o| same(o, p)).and_then(Value::as_object);
                if let Some(m) = merge_map(existing, item, root, path)? {
                    patch_items.push(Value::Object(m));
                }
            }
            let server_only: Vec<Value> = original
                .iter()
                .filter(|o| !patch.iter().any(|p| same(o, p)) && !deleted.iter().any(|d| same(o, d)))
                .cloned()
                .collect();
            Ok(interleave(server_only, patch_items, &original, same))
        }
    }
}

/// Upstream's `mergeSortedSlice`: server-only items and patch items keep their own order; a
/// server-only item goes before a patch item only when both were in the live list in that
/// order, so new patch items come first (07-service step 4).
fn interleave(
    server_only: Vec<Value>,
    patch_items: Vec<Value>,
    live: &[Value],
    same: impl Fn(&Value, &Value) -> bool,
) -> Vec<Value> {
    let index = |v: &Value| live.iter().position(|l| same(l, v));
    let mut out = Vec::with_capacity(server_only.len() + patch_items.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        patch_items.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (Some(l), Some(r)) => matches!((index(l), index(r)), (Some(li), Some(ri)) if li < ri),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::step;
    use serde_json::json;

    /// Compares a patched object with a recorded response, ignoring what storage changes.
    fn same_content(actual: &Value, expected: &Value) {
        let strip = |v: &Value| {
            let mut v = v.clone();
            for key in [
                "resourceVersion",
                "managedFields",
                "uid",
                "creationTimestamp",
                "namespace",
            ] {
                v["metadata"].as_object_mut().unwrap().remove(key);
            }
            v
        };
        assert_eq!(strip(actual), strip(expected));
    }

    #[test]
    fn configmap_patches_from_transcript() {
        let mut current = step("03-configmap.json", 6)["response"]["body"].clone();
        let merged = merge_patch(&current, &step("03-configmap.json", 8)["body"]);
        same_content(&merged, &step("03-configmap.json", 8)["response"]["body"]);
        current = merged;
        let mut patched = json_patch(&current, &step("03-configmap.json", 9)["body"]).unwrap();
        crate::defaults::apply_defaults("ConfigMap", &mut patched);
        same_content(&patched, &step("03-configmap.json", 9)["response"]["body"]);
        let failed = json_patch(&patched, &step("03-configmap.json", 10)["body"]).unwrap_err();
        assert_eq!(failed.status_code(), 422);
        assert_eq!(failed.status(), step("03-configmap.json", 10)["response"]["body"]);
        let strategic = strategic_merge_patch(&patched, &step("03-configmap.json", 11)["body"]).unwrap();
        same_content(&strategic, &step("03-configmap.json", 11)["response"]["body"]);
    }

    #[test]
    fn service_ports_merge_patch_vs_strategic() {
        let created = step("07-service.json", 1)["response"]["body"].clone();
        let mut merged = merge_patch(&created, &step("07-service.json", 3)["body"]);
        crate::defaults::apply_defaults("Service", &mut merged);
        same_content(&merged, &step("07-service.json", 3)["response"]["body"]);
        let mut strategic = strategic_merge_patch(&merged, &step("07-service.json", 4)["body"]).unwrap();
        crate::defaults::apply_defaults("Service", &mut strategic);
        same_content(&strategic, &step("07-service.json", 4)["response"]["body"]);
    }

    #[test]
    fn secret_string_data_patch() {
        let created = step("06-secret.json", 1)["response"]["body"].clone();
        let mut patched = strategic_merge_patch(&created, &step("06-secret.json", 3)["body"]).unwrap();
        crate::defaults::apply_defaults("Secret", &mut patched);
        same_content(&patched, &step("06-secret.json", 3)["response"]["body"]);
    }

    #[test]
    fn strategic_directives() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"finalizers": ["a", "b"]}, "spec": {"containers": [
            {"name": "web", "image": "nginx", "env": [{"name": "A", "value": "1"}], "args": ["x"]},
            {"name": "side", "image": "busybox"}
        ], "tolerations": [{"key": "k"}]}});
        let patch = json!({
            "metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]},
            "spec": {
                "$setElementOrder/containers": [{"name": "web"}],
                "containers": [
                    {"name": "web", "env": [{"name": "B", "value": "2"}], "args": ["y"]},
                    {"name": "side", "$patch": "delete"}
                ],
                "tolerations": [{"key": "other"}]
            }
        });
        let out = strategic_merge_patch(&pod, &patch).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "b"]));
        assert_eq!(
            out["spec"]["containers"],
            json!([
                {"name": "web", "image": "nginx", "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}], "args": ["y"]}
            ])
        );
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "other"}]));
        let replaced = strategic_merge_patch(&pod, &json!({"spec": {"$patch": "replace", "x": 1}})).unwrap();
        assert_eq!(replaced["spec"], json!({"x": 1}));
        let retained = strategic_merge_patch(
            &json!({"s": {"a": 1, "b": 2}}),
            &json!({"s": {"$retainKeys": ["a", "c"], "c": 3}}),
        )
        .unwrap();
        assert_eq!(retained["s"], json!({"a": 1, "c": 3}));
        assert_eq!(
            strategic_merge_patch(&pod, &json!([])).unwrap_err().status_code(),
            400
        );
    }

    #[test]
    fn json_patch_operations() {
        let doc = json!({"a": {"b": [1, 2]}, "c": "x"});
        let out = json_patch(
            &doc,
            &json!([
                {"op": "add", "path": "/a/b/-", "value": 3},
                {"op": "add", "path": "/a/b/0", "value": 0},
                {"op": "move", "from": "/c", "path": "/d"},
                {"op": "copy", "from": "/d", "path": "/e~1f"},
                {"op": "test", "path": "/a/b/3", "value": 3},
                {"op": "replace", "path": "/a/b/1", "value": 9},
                {"op": "remove", "path": "/a/b/2"}
            ]),
        )
        .unwrap();
        assert_eq!(out, json!({"a": {"b": [0, 9, 3]}, "d": "x", "e/f": "x"}));
        assert_eq!(
            json_patch(&doc, &json!([{"op": "remove", "path": "/zz"}]))
                .unwrap_err()
                .status_code(),
            422
        );
        assert_eq!(
            json_patch(&doc, &json!([{"op": "nope", "path": "/a"}]))
                .unwrap_err()
                .status_code(),
            400
        );
        assert_eq!(json_patch(&doc, &json!({})).unwrap_err().status_code(), 400);
        assert_eq!(
            merge_patch(
                &json!({"a": {"b": 1, "c": 2}}),
                &json!({"a": {"b": null}, "d": [1]})
            ),
            json!({"a": {"c": 2}, "d": [1]})
        );
    }
}
