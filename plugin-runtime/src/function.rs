//! Provider-defined functions (`provider::<name>::<function>(...)`, Terraform 1.8 and later).
//!
//! A function is a signature plus a pure `call` over plain [`Value`]s: it never sees msgpack
//! or gRPC. The server decodes each argument against its parameter's type (a `dynamic`
//! parameter's value carries its own type) and encodes the result against the return type.
//! A failed call is a [`FunctionError`], which the engine shows with the call's source range,
//! and, when it names an argument, with that parameter's name.

use crate::types::Type;
use crate::value::Value;

/// One parameter of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// Its name in documentation and error messages.
    pub name: String,
    /// The type the engine converts the argument to before calling.
    pub ty: Type,
    /// Markdown.
    pub description: String,
    /// Whether the function is called with a null here (otherwise the engine refuses it).
    pub allow_null: bool,
    /// Whether the function is called with an unknown here (otherwise the engine answers
    /// unknown without calling).
    pub allow_unknown: bool,
}

impl Parameter {
    /// A parameter that takes neither null nor unknown values.
    pub fn new(name: &str, ty: Type, description: &str) -> Parameter {
        Parameter {
            name: name.to_string(),
            ty,
            description: description.to_string(),
            allow_null: false,
            allow_unknown: false,
        }
    }
}

/// What a function takes and returns, and how the engine documents it.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The positional parameters, in order.
    pub parameters: Vec<Parameter>,
    /// Taken any number of times after `parameters`.
    pub variadic: Option<Parameter>,
    /// The type of the result.
    pub return_type: Type,
    /// One line, for listings.
    pub summary: String,
    /// Markdown.
    pub description: String,
}

impl Signature {
    /// The type of argument `index`: its parameter's, or the variadic parameter's past them.
    pub fn argument_type(&self, index: usize) -> Option<&Type> {
        self.parameters
            .get(index)
            .or(self.variadic.as_ref().filter(|_| index >= self.parameters.len()))
            .map(|p| &p.ty)
    }
}

/// Why a call failed: a message for the user, and the index of the argument at fault when
/// one is.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct FunctionError {
    /// What the user sees.
    pub message: String,
    /// The argument at fault (0 for the first), which the engine points at.
    pub argument: Option<usize>,
}

impl FunctionError {
    /// An error about the call as a whole.
    pub fn new(message: impl Into<String>) -> FunctionError {
        FunctionError {
            message: message.into(),
            argument: None,
        }
    }

    /// An error about argument `index` (0 for the first).
    pub fn argument(index: usize, message: impl Into<String>) -> FunctionError {
        FunctionError {
            message: message.into(),
            argument: Some(index),
        }
    }
}

/// One provider-defined function.
pub trait Function: Send + Sync + 'static {
    /// The name the configuration calls it by, e.g. `manifest_decode`.
    fn name(&self) -> &'static str;

    /// What it takes and returns, which the engine checks calls against.
    fn signature(&self) -> Signature;

    /// Runs the function on arguments already decoded against the signature: one value per
    /// parameter, then the variadic ones.
    fn call(&self, args: Vec<Value>) -> Result<Value, FunctionError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variadic_arguments_take_the_variadic_type() {
        let signature = Signature {
            parameters: vec![Parameter::new("a", Type::String, "")],
            variadic: Some(Parameter::new("rest", Type::Number, "")),
            return_type: Type::Bool,
            summary: String::new(),
            description: String::new(),
        };
        assert_eq!(signature.argument_type(0), Some(&Type::String));
        assert_eq!(signature.argument_type(3), Some(&Type::Number));
        let fixed = Signature {
            variadic: None,
            ..signature
        };
        assert_eq!(fixed.argument_type(1), None);
    }
}
