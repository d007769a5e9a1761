//! Server-side apply and `managedFields` bookkeeping (FieldsV1), after structured-merge-diff.
//!
//! Field sets are sets of paths (`f:` fields, `k:` associative-list keys, `v:` set values).
//! An apply owns exactly the fields of its configuration; an update owns the fields it added or
//! changed compared with the previous object. For a create the "previous object" is the zero
//! Go struct of the kind, which is why `f:labels` carries `"."` but `f:spec` does not.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The result of a successful apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ApplyOutcome {
    /// The new object, defaulted, with `metadata.managedFields` updated.
    pub object: Value,
    /// False for a no-op apply: the server keeps the stored object and its resourceVersion.
    pub changed: bool,
}

/// An apply that would overwrite fields other managers own (HTTP 409).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyConflict {
    /// `(field, manager)`, e.g. `(".data.a", "tofu-live")`, sorted by manager then field.
    pub causes: Vec<(String, String)>,
    /// How the apiserver names each cause's manager (`"scaler" using apps/v1` for updates).
    described: Vec<String>,
}

impl ApplyConflict {
    /// The `Status.message`, e.g. `Apply failed with 1 conflict: conflict with "x": .data.a`.
    pub fn message(&self) -> String {
        let n = self.causes.len();
        if n == 1 {
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                self.described[0], self.causes[0].0
            );
        }
        let mut lines = Vec::new();
        for (i, (field, _)) in self.causes.iter().enumerate() {
            if i == 0 || self.described[i] != self.described[i - 1] {
                lines.push(format!("conflicts with {}:", self.described[i]));
            }
            lines.push(format!("- {field}"));
        }
        format!("Apply failed with {n} conflicts: {}", lines.join("\n"))
    }

    /// The 409 `Status` body (12-server-side-apply step 3).
    pub fn status(&self) -> Value {
        let causes: Vec<Value> = self
            .causes
            .iter()
            .zip(&self.described)
            .map(|((field, _), who)| {
                json!({"reason": "FieldManagerConflict", "message": format!("conflict with {who}"), "field": field})
            })
            .collect();
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.message(), "reason": "Conflict", "details": {"causes": causes}, "code": 409
        })
    }
}

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Element {
    /// A struct field or map key (`f:name`).
    Field(String),
    /// An associative-list item, by its key fields as compact JSON (`k:{"name":"web"}`).
    Key(String),
    /// A set-list item, by its JSON value (`v:"kubernetes"`).
    Value(String),
    /// A list index (`i:0`), only read from foreign managedFields.
    Index(usize),
}

type Path = Vec<Element>;
type FieldSet = BTreeSet<Path>;

use crate::schema::{self, ListType};

/// Which lists are associative and which maps atomic, from the kind's OpenAPI schema. Kinds
/// without one (none of the served kinds) get atomic lists and granular maps, as SMD deduces.
/// `names` are the field names from the root, list items skipped.
struct Schema {
    root: Option<schema::Type>,
}

impl Schema {
    fn for_object(obj: &Value) -> Self {
        Schema {
            root: schema::of_object(obj),
        }
    }

    fn at(&self, names: &[String]) -> Option<schema::Type> {
        self.root?.at(names)
    }

    fn list_type(&self, names: &[String]) -> ListType {
        self.at(names).map_or(ListType::Atomic, |t| t.list_type())
    }

    fn atomic_map(&self, names: &[String]) -> bool {
        self.at(names).is_some_and(|t| t.is_atomic())
    }

    /// Whether the items of the list at `names` are atomic structs (`k:` entries without
    /// fields, replaced as a whole by an apply).
    fn atomic_items(&self, names: &[String]) -> bool {
        self.at(names)
            .and_then(|t| t.items())
            .is_some_and(|t| t.is_atomic())
    }

    /// The path element of a list item, or None when it lacks its key fields.
    fn item_element(&self, names: &[String], list: ListType, item: &Value) -> Option<Element> {
        match list {
            ListType::Set => Some(Element::Value(item.to_string())),
            ListType::Map(keys) => {
                let item_type = self.at(names).and_then(|t| t.items());
                let mut key = Map::new();
                let mut sorted = keys.to_vec();
                sorted.sort();
                for k in sorted {
                    // A key field with a schema default (ports' protocol) counts when omitted.
                    let default = || item_type.and_then(|t| t.field(&k)).and_then(|t| t.default());
                    let Some(v) = item.get(&k).or_else(default) else {
                        continue;
                    };
                    key.insert(k, v.clone());
                }
                (!key.is_empty()).then(|| Element::Key(Value::Object(key).to_string()))
            }
            ListType::Atomic => None,
        }
    }
}

fn child(path: &Path, e: Element) -> Path {
    let mut p = path.clone();
    p.push(e);
    p
}

fn named(names: &[String], name: &str) -> Vec<String> {
    let mut n = names.to_vec();
    n.push(name.to_string());
    n
}

/// The items of a keyed list with their path elements (items without keys are skipped).
fn keyed_items<'v>(
    schema: &Schema,
    names: &[String],
    list: ListType,
    items: &'v [Value],
) -> Vec<(Element, &'v Value)> {
    items
        .iter()
        .filter_map(|i| schema.item_element(names, list, i).map(|e| (e, i)))
        .collect()
}

