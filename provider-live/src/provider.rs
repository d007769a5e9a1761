//! The provider: its block (kube-estate's connection settings and estate, plus
//! `ignore_labels` / `ignore_annotations`, `namespace_from_context` and the kubectl providers'
//! `apply_retry_count`), its configuration, and the resources it serves. The same block serves
//! both addresses of this binary, `choudoufu/live` and `choudoufu/kubectl`.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    Action, Attribute, AttributePath, DataSource, Diagnostic, Diagnostics, EphemeralResource, Function,
    ListResource, Provider, Resource, Schema, Type, Value,
};
use regex::Regex;

use crate::actions;
use crate::context::{Context, DEFAULT_APPLY_RETRY_COUNT, NAMESPACE_FROM_CONTEXT};
use crate::data_sources;
use crate::ephemeral;
use crate::functions;
use crate::kinds;
use crate::kubectl;
use crate::list;
use crate::manifest::Manifest;
use crate::metadata::Ignore;
use crate::patch;
use kube_estate::Stop;

const DESCRIPTION: &str = "Kubernetes resources compatible with hashicorp/kubernetes, every object \
    label-stamped `tofu-estate=<estate>`: objects of this estate are adopted after a lost state, \
    objects of another estate are never touched, and a plan is refused at apply when the live \
    object moved since.";

/// The kubectl providers' attribute: how many times a failed `kubectl_manifest` apply is tried
/// again.
const APPLY_RETRY_COUNT: &str = "apply_retry_count";
/// Its environment variable, which overrides the block's value when set, as in the kubectl
/// providers (not a mere fallback).
const APPLY_RETRY_COUNT_ENV: &str = "KUBECTL_PROVIDER_APPLY_RETRY_COUNT";

/// An `apply_retry_count` that is not a whole number of 0 or more.
#[derive(Debug, thiserror::Error)]
enum RetryCountError {
    #[error("apply_retry_count is {0}, which is not a whole number of 0 or more")]
    Block(String),
    #[error(
        "environment variable {APPLY_RETRY_COUNT_ENV} is {0:?}, which is not a whole number of 0 or \
         more (when set, it overrides apply_retry_count)"
    )]
    Env(String),
}

impl From<RetryCountError> for Diagnostic {
    fn from(err: RetryCountError) -> Diagnostic {
        let diagnostic = Diagnostic::error("Invalid apply_retry_count", err.to_string());
        match err {
            RetryCountError::Block(_) => diagnostic.at(AttributePath::root(APPLY_RETRY_COUNT)),
            RetryCountError::Env(_) => diagnostic,
        }
    }
}

/// The block's `apply_retry_count`; `None` when unset or not known yet.
fn block_retry_count(config: &Value) -> Option<Result<u32, RetryCountError>> {
    let Value::Number(n) = config.get(APPLY_RETRY_COUNT) else {
        return None;
    };
    let count = n.as_i64().and_then(|i| u32::try_from(i).ok());
    Some(count.ok_or_else(|| RetryCountError::Block(n.to_string())))
}

