//! SMD's merge of an applied configuration into the live object, and the removal of fields an
//! applier dropped.

use serde_json::{Map, Value};

use super::field_set::{Element, Path, Schema, held_twice, keyed_items, named};
use crate::schema::ListType;

/// SMD's merge of an applied configuration into the live object: maps merge, associative
/// lists merge item by item, everything else is replaced.
pub(super) fn merge(live: Option<&Value>, config: &Value, names: &[String], schema: &Schema) -> Value {
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
pub(super) fn merge_item(live: Option<&Value>, config: &Value, names: &[String], schema: &Schema) -> Value {
    if schema.atomic_items(names) {
        config.clone()
    } else {
        merge(live, config, names, schema)
    }
}

/// SMD's ordering of a merged associative list: items only in the live list keep their place,
/// applied items (shared or new) come in the order of the configuration. A key the live list
/// holds twice and the configuration sets becomes the configuration's one item, where the
/// first was (v1.36).
pub(super) fn merge_items(live: &[Value], config: &[Value], names: &[String], schema: &Schema) -> Vec<Value> {
    let list = schema.list_type(names);
    let rhs = keyed_items(schema, names, list, config);
    let in_rhs = |e: &Element| rhs.iter().any(|(x, _)| x == e);
    let all_lhs = keyed_items(schema, names, list, live);
    let collapsed: Vec<&Element> = rhs
        .iter()
        .map(|(e, _)| e)
        .filter(|e| held_twice(&all_lhs, e))
        .collect();
    let mut lhs: Vec<(Element, &Value)> = Vec::with_capacity(all_lhs.len());
    for (e, v) in &all_lhs {
        if !(collapsed.contains(&e) && lhs.iter().any(|(x, _)| x == e)) {
            lhs.push((e.clone(), *v));
        }
    }
    let find_lhs = |e: &Element| {
        lhs.iter()
            .find(|(x, _)| x == e && !collapsed.contains(&x))
            .map(|(_, v)| *v)
    };
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
                out.push(merge_item(find_lhs(pe).and(Some(*lv)), rhs[ri].1, names, schema));
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
pub(super) fn remove_path(value: &mut Value, path: &[Element], names: &[String], schema: &Schema) -> bool {
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
            let is_e = |i: &Value| schema.item_element(names, list, i).as_ref() == Some(e);
            let Some(pos) = items.iter().position(is_e) else {
                return false;
            };
            if rest.is_empty() {
                // Every item of the key: a list may hold one twice.
                items.retain(|i| !is_e(i));
                return true;
            }
            remove_path(&mut items[pos], rest, names, schema)
        }
        _ => false,
    }
}

/// Whether `path` is a key field of an associative-list item (`k:{"port":81,..}.f:port`):
/// such a field stays while its item stays, since without it the item is no longer keyed.
pub(super) fn is_item_key(path: &Path) -> bool {
    match path.as_slice() {
        [.., Element::Key(key), Element::Field(field)] => {
            serde_json::from_str::<Map<String, Value>>(key).is_ok_and(|k| k.contains_key(field))
        }
        _ => false,
    }
}
