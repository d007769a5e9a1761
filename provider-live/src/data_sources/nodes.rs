//! `kubernetes_nodes`: the cluster's Nodes, in one list request, optionally only those with
//! the labels `metadata.labels` names. Its catalog entry is the NodeList the request answers,
//! so each node is read through the catalog's field table like any data source's object.

use std::sync::Arc;

use async_trait::async_trait;
use kube::api::ListParams;
use plugin_runtime::{DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema, Value};
use serde_json::json;

use super::by_name::{block, filter_metadata};
use super::{diags, first, list};
use crate::catalog::Entry;
use crate::context::Context;
use crate::fields;
use crate::kind::api_resource;

/// Whether a data-source catalog entry is a list kind (`NodeList`) read with one request.
pub fn is_listed(entry: &Entry) -> bool {
    entry.info.kind.ends_with("List")
}

pub struct Nodes {
    name: &'static str,
    entry: &'static Entry,
    ctx: Arc<Context>,
}

impl Nodes {
    pub fn new(name: &'static str, entry: &'static Entry, ctx: Arc<Context>) -> Nodes {
        Nodes { name, entry, ctx }
    }
}

/// The label selector of `metadata.labels`: `key=value` pairs, in key order.
fn selector(config: &Value) -> String {
    first(config, "metadata")
        .get("labels")
        .entries()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
        .collect::<Vec<_>>()
        .join(",")
}

#[async_trait]
impl DataSource for Nodes {
    fn type_name(&self) -> &'static str {
        self.name
    }

    fn schema(&self) -> Schema {
        Schema::new(0, block(self.entry))
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let mut resource = api_resource(&self.entry.info);
        // The request names the kind of the items, not of the list.
        resource.kind = resource.kind.trim_end_matches("List").to_string();
        let selector = selector(&req.config);
        let params = ListParams::default().labels(&selector);
        let items = list(&conn.client, &resource, None, &params)
            .await
            .map_err(diags)?;
        let mut state = fields::read_full(self.entry.fields(), &json!({ "items": items }));
        if let Some(Value::List(nodes)) = state.get_mut("nodes") {
            for node in nodes {
                if let Some(metadata) = node.get_mut("metadata") {
                    filter_metadata(metadata);
                }
            }
        }
        state.set("metadata", req.config.get("metadata").clone());
        let id = if selector.is_empty() {
            "nodes".to_string()
        } else {
            selector
        };
        state.set("id", Value::string(id));
        Ok(ReadDataResponse {
            state,
            diagnostics: Diagnostics::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;

    use super::*;
    use crate::catalog;

    #[test]
    fn nodes_are_the_lists_items_and_labels_select_them() {
        let entry = catalog::data_entries()
            .iter()
            .find(|e| e.info.type_name == "kubernetes_nodes")
            .expect("kubernetes_nodes");
        assert!(is_listed(entry));
        let live: Json = json!({"items": [{
            "metadata": {"name": "n1", "labels": {"zone": "a"}},
            "spec": {"podCIDR": "10.0.0.0/24", "taints": [{"key": "k", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4"}, "nodeInfo": {"kubeletVersion": "v1.36.0"}}
        }]});
        let state = fields::read_full(entry.fields(), &live);
        let node = &state.get("nodes").elements()[0];
        assert_eq!(
            node.get("metadata").elements()[0].get("name"),
            &Value::string("n1")
        );
        let spec = &node.get("spec").elements()[0];
        assert_eq!(spec.get("pod_cidr"), &Value::string("10.0.0.0/24"));
        assert_eq!(
            spec.get("taints").elements()[0].get("effect"),
            &Value::string("NoSchedule")
        );
        let status = &node.get("status").elements()[0];
        assert_eq!(
            status.get("node_info").elements()[0].get("kubelet_version"),
            &Value::string("v1.36.0")
        );
        let config = Value::object([(
            "metadata",
            Value::List(vec![Value::object([(
                "labels",
                Value::string_map([("zone", "a"), ("arch", "amd64")]),
            )])]),
        )]);
        assert_eq!(selector(&config), "arch=amd64,zone=a");
        assert_eq!(selector(&Value::Null), "");
    }
}
