//! A recording's node ports, made this run's. hashicorp's run took them on its own cluster, and
//! two replays of one recording at once (`hashicorp_moves` beside `hashicorp_corpus_states`)
//! would ask this cluster for the same ports: the second is refused, "provided port is already
//! allocated". A port the configuration fixes becomes a free port of this cluster, in the
//! configuration, the objects and the state alike; a port the server allocated is left out of
//! the objects, and the state takes the one this cluster allocates ([`live_ports`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::Cluster;

/// The range a kube-apiserver allocates node ports from by default.
const RANGE: std::ops::RangeInclusive<i64> = 30000..=32767;

/// The range's static band (its lowest 86 ports, for a range of 2,768): the server allocates
/// from it only when the rest is taken, so configurations fix ports there (the corpus's
/// NodePort Service), and a recording's port is moved out of it.
const STATIC_BAND: std::ops::RangeInclusive<i64> = 30000..=30085;

/// Each node-port field: the configuration's attribute and the Service's field.
const FIELDS: [(&str, &str); 2] = [
    ("node_port", "nodePort"),
    ("health_check_node_port", "healthCheckNodePort"),
];

/// Rewrites a recording for this run: `body`'s fixed node ports moved to free ports of
/// `cluster` (in `objects` and `state` too), and every other node port of `objects` dropped.
pub fn rehome(cluster: &Cluster, body: &mut String, objects: &mut [Value], state: &mut Value) {
    let fixed = fixed_ports(body);
    let moved = if fixed.is_empty() {
        BTreeMap::new()
    } else {
        // Nor the recorded ports: the corpus's own configurations claim them.
        free_ports(&(&used_ports(cluster) | &fixed), &fixed)
    };
    *body = rewrite_body(body, &moved);
    for object in objects.iter_mut().filter(|o| o["kind"] == "Service") {
        let spec = &mut object["spec"];
        for port in spec["ports"].as_array_mut().into_iter().flatten() {
            retarget(port, "nodePort", &moved);
        }
        retarget(spec, "healthCheckNodePort", &moved);
    }
    rewrite_state(state, &moved);
}

/// `field` of `holder` moved where `moved` says, or dropped for the server to allocate.
fn retarget(holder: &mut Value, field: &str, moved: &BTreeMap<i64, i64>) {
    let Some(map) = holder.as_object_mut() else { return };
    match map.get(field).and_then(Value::as_i64) {
        Some(port) if moved.contains_key(&port) => {
            map.insert(field.to_string(), Value::from(moved[&port]));
        }
        Some(_) => {
            map.remove(field);
        }
        None => {}
    }
}

/// The node ports `body` writes (`node_port = 30917`).
fn fixed_ports(body: &str) -> BTreeSet<i64> {
    body.lines().filter_map(port_line).map(|(_, port)| port).collect()
}

/// A line setting a node-port attribute: its attribute and port.
fn port_line(line: &str) -> Option<(&'static str, i64)> {
    let (name, value) = line.split_once('=')?;
    let (attribute, _) = FIELDS.iter().find(|(a, _)| name.trim() == *a)?;
    Some((attribute, value.trim().parse().ok()?))
}

fn rewrite_body(body: &str, moved: &BTreeMap<i64, i64>) -> String {
    let lines: Vec<String> = body
        .lines()
        .map(|line| match port_line(line) {
            Some((_, port)) if moved.contains_key(&port) => {
                let (name, _) = line.split_once('=').expect("a port line");
                format!("{name}= {}", moved[&port])
            }
            _ => line.to_string(),
        })
        .collect();
    lines.join("\n") + if body.ends_with('\n') { "\n" } else { "" }
}

/// Every node-port attribute of `state` with a moved port, moved.
fn rewrite_state(value: &mut Value, moved: &BTreeMap<i64, i64>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let is_port = FIELDS.iter().any(|(a, _)| a == key);
                match value.as_i64() {
                    Some(port) if is_port && moved.contains_key(&port) => *value = Value::from(moved[&port]),
                    _ => rewrite_state(value, moved),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_state(v, moved)),
        _ => {}
    }
}

/// The node ports this cluster's Services hold.
fn used_ports(cluster: &Cluster) -> BTreeSet<i64> {
    let out = cluster.kubectl_ok(&["get", "services", "--all-namespaces", "-o", "json"]);
    let list: Value = serde_json::from_str(&out.stdout).expect("a Service list");
    let mut used = BTreeSet::new();
    for spec in list["items"].as_array().into_iter().flatten().map(|s| &s["spec"]) {
        let ports = spec["ports"].as_array().into_iter().flatten();
        used.extend(ports.filter_map(|p| p["nodePort"].as_i64()));
        used.extend(spec["healthCheckNodePort"].as_i64());
    }
    used
}

