//! What the documentation covers: every published address's schemas and function signatures,
//! taken in-process from the provider libraries (the same values the plugins answer
//! `GetProviderSchema` and `GetFunctions` with), so the docs cannot describe anything but what
//! the built providers serve. A binary published under several addresses documents each of its
//! types under one of them (`owns`): `kubectl_*` under `choudoufu/kubectl`, the rest under
//! `choudoufu/live`.

use plugin_runtime::{Block, Provider, Schema, Signature};

use provider_mirror::{Address, NAMESPACE, PROVIDERS};

/// One provider address: its provider block and the types documented under it.
pub struct ProviderDoc {
    /// The provider type, e.g. `live` (source `choudoufu/live`).
    pub name: &'static str,
    pub schema: Schema,
    pub resources: Vec<TypeDoc>,
    pub data_sources: Vec<TypeDoc>,
    pub ephemeral_resources: Vec<TypeDoc>,
    /// List resources (`terraform query`, Terraform 1.14+): the schema is their `config` body's.
    pub list_resources: Vec<TypeDoc>,
    /// Actions (`action` blocks, Terraform 1.14+): the schema is their `config` body's.
    pub actions: Vec<TypeDoc>,
    pub functions: Vec<FunctionDoc>,
}

/// One provider-defined function.
pub struct FunctionDoc {
    /// The name the configuration calls it by, e.g. `manifest_decode`.
    pub name: String,
    pub signature: Signature,
}

/// One resource, data source or ephemeral resource type, under its own name or an alias.
pub struct TypeDoc {
    pub type_name: String,
    /// For an alias (`kubernetes_namespace_v1`), the type it is another name for.
    pub alias_of: Option<String>,
    pub schema: Schema,
}

/// Whether a page documents a resource, a data source, an ephemeral resource, a list
/// resource or an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Resource,
    DataSource,
    EphemeralResource,
    ListResource,
    Action,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Resource,
        Kind::DataSource,
        Kind::EphemeralResource,
        Kind::ListResource,
        Kind::Action,
    ];

    /// The folder of its pages under `docs/` and of its examples under `examples/`.
    pub fn folder(self) -> &'static str {
        match self {
            Kind::Resource => "resources",
            Kind::DataSource => "data-sources",
            Kind::EphemeralResource => "ephemeral-resources",
            Kind::ListResource => "list-resources",
            Kind::Action => "actions",
        }
    }

    /// The word the registry shows beside the type name.
    pub fn title(self) -> &'static str {
        match self {
            Kind::Resource => "Resource",
            Kind::DataSource => "Data Source",
            Kind::EphemeralResource => "Ephemeral Resource",
            Kind::ListResource => "List Resource",
            Kind::Action => "Action",
        }
    }

    /// The hand-written example's file name in its type's folder under `examples/` (a list
    /// resource's is a query file, which `terraform query` reads).
    pub fn example_file(self) -> &'static str {
        match self {
            Kind::Resource => "resource.tf",
            Kind::DataSource => "data-source.tf",
            Kind::EphemeralResource => "ephemeral-resource.tf",
            Kind::ListResource => "list-resource.tfquery.hcl",
            Kind::Action => "action.tf",
        }
    }
}

/// The folder of the functions' pages under `docs/` and of their examples under `examples/`.
pub const FUNCTIONS_FOLDER: &str = "functions";

/// The hand-written example's file name in a function's folder under `examples/`.
pub const FUNCTION_EXAMPLE: &str = "function.tf";

impl ProviderDoc {
    /// `choudoufu/<name>`.
    pub fn source(&self) -> String {
        format!("{NAMESPACE}/{}", self.name)
    }

    /// The types of one kind, sorted by name.
    pub fn of_kind(&self, kind: Kind) -> &[TypeDoc] {
        match kind {
            Kind::Resource => &self.resources,
            Kind::DataSource => &self.data_sources,
            Kind::EphemeralResource => &self.ephemeral_resources,
            Kind::ListResource => &self.list_resources,
            Kind::Action => &self.actions,
        }
    }

    /// Resources, data sources, ephemeral resources, list resources, then actions, each with
    /// its kind.
    pub fn types(&self) -> impl Iterator<Item = (Kind, &TypeDoc)> {
        Kind::ALL
            .into_iter()
            .flat_map(move |kind| self.of_kind(kind).iter().map(move |t| (kind, t)))
    }
}

/// Every published address, in the order of [`PROVIDERS`].
pub fn providers() -> Vec<ProviderDoc> {
    let described = PROVIDERS.iter().filter_map(|address| {
        let provider = library(address.binary)?;
        Some(describe(address, provider.as_ref()))
    });
    described.collect()
}

/// The provider library a binary is built from (every binary of [`PROVIDERS`] has one: the
/// unit test says so).
fn library(binary: &str) -> Option<Box<dyn Provider>> {
    match binary {
        "live" => Some(Box::new(provider_live::LiveProvider::default())),
        "records" => Some(Box::new(provider_records::RecordsProvider::default())),
        _ => None,
    }
}

