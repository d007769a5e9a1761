//! The provider: its block (kube-estate's connection settings and estate, plus
//! `ignore_labels` / `ignore_annotations`), its configuration, and the resources it serves.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    Action, Attribute, AttributePath, DataSource, Diagnostic, Diagnostics, EphemeralResource, Function,
    ListResource, Provider, Resource, Schema, Type, Value,
};
use regex::Regex;

use crate::actions;
use crate::context::{Context, NAMESPACE_FROM_CONTEXT};
use crate::data_sources;
use crate::ephemeral;
use crate::functions;
use crate::kinds;
use crate::list;
use crate::manifest::Manifest;
use crate::metadata::Ignore;
use crate::patch;
use crate::stop::Stop;

const DESCRIPTION: &str = "Kubernetes resources compatible with hashicorp/kubernetes, every object \
    label-stamped `tofu-estate=<estate>`: objects of this estate are adopted after a lost state, \
    objects of another estate are never touched, and a plan is refused at apply when the live \
    object moved since.";

pub struct LiveProvider {
    ctx: Arc<Context>,
}

impl Default for LiveProvider {
    fn default() -> Self {
        LiveProvider {
            ctx: Arc::new(Context::default()),
        }
    }
}

/// The `ignore_labels` / `ignore_annotations` regexes, or errors at the bad entries.
fn ignore_rules(config: &Value) -> Result<Ignore, Diagnostics> {
    let mut errors = Diagnostics::new();
    let mut compile = |attribute: &str| -> Vec<Regex> {
        let mut out = Vec::new();
        for (i, item) in config.get(attribute).elements().iter().enumerate() {
            let Some(text) = item.as_str() else { continue };
            match Regex::new(text) {
                Ok(r) => out.push(r),
                Err(e) => errors.push(
                    Diagnostic::error("Invalid regular expression", format!("{text:?}: {e}"))
                        .at(AttributePath::root(attribute).index(i as i64)),
                ),
            }
        }
        out
    };
    let ignore = Ignore {
        labels: compile("ignore_labels"),
        annotations: compile("ignore_annotations"),
    };
    if errors.has_errors() {
        Err(errors)
    } else {
        Ok(ignore)
    }
}

#[async_trait]
impl Provider for LiveProvider {
    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn schema(&self) -> Schema {
        let block = kube_estate::provider_block(DESCRIPTION)
            .attribute(Attribute::optional(
                "ignore_labels",
                Type::list(Type::String),
                "Regular expressions: labels whose keys match are never shown nor compared by resources \
                 (data sources show every label, as hashicorp's do).",
            ))
            .attribute(Attribute::optional(
                "ignore_annotations",
                Type::list(Type::String),
                "Regular expressions: annotations whose keys match are never shown nor compared by \
                 resources (data sources show every annotation, as hashicorp's do).",
            ))
            .attribute(Attribute::optional(
                NAMESPACE_FROM_CONTEXT,
                Type::Bool,
                "Opt-in: a namespaced object whose configuration leaves `metadata.namespace` out goes \
                 to the namespace of the kubeconfig context, as kubectl's do, and the plan shows which. \
                 Off by default: such an object goes to `default`, as with hashicorp/kubernetes. \
                 Beyond hashicorp/kubernetes 3.4.0.",
            ));
        Schema::new(0, block)
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        let mut out = kube_estate::validate(config);
        if let Err(errors) = ignore_rules(config) {
            out.extend(errors);
        }
        out
    }

    async fn configure(&self, config: &Value) -> Diagnostics {
        let mut out = self.validate_config(config);
        if out.has_errors() {
            return out;
        }
        let ignore = ignore_rules(config).unwrap_or_default();
        if let Err(e) = self.ctx.configure(config, ignore).await {
            out.push(e.into());
        }
        out
    }

    async fn stop(&self) {
        Stop::process().request();
    }

    fn resources(&self) -> Vec<Arc<dyn Resource>> {
        let mut all = kinds::resources(&self.ctx);
        all.push(Arc::new(Manifest::new(self.ctx.clone())));
        all.extend(patch::resources(&self.ctx));
        all
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        data_sources::all(&self.ctx)
    }

    fn functions(&self) -> Vec<Arc<dyn Function>> {
        functions::all()
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        ephemeral::all(&self.ctx)
    }

    /// Terraform 1.14+ only (`terraform query`); engines without list resources never ask.
    fn list_resources(&self) -> Vec<Arc<dyn ListResource>> {
        let mut targets = kinds::listable(&self.ctx);
        targets.push(Arc::new(Manifest::new(self.ctx.clone())));
        list::all(targets, &self.ctx)
    }

    /// Terraform 1.14+ only (`action` blocks); engines without actions never ask.
    fn actions(&self) -> Vec<Arc<dyn Action>> {
        actions::all(&self.ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_ignore_regex_is_reported_at_its_index() {
        let config = Value::object([(
            "ignore_labels",
            Value::List(vec![Value::string("^ok$"), Value::string("(unclosed")]),
        )]);
        let err = ignore_rules(&config).unwrap_err();
        assert_eq!(
            err.0[0].attribute.as_ref().unwrap().to_string(),
            "ignore_labels[1]"
        );
    }

    #[test]
    fn bad_estate_is_reported_at_its_attribute() {
        let config = Value::object([("estate", Value::string("Not An Estate"))]);
        let diags = LiveProvider::default().validate_config(&config);
        let paths: Vec<String> = diags
            .0
            .iter()
            .filter_map(|d| d.attribute.as_ref().map(|p| p.to_string()))
            .collect();
        assert!(paths.contains(&"estate".to_string()), "{diags:?}");
    }

    #[test]
    fn schema_adds_ignore_lists_to_the_connection_block() {
        let schema = LiveProvider::default().schema();
        assert!(schema.block.find_attribute("estate").is_some());
        assert!(schema.block.find_attribute("ignore_annotations").is_some());
    }
}