/// A free port for each of `wanted`, none in `used` nor in the static band, from a start that
/// differs run by run (so runs beside each other rarely reach for the same one).
fn free_ports(used: &BTreeSet<i64>, wanted: &BTreeSet<i64>) -> BTreeMap<i64, i64> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let span = RANGE.end() - RANGE.start() + 1;
    let seed = ((nanos / 1000) as i64 + i64::from(std::process::id()) * 7919).rem_euclid(span);
    let mut free = (0..span)
        .map(|i| RANGE.start() + (seed + i * 101).rem_euclid(span))
        .filter(|p| !used.contains(p) && !STATIC_BAND.contains(p));
    wanted
        .iter()
        .map(|&port| (port, free.next().expect("a free node port")))
        .collect()
}

/// `attributes` of a Service instance given `live`'s node ports wherever the state holds one
/// (an allocated port differs cluster by cluster, as a uid does).
pub fn live_ports(attributes: &mut Value, live: &Value) {
    let Some(spec) = attributes.get_mut("spec").and_then(|s| s.get_mut(0)) else {
        return;
    };
    let live_ports = live["spec"]["ports"].as_array().cloned().unwrap_or_default();
    let ports = spec.get_mut("port").and_then(Value::as_array_mut);
    for (port, live) in ports.into_iter().flatten().zip(&live_ports) {
        copy_allocated(port, "node_port", &live["nodePort"]);
    }
    copy_allocated(
        spec,
        "health_check_node_port",
        &live["spec"]["healthCheckNodePort"],
    );
}

fn copy_allocated(holder: &mut Value, attribute: &str, live: &Value) {
    if holder[attribute].as_i64().is_some_and(|p| p != 0) && live.is_i64() {
        holder[attribute] = live.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fixed_port_moves_everywhere_and_an_allocated_one_is_left_to_the_server() {
        let moved = BTreeMap::from([(30917, 31000)]);
        let body = "port {\n      node_port   = 30917\n      port = 8080\n}\n";
        assert_eq!(fixed_ports(body), BTreeSet::from([30917]));
        assert_eq!(
            rewrite_body(body, &moved),
            "port {\n      node_port   = 31000\n      port = 8080\n}\n"
        );
        let mut fixed = json!({"nodePort": 30917, "port": 8080});
        retarget(&mut fixed, "nodePort", &moved);
        assert_eq!(fixed, json!({"nodePort": 31000, "port": 8080}));
        let mut allocated = json!({"nodePort": 31653, "port": 443});
        retarget(&mut allocated, "nodePort", &moved);
        assert_eq!(allocated, json!({"port": 443}));
        let mut state = json!({"spec": [{"port": [{"node_port": 30917, "port": 30917}]}]});
        rewrite_state(&mut state, &moved);
        assert_eq!(
            state,
            json!({"spec": [{"port": [{"node_port": 31000, "port": 30917}]}]})
        );
    }

    #[test]
    fn free_ports_avoid_the_used_ones_and_each_other() {
        // Free: the static band, and every hundredth port above it.
        let used: BTreeSet<i64> = RANGE
            .clone()
            .filter(|p| !STATIC_BAND.contains(p) && p % 100 != 0)
            .collect();
        let ports = free_ports(&used, &BTreeSet::from([1, 2, 3]));
        let distinct: BTreeSet<i64> = ports.values().copied().collect();
        assert_eq!(distinct.len(), 3);
        assert!(distinct.iter().all(|p| RANGE.contains(p) && !used.contains(p)));
        assert!(
            distinct.iter().all(|p| p % 100 == 0),
            "none from the static band: {distinct:?}"
        );
    }

    #[test]
    fn the_state_takes_the_live_allocation_only_where_it_held_one() {
        let mut attributes = json!({"spec": [{"port": [{"node_port": 31653}, {"node_port": 0}], "health_check_node_port": 0}]});
        let live = json!({"spec": {"ports": [{"nodePort": 30001}, {}], "healthCheckNodePort": 30002}});
        live_ports(&mut attributes, &live);
        assert_eq!(
            attributes,
            json!({"spec": [{"port": [{"node_port": 30001}, {"node_port": 0}], "health_check_node_port": 0}]})
        );
    }
}