/// SMD's `ToFieldSet`: the leaves, list items, empty maps and atomics of a configuration.
fn to_set(value: &Value, path: &Path, names: &[String], schema: &Schema, out: &mut FieldSet) {
    let Value::Object(map) = value else { return };
    for (k, v) in map {
        let p = child(path, Element::Field(k.clone()));
        let n = named(names, k);
        match v {
            Value::Object(m) if !m.is_empty() && !schema.atomic_map(&n) => to_set(v, &p, &n, schema, out),
            Value::Array(items) => match schema.list_type(&n) {
                ListType::Atomic => {
                    out.insert(p);
                }
                list => {
                    for (e, item) in keyed_items(schema, &n, list, items) {
                        let ip = child(&p, e);
                        if !schema.atomic_items(&n) {
                            to_set(item, &ip, &n, schema, out);
                        }
                        out.insert(ip);
                    }
                }
            },
            _ => {
                out.insert(p);
            }
        }
    }
}

/// What changed between two objects.
#[derive(Default)]
struct Diff {
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
}

/// SMD's `Compare`. `None` is an absent field, `Some(Null)` a present null (which, unlike an
/// absent one, does not make the container "added").
fn compare(
    old: Option<&Value>,
    new: Option<&Value>,
    path: &Path,
    names: &[String],
    schema: &Schema,
    diff: &mut Diff,
) {
    let shape = match (old, new) {
        (None, None) => return,
        (Some(Value::Null) | None, Some(v)) | (Some(v), Some(Value::Null) | None) => v,
        (Some(o), Some(_)) => o,
    };
    let as_map = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let as_list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let container = match shape {
        Value::Object(_) if !schema.atomic_map(names) => {
            let (o, n) = (as_map(old), as_map(new));
            let same_shape = old.is_none_or(|v| v.is_object() || v.is_null())
                && new.is_none_or(|v| v.is_object() || v.is_null());
            if same_shape {
                let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
                for k in keys {
                    let p = child(path, Element::Field(k.clone()));
                    compare(o.get(k), n.get(k), &p, &named(names, k), schema, diff);
                }
            }
            same_shape
        }
        Value::Array(_) if schema.list_type(names) != ListType::Atomic => {
            let list = schema.list_type(names);
            let same_shape = old.is_none_or(|v| v.is_array() || v.is_null())
                && new.is_none_or(|v| v.is_array() || v.is_null());
            if same_shape {
                let (o, n) = (as_list(old), as_list(new));
                let (o, n) = (
                    keyed_items(schema, names, list, &o),
                    keyed_items(schema, names, list, &n),
                );
                let keys: BTreeSet<&Element> = o.iter().chain(n.iter()).map(|(e, _)| e).collect();
                for e in keys {
                    let find = |items: &[(Element, &Value)]| {
                        items.iter().find(|(x, _)| x == e).map(|(_, v)| (*v).clone())
                    };
                    let (oi, ni) = (find(&o), find(&n));
                    let item_path = child(path, e.clone());
                    if schema.atomic_items(names) {
                        match (&oi, &ni) {
                            (None, Some(_)) => diff.added.insert(item_path),
                            (Some(_), None) => diff.removed.insert(item_path),
                            (Some(a), Some(b)) if a != b => diff.modified.insert(item_path),
                            _ => false,
                        };
                        continue;
                    }
                    compare(oi.as_ref(), ni.as_ref(), &item_path, names, schema, diff);
                }
            }
            same_shape
        }
        _ => false,
    };
    if container {
        if !path.is_empty() {
            if old.is_none() {
                diff.added.insert(path.clone());
            } else if new.is_none() {
                diff.removed.insert(path.clone());
            }
        }
        return;
    }
    match (old, new) {
        (None, Some(_)) => diff.added.insert(path.clone()),
        (Some(_), None) => diff.removed.insert(path.clone()),
        (Some(o), Some(n)) if o != n => diff.modified.insert(path.clone()),
        _ => false,
    };
}

/// SMD's merge of an applied configuration into the live object: maps merge, associative
/// lists merge item by item, everything else is replaced.
fn merge(live: Option<&Value>, config: &Value, names: &[String], schema: &Schema) -> Value {
    match (live, config) {
        (Some(Value::Object(l)), Value::Object(c)) if !schema.atomic_map(names) => {
            let mut out = l.clone();
            for (k, v) in c {
                out.insert(k.clone(), merge(l.get(k), v, &named(names, k), schema));
            }
            Value::Object(out)
        }
        (Some(Value::Array(l)), Value::Array(c)) if schema.list_type(names) != ListType::Atomic => {
            Value::Array(merge_items(l, c, names, schema))
        }
        _ => config.clone(),
    }
}

/// One item of an associative list: atomic items are replaced, others merged.
fn merge_item(live: Option<&Value>, config: &Value, names: &[String], schema: &Schema) -> Value {
    if schema.atomic_items(names) {
        config.clone()
    } else {
        merge(live, config, names, schema)
    }
}

