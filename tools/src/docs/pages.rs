//! One page per resource, data source, ephemeral resource, list resource and action type and
//! per function, and the index: the generated reference between hand-written parts (the index
//! template, each type's or function's example, each resource's import commands).

use std::fmt::Write;
use std::fs;
use std::path::{Path, PathBuf};

use super::DocsError;
use super::catalog::{FUNCTION_EXAMPLE, FUNCTIONS_FOLDER, FunctionDoc, Kind, ProviderDoc, TypeDoc};
use super::reference::{self, Owner, one_line};
use plugin_runtime::Parameter;
use provider_mirror::VERSION;

/// Where the hand-written parts live, relative to the workspace root.
pub const INDEX_TEMPLATE: &str = "templates/index.md.tmpl";
pub const EXAMPLES: &str = "examples";

/// A generated page, its path relative to `docs/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub path: PathBuf,
    pub text: String,
}

/// The page of one type, e.g. `resources/kubernetes_namespace.md`.
pub fn type_page(root: &Path, provider: &ProviderDoc, kind: Kind, doc: &TypeDoc) -> Result<Page, DocsError> {
    // An alias shows its type's example and import under its own name.
    let canonical = doc.alias_of.as_deref().unwrap_or(&doc.type_name);
    let rename = |text: String| rename_type(&text, canonical, &doc.type_name);
    let written = match kind {
        Kind::Resource => resource_example(root, canonical)?,
        Kind::DataSource | Kind::EphemeralResource | Kind::Action => {
            read_part(root, kind.folder(), canonical, kind.example_file())?
        }
        Kind::ListResource => list_example(root, provider, doc)?,
    };
    let example = rename(written.clone());
    let mut description = doc.schema.block.description.clone();
    if kind == Kind::ListResource {
        let _ = write!(
            description,
            "\n\nA `list` block in a `.tfquery.hcl` file, read by `terraform query` (Terraform 1.14 \
             and later; OpenTofu has no list resources). Its arguments go in the block's `config` \
             body. Each result carries the identity of resource type [`{0}`](../resources/{0}.md), \
             so an `import` block with that identity, or `terraform query -generate-config-out`, \
             brings the object under management.",
            doc.type_name
        );
    }
    if kind == Kind::Action {
        description.push_str(
            "\n\nAn `action` block (Terraform 1.14 and later; OpenTofu has no actions). Its \
             arguments go in the block's `config` body. It runs when a resource's `lifecycle { \
             action_trigger { … } }` fires (`events`: `before_create`, `after_create`, \
             `before_update`, `after_update`), or on its own with `terraform apply \
             -invoke=action.<type>.<name>`; its progress lines show in the engine's output as it \
             runs.",
        );
    }
    let owner = match kind {
        Kind::Action => Owner::Action,
        _ => Owner::Type,
    };
    let mut text = String::new();
    let _ = write!(
        text,
        "---\npage_title: \"{name} {title} - {source}\"\nsubcategory: \"\"\ndescription: |-\n  {summary}\n---\n\n\
         # {name} ({title})\n\n",
        name = doc.type_name,
        title = kind.title(),
        source = provider.source(),
        summary = first_paragraph(&description),
    );
    if let Some(of) = &doc.alias_of {
        let _ = write!(
            text,
            "Another name for [`{of}`]({of}.md), with the same schema and behaviour.\n\n"
        );
    }
    let _ = write!(
        text,
        "{description}\n\n## Example Usage\n\n```terraform\n{}\n```\n\n{}",
        example.trim_end(),
        reference::render(&doc.schema.block, owner, "##", ""),
    );
    if kind == Kind::Resource {
        let commands = rename(import_commands(root, canonical, &written)?);
        text.push('\n');
        text.push_str(&import_section(&commands));
    }
    Ok(Page {
        path: PathBuf::from(kind.folder()).join(format!("{}.md", doc.type_name)),
        text,
    })
}

/// The page of one function, e.g. `functions/manifest_decode.md`: its description, example,
/// signature (in the configuration language's type syntax), arguments and return type.
pub fn function_page(root: &Path, provider: &ProviderDoc, function: &FunctionDoc) -> Result<Page, DocsError> {
    let example = read_part(root, FUNCTIONS_FOLDER, &function.name, FUNCTION_EXAMPLE)?;
    Ok(Page {
        path: PathBuf::from(FUNCTIONS_FOLDER).join(format!("{}.md", function.name)),
        text: function_text(&provider.source(), function, &example),
    })
}

