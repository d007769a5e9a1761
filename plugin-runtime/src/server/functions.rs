//! Provider-defined functions: `GetFunctions` and `CallFunction`, each argument checked against
//! the function's signature.

use std::collections::HashMap;

use super::ProviderService;
use super::convert::{encode, to_proto_function, to_proto_function_error};
use crate::codec;
use crate::function::FunctionError;
use crate::proto::tfplugin6 as pb;

impl ProviderService {
    pub(super) fn declared_functions(&self) -> pb::get_functions::Response {
        pb::get_functions::Response {
            functions: self.function_definitions(),
            diagnostics: Vec::new(),
        }
    }

    pub(super) fn call(&self, request: pb::call_function::Request) -> pb::call_function::Response {
        match self.run_function(&request.name, &request.arguments) {
            Ok(result) => pb::call_function::Response {
                result: Some(result),
                error: None,
            },
            Err(e) => pb::call_function::Response {
                result: None,
                error: Some(to_proto_function_error(e)),
            },
        }
    }

    pub(super) fn function_definitions(&self) -> HashMap<String, pb::Function> {
        self.functions
            .iter()
            .map(|(name, entry)| (name.clone(), to_proto_function(&entry.signature)))
            .collect()
    }

    /// Calls function `name`: each argument decoded against its parameter's type, the result
    /// encoded against the return type. Anything wrong is the call's error.
    fn run_function(
        &self,
        name: &str,
        arguments: &[pb::DynamicValue],
    ) -> Result<pb::DynamicValue, FunctionError> {
        let entry = self
            .functions
            .get(name)
            .ok_or_else(|| FunctionError::new(format!("this provider has no function {name:?}")))?;
        let signature = &entry.signature;
        let count = signature.parameters.len();
        if arguments.len() < count || (signature.variadic.is_none() && arguments.len() > count) {
            return Err(FunctionError::new(format!(
                "{name} takes {count} argument(s), found {}",
                arguments.len()
            )));
        }
        let args = arguments
            .iter()
            .enumerate()
            .map(|(i, argument)| {
                let ty = signature
                    .argument_type(i)
                    .expect("the argument count was checked");
                codec::decode_dynamic_value(&argument.msgpack, &argument.json, ty)
                    .map_err(|e| FunctionError::argument(i, format!("invalid value from Terraform: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let result = entry.function.call(args)?;
        encode(&result, &signature.return_type, "function result")
            .map_err(|e| FunctionError::new(e.to_string()))
    }
}
