//! What the documentation covers: both providers' schemas, taken in-process from the provider
//! libraries (the same values the plugins answer `GetProviderSchema` with), so the docs cannot
//! describe anything but what the built providers serve.

use plugin_runtime::{Block, Provider, Schema};

use crate::mirror::NAMESPACE;

/// One provider: its provider block and the types it serves.
pub struct ProviderDoc {
    /// The provider type, e.g. `live` (source `choudoufu/live`).
    pub name: &'static str,
    pub schema: Schema,
    pub resources: Vec<TypeDoc>,
    pub data_sources: Vec<TypeDoc>,
}

/// One resource or data source type, under its own name or an alias.
pub struct TypeDoc {
    pub type_name: String,
    /// For an alias (`kubernetes_namespace_v1`), the type it is another name for.
    pub alias_of: Option<String>,
    pub schema: Schema,
}

/// Whether a page documents a resource or a data source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Resource,
    DataSource,
}

impl Kind {
    /// The folder of its pages under `docs/` and of its examples under `examples/`.
    pub fn folder(self) -> &'static str {
        match self {
            Kind::Resource => "resources",
            Kind::DataSource => "data-sources",
        }
    }

    /// The word the registry shows beside the type name.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Resource => "Resource",
            Kind::DataSource => "Data Source",
        }
    }
}

impl ProviderDoc {
    /// `choudoufu/<name>`.
    pub fn source(&self) -> String {
        format!("{NAMESPACE}/{}", self.name)
    }

    /// Resources then data sources, each with its kind.
    pub fn types(&self) -> impl Iterator<Item = (Kind, &TypeDoc)> {
        let resources = self.resources.iter().map(|t| (Kind::Resource, t));
        resources.chain(self.data_sources.iter().map(|t| (Kind::DataSource, t)))
    }
}

/// Both providers, in the order of [`crate::mirror::PROVIDER_TYPES`].
pub fn providers() -> Vec<ProviderDoc> {
    vec![
        describe("live", &provider_live::LiveProvider::default()),
        describe("records", &provider_records::RecordsProvider::default()),
    ]
}

fn describe(name: &'static str, provider: &dyn Provider) -> ProviderDoc {
    let mut resources = Vec::new();
    for resource in provider.resources() {
        let canonical = resource.type_name();
        resources.push(TypeDoc {
            type_name: canonical.to_string(),
            alias_of: None,
            schema: resource.schema(),
        });
        for alias in resource.aliases() {
            resources.push(TypeDoc {
                type_name: alias.to_string(),
                alias_of: Some(canonical.to_string()),
                schema: resource.schema(),
            });
        }
    }
    let data_sources = provider
        .data_sources()
        .iter()
        .map(|d| TypeDoc {
            type_name: d.type_name().to_string(),
            alias_of: None,
            schema: d.schema(),
        })
        .collect();
    resources.sort_by(|a, b| a.type_name.cmp(&b.type_name));
    ProviderDoc {
        name,
        schema: provider.schema(),
        resources,
        data_sources,
    }
}

/// Every attribute and block without a description, as `<provider> <type> <path>` (aliases
/// left out: they share their type's schema).
pub fn undescribed(providers: &[ProviderDoc]) -> Vec<String> {
    let mut out = Vec::new();
    for provider in providers {
        let mut walk = |owner: &str, block: &Block| {
            missing(
                block,
                &mut |path| out.push(format!("{} {owner}: {path}", provider.name)),
                "",
            )
        };
        walk("provider", &provider.schema.block);
        for (kind, doc) in provider.types().filter(|(_, t)| t.alias_of.is_none()) {
            walk(&format!("{} {}", kind.title(), doc.type_name), &doc.schema.block);
        }
    }
    out
}

fn missing(block: &Block, report: &mut dyn FnMut(String), prefix: &str) {
    for attribute in &block.attributes {
        if attribute.description.trim().is_empty() {
            report(format!("{prefix}{}", attribute.name));
        }
    }
    for nested in &block.blocks {
        let path = format!("{prefix}{}", nested.type_name);
        if nested.block.description.trim().is_empty() {
            report(format!("{path} (block)"));
        }
        missing(&nested.block, report, &format!("{path}."));
    }
}