fn function_text(source: &str, function: &FunctionDoc, example: &str) -> String {
    let (name, signature) = (&function.name, &function.signature);
    // Each parameter, and whether it is the variadic one (taken any number of times, last).
    let arguments: Vec<(&Parameter, bool)> = (signature.parameters.iter().map(|p| (p, false)))
        .chain(signature.variadic.iter().map(|p| (p, true)))
        .collect();
    let parameters: Vec<String> = arguments
        .iter()
        .map(|(p, variadic)| {
            let dots = if *variadic { "..." } else { "" };
            format!("{} {dots}{}", p.name, reference::constraint(&p.ty))
        })
        .collect();
    let returns = reference::constraint(&signature.return_type);
    let mut text = String::new();
    let _ = write!(
        text,
        "---\npage_title: \"{name} function - {source}\"\nsubcategory: \"\"\ndescription: |-\n  {summary}\n---\n\n\
         # function: {name}\n\n{description}\n\n## Example Usage\n\n```terraform\n{example}\n```\n\n\
         ## Signature\n\n```text\n{name}({parameters}) {returns}\n```\n\n## Arguments\n\n",
        summary = first_paragraph(&signature.summary),
        description = signature.description.trim_end(),
        example = example.trim_end(),
        parameters = parameters.join(", "),
    );
    for (index, (p, variadic)) in arguments.iter().enumerate() {
        let mut label = reference::type_name(&p.ty);
        if *variadic {
            label.insert_str(0, "Variadic, ");
        }
        if p.allow_null {
            label.push_str(", Nullable");
        }
        let _ = writeln!(
            text,
            "{}. `{}` ({label}) {}",
            index + 1,
            p.name,
            one_line(&p.description)
        );
    }
    if arguments.is_empty() {
        text.push_str("This function takes no arguments.\n");
    }
    let _ = write!(text, "\n## Return Type\n\n`{returns}`\n");
    text
}

/// `index.md`: the template with its placeholders filled in: `{{ version }}`,
/// `{{ reference "<provider>" }}` (the provider block's arguments) and `{{ types "<provider>" }}`
/// (links to the provider's pages).
pub fn index_page(root: &Path, providers: &[ProviderDoc]) -> Result<Page, DocsError> {
    let path = root.join(INDEX_TEMPLATE);
    let mut text = fs::read_to_string(&path).map_err(DocsError::io(&path))?;
    text = text.replace("{{ version }}", VERSION);
    for provider in providers {
        let reference = reference::render(
            &provider.schema.block,
            Owner::Provider,
            "###",
            &format!("{}-", provider.name),
        );
        text = text.replace(
            &format!("{{{{ reference \"{}\" }}}}", provider.name),
            reference.trim_end(),
        );
        text = text.replace(
            &format!("{{{{ types \"{}\" }}}}", provider.name),
            type_links(provider).trim_end(),
        );
    }
    if let Some(at) = text.find("{{") {
        let placeholder = text[at..].lines().next().unwrap_or_default().to_string();
        return Err(DocsError::Placeholder { path, placeholder });
    }
    Ok(Page {
        path: PathBuf::from("index.md"),
        text,
    })
}

/// A hand-written part: `examples/<folder>/<type or function>/<file>`.
fn read_part(root: &Path, folder: &str, type_name: &str, file: &str) -> Result<String, DocsError> {
    let path = root.join(EXAMPLES).join(folder).join(type_name).join(file);
    fs::read_to_string(&path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => DocsError::MissingPart {
            type_name: type_name.to_string(),
            path: path.clone(),
        },
        _ => DocsError::Io {
            path: path.clone(),
            source,
        },
    })
}

/// Whether the objects of resource type `type_name` live in a namespace: its `metadata` block
/// has a `namespace` (true when the provider has no such typed resource).
fn namespaced(provider: &ProviderDoc, type_name: &str) -> bool {
    let resource = provider
        .of_kind(Kind::Resource)
        .iter()
        .find(|t| t.type_name == type_name);
    let Some(resource) = resource else {
        return true;
    };
    let metadata = resource
        .schema
        .block
        .blocks
        .iter()
        .find(|b| b.type_name == "metadata");
    metadata.is_none_or(|m| m.block.attributes.iter().any(|a| a.name == "namespace"))
}

