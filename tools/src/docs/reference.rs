//! A schema as the registry's argument and attribute reference: arguments (required, then
//! optional), read-only attributes, then one nested section per block or object type, each
//! entry with its type and the description the engine itself shows for it.

use std::fmt::Write;

use plugin_runtime::{Attribute, Block, NestedBlock, Nesting, Type};

/// Where an entry is listed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Required,
    Optional,
    ReadOnly,
}

/// One entry of a section: an attribute or a nested block.
struct Entry<'a> {
    name: &'a str,
    section: Section,
    /// Type and flags, e.g. `Map of String, Sensitive`.
    label: String,
    description: &'a str,
    /// The nested section this entry links to, if any.
    nested: Option<Nested<'a>>,
}

/// A nested section: a block's schema or an object type's fields.
#[derive(Clone, Copy)]
enum Nested<'a> {
    Block(&'a Block),
    Object(&'a std::collections::BTreeMap<String, Type>),
}

/// Whose schema a reference describes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A provider block: it exports nothing, so there is no attribute reference.
    Provider,
    /// A resource, data source or ephemeral resource type: its page always says what it
    /// exports, if only its arguments.
    Type,
    /// An action's `config`: an action exports nothing either.
    Action,
}

/// The reference of a top-level schema block: `<heading> Argument Reference`, `<heading>
/// Attribute Reference` and the nested schemas one level below. `anchors` prefixes the
/// nested sections' anchors, to keep two references on one page apart.
pub fn render(block: &Block, owner: Owner, heading: &str, anchors: &str) -> String {
    let anchor = |path: &str| format!("{anchors}{}", anchor_of(path));
    let top = entries(block);
    let mut out = format!("{heading} Argument Reference\n\n");
    let mut queue = Vec::new();
    let mut any = false;
    for (section, title) in [(Section::Required, "Required"), (Section::Optional, "Optional")] {
        if top.iter().any(|e| e.section == section) {
            any = true;
            let _ = write!(out, "{heading}# {title}\n\n");
            list(&mut out, &top, section, "", &anchor, &mut queue);
        }
    }
    if !any {
        out.push_str("This type takes no arguments.\n\n");
    }
    if top.iter().any(|e| e.section == Section::ReadOnly) {
        let _ = write!(out, "{heading} Attribute Reference\n\n");
        out.push_str("In addition to the arguments above, these attributes are exported:\n\n");
        list(&mut out, &top, Section::ReadOnly, "", &anchor, &mut queue);
    } else if owner == Owner::Type {
        let _ = write!(out, "{heading} Attribute Reference\n\n");
        out.push_str("This type exports its arguments only.\n\n");
    }
    // Breadth-first through the nested sections, in the order they were linked.
    let mut next = 0;
    while next < queue.len() {
        let (path, nested) = queue[next].clone();
        next += 1;
        let _ = write!(
            out,
            "<a id=\"{}\"></a>\n{heading}# Nested Schema for `{path}`\n\n",
            anchor(&path)
        );
        match nested {
            Nested::Block(block) => {
                let entries = entries(block);
                for (section, title) in [
                    (Section::Required, "Required"),
                    (Section::Optional, "Optional"),
                    (Section::ReadOnly, "Read-Only"),
                ] {
                    if entries.iter().any(|e| e.section == section) {
                        let _ = write!(out, "{title}:\n\n");
                        list(&mut out, &entries, section, &path, &anchor, &mut queue);
                    }
                }
            }
            Nested::Object(fields) => {
                out.push_str("Fields:\n\n");
                for (name, ty) in fields {
                    let _ = write!(out, "- `{name}` ({})", type_name(ty));
                    if let Some(inner) = object_of(ty) {
                        let field = format!("{path}.{name}");
                        let _ = write!(out, " (see [below for nested schema](#{}))", anchor(&field));
                        queue.push((field, Nested::Object(inner)));
                    }
                    out.push('\n');
                }
                out.push('\n');
            }
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn list<'a>(
    out: &mut String,
    entries: &[Entry<'a>],
    section: Section,
    parent: &str,
    anchor: &dyn Fn(&str) -> String,
    queue: &mut Vec<(String, Nested<'a>)>,
) {
    for entry in entries.iter().filter(|e| e.section == section) {
        let _ = write!(
            out,
            "- `{}` ({}) {}",
            entry.name,
            entry.label,
            one_line(entry.description)
        );
        if let Some(nested) = entry.nested {
            let path = if parent.is_empty() {
                entry.name.to_string()
            } else {
                format!("{parent}.{}", entry.name)
            };
            let _ = write!(out, " (see [below for nested schema](#{}))", anchor(&path));
            queue.push((path, nested));
        }
        out.push('\n');
    }
    out.push('\n');
}

fn entries(block: &Block) -> Vec<Entry<'_>> {
    let attributes = block.attributes.iter().map(attribute_entry);
    attributes.chain(block.blocks.iter().map(block_entry)).collect()
}

fn attribute_entry(attribute: &Attribute) -> Entry<'_> {
    let section = if attribute.required {
        Section::Required
    } else if attribute.optional {
        Section::Optional
    } else {
        Section::ReadOnly
    };
    let mut label = type_name(&attribute.ty);
    for (flag, word) in [
        (attribute.sensitive, "Sensitive"),
        (attribute.write_only, "Write-only"),
        (attribute.deprecated, "Deprecated"),
    ] {
        if flag {
            label.push_str(", ");
            label.push_str(word);
        }
    }
    Entry {
        name: &attribute.name,
        section,
        label,
        description: &attribute.description,
        nested: object_of(&attribute.ty).map(Nested::Object),
    }
}

fn block_entry(nested: &NestedBlock) -> Entry<'_> {
    let section = if nested.min_items > 0 {
        Section::Required
    } else if read_only(&nested.block) {
        Section::ReadOnly
    } else {
        Section::Optional
    };
    let mut label = match nested.nesting {
        Nesting::Single | Nesting::Group => "Block".to_string(),
        Nesting::List => "Block List".to_string(),
        Nesting::Set => "Block Set".to_string(),
        Nesting::Map => "Block Map".to_string(),
    };
    if nested.min_items > 0 {
        let _ = write!(label, ", Min: {}", nested.min_items);
    }
    if nested.max_items > 0 {
        let _ = write!(label, ", Max: {}", nested.max_items);
    }
    if nested.block.deprecated {
        label.push_str(", Deprecated");
    }
    Entry {
        name: &nested.type_name,
        section,
        label,
        description: &nested.block.description,
        nested: Some(Nested::Block(&nested.block)),
    }
}

/// A block whose every attribute, at any depth, is set by the provider only.
fn read_only(block: &Block) -> bool {
    block.attributes.iter().all(|a| a.computed && !a.optional)
        && block.blocks.iter().all(|b| read_only(&b.block))
}

/// The object type an attribute's type holds, directly or as the element of a collection.
fn object_of(ty: &Type) -> Option<&std::collections::BTreeMap<String, Type>> {
    match ty {
        Type::Object(fields) => Some(fields),
        Type::List(e) | Type::Set(e) | Type::Map(e) => object_of(e),
        _ => None,
    }
}

/// The type as the registry's docs spell it: `String`, `List of Map of String`, ...
pub fn type_name(ty: &Type) -> String {
    match ty {
        Type::String => "String".into(),
        Type::Number => "Number".into(),
        Type::Bool => "Boolean".into(),
        Type::Dynamic => "Dynamic".into(),
        Type::List(e) => format!("List of {}", type_name(e)),
        Type::Set(e) => format!("Set of {}", type_name(e)),
        Type::Map(e) => format!("Map of {}", type_name(e)),
        Type::Object(_) => "Object".into(),
        Type::Tuple(_) => "Tuple".into(),
    }
}

/// The anchor of a nested section: `nested--spec--template`.
fn anchor_of(path: &str) -> String {
    format!("nested--{}", path.replace('.', "--"))
}

/// The type as the configuration language writes a type constraint: `string`,
/// `list(map(bool))`, `object({ name = string })`, `dynamic` for any type.
pub fn constraint(ty: &Type) -> String {
    match ty {
        Type::String => "string".into(),
        Type::Number => "number".into(),
        Type::Bool => "bool".into(),
        Type::Dynamic => "dynamic".into(),
        Type::List(e) => format!("list({})", constraint(e)),
        Type::Set(e) => format!("set({})", constraint(e)),
        Type::Map(e) => format!("map({})", constraint(e)),
        Type::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(name, ty)| format!("{name} = {}", constraint(ty)))
                .collect();
            format!("object({{ {} }})", fields.join(", "))
        }
        Type::Tuple(elements) => {
            let elements: Vec<String> = elements.iter().map(constraint).collect();
            format!("tuple([{}])", elements.join(", "))
        }
    }
}