/// SMD's ordering of a merged associative list: items only in the live list keep their place,
/// applied items (shared or new) come in the order of the configuration.
fn merge_items(live: &[Value], config: &[Value], names: &[String], schema: &Schema) -> Vec<Value> {
    let list = schema.list_type(names);
    let lhs = keyed_items(schema, names, list, live);
    let rhs = keyed_items(schema, names, list, config);
    let in_rhs = |e: &Element| rhs.iter().any(|(x, _)| x == e);
    let find_lhs = |e: &Element| lhs.iter().find(|(x, _)| x == e).map(|(_, v)| *v);
    let mut shared = rhs.iter().map(|(e, _)| e).filter(|e| find_lhs(e).is_some());
    let mut next_shared = shared.next();
    let mut merged_rhs: Vec<&Element> = Vec::new();
    let mut out = Vec::with_capacity(lhs.len() + rhs.len());
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let (pe, lv) = &lhs[li];
            if *pe == rhs[ri].0 {
                merged_rhs.push(pe);
                out.push(merge_item(Some(lv), rhs[ri].1, names, schema));
                li += 1;
                ri += 1;
                next_shared = shared.next();
                continue;
            }
            // A shared item that the configuration wants later: emitted when its turn comes.
            if in_rhs(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let (pe, lv) = &lhs[li];
            if !in_rhs(pe) {
                out.push((*lv).clone());
                li += 1;
                continue;
            }
            if merged_rhs.contains(&pe) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let (pe, rv) = &rhs[ri];
            merged_rhs.push(pe);
            out.push(merge_item(find_lhs(pe), rv, names, schema));
            ri += 1;
            if next_shared == Some(pe) {
                next_shared = shared.next();
            }
        }
    }
    // Items without their key fields cannot be matched; keep them rather than lose data.
    let unkeyed = |items: &[Value]| {
        items
            .iter()
            .filter(|i| schema.item_element(names, list, i).is_none())
            .cloned()
            .collect::<Vec<_>>()
    };
    out.extend(unkeyed(live));
    out.extend(unkeyed(config));
    out
}

/// Removes `path` from `value`; true when something was removed. A map field the removal
/// leaves empty goes too, as the apiserver's typed round trip drops it (a Deployment's
/// `strategy.rollingUpdate` without its last field is no `rollingUpdate: {}` beside `Recreate`).
fn remove_path(value: &mut Value, path: &[Element], names: &[String], schema: &Schema) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    match (first, value) {
        (Element::Field(name), Value::Object(map)) => {
            if rest.is_empty() {
                return map.remove(name).is_some();
            }
            let removed = map
                .get_mut(name)
                .is_some_and(|v| remove_path(v, rest, &named(names, name), schema));
            if removed
                && map
                    .get(name)
                    .is_some_and(|v| v.as_object().is_some_and(Map::is_empty))
            {
                map.remove(name);
            }
            removed
        }
        (e @ (Element::Key(_) | Element::Value(_)), Value::Array(items)) => {
            let list = schema.list_type(names);
            let Some(pos) = items
                .iter()
                .position(|i| schema.item_element(names, list, i).as_ref() == Some(e))
            else {
                return false;
            };
            if rest.is_empty() {
                items.remove(pos);
                return true;
            }
            remove_path(&mut items[pos], rest, names, schema)
        }
        _ => false,
    }
}

/// Whether `path` is a key field of an associative-list item (`k:{"port":81,..}.f:port`):
/// such a field stays while its item stays, since without it the item is no longer keyed.
fn is_item_key(path: &Path) -> bool {
    match path.as_slice() {
        [.., Element::Key(key), Element::Field(field)] => {
            serde_json::from_str::<Map<String, Value>>(key).is_ok_and(|k| k.contains_key(field))
        }
        _ => false,
    }
}

/// Paths the field manager never tracks for this write.
fn ignored(path: &Path, kind: &str, subresource: Option<&str>, creating: bool) -> bool {
    let names: Vec<&str> = path
        .iter()
        .map(|e| match e {
            Element::Field(f) => f.as_str(),
            _ => "",
        })
        .collect();
    let top = names.first().copied().unwrap_or("");
    match subresource {
        // A status write may also change annotations (the Deployment controller's revision).
        Some("status") => return top != "status" && names.get(..2) != Some(&["metadata", "annotations"][..]),
        Some("scale") => return names.get(..2) != Some(&["spec", "replicas"][..]),
        _ => {}
    }
    if matches!(top, "apiVersion" | "kind" | "status") {
        return true;
    }
    if top == "metadata"
        && matches!(
            names.get(1).copied(),
            Some(
                "name"
                    | "namespace"
                    | "uid"
                    | "resourceVersion"
                    | "generation"
                    | "creationTimestamp"
                    | "managedFields"
                    | "selfLink"
                    | "deletionTimestamp"
                    | "deletionGracePeriodSeconds"
            )
        )
    {
        return true;
    }
    // Set by the registry after the field manager ran, so never owned by the creator.
    creating
        && match (kind, names.get(..2)) {
            ("Namespace", Some(["spec", "finalizers"])) => true,
            ("Service", Some(["spec", f])) => {
                matches!(*f, "clusterIP" | "clusterIPs" | "ipFamilies" | "ipFamilyPolicy")
            }
            _ => false,
        }
}

/// The zero value of the kind's Go struct as the apiserver serialises it: the baseline a
/// create is compared with.
fn zero_object(object: &Value) -> Value {
    let mut zero = schema::of_object(object).map_or_else(|| json!({}), |t| t.zero());
    zero["metadata"] = json!({});
    zero
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: Option<String>,
    subresource: Option<String>,
    set: FieldSet,
}

impl Entry {
    fn is(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.as_deref() == subresource
    }

    /// How conflict messages name this manager.
    fn describe(&self) -> String {
        let name = crate::validation::go_quote(&self.manager);
        if self.operation == "Update" {
            format!("{name} using {}", self.api_version)
        } else {
            name
        }
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), encode_set(&self.set));
        if let Some(s) = &self.subresource {
            m.insert("subresource".into(), json!(s));
        }
        Value::Object(m)
    }
}

fn decode_entries(object: Option<&Value>) -> Vec<Entry> {
    let Some(entries) = object
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            let mut set = FieldSet::new();
            decode_set(e.get("fieldsV1").unwrap_or(&Value::Null), &Vec::new(), &mut set);
            Entry {
                manager: s("manager").unwrap_or_default(),
                operation: s("operation").unwrap_or_default(),
                api_version: s("apiVersion").unwrap_or_default(),
                time: s("time"),
                subresource: s("subresource"),
                set,
            }
        })
        .collect()
}

