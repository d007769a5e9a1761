//! The write-only check: an engine that cannot keep write-only attributes out of its plan and
//! state is refused every write-only value a configuration sets, with the attribute's path.

use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics};
use crate::schema::{Block, Nesting};
use crate::value::Value;

/// Errors for every write-only attribute `config` sets, for an engine whose client
/// capabilities do not allow write-only attributes: such an engine would keep the value in
/// its plan and state, which is what write-only attributes exist to prevent.
pub(super) fn write_only_refused(block: &Block, config: &Value) -> Diagnostics {
    let mut paths = Vec::new();
    write_only_set(block, config, &AttributePath::default(), &mut paths);
    paths
        .into_iter()
        .map(|path| {
            Diagnostic::error(
                "Write-only attribute not allowed",
                format!(
                    "{path} is write-only, and this engine does not support write-only attributes \
                     (Terraform 1.11 or later does): its value would be kept in the plan and state. \
                     Leave it unset, or use an engine that supports write-only attributes."
                ),
            )
            .at(path)
        })
        .collect()
}

/// The paths of the write-only attributes set (not null) in `value`, a value of `block`.
fn write_only_set(block: &Block, value: &Value, at: &AttributePath, out: &mut Vec<AttributePath>) {
    if value.is_null() || value.is_unknown() {
        return;
    }
    for attribute in &block.attributes {
        let path = at.clone().attribute(&attribute.name);
        let inner = value.get(&attribute.name);
        if attribute.write_only && !inner.is_null() {
            out.push(path);
        } else if let Some(nested) = &attribute.nested {
            let block = Block {
                attributes: nested.attributes.clone(),
                ..Block::default()
            };
            write_only_in_nesting(&block, nested.nesting, inner, &path, out);
        }
    }
    for nested in &block.blocks {
        let path = at.clone().attribute(&nested.type_name);
        write_only_in_nesting(
            &nested.block,
            nested.nesting,
            value.get(&nested.type_name),
            &path,
            out,
        );
    }
}

fn write_only_in_nesting(
    block: &Block,
    nesting: Nesting,
    value: &Value,
    at: &AttributePath,
    out: &mut Vec<AttributePath>,
) {
    match nesting {
        Nesting::Single | Nesting::Group => write_only_set(block, value, at, out),
        Nesting::List => {
            for (i, element) in value.elements().iter().enumerate() {
                let path = at.clone().index(i64::try_from(i).unwrap_or(i64::MAX));
                write_only_set(block, element, &path, out);
            }
        }
        // A set element has no path of its own: the set's path names it.
        Nesting::Set => {
            for element in value.elements() {
                write_only_set(block, element, at, out);
            }
        }
        Nesting::Map => {
            for (key, element) in value.entries().into_iter().flatten() {
                write_only_set(block, element, &at.clone().key(key), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Attribute, NestedBlock};
    use crate::types::Type;

    #[test]
    fn write_only_values_are_refused_where_the_engine_cannot_keep_them_out_of_state() {
        let write_only = |name: &str| Attribute {
            write_only: true,
            ..Attribute::optional(name, Type::String, "w")
        };
        let block = Block::new("r")
            .attribute(write_only("password"))
            .attribute(Attribute::optional("size", Type::Number, "s"))
            .block(NestedBlock::new(
                "user",
                Nesting::List,
                Block::new("u").attribute(write_only("token")),
            ));
        let config = Value::object([
            ("password", Value::string("hunter2")),
            ("size", Value::int(1)),
            (
                "user",
                Value::List(vec![
                    Value::object([("token", Value::Null)]),
                    Value::object([("token", Value::string("t"))]),
                ]),
            ),
        ]);
        let refused = write_only_refused(&block, &config);
        let paths: Vec<String> = refused
            .0
            .iter()
            .map(|d| d.attribute.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect();
        assert_eq!(paths, ["password", "user[1].token"]);
        assert!(refused.has_errors());
        assert!(
            refused.0.iter().all(|d| !d.detail.contains("hunter2")),
            "values never show"
        );
        let unset = Value::object([("password", Value::Null), ("user", Value::List(vec![]))]);
        assert!(write_only_refused(&block, &unset).is_empty());
    }
}
