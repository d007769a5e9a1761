//! Every data source of the data-source catalog that reads one object by name
//! (`kubernetes_config_map_v1`, `kubernetes_pod`, `kubernetes_secret` ...): the schema is the
//! catalog's field table, the state is the live object read through it in full. Labels and
//! annotations are all the object's but the estate label: hashicorp's data sources apply
//! neither `ignore_labels` nor `ignore_annotations` and keep the keys Kubernetes writes
//! (`flattenMetadataFields`). A Secret's values are sensitive, and its `binary_data`
//! holds the keys the configuration names there, base64-encoded and left out of `data`, as
//! hashicorp's does.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, AttributePath, Block, DataSource, Diagnostics, ReadDataRequest, ReadDataResponse, Schema,
    Type, Value,
};

use super::{DataSourceReadError, diags, first, get};
use crate::catalog::Entry;
use crate::context::Context;
use crate::facts;
use crate::fields;
use crate::kind::api_resource;
use kube_estate::ESTATE_LABEL;

/// The data sources for which a missing object is an error. Every other one answers with its
/// own arguments and nothing else, as hashicorp's do (configurations test for an empty result;
/// kubernetes/data_source_kubernetes_*.go, e.g. config_map_v1.go:60), while its persistent
/// volume fails (persistent_volume_v1.go:162).
const MISSING_IS_AN_ERROR: [&str; 1] = ["kubernetes_persistent_volume_v1"];

/// The attributes of a Secret data source that hold its values.
const SECRET_VALUES: [&str; 2] = ["data", "binary_data"];

pub struct ByName {
    name: &'static str,
    entry: &'static Entry,
    ctx: Arc<Context>,
}

impl ByName {
    pub fn new(name: &'static str, entry: &'static Entry, ctx: Arc<Context>) -> ByName {
        ByName { name, entry, ctx }
    }
}

fn is_secret(entry: &Entry) -> bool {
    entry.info.kind == "Secret"
}

/// The schema block of a catalog data source: its field table and `id`.
pub(super) fn block(entry: &Entry) -> Block {
    let mut block = fields::block(entry.fields(), entry.info.description);
    let doc = "The object's id: `<namespace>/<name>`, or the name of a cluster-scoped object.";
    block.attributes.push(if entry.id_optional {
        Attribute::optional_computed("id", Type::String, doc)
    } else {
        Attribute::computed("id", Type::String, doc)
    });
    if is_secret(entry) {
        for attribute in &mut block.attributes {
            attribute.sensitive |= SECRET_VALUES.contains(&attribute.name.as_str());
        }
    }
    block
}

