//! Zero values a write leaves out and the live object spells out.
//!
//! hashicorp's SDK sends every attribute of a list item, `""` and `false` included (a DNS
//! option's `value = ""`); this provider leaves zero values out. Within an atomic list (a Pod's
//! `dnsConfig.options`) server-side apply replaces the whole list, so an item without the `""`
//! the live item has is a change: a Pod refuses it as an update of an immutable field, and a
//! Deployment's template rolls its Pods for nothing. Before an update, an item of the body that
//! equals a live item once their zero values are set aside is sent as the live item.

use serde_json::Value as Json;

/// `body` with each list item that means the same as an item of `live` at the same place
/// written as that live item; `None` when no item needed it.
pub fn aligned(body: &Json, live: Option<&Json>) -> Option<Json> {
    let live = live?;
    let mut out = body.clone();
    align(&mut out, live).then_some(out)
}

/// Aligns `body` in place; whether anything changed.
fn align(body: &mut Json, live: &Json) -> bool {
    match (body, live) {
        (Json::Object(b), Json::Object(l)) => {
            let mut changed = false;
            for (key, value) in b.iter_mut() {
                if let Some(lv) = l.get(key) {
                    changed |= align(value, lv);
                }
            }
            changed
        }
        (Json::Array(b), Json::Array(l)) => {
            let mut changed = false;
            for (i, item) in b.iter_mut().enumerate() {
                if l.contains(item) {
                    continue;
                }
                if let Some(same) = l.iter().find(|li| same_but_zeros(item, li)) {
                    *item = same.clone();
                    changed = true;
                } else if let Some(partner) = partner(item, l, i) {
                    changed |= align(item, partner);
                }
            }
            changed
        }
        _ => false,
    }
}

/// The live item `item` stands for: the one of the same name, else the one at its index.
fn partner<'a>(item: &Json, live: &'a [Json], index: usize) -> Option<&'a Json> {
    match item.get("name") {
        Some(name) => live.iter().find(|l| l.get("name") == Some(name)),
        None => live.get(index),
    }
}

/// Whether `body` and `live` are equal but for fields one of them leaves out and the other
/// holds at a zero value.
fn same_but_zeros(body: &Json, live: &Json) -> bool {
    match (body, live) {
        (Json::Object(b), Json::Object(l)) => {
            let covered = b.iter().all(|(k, v)| match l.get(k) {
                Some(lv) => same_but_zeros(v, lv),
                None => is_zero(v),
            });
            covered && l.iter().all(|(k, v)| b.contains_key(k) || is_zero(v))
        }
        (Json::Array(b), Json::Array(l)) => {
            b.len() == l.len() && b.iter().zip(l).all(|(x, y)| same_but_zeros(x, y))
        }
        (b, l) => b == l,
    }
}

/// Go's zero value as JSON spells it.
fn is_zero(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(n) => n.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty(),
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_option_without_the_empty_value_hashicorp_wrote_is_sent_as_written() {
        let body =
            json!({"spec": {"dnsConfig": {"options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}}});
        let live = json!({"spec": {"dnsConfig": {"options": [
            {"name": "ndots", "value": "2"}, {"name": "edns0", "value": ""}
        ]}}});
        let sent = aligned(&body, Some(&live)).expect("aligned");
        assert_eq!(sent, live);
    }

    #[test]
    fn nested_items_align_through_their_named_parent() {
        let body = json!({"spec": {"containers": [{"name": "app", "image": "b",
            "ports": [{"containerPort": 80}]}]}});
        let live = json!({"spec": {"containers": [{"name": "app", "image": "a",
            "terminationMessagePath": "/dev/termination-log",
            "ports": [{"containerPort": 80, "protocol": "TCP", "hostIP": ""}]}]}});
        assert!(
            aligned(&body, Some(&live)).is_none(),
            "a server default is no zero value: the port stays as written"
        );
        let body = json!({"spec": {"containers": [{"name": "app", "image": "b",
            "env": [{"name": "A"}]}]}});
        let live = json!({"spec": {"containers": [{"name": "app", "image": "a",
            "env": [{"name": "A", "value": ""}]}]}});
        let sent = aligned(&body, Some(&live)).expect("aligned");
        assert_eq!(sent["spec"]["containers"][0]["image"], "b", "the change stays");
        assert_eq!(
            sent["spec"]["containers"][0]["env"],
            json!([{"name": "A", "value": ""}])
        );
    }

    #[test]
    fn a_real_difference_or_a_create_is_left_alone() {
        let body = json!({"spec": {"options": [{"name": "edns0", "value": "1"}]}});
        let live = json!({"spec": {"options": [{"name": "edns0", "value": ""}]}});
        assert!(aligned(&body, Some(&live)).is_none());
        assert!(aligned(&body, None).is_none());
        let same = json!({"spec": {"options": [{"name": "edns0", "value": "1"}]}});
        assert!(aligned(&same, Some(&same)).is_none());
    }
}