/// Whether `name`, a type or function of `address`'s binary, is documented under `address`:
/// under the address of that binary whose local name starts it (`kubectl_manifest`:
/// `choudoufu/kubectl`), else under the one named as the binary (`kubernetes_...` and the
/// functions: `choudoufu/live`). The registry shows each page once, under one address.
fn owns(address: &Address, name: &str) -> bool {
    let siblings = || PROVIDERS.iter().filter(|a| a.binary == address.binary);
    let owner = siblings()
        .find(|a| name.starts_with(&format!("{}_", a.local_name)))
        .or_else(|| siblings().find(|a| a.type_name == a.binary));
    owner == Some(address)
}

fn describe(address: &Address, provider: &dyn Provider) -> ProviderDoc {
    let owned = |name: &str| owns(address, name);
    let mut resources = Vec::new();
    for resource in provider.resources().iter().filter(|r| owned(r.type_name())) {
        with_aliases(
            &mut resources,
            resource.type_name(),
            resource.aliases(),
            resource.schema(),
        );
    }
    let mut list_resources = Vec::new();
    for list in provider.list_resources().iter().filter(|l| owned(l.type_name())) {
        with_aliases(
            &mut list_resources,
            list.type_name(),
            list.aliases(),
            list.schema(),
        );
    }
    let unaliased = |type_name: &str, schema: Schema| TypeDoc {
        type_name: type_name.to_string(),
        alias_of: None,
        schema,
    };
    let mut data_sources: Vec<TypeDoc> = provider
        .data_sources()
        .iter()
        .filter(|d| owned(d.type_name()))
        .map(|d| unaliased(d.type_name(), d.schema()))
        .collect();
    let mut ephemeral_resources: Vec<TypeDoc> = provider
        .ephemeral_resources()
        .iter()
        .filter(|e| owned(e.type_name()))
        .map(|e| unaliased(e.type_name(), e.schema()))
        .collect();
    let mut actions: Vec<TypeDoc> = provider
        .actions()
        .iter()
        .filter(|a| owned(a.type_name()))
        .map(|a| unaliased(a.type_name(), a.schema()))
        .collect();
    let mut functions: Vec<FunctionDoc> = provider
        .functions()
        .iter()
        .filter(|f| owned(f.name()))
        .map(|f| FunctionDoc {
            name: f.name().to_string(),
            signature: f.signature(),
        })
        .collect();
    for types in [
        &mut resources,
        &mut data_sources,
        &mut ephemeral_resources,
        &mut list_resources,
        &mut actions,
    ] {
        types.sort_by(|a, b| a.type_name.cmp(&b.type_name));
    }
    functions.sort_by(|a, b| a.name.cmp(&b.name));
    ProviderDoc {
        name: address.type_name,
        schema: provider.schema(),
        resources,
        data_sources,
        ephemeral_resources,
        list_resources,
        actions,
        functions,
    }
}

/// A type and each of its aliases, which share its schema.
fn with_aliases(into: &mut Vec<TypeDoc>, canonical: &str, aliases: &[&str], schema: Schema) {
    for alias in aliases {
        into.push(TypeDoc {
            type_name: alias.to_string(),
            alias_of: Some(canonical.to_string()),
            schema: schema.clone(),
        });
    }
    into.push(TypeDoc {
        type_name: canonical.to_string(),
        alias_of: None,
        schema,
    });
}

/// Every attribute, block, function and function parameter without a description, as
/// `<provider> <type> <path>` (aliases left out: they share their type's schema).
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
        for function in &provider.functions {
            let signature = &function.signature;
            let owner = format!("{} function {}", provider.name, function.name);
            if signature.summary.trim().is_empty() {
                out.push(format!("{owner}: summary"));
            }
            if signature.description.trim().is_empty() {
                out.push(format!("{owner}: description"));
            }
            for parameter in signature.parameters.iter().chain(&signature.variadic) {
                if parameter.description.trim().is_empty() {
                    out.push(format!("{owner}: parameter {}", parameter.name));
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_address_has_its_library() {
        for address in PROVIDERS {
            assert!(library(address.binary).is_some(), "{address:?}");
        }
    }

    /// Each name under exactly one address of its binary: the kubectl providers' types under
    /// `choudoufu/kubectl`, hashicorp's and the functions under `choudoufu/live`.
    #[test]
    fn each_type_is_documented_under_one_address() {
        let owner = |binary: &str, name: &str| -> Vec<&str> {
            let of_binary = PROVIDERS.iter().filter(|a| a.binary == binary);
            of_binary.filter(|a| owns(a, name)).map(|a| a.type_name).collect()
        };
        for (binary, name, address) in [
            ("live", "kubectl_manifest", "kubectl"),
            ("live", "kubernetes_config_map_v1", "live"),
            ("live", "manifest_decode", "live"),
            ("records", "records_outputs", "records"),
            ("records", "terraform_estate_outputs", "records"),
        ] {
            assert_eq!(owner(binary, name), [address], "{name}");
        }
    }
}