/// A list resource's example, as its page shows it: the hand-written query file of its type
/// (an alias shows its type's), else one `list` block with the filters its `config` takes
/// (they are the same for every typed list resource; a namespace only where the objects have
/// one). A type whose config requires an argument needs the hand-written file.
pub fn list_example(root: &Path, provider: &ProviderDoc, doc: &TypeDoc) -> Result<String, DocsError> {
    let type_name = doc.alias_of.as_deref().unwrap_or(&doc.type_name);
    let kind = Kind::ListResource;
    let written = match read_part(root, kind.folder(), type_name, kind.example_file()) {
        Err(missing @ DocsError::MissingPart { .. }) => generated_list_example(provider, doc, missing)?,
        other => other?,
    };
    Ok(rename_type(&written, type_name, &doc.type_name))
}

/// The `list` block of [`list_example`] for a type without a hand-written one; `missing` when
/// its config requires an argument.
fn generated_list_example(
    provider: &ProviderDoc,
    doc: &TypeDoc,
    missing: DocsError,
) -> Result<String, DocsError> {
    let type_name = doc.alias_of.as_deref().unwrap_or(&doc.type_name);
    let namespaced = namespaced(provider, type_name);
    let attributes = &doc.schema.block.attributes;
    if attributes.iter().any(|a| a.required) {
        return Err(missing);
    }
    let has = |name: &str| attributes.iter().any(|a| a.name == name);
    let mut config = String::new();
    if namespaced && has("namespace") {
        config.push_str("    namespace      = \"default\"\n");
    }
    if has("label_selector") {
        config.push_str("    label_selector = \"app=web\"\n");
    }
    Ok(format!(
        "list \"{type_name}\" \"found\" {{\n  provider = kubernetes\n  limit    = 100\n\n  config {{\n{config}  }}\n}}\n"
    ))
}

/// Where the drop-in corpus keeps one configuration per resource type, written as
/// hashicorp's documentation writes it (`acceptance/corpus/<type>.tf`).
pub const CORPUS: &str = "acceptance/corpus";

/// A resource type's example: its hand-written `resource.tf`, else its corpus configuration
/// (or its `_v1` twin's, renamed).
fn resource_example(root: &Path, type_name: &str) -> Result<String, DocsError> {
    let missing = match read_part(
        root,
        Kind::Resource.folder(),
        type_name,
        Kind::Resource.example_file(),
    ) {
        Err(e @ DocsError::MissingPart { .. }) => e,
        other => return other,
    };
    let corpus = root.join(CORPUS);
    if let Ok(text) = fs::read_to_string(corpus.join(format!("{type_name}.tf"))) {
        return Ok(text);
    }
    let twin = format!("{type_name}_v1");
    match fs::read_to_string(corpus.join(format!("{twin}.tf"))) {
        Ok(text) => Ok(rename_type(&text, &twin, type_name)),
        Err(_) => Err(missing),
    }
}

/// A resource type's import commands: its hand-written `import.sh`, else one for the first
/// resource of the type in its example, with the id of the object it names.
fn import_commands(root: &Path, type_name: &str, example: &str) -> Result<String, DocsError> {
    let missing = match read_part(root, Kind::Resource.folder(), type_name, "import.sh") {
        Err(e @ DocsError::MissingPart { .. }) => e,
        other => return other,
    };
    let header = format!("resource \"{type_name}\" \"");
    let Some(at) = example.find(&header) else {
        return Err(missing);
    };
    let rest = &example[at + header.len()..];
    let rest = &rest[..rest.find("\nresource \"").unwrap_or(rest.len())];
    let label = rest.split('"').next().unwrap_or_default();
    let quoted = |key: &str| {
        rest.lines()
            .map(str::trim)
            .find_map(|l| {
                l.strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')?
                    .trim()
                    .strip_prefix('"')
            })
            .and_then(|v| v.split('"').next())
            .map(str::to_string)
    };
    let name = quoted("name").unwrap_or_else(|| "example".to_string());
    let namespaced = rest.lines().map(str::trim).any(|l| l.starts_with("namespace"));
    let id = if namespaced {
        format!(
            "{}/{name}",
            quoted("namespace").unwrap_or_else(|| "default".to_string())
        )
    } else {
        name
    };
    Ok(format!("terraform import {type_name}.{label} {id}\n"))
}