/// A label map without the estate's label.
fn without_estate(map: &Value) -> Value {
    match map.entries() {
        Some(entries) => Value::Map(
            entries
                .iter()
                .filter(|(k, _)| k.as_str() != ESTATE_LABEL)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// Drops the estate label of a `metadata` block value read in full; a kind with no generation
/// (a Namespace, a Secret) reads 0, as hashicorp's state has it.
pub(super) fn filter_metadata(metadata: &mut Value) {
    if let Value::List(items) = metadata {
        for item in items {
            let labels = without_estate(item.get("labels"));
            item.set("labels", labels);
            if item.get("generation").is_null()
                && item.entries().is_some_and(|m| m.contains_key("generation"))
            {
                item.set("generation", Value::int(0));
            }
        }
    }
}

/// hashicorp's Secret data source: the keys `binary_data` names come base64-encoded there and
/// are left out of `data`; with none named, `binary_data` stays null.
fn split_binary(value: &mut Value, config: &Value) {
    let named: Vec<String> = config
        .get("binary_data")
        .entries()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let pick = |map: &Value, keep: bool| match map.entries() {
        Some(entries) => Value::Map(
            entries
                .iter()
                .filter(|(k, _)| named.contains(k) == keep)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    };
    let binary = if config.get("binary_data").is_null() {
        Value::Null
    } else {
        pick(value.get("binary_data"), true)
    };
    let data = pick(value.get("data"), false);
    value.set("binary_data", binary);
    value.set("data", data);
}

#[async_trait]
impl DataSource for ByName {
    fn type_name(&self) -> &'static str {
        self.name
    }

    fn schema(&self) -> Schema {
        Schema::new(0, block(self.entry))
    }

    async fn read(&self, req: ReadDataRequest) -> Result<ReadDataResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diags)?;
        let meta = first(&req.config, "metadata");
        let info = &self.entry.info;
        let Some(name) = meta.get("name").as_str() else {
            let path = AttributePath::root("metadata").index(0).attribute("name");
            let why = "The data source reads one object by its name.";
            return Err(diags(DataSourceReadError::Required { path, why }));
        };
        let namespace = info.namespaced.then(|| {
            meta.get("namespace")
                .as_str()
                .or(self.ctx.default_namespace())
                .unwrap_or_default()
        });
        let resource = api_resource(info);
        let live = match get(&conn.client, self.name, &resource, namespace, name).await {
            Ok(live) => live,
            // What the configuration names, and nothing more.
            Err(DataSourceReadError::Missing { .. }) if !MISSING_IS_AN_ERROR.contains(&self.name) => {
                serde_json::json!({"metadata": {"name": name, "namespace": namespace}})
            }
            Err(e) => return Err(diags(e)),
        };
        let mut state = fields::read_full(self.entry.fields(), &live);
        if facts::is_sdk_v2(self.name) {
            facts::read_absent_as(self.name, &mut state);
            facts::read_empty_absent(self.name, &mut state);
            facts::sdk_read_zeros(&block(self.entry), &mut state);
        }
        if let Some(metadata) = state.get_mut("metadata") {
            filter_metadata(metadata);
        }
        if is_secret(self.entry) {
            split_binary(&mut state, &req.config);
        }
        let id = match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
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
    use serde_json::json;

    use super::*;
    use crate::catalog;

    fn entry(name: &str) -> &'static Entry {
        catalog::data_entries()
            .iter()
            .find(|e| e.info.type_name == name || e.info.aliases.contains(&name))
            .unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn a_secret_reads_decoded_values_and_the_named_binary_keys_encoded() {
        let secret = entry("kubernetes_secret");
        let live = json!({
            "metadata": {"name": "s", "namespace": "ns", "labels": {"tofu-estate": "e", "app": "x", "kubernetes.io/metadata.name": "s"}},
            "type": "Opaque",
            "data": {"user": "YWRtaW4=", "blob": "AAEC"}
        });
        let mut state = fields::read_full(secret.fields(), &live);
        filter_metadata(state.get_mut("metadata").unwrap());
        let config = Value::object([("binary_data", Value::string_map([("blob", "")]))]);
        split_binary(&mut state, &config);
        assert_eq!(state.get("data"), &Value::string_map([("user", "admin")]));
        assert_eq!(state.get("binary_data"), &Value::string_map([("blob", "AAEC")]));
        assert_eq!(state.get("type"), &Value::string("Opaque"));
        let meta = &state.get("metadata").elements()[0];
        // All the object's labels but the estate's, as hashicorp's data sources show them.
        assert_eq!(
            meta.get("labels"),
            &Value::string_map([("app", "x"), ("kubernetes.io/metadata.name", "s")])
        );
        let schema = block(secret);
        assert!(schema.find_attribute("data").unwrap().sensitive);
        assert!(schema.find_attribute("binary_data").unwrap().sensitive);
        assert!(!schema.find_attribute("type").unwrap().sensitive);
    }

    #[test]
    fn a_service_reads_the_servers_defaults_as_computed_objects() {
        let service = entry("kubernetes_service_v1");
        let live = json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"type": "ClusterIP", "sessionAffinity": "None", "clusterIP": "10.0.0.1",
                     "ports": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}]}
        });
        let state = fields::read_full(service.fields(), &live);
        let spec = &state.get("spec").elements()[0];
        assert_eq!(spec.get("session_affinity"), &Value::string("None"));
        assert_eq!(
            spec.get("port").elements()[0].get("target_port"),
            &Value::string("8080")
        );
        let schema = block(service);
        let spec = schema.find_attribute("spec").expect("spec is an attribute");
        assert!(spec.computed && !spec.optional);
        assert!(schema.find_block("metadata").is_some());
    }
}
