//! The Service registry's allocators: cluster IPs from 10.96.0.0/16 and node ports (and health
//! check node ports) from 30000-32767, as the recorded apiserver was configured, each unique
//! among stored Services.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::resources;
use crate::status::ApiError;
use crate::store::Store;
use crate::validation::{self, FieldError};

const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;

/// Fills the addresses and ports a Service needs and lacks; `old` is the stored version on
/// update (its allocations carry over when the request leaves them out). A node port asked
/// for that another Service holds is the registry's 422, as on a real apiserver.
pub fn allocate(store: &Store, service: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    if let Some(old) = old {
        keep_node_ports(&old["spec"], &mut service["spec"]);
    }
    let mut used = used_node_ports(store, service);
    let taken: Vec<FieldError> = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p["nodePort"].as_i64().filter(|n| *n != 0)?)))
        .filter(|(_, n)| used.contains(n))
        .map(|(i, n)| {
            FieldError::invalid(
                format!("spec.ports[{i}].nodePort"),
                &json!(n),
                "provided port is already allocated",
            )
        })
        .collect();
    if !taken.is_empty() {
        let name = service["metadata"]["name"].as_str().unwrap_or_default();
        return Err(ApiError {
            code: 422,
            body: validation::invalid_status("Service", "", name, &taken),
        });
    }
    if needs_cluster_ip(service) {
        let ip = free_cluster_ip(store);
        service["spec"]["clusterIP"] = json!(ip);
        service["spec"]["clusterIPs"] = json!([ip]);
    }
    let spec = &mut service["spec"];
    let mut next = || {
        let seed = (uuid::Uuid::new_v4().as_u128() % 2768) as i64;
        let span = NODE_PORTS.end() - NODE_PORTS.start() + 1;
        let port = (0..span)
            .map(|i| NODE_PORTS.start() + (seed + i) % span)
            .find(|p| !used.contains(p))
            .unwrap_or(*NODE_PORTS.end());
        used.insert(port);
        port
    };
    if needs_node_ports(spec) {
        for port in spec["ports"].as_array_mut().into_iter().flatten() {
            if port["nodePort"].as_i64().is_none_or(|p| p == 0) {
                port["nodePort"] = json!(next());
            }
        }
    }
    if needs_health_check_port(spec) && spec["healthCheckNodePort"].as_i64().is_none_or(|p| p == 0) {
        spec["healthCheckNodePort"] = json!(next());
    }
    Ok(())
}

/// Whether a Service still needs a cluster IP allocated.
fn needs_cluster_ip(obj: &Value) -> bool {
    let spec = &obj["spec"];
    let kind_ok = matches!(
        spec["type"].as_str(),
        None | Some("ClusterIP" | "NodePort" | "LoadBalancer")
    );
    kind_ok && spec["clusterIP"].as_str().is_none_or(str::is_empty)
}

fn needs_node_ports(spec: &Value) -> bool {
    match spec["type"].as_str() {
        Some("NodePort") => true,
        Some("LoadBalancer") => spec["allocateLoadBalancerNodePorts"] != json!(false),
        _ => false,
    }
}

fn needs_health_check_port(spec: &Value) -> bool {
    spec["type"] == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local"
}

/// An update that leaves node ports out keeps the stored ones (matched by port name).
fn keep_node_ports(old: &Value, new: &mut Value) {
    if !needs_node_ports(old) || !needs_node_ports(new) {
        return;
    }
    let ports_of = |spec: &Value| -> HashSet<i64> {
        spec["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["nodePort"].as_i64())
            .collect()
    };
    let taken: HashSet<i64> = ports_of(old).intersection(&ports_of(new)).copied().collect();
    let old_ports = old["ports"].as_array().cloned().unwrap_or_default();
    for port in new["ports"].as_array_mut().into_iter().flatten() {
        if port["nodePort"].as_i64().is_none_or(|p| p == 0)
            && let Some(previous) = old_ports
                .iter()
                .find(|o| o["name"].as_str().unwrap_or("") == port["name"].as_str().unwrap_or(""))
                .and_then(|o| o["nodePort"].as_i64())
                .filter(|p| !taken.contains(p))
        {
            port["nodePort"] = json!(previous);
        }
    }
    if needs_health_check_port(old)
        && needs_health_check_port(new)
        && new["healthCheckNodePort"].as_i64().is_none_or(|p| p == 0)
    {
        new["healthCheckNodePort"] = old["healthCheckNodePort"].clone();
    }
}

/// The node ports Services other than `service` hold.
fn used_node_ports(store: &Store, service: &Value) -> HashSet<i64> {
    let mut used = HashSet::new();
    let same = |s: &Value| {
        s["metadata"]["namespace"] == service["metadata"]["namespace"]
            && s["metadata"]["name"] == service["metadata"]["name"]
    };
    for s in store.list(&resources::SERVICES.key(), None).filter(|s| !same(s)) {
        used.extend(
            s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["nodePort"].as_i64()),
        );
        used.extend(s["spec"]["healthCheckNodePort"].as_i64());
    }
    used
}

/// Picks a free cluster IP in 10.96.0.0/16 (10.96.0.1 is the `kubernetes` Service's).
fn free_cluster_ip(store: &Store) -> String {
    let used: HashSet<String> = store
        .list(&resources::SERVICES.key(), None)
        .filter_map(|s| s["spec"]["clusterIP"].as_str().map(str::to_string))
        .collect();
    let seed = uuid::Uuid::new_v4().as_u128();
    (0..65_534u32)
        .map(|i| {
            let n = ((seed as u32).wrapping_add(i) % 65_533) + 2;
            format!("10.96.{}.{}", n / 256, n % 256)
        })
        .find(|ip| !used.contains(ip) && !ip.ends_with(".0") && !ip.ends_with(".255"))
        .unwrap_or_else(|| "10.96.255.254".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ports_allocated_and_kept() {
        let store = Store::new();
        let mut lb = json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"name": "http", "port": 80}]}});
        allocate(&store, &mut lb, None).unwrap();
        let node_port = lb["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
        assert!(NODE_PORTS.contains(&node_port));
        assert!(NODE_PORTS.contains(&lb["spec"]["healthCheckNodePort"].as_i64().unwrap()));
        assert!(lb["spec"]["clusterIP"].as_str().unwrap().starts_with("10.96."));
        let mut update = json!({"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "clusterIP": lb["spec"]["clusterIP"], "ports": [{"name": "http", "port": 80}]}});
        allocate(&store, &mut update, Some(&lb)).unwrap();
        assert_eq!(update["spec"]["ports"][0]["nodePort"], node_port);
        assert_eq!(
            update["spec"]["healthCheckNodePort"],
            lb["spec"]["healthCheckNodePort"]
        );
    }

    #[test]
    fn a_node_port_another_service_holds_is_refused() {
        let mut store = Store::new();
        let service = |name: &str| {
            json!({"metadata": {"name": name, "namespace": "a"},
                   "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30917}]}})
        };
        let mut first = service("first");
        allocate(&store, &mut first, None).unwrap();
        store.put(&resources::SERVICES.key(), first.clone());
        // The Service itself may keep its port on update; another may not take it.
        allocate(&store, &mut first.clone(), Some(&first)).unwrap();
        let refused = allocate(&store, &mut service("second"), None).unwrap_err();
        assert_eq!(refused.code, 422);
        let message = refused.body["message"].as_str().unwrap_or_default();
        assert!(
            message
                .contains("spec.ports[0].nodePort: Invalid value: 30917: provided port is already allocated"),
            "{message}"
        );
    }
}