fn decode_set(node: &Value, path: &Path, out: &mut FieldSet) {
    let Some(map) = node.as_object() else { return };
    for (k, v) in map {
        if k == "." {
            out.insert(path.clone());
            continue;
        }
        let element = if let Some(f) = k.strip_prefix("f:") {
            Element::Field(f.to_string())
        } else if let Some(key) = k.strip_prefix("k:") {
            // Re-serialise so key order and spacing match what this module produces.
            let parsed: Value = serde_json::from_str(key).unwrap_or(Value::Null);
            let mut sorted: Vec<(&String, &Value)> = parsed.as_object().into_iter().flatten().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let canonical: Map<String, Value> =
                sorted.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            Element::Key(Value::Object(canonical).to_string())
        } else if let Some(value) = k.strip_prefix("v:") {
            Element::Value(value.to_string())
        } else if let Some(index) = k.strip_prefix("i:").and_then(|i| i.parse().ok()) {
            Element::Index(index)
        } else {
            continue;
        };
        let p = child(path, element);
        if v.as_object().is_none_or(Map::is_empty) {
            out.insert(p);
        } else {
            decode_set(v, &p, out);
        }
    }
}

fn element_key(e: &Element) -> String {
    match e {
        Element::Field(f) => format!("f:{f}"),
        Element::Key(k) => format!("k:{k}"),
        Element::Value(v) => format!("v:{v}"),
        Element::Index(i) => format!("i:{i}"),
    }
}

/// The FieldsV1 tree: `"."` marks a member that also has children; children sorted.
fn encode_set(set: &FieldSet) -> Value {
    fn build(set: &FieldSet, prefix: &[Element]) -> Value {
        let mut children: Vec<&Element> = set
            .iter()
            .filter(|p| p.len() > prefix.len() && p.starts_with(prefix))
            .map(|p| &p[prefix.len()])
            .collect();
        children.dedup();
        let mut node = Map::new();
        if !prefix.is_empty() && !children.is_empty() && set.contains(prefix) {
            node.insert(".".into(), json!({}));
        }
        for c in children {
            let mut p = prefix.to_vec();
            p.push(c.clone());
            node.insert(element_key(c), build(set, &p));
        }
        Value::Object(node)
    }
    build(set, &[])
}

/// SMD's path string, e.g. `.spec.template.spec.containers[name="web"].image`.
fn path_string(path: &Path) -> String {
    path.iter()
        .map(|e| match e {
            Element::Field(f) => format!(".{f}"),
            Element::Key(k) => {
                let parsed: Value = serde_json::from_str(k).unwrap_or(Value::Null);
                let parts: Vec<String> = parsed
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            Element::Value(v) => format!("[={v}]"),
            Element::Index(i) => format!("[{i}]"),
        })
        .collect()
}

/// Sorted as the apiserver stores them: Apply before Update, then time, manager, subresource.
fn store_entries(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        (
            a.operation.as_str(),
            a.time.as_deref().unwrap_or(""),
            a.manager.as_str(),
            a.subresource.as_deref(),
        )
            .cmp(&(
                b.operation.as_str(),
                b.time.as_deref().unwrap_or(""),
                b.manager.as_str(),
                b.subresource.as_deref(),
            ))
    });
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.iter().map(Entry::to_json).collect()),
        );
    }
}

fn without_managed_fields(object: &Value) -> Value {
    let mut o = object.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    o
}

fn diff_of(old: &Value, new: &Value, schema: &Schema, keep: impl Fn(&Path) -> bool) -> Diff {
    let mut diff = Diff::default();
    compare(Some(old), Some(new), &Vec::new(), &[], schema, &mut diff);
    for set in [&mut diff.added, &mut diff.modified, &mut diff.removed] {
        set.retain(&keep);
    }
    diff
}