/// `## Import`: each `terraform import <address> <id>` line of `commands` as an `import` block
/// (Terraform 1.5+) and as the command.
fn import_section(commands: &str) -> String {
    if !commands.contains("terraform import") {
        // `import.sh` says why the type cannot be imported, as shell comments.
        let why: Vec<&str> = commands
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .collect();
        return format!("## Import\n\n{}\n", why.join(" ").trim());
    }
    let mut blocks = String::new();
    for line in commands.lines() {
        let mut words = line.split_whitespace();
        if let (Some("terraform"), Some("import"), Some(address), Some(id)) =
            (words.next(), words.next(), words.next(), words.next())
        {
            let id = id.trim_matches(['\'', '"']);
            let _ = write!(blocks, "import {{\n  to = {address}\n  id = \"{id}\"\n}}\n");
        }
    }
    format!(
        "## Import\n\nAn existing object is brought under management with an `import` block:\n\n\
         ```terraform\n{}```\n\nor with the command:\n\n```shell\n{}\n```\n",
        blocks,
        commands.trim_end()
    )
}

fn type_links(provider: &ProviderDoc) -> String {
    let mut out = String::new();
    for (kind, doc) in provider.types().filter(|(_, t)| t.alias_of.is_none()) {
        let aliases: Vec<String> = provider
            .of_kind(kind)
            .iter()
            .filter(|t| t.alias_of.as_deref() == Some(&doc.type_name))
            .map(|t| format!("[`{0}`]({1}/{0}.md)", t.type_name, kind.folder()))
            .collect();
        let _ = write!(
            out,
            "- {} [`{1}`]({2}/{1}.md)",
            kind.title(),
            doc.type_name,
            kind.folder()
        );
        if !aliases.is_empty() {
            let _ = write!(out, " (also {})", aliases.join(", "));
        }
        let _ = writeln!(out, ": {}", first_paragraph(&doc.schema.block.description));
    }
    for function in &provider.functions {
        let _ = writeln!(
            out,
            "- Function [`{0}`]({FUNCTIONS_FOLDER}/{0}.md): {1}",
            function.name,
            first_paragraph(&function.signature.summary)
        );
    }
    out
}

/// `text` with the type name `from` (as a whole word) replaced by `to`.
fn rename_type(text: &str, from: &str, to: &str) -> String {
    if from == to {
        return text.to_string();
    }
    let word = regex::Regex::new(&format!(r"\b{}\b", regex::escape(from))).expect("a literal word pattern");
    word.replace_all(text, to).into_owned()
}

/// The first paragraph of a description, on one line (the front matter's summary).
fn first_paragraph(description: &str) -> String {
    let paragraph = description.split("\n\n").next().unwrap_or_default();
    paragraph.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renaming_touches_only_the_whole_type_name() {
        let text = "resource \"kubernetes_secret\" \"a\" {}\n# kubernetes_secret_v1 kubernetes_secret.a";
        assert_eq!(
            rename_type(text, "kubernetes_secret", "kubernetes_secret_v1"),
            "resource \"kubernetes_secret_v1\" \"a\" {}\n# kubernetes_secret_v1 kubernetes_secret_v1.a"
        );
    }

    #[test]
    fn a_function_page_shows_its_signature_arguments_and_return_type() {
        use plugin_runtime::{Signature, Type};
        let mut nullable = Parameter::new("prefix", Type::String, "Put first.");
        nullable.allow_null = true;
        let function = FunctionDoc {
            name: "join_all".into(),
            signature: Signature {
                parameters: vec![nullable],
                variadic: Some(Parameter::new("parts", Type::list(Type::Number), "The parts.")),
                return_type: Type::String,
                summary: "Joins numbers.".into(),
                description: "Joins the parts after the prefix.".into(),
            },
        };
        let text = function_text("choudoufu/live", &function, "output \"x\" {}\n");
        for part in [
            "page_title: \"join_all function - choudoufu/live\"",
            "description: |-\n  Joins numbers.\n",
            "# function: join_all\n\nJoins the parts after the prefix.\n",
            "```terraform\noutput \"x\" {}\n```",
            "```text\njoin_all(prefix string, parts ...list(number)) string\n```",
            "1. `prefix` (String, Nullable) Put first.\n2. `parts` (Variadic, List of Number) The parts.\n",
            "## Return Type\n\n`string`\n",
        ] {
            assert!(text.contains(part), "no {part:?} in:\n{text}");
        }
    }

    #[test]
    fn import_commands_become_import_blocks() {
        let section = import_section("terraform import kubernetes_namespace.shop shop\n");
        assert!(
            section.contains("import {\n  to = kubernetes_namespace.shop\n  id = \"shop\"\n}\n"),
            "{section}"
        );
        assert!(
            section.contains("```shell\nterraform import kubernetes_namespace.shop shop\n```"),
            "{section}"
        );
    }
}