/// A description as one list item: blank lines would end the item.
pub fn one_line(description: &str) -> String {
    description.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_then_attributes_then_nested_sections() {
        let spec = Block::new("The spec.").attribute(Attribute::optional("size", Type::Number, "How big."));
        let block = Block::new("A thing.")
            .attribute(Attribute::required("name", Type::String, "The name."))
            .attribute(Attribute::computed("id", Type::String, "The id."))
            .block(NestedBlock::at_most_one("spec", spec));
        assert_eq!(
            render(&block, Owner::Type, "##", ""),
            "## Argument Reference\n\n### Required\n\n- `name` (String) The name.\n\n\
             ### Optional\n\n- `spec` (Block List, Max: 1) The spec. \
             (see [below for nested schema](#nested--spec))\n\n\
             ## Attribute Reference\n\nIn addition to the arguments above, these attributes are exported:\n\n\
             - `id` (String) The id.\n\n\
             <a id=\"nested--spec\"></a>\n### Nested Schema for `spec`\n\nOptional:\n\n- `size` (Number) How big.\n"
        );
    }

    #[test]
    fn a_type_without_read_only_attributes_says_so_and_a_provider_block_does_not() {
        let block = Block::new("A thing.").attribute(Attribute::optional("size", Type::Number, "How big."));
        let exports = "## Attribute Reference\n\nThis type exports its arguments only.\n";
        assert!(render(&block, Owner::Type, "##", "").ends_with(exports));
        assert!(!render(&block, Owner::Provider, "##", "").contains("Attribute Reference"));
    }

    #[test]
    fn constraints_read_as_the_configuration_language_writes_them() {
        let ty = Type::list(Type::object([
            ("name", Type::String),
            ("ports", Type::set(Type::Number)),
        ]));
        assert_eq!(
            constraint(&ty),
            "list(object({ name = string, ports = set(number) }))"
        );
        assert_eq!(
            constraint(&Type::Tuple(vec![Type::Bool, Type::Dynamic])),
            "tuple([bool, dynamic])"
        );
    }

    #[test]
    fn types_read_as_the_registry_spells_them() {
        let ty = Type::list(Type::map(Type::Bool));
        assert_eq!(type_name(&ty), "List of Map of Boolean");
    }
}