/// Server-side apply of `applied` by `manager` onto `live` (None = create).
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<ApplyOutcome, ApplyConflict> {
    let kind = applied
        .get("kind")
        .or_else(|| live.and_then(|l| l.get("kind")))
        .and_then(Value::as_str)
        .unwrap_or("");
    let schema = Schema {
        root: schema::of_object(applied).or_else(|| live.and_then(schema::of_object)),
    };
    let creating = live.is_none();
    let keep = |p: &Path| !ignored(p, kind, None, creating);
    // What the manager declares: the configuration minus what the server owns.
    let mut config = applied.clone();
    if let Some(c) = config.as_object_mut() {
        c.remove("status");
    }
    if let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.retain(|k, _| {
            !matches!(
                k.as_str(),
                "managedFields" | "resourceVersion" | "uid" | "creationTimestamp" | "generation"
            )
        });
    }
    let mut applied_set = FieldSet::new();
    to_set(&config, &Vec::new(), &[], &schema, &mut applied_set);
    applied_set.retain(keep);

    let base = live.map(without_managed_fields).unwrap_or_else(|| json!({}));
    let mut entries = decode_entries(live);
    let previous = entries.iter().position(|e| e.is(manager, "Apply", None));
    let last_applied = previous.map(|i| entries[i].set.clone()).unwrap_or_default();

    let mut merged = merge(Some(&base), &config, &[], &schema);
    // Fields this manager applied before and dropped now go, unless someone still owns them.
    let owned_elsewhere: FieldSet = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != previous)
        .flat_map(|(_, e)| e.set.iter().cloned())
        .chain(applied_set.iter().cloned())
        .collect();
    // Shallowest paths first (a set orders a path before its extensions): a dropped item goes
    // whole. Fields before their item would change the item's key and strand it half-removed.
    for path in last_applied.difference(&applied_set) {
        if !is_item_key(path) && !owned_elsewhere.iter().any(|o| o.starts_with(path)) {
            remove_path(&mut merged, path, &[], &schema);
        }
    }

    // Defaulted before comparing, so `0.1` against a stored `100m` is neither a change nor
    // a conflict, and a repeated apply is a no-op.
    crate::defaults::apply_defaults(kind, &mut merged);
    let diff = diff_of(&base, &merged, &schema, keep);
    let changed_fields: FieldSet = diff.added.union(&diff.modified).cloned().collect();
    // (how the apiserver names the manager, field, manager)
    let mut conflicts: Vec<(String, String, String)> = Vec::new();
    for (_, e) in entries.iter().enumerate().filter(|(i, _)| Some(*i) != previous) {
        for p in e.set.intersection(&changed_fields) {
            conflicts.push((e.describe(), path_string(p), e.manager.clone()));
        }
    }
    if !force && !conflicts.is_empty() {
        conflicts.sort();
        return Err(ApplyConflict {
            causes: conflicts.iter().map(|(_, p, m)| (p.clone(), m.clone())).collect(),
            described: conflicts.into_iter().map(|(d, ..)| d).collect(),
        });
    }
    // Forced: the others lose what this apply changed; removed fields leave every set.
    for (_, e) in entries
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| Some(*i) != previous)
    {
        e.set
            .retain(|p| !changed_fields.contains(p) && !diff.removed.contains(p));
    }

    let object_changed = merged != base;
    let time = match previous {
        Some(i) if !object_changed => entries[i].time.clone(),
        _ => Some(now.to_string()),
    };
    let api_version = merged
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let entry = Entry {
        manager: manager.to_string(),
        operation: "Apply".into(),
        api_version,
        time,
        subresource: None,
        set: applied_set,
    };
    match previous {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    store_entries(&mut merged, entries);
    let changed = match live {
        None => true,
        Some(l) => {
            object_changed
                || l.pointer("/metadata/managedFields") != merged.pointer("/metadata/managedFields")
        }
    };
    Ok(ApplyOutcome {
        object: merged,
        changed,
    })
}

