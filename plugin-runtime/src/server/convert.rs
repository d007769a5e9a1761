//! Conversions between the runtime's types and the tfplugin6 messages: values (decoded and
//! encoded against a type), schemas, identity schemas, function signatures and errors,
//! diagnostics and attribute paths.

use super::error::ServerError;
use crate::codec;
use crate::diagnostics::{AttributePath, Diagnostic, Diagnostics, PathStep, Severity};
use crate::function::{FunctionError, Parameter, Signature};
use crate::identity::IdentitySchema;
use crate::proto::tfplugin6 as pb;
use crate::schema::{Attribute, Block, Nesting, Schema};
use crate::types::Type;
use crate::value::Value;

pub(super) fn decode(
    value: Option<&pb::DynamicValue>,
    ty: &Type,
    what: &'static str,
) -> Result<Value, ServerError> {
    let Some(value) = value else {
        return Ok(Value::Null);
    };
    codec::decode_dynamic_value(&value.msgpack, &value.json, ty)
        .map_err(|source| ServerError::Decode { what, source })
}

pub(super) fn encode(value: &Value, ty: &Type, what: &'static str) -> Result<pb::DynamicValue, ServerError> {
    let msgpack = codec::encode_msgpack(value, ty).map_err(|source| ServerError::Encode { what, source })?;
    Ok(pb::DynamicValue {
        msgpack,
        json: Vec::new(),
    })
}

pub(super) fn to_proto_identity_schema(schema: &IdentitySchema) -> pb::ResourceIdentitySchema {
    pb::ResourceIdentitySchema {
        version: schema.version,
        identity_attributes: schema
            .attributes
            .iter()
            .map(|a| pb::resource_identity_schema::IdentityAttribute {
                name: a.name.to_string(),
                r#type: a.ty.to_json_bytes(),
                required_for_import: a.required_for_import,
                optional_for_import: !a.required_for_import,
                description: a.description.to_string(),
            })
            .collect(),
    }
}

pub(super) fn to_proto_function(signature: &Signature) -> pb::Function {
    let parameter = |p: &Parameter| pb::function::Parameter {
        name: p.name.clone(),
        r#type: p.ty.to_json_bytes(),
        allow_null_value: p.allow_null,
        allow_unknown_values: p.allow_unknown,
        description: p.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
    };
    pb::Function {
        parameters: signature.parameters.iter().map(parameter).collect(),
        variadic_parameter: signature.variadic.as_ref().map(parameter),
        r#return: Some(pb::function::Return {
            r#type: signature.return_type.to_json_bytes(),
        }),
        summary: signature.summary.clone(),
        description: signature.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
        deprecation_message: String::new(),
    }
}

pub(super) fn to_proto_function_error(e: FunctionError) -> pb::FunctionError {
    pb::FunctionError {
        text: e.message,
        function_argument: e.argument.map(|i| i64::try_from(i).unwrap_or(i64::MAX)),
    }
}

/// Opaque private bytes as the protocol's optional field: absent when empty.
pub(super) fn optional_private(private: Vec<u8>) -> Option<Vec<u8>> {
    (!private.is_empty()).then_some(private)
}

pub(super) fn to_proto_diagnostics(diagnostics: Diagnostics) -> Vec<pb::Diagnostic> {
    diagnostics.into_iter().map(to_proto_diagnostic).collect()
}

pub(super) fn to_proto_diagnostic(d: Diagnostic) -> pb::Diagnostic {
    let severity = match d.severity {
        Severity::Error => pb::diagnostic::Severity::Error,
        Severity::Warning => pb::diagnostic::Severity::Warning,
    };
    pb::Diagnostic {
        severity: severity as i32,
        summary: d.summary,
        detail: d.detail,
        attribute: d.attribute.map(to_proto_path),
    }
}

pub(super) fn to_proto_path(path: AttributePath) -> pb::AttributePath {
    use pb::attribute_path::step::Selector;
    let steps = path
        .0
        .into_iter()
        .map(|step| pb::attribute_path::Step {
            selector: Some(match step {
                PathStep::Attribute(name) => Selector::AttributeName(name),
                PathStep::Key(key) => Selector::ElementKeyString(key),
                PathStep::Index(i) => Selector::ElementKeyInt(i),
            }),
        })
        .collect();
    pb::AttributePath { steps }
}

pub(super) fn to_proto_schema(schema: &Schema) -> pb::Schema {
    pb::Schema {
        version: schema.version,
        block: Some(to_proto_block(&schema.block, schema.version)),
    }
}

/// An attribute; a nested one carries its attributes instead of a type.
pub(super) fn to_proto_attribute(a: &Attribute) -> pb::schema::Attribute {
    use pb::schema::object::NestingMode;
    let nested_type = a.nested.as_ref().map(|n| pb::schema::Object {
        attributes: n.attributes.iter().map(to_proto_attribute).collect(),
        nesting: match n.nesting {
            Nesting::Single | Nesting::Group => NestingMode::Single,
            Nesting::List => NestingMode::List,
            Nesting::Set => NestingMode::Set,
            Nesting::Map => NestingMode::Map,
        } as i32,
        ..Default::default()
    });
    pb::schema::Attribute {
        name: a.name.clone(),
        r#type: if nested_type.is_some() {
            Vec::new()
        } else {
            a.ty.to_json_bytes()
        },
        nested_type,
        description: a.description.clone(),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: pb::StringKind::Markdown as i32,
        deprecated: a.deprecated,
        write_only: a.write_only,
    }
}

pub(super) fn to_proto_block(block: &Block, version: i64) -> pb::schema::Block {
    use pb::schema::nested_block::NestingMode;
    let attributes = block.attributes.iter().map(to_proto_attribute).collect();
    let block_types = block
        .blocks
        .iter()
        .map(|b| pb::schema::NestedBlock {
            type_name: b.type_name.clone(),
            block: Some(to_proto_block(&b.block, 0)),
            nesting: match b.nesting {
                Nesting::Single => NestingMode::Single,
                Nesting::Group => NestingMode::Group,
                Nesting::List => NestingMode::List,
                Nesting::Set => NestingMode::Set,
                Nesting::Map => NestingMode::Map,
            } as i32,
            min_items: b.min_items,
            max_items: b.max_items,
        })
        .collect();
    pb::schema::Block {
        version,
        attributes,
        block_types,
        description: block.description.clone(),
        description_kind: pb::StringKind::Markdown as i32,
        deprecated: block.deprecated,
    }
}

/// Turns a handler's outcome into its response's diagnostics: a protocol-layer error
/// ends the call as one error diagnostic.
pub(super) fn diagnostics_of(result: Result<Diagnostics, ServerError>) -> Vec<pb::Diagnostic> {
    to_proto_diagnostics(result.unwrap_or_else(Diagnostics::from))
}