/// `apply_retry_count` as configure resolves it: the environment variable when set (non-empty),
/// else the block's value, else [`DEFAULT_APPLY_RETRY_COUNT`].
fn apply_retry_count(config: &Value, env: &dyn Fn(&str) -> Option<String>) -> Result<u32, RetryCountError> {
    if let Some(text) = env(APPLY_RETRY_COUNT_ENV).filter(|v| !v.is_empty()) {
        return text.parse().map_err(|_| RetryCountError::Env(text));
    }
    block_retry_count(config).unwrap_or(Ok(DEFAULT_APPLY_RETRY_COUNT))
}

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
            ))
            .attribute(Attribute::optional(
                APPLY_RETRY_COUNT,
                Type::Number,
                "How many more times `kubectl_manifest` tries an apply that failed: a whole number, \
                 0 or more (default 1; 0 tries once only). The environment variable \
                 `KUBECTL_PROVIDER_APPLY_RETRY_COUNT`, when set, overrides it. From the kubectl \
                 providers.",
            ));
        Schema::new(0, block)
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        let mut out = kube_estate::validate(config);
        if let Err(errors) = ignore_rules(config) {
            out.extend(errors);
        }
        if let Some(Err(e)) = block_retry_count(config) {
            out.push(e.into());
        }
        out
    }

    async fn configure(&self, config: &Value) -> Diagnostics {
        let mut out = self.validate_config(config);
        if out.has_errors() {
            return out;
        }
        let ignore = ignore_rules(config).unwrap_or_default();
        let retries = match apply_retry_count(config, &|var| std::env::var(var).ok()) {
            Ok(retries) => retries,
            Err(e) => {
                out.push(e.into());
                return out;
            }
        };
        if let Err(e) = self.ctx.configure(config, ignore, retries).await {
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
        all.extend(kubectl::resources(&self.ctx));
        all
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource>> {
        let mut all = data_sources::all(&self.ctx);
        all.extend(kubectl::data_sources(&self.ctx));
        all
    }

    fn functions(&self) -> Vec<Arc<dyn Function>> {
        functions::all()
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource>> {
        let mut all = ephemeral::all(&self.ctx);
        all.extend(kubectl::ephemeral_resources(&self.ctx));
        all
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

    /// Every attribute of the kubectl providers' blocks, with their types (reference/
    /// kubectl-providers.md section 2): the same block serves `choudoufu/kubectl`.
    #[test]
    fn schema_takes_every_kubectl_provider_attribute() {
        let schema = LiveProvider::default().schema();
        let Type::Object(fields) = schema.block.value_type() else {
            panic!("not an object")
        };
        let string = Type::String;
        for (name, ty) in [
            ("apply_retry_count", Type::Number),
            ("host", string.clone()),
            ("username", string.clone()),
            ("password", string.clone()),
            ("insecure", Type::Bool),
            ("client_certificate", string.clone()),
            ("client_key", string.clone()),
            ("cluster_ca_certificate", string.clone()),
            ("config_path", string.clone()),
            ("config_paths", Type::list(Type::String)),
            ("config_context", string.clone()),
            ("config_context_auth_info", string.clone()),
            ("config_context_cluster", string.clone()),
            ("token", string.clone()),
            ("proxy_url", string.clone()),
            ("tls_server_name", string.clone()),
            ("load_config_file", Type::Bool),
            ("lazy_load", Type::Bool),
        ] {
            assert_eq!(fields.get(name), Some(&ty), "{name}");
            let attribute = schema.block.find_attribute(name).expect("an attribute");
            assert!(attribute.optional, "{name} is optional");
        }
        let exec = schema.block.find_block("exec").expect("the exec block");
        for (name, required) in [
            ("api_version", true),
            ("command", true),
            ("args", false),
            ("env", false),
        ] {
            let attribute = exec.block.find_attribute(name).expect("an exec attribute");
            assert_eq!(attribute.required, required, "exec.{name}");
        }
        let retry = schema
            .block
            .find_attribute(APPLY_RETRY_COUNT)
            .expect("apply_retry_count");
        assert!(retry.description.contains("From the kubectl providers."));
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn apply_retry_count_defaults_to_one_and_the_environment_overrides_the_block() {
        let unset = Value::object([("estate", Value::string("app"))]);
        assert_eq!(apply_retry_count(&unset, &env_of(&[])).unwrap(), 1);
        let two = Value::object([(APPLY_RETRY_COUNT, Value::int(2))]);
        assert_eq!(apply_retry_count(&two, &env_of(&[])).unwrap(), 2);
        let env = env_of(&[("KUBECTL_PROVIDER_APPLY_RETRY_COUNT", "5")]);
        assert_eq!(
            apply_retry_count(&two, &env).unwrap(),
            5,
            "the variable overrides"
        );
        assert_eq!(apply_retry_count(&unset, &env).unwrap(), 5);
        let empty = env_of(&[("KUBECTL_PROVIDER_APPLY_RETRY_COUNT", "")]);
        assert_eq!(
            apply_retry_count(&two, &empty).unwrap(),
            2,
            "empty counts as unset"
        );
        let zero = Value::object([(APPLY_RETRY_COUNT, Value::int(0))]);
        assert_eq!(apply_retry_count(&zero, &env_of(&[])).unwrap(), 0);
    }

    /// A negative or fractional block value fails validate at the attribute; a bad environment
    /// value fails configure naming the variable.
    #[tokio::test]
    async fn a_bad_apply_retry_count_is_an_error_naming_the_attribute_or_the_variable() {
        let provider = LiveProvider::default();
        for bad in [Value::int(-1), Value::Number(plugin_runtime::Number::Float(1.5))] {
            let config = Value::object([("estate", Value::string("app")), (APPLY_RETRY_COUNT, bad)]);
            let diags = provider.validate_config(&config);
            assert_eq!(diags.0.len(), 1, "{diags:?}");
            let d = &diags.0[0];
            assert_eq!(d.attribute.as_ref().unwrap().to_string(), APPLY_RETRY_COUNT);
            assert_eq!(d.summary, "Invalid apply_retry_count");
        }
        assert!(
            provider
                .validate_config(&Value::object([(APPLY_RETRY_COUNT, Value::unknown())]))
                .is_empty()
        );
        for text in ["-1", "two", "1.5"] {
            let err = apply_retry_count(&Value::object([("x", Value::Null)]), &|_: &str| {
                Some(text.to_string())
            })
            .unwrap_err();
            let d = Diagnostic::from(err);
            assert!(d.attribute.is_none(), "{d:?}");
            assert!(
                d.detail.contains("KUBECTL_PROVIDER_APPLY_RETRY_COUNT"),
                "{}",
                d.detail
            );
            assert!(d.detail.contains(&format!("{text:?}")), "{}", d.detail);
        }
    }

    #[test]
    fn apply_retry_count_is_one_until_configured() {
        assert_eq!(Context::default().apply_retry_count(), DEFAULT_APPLY_RETRY_COUNT);
    }
}