/// Ownership bookkeeping for a non-apply write by `manager` (operation `Update`): the fields
/// added or changed since `old` (None = create) become the manager's, leave every other
/// manager's set, and removed fields leave all sets. `new` must already carry the server's
/// defaults; its `managedFields` are replaced.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: &str,
) {
    let kind = new.get("kind").and_then(Value::as_str).unwrap_or("").to_string();
    let schema = Schema::for_object(new);
    let creating = old.is_none();
    let base = old
        .map(without_managed_fields)
        .unwrap_or_else(|| zero_object(new));
    let diff = diff_of(&base, &without_managed_fields(new), &schema, |p| {
        !ignored(p, &kind, subresource, creating)
    });
    let changed: FieldSet = diff.added.union(&diff.modified).cloned().collect();
    let mut entries = decode_entries(old);
    // The apiserver's Scale view carries only the entries that own `spec.replicas`, and an
    // update of a view without managedFields is not tracked: a scale of replicas nobody owns
    // records no manager (kube-apiserver v1.36; one someone owns moves to the scaler).
    let replicas = vec![Element::Field("spec".into()), Element::Field("replicas".into())];
    if subresource == Some("scale") && !entries.iter().any(|e| e.set.contains(&replicas)) {
        store_entries(new, entries);
        return;
    }
    for e in &mut entries {
        e.set
            .retain(|p| !changed.contains(p) && !diff.removed.contains(p));
    }
    // The scale subresource writes its entry without a time (09-deployment step 9).
    let time = (subresource != Some("scale")).then(|| now.to_string());
    match entries.iter_mut().find(|e| e.is(manager, "Update", subresource)) {
        Some(e) => {
            if !changed.is_empty() {
                e.set.extend(changed);
                e.time = time;
            }
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            api_version: new
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            time,
            subresource: subresource.map(str::to_string),
            set: changed,
        }),
    }
    store_entries(new, entries);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectors::golden::{golden, query_param};

    /// The body a step sends, YAML or JSON, as JSON.
    fn body_of(step: &Value) -> Value {
        match &step["body"] {
            Value::String(yaml) => serde_yaml::from_str(yaml).unwrap(),
            other => other.clone(),
        }
    }

    fn time_of(step: &Value) -> String {
        step["response"]["body"]["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or("2026-12-02T10:43:26Z")
            .to_string()
    }

    /// Objects equal after blanking what storage owns (uid, resourceVersion, ...).
    fn assert_same(actual: &Value, expected: &Value, context: &str) {
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
                for key in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "namespace",
                    "generation",
                ] {
                    meta.remove(key);
                }
            }
            for key in ["clusterIP", "clusterIPs"] {
                if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.remove(key);
                }
            }
            v
        };
        assert_eq!(strip(actual), strip(expected), "{context}");
    }

    /// Replays every create/update/patch step of a transcript through defaults + record_update.
    fn replay_updates(file: &str, steps: &[usize]) {
        let doc = golden(file);
        let all = doc["steps"].as_array().unwrap();
        let mut stored: Vec<Value> = Vec::new();
        for &index in steps {
            let step = &all[index];
            let path = step["path"].as_str().unwrap();
            let manager = query_param(path, "fieldManager").unwrap_or_else(|| "golden-recorder".into());
            let expected = &step["response"]["body"];
            let name = expected["metadata"]["name"].as_str().unwrap();
            let kind = expected["kind"].as_str().unwrap().to_string();
            let old = stored
                .iter()
                .find(|o| o["metadata"]["name"] == name && o["kind"] == kind)
                .cloned();
            let content_type = step["headers"]["Content-Type"].as_str().unwrap_or("");
            let mut new = match (content_type, &old) {
                ("application/json-patch+json", Some(o)) => {
                    crate::patch::json_patch(o, &step["body"]).unwrap()
                }
                ("application/strategic-merge-patch+json", Some(o)) => {
                    crate::patch::strategic_merge_patch(o, &step["body"]).unwrap()
                }
                ("application/merge-patch+json", Some(o)) => crate::patch::merge_patch(o, &step["body"]),
                _ => step["body"].clone(),
            };
            let subresource = ["status", "scale"]
                .into_iter()
                .find(|s| path.split('?').next().unwrap().ends_with(s));
            if let (Some(o), Some("status")) = (&old, subresource) {
                let status = new["status"].clone();
                new = o.clone();
                new["status"] = status;
            }
            if let (Some(o), Some("scale")) = (&old, subresource) {
                let replicas = new["spec"]["replicas"].clone();
                new = o.clone();
                new["spec"]["replicas"] = replicas;
            }
            if let Some(o) = &old
                && subresource.is_none()
                && o.get("status").is_some()
            {
                new["status"] = o["status"].clone();
            }
            crate::defaults::apply_defaults(&kind, &mut new);
            new["apiVersion"] = json!(
                expected["apiVersion"]
                    .as_str()
                    .filter(|_| kind != "Scale")
                    .unwrap_or("apps/v1")
            );
            new["kind"] = json!(kind);
            for key in ["clusterIP", "clusterIPs"] {
                if let Some(ip) = old.as_ref().and_then(|o| o["spec"].get(key)) {
                    new["spec"][key] = ip.clone();
                }
            }
            let now = expected["metadata"]["managedFields"]
                .as_array()
                .and_then(|m| m.iter().filter_map(|e| e["time"].as_str()).max())
                .unwrap_or("2026-12-02T10:43:10Z")
                .to_string();
            record_update(old.as_ref(), &mut new, &manager, subresource, &now);
            if kind != "Scale" {
                assert_same(&new, expected, &format!("{file} step {index}"));
            }
            stored.retain(|o| !(o["metadata"]["name"] == name && o["kind"] == kind));
            stored.push(new);
        }
    }

    #[test]
    fn update_managed_fields_match_transcripts() {
        replay_updates("03-configmap.json", &[0, 1, 5, 8, 9, 11]);
        replay_updates("05-list.json", &[0, 1, 2, 3, 4, 5]);
        replay_updates("06-secret.json", &[1, 3, 5]);
        replay_updates("07-service.json", &[1, 2, 3, 4, 6]);
        replay_updates("08-serviceaccount.json", &[1, 3]);
        replay_updates("10-hpa.json", &[1, 2, 4, 5]);
        replay_updates("11-networkpolicy.json", &[1, 2, 3]);
        replay_updates("14-rbac.json", &[2, 5, 6, 7]);
        replay_updates("15-lease.json", &[1, 3]);
        replay_updates("02-namespace.json", &[0]);
        replay_updates("13-dry-run.json", &[1, 3, 4]);
        replay_updates("16-delete-options.json", &[1, 4, 7, 11]);
        replay_updates("17-watch.json", &[2, 3]);
    }

    #[test]
    fn deployment_status_and_scale_entries() {
        // 09: create, /status patch, PUT of the template, /scale PUT and PATCH (no time).
        let doc = golden("09-deployment.json");
        let s = |i: usize| doc["steps"][i].clone();
        let mut current = s(1)["body"].clone();
        crate::defaults::apply_defaults("Deployment", &mut current);
        record_update(None, &mut current, "tofu-live", None, "2026-12-02T10:43:07Z");
        assert_same(&current, &s(1)["response"]["body"], "create");
        let mut with_status = current.clone();
        with_status["status"] = s(3)["body"]["status"].clone();
        record_update(
            Some(&current),
            &mut with_status,
            "tofu-live",
            Some("status"),
            "2026-12-02T10:43:10Z",
        );
        assert_same(&with_status, &s(3)["response"]["body"], "status");
        let mut put = s(5)["body"].clone();
        put["status"] = with_status["status"].clone();
        crate::defaults::apply_defaults("Deployment", &mut put);
        record_update(
            Some(&with_status),
            &mut put,
            "tofu-live",
            None,
            "2026-12-02T10:43:10Z",
        );
        assert_same(&put, &s(5)["response"]["body"], "put");
        let mut scaled = put.clone();
        scaled["spec"]["replicas"] = json!(4);
        record_update(
            Some(&put),
            &mut scaled,
            "tofu-live",
            Some("scale"),
            "2026-12-02T10:43:10Z",
        );
        assert_same(&scaled, &s(9)["response"]["body"], "scale");
    }

    #[test]
    fn a_scale_of_replicas_nobody_owns_records_no_manager() {
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        let applied = apply(None, &config, "tofu-live", false, "2026-12-04T15:00:00Z")
            .unwrap()
            .object;
        let mut scaled = applied.clone();
        scaled["spec"]["replicas"] = json!(3);
        record_update(
            Some(&applied),
            &mut scaled,
            "tofu-live-scale",
            Some("scale"),
            "2026-12-04T15:00:01Z",
        );
        assert_eq!(
            scaled["metadata"]["managedFields"],
            applied["metadata"]["managedFields"]
        );
        assert_eq!(scaled["spec"]["replicas"], 3);
    }

    #[test]
    fn server_side_apply_transcript() {
        let doc = golden("12-server-side-apply.json");
        let s = |i: usize| doc["steps"][i].clone();
        let mut live: Option<Value> = None;
        for index in [1, 2, 3, 4, 5, 8] {
            let step = s(index);
            let path = step["path"].as_str().unwrap();
            let manager = query_param(path, "fieldManager").unwrap();
            let force = query_param(path, "force").is_some();
            let result = apply(live.as_ref(), &body_of(&step), &manager, force, &time_of(&step));
            let expected = &step["response"]["body"];
            match result {
                Err(conflict) => assert_eq!(&conflict.status(), expected, "step {index}"),
                Ok(outcome) => {
                    let mut object = outcome.object;
                    crate::defaults::apply_defaults("ConfigMap", &mut object);
                    assert_same(&object, expected, &format!("step {index}"));
                    assert_eq!(outcome.changed, index != 8, "step {index}");
                    if query_param(path, "dryRun").is_none() {
                        live = Some(object);
                    }
                }
            }
        }
        // Deployment: apply, another manager's update of replicas, re-apply without replicas.
        let mut deployment = apply(None, &body_of(&s(9)), "tofu-live", true, "2026-12-02T10:43:26Z")
            .unwrap()
            .object;
        crate::defaults::apply_defaults("Deployment", &mut deployment);
        assert_same(&deployment, &s(9)["response"]["body"], "step 9");
        let mut scaled = crate::patch::merge_patch(&deployment, &s(10)["body"]);
        record_update(
            Some(&deployment),
            &mut scaled,
            "scaler",
            None,
            "2026-12-02T10:43:26Z",
        );
        assert_same(&scaled, &s(10)["response"]["body"], "step 10");
        let outcome = apply(
            Some(&scaled),
            &body_of(&s(11)),
            "tofu-live",
            true,
            "2026-12-02T10:43:26Z",
        )
        .unwrap();
        assert!(outcome.changed);
        assert_same(&outcome.object, &s(11)["response"]["body"], "step 11");
    }

    #[test]
    fn service_apply_keys_ports_with_default_protocol() {
        let step = golden("07-service.json")["steps"][9].clone();
        let mut created = apply(None, &body_of(&step), "tofu-live", true, &time_of(&step))
            .unwrap()
            .object;
        crate::defaults::apply_defaults("Service", &mut created);
        assert_same(&created, &step["response"]["body"], "07 step 9");
    }

    /// Applies `config` by manager "tf" onto `live` and defaults the result, as the handler does.
    fn apply_defaulted(live: Option<&Value>, config: &Value) -> Value {
        let mut object = apply(live, config, "tf", false, "2026-01-01T00:00:00Z")
            .unwrap()
            .object;
        let kind = object["kind"].as_str().unwrap().to_string();
        crate::defaults::apply_defaults(&kind, &mut object);
        object
    }

    #[test]
    fn reapply_replaces_a_service_port_whose_key_changed() {
        let service = |port: u16| {
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {
                "selector": {"app": "s"},
                "ports": [{"name": "http", "port": port, "targetPort": 8080}]
            }})
        };
        let first = apply_defaulted(None, &service(81));
        let second = apply_defaulted(Some(&first), &service(82));
        assert_eq!(
            second["spec"]["ports"],
            json!([{"name": "http", "port": 82, "protocol": "TCP", "targetPort": 8080}])
        );
        let owned = &second["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]["f:ports"];
        assert_eq!(
            owned.as_object().unwrap().keys().collect::<Vec<_>>(),
            [r#"k:{"port":82,"protocol":"TCP"}"#]
        );
    }

    #[test]
    fn reapply_removes_dropped_items_and_keys_of_every_associative_list() {
        let deployment = |v2: bool| {
            let pick = |a: Value, b: Value| if v2 { a } else { b };
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "d", "labels": pick(json!({"x": "1"}), json!({"x": "1", "y": "2"}))},
                "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                    "metadata": {"labels": {"app": "d"}},
                    "spec": {
                        "containers": pick(
                            json!([{"name": "a", "image": "a:1",
                                "env": [{"name": "E1", "value": "1"}],
                                "ports": [{"containerPort": 81}],
                                "volumeMounts": [{"name": "v1", "mountPath": "/a"}]}]),
                            json!([{"name": "a", "image": "a:1",
                                "env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "2"}],
                                "ports": [{"containerPort": 80}],
                                "volumeMounts": [{"name": "v1", "mountPath": "/a"}, {"name": "v2", "mountPath": "/b"}]},
                                {"name": "b", "image": "b:1"}])),
                        "volumes": pick(
                            json!([{"name": "v1", "emptyDir": {}}]),
                            json!([{"name": "v1", "emptyDir": {}}, {"name": "v2", "emptyDir": {}}]))
                    }
                }}
            })
        };
        let first = apply_defaulted(None, &deployment(false));
        let second = apply_defaulted(Some(&first), &deployment(true));
        let pod = &second["spec"]["template"]["spec"];
        let containers = pod["containers"].as_array().unwrap();
        assert_eq!(containers.len(), 1, "{pod}");
        let c = &containers[0];
        assert_eq!(c["env"], json!([{"name": "E1", "value": "1"}]));
        assert_eq!(c["ports"], json!([{"containerPort": 81, "protocol": "TCP"}]));
        assert_eq!(c["volumeMounts"], json!([{"name": "v1", "mountPath": "/a"}]));
        assert_eq!(pod["volumes"].as_array().unwrap().len(), 1, "{pod}");
        assert_eq!(second["metadata"]["labels"], json!({"x": "1"}));
    }

    #[test]
    fn reapply_keeps_dropped_fields_another_manager_owns() {
        let config_map = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
        let first = apply_defaulted(None, &config_map(json!({"a": "1", "b": "2", "c": "3"})));
        // Another manager writes b (same value) with an update: it now shares b.
        let mut updated = first.clone();
        updated["data"]["b"] = json!("2");
        updated["data"]["d"] = json!("4");
        record_update(
            Some(&first),
            &mut updated,
            "kubectl",
            None,
            "2026-01-01T00:00:01Z",
        );
        let mut entries = decode_entries(Some(&updated));
        let other = entries.iter_mut().find(|e| e.manager == "kubectl").unwrap();
        other
            .set
            .insert(vec![Element::Field("data".into()), Element::Field("b".into())]);
        store_entries(&mut updated, entries);
        let second = apply_defaulted(Some(&updated), &config_map(json!({"a": "1"})));
        assert_eq!(second["data"], json!({"a": "1", "b": "2", "d": "4"}));
    }

    #[test]
    fn conflicts_with_update_managers_and_several_fields() {
        let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        let old = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        record_update(Some(&old), &mut live, "kubectl", None, "2026-01-01T00:00:00Z");
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x", "b": "y"}});
        let conflict = apply(Some(&live), &config, "tofu-live", false, "2026-01-01T00:00:01Z").unwrap_err();
        assert_eq!(
            conflict.causes,
            vec![
                (".data.a".into(), "kubectl".into()),
                (".data.b".into(), "kubectl".into())
            ]
        );
        assert_eq!(
            conflict.message(),
            "Apply failed with 2 conflicts: conflicts with \"kubectl\" using v1:\n- .data.a\n- .data.b"
        );
        // Same values: shared ownership, no conflict, nothing changes.
        let same =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let outcome = apply(Some(&live), &same, "tofu-live", false, "2026-01-01T00:00:01Z").unwrap();
        assert_eq!(outcome.object["data"], live["data"]);
        assert_eq!(
            outcome.object["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }

    /// Objects the server creates from a request without storing them keep the same rules:
    /// a SelfSubjectAccessReview (14 step 17) and a TokenRequest (08 step 4, subresource token).
    #[test]
    fn review_and_token_request_entries() {
        for (file, index, subresource) in [
            ("14-rbac.json", 17, None),
            ("08-serviceaccount.json", 4, Some("token")),
        ] {
            let step = golden(file)["steps"][index].clone();
            let expected = &step["response"]["body"];
            let mut object = expected.clone();
            object["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
            let now = expected["metadata"]["managedFields"][0]["time"].as_str().unwrap();
            record_update(None, &mut object, "golden-recorder", subresource, now);
            assert_eq!(&object, expected, "{file} step {index}");
        }
    }

    #[test]
    fn associative_lists_follow_the_configuration_order() {
        let schema = Schema {
            root: schema::of("apps/v1", "Deployment"),
        };
        let names: Vec<String> = ["spec", "template", "spec", "containers"]
            .map(String::from)
            .to_vec();
        let item = |n: &str| json!({"name": n, "image": format!("{n}:1")});
        let names_of = |v: Vec<Value>| {
            v.iter()
                .map(|i| i["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let live = [item("a"), item("x"), item("c")];
        let merged = merge_items(
            &live,
            &[json!({"name": "b"}), json!({"name": "a", "image": "a:2"})],
            &names,
            &schema,
        );
        assert_eq!(names_of(merged.clone()), ["b", "a", "x", "c"]);
        assert_eq!(merged[1]["image"], "a:2");
        let reordered = merge_items(
            &live,
            &[json!({"name": "c"}), json!({"name": "a"})],
            &names,
            &schema,
        );
        assert_eq!(names_of(reordered), ["x", "c", "a"]);
        assert_eq!(
            names_of(merge_items(&live, &[item("d")], &names, &schema)),
            ["a", "x", "c", "d"]
        );
    }

    #[test]
    fn reapplying_a_non_canonical_quantity_is_a_no_op() {
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
                {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "0.1"}}}
            ]}}
        }});
        let created = apply(None, &config, "tofu-live", false, "2026-01-01T00:00:00Z")
            .unwrap()
            .object;
        assert_eq!(
            created["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "100m"
        );
        let again = apply(
            Some(&created),
            &config,
            "tofu-live",
            false,
            "2026-01-01T00:00:05Z",
        )
        .unwrap();
        assert!(!again.changed);
        assert_eq!(again.object, created);
    }

    #[test]
    fn fields_v1_round_trip_and_paths() {
        let fields = golden("09-deployment.json")["steps"][1]["response"]["body"]["metadata"]["managedFields"][0]["fieldsV1"].clone();
        let mut set = FieldSet::new();
        decode_set(&fields, &Vec::new(), &mut set);
        assert_eq!(encode_set(&set), fields);
        let container = set
            .iter()
            .find(|p| p.len() == 6 && matches!(&p[5], Element::Field(f) if f == "image"))
            .unwrap();
        assert_eq!(
            path_string(container),
            ".spec.template.spec.containers[name=\"sidecar\"].image"
        );
        let finalizers: Path = vec![
            Element::Field("metadata".into()),
            Element::Field("finalizers".into()),
            Element::Value("\"x\"".into()),
        ];
        assert_eq!(path_string(&finalizers), ".metadata.finalizers[=\"x\"]");
    }
}
