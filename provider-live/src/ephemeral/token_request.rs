//! Ephemeral `kubernetes_token_request_v1`: a ServiceAccount token from the TokenRequest API,
//! asked for each time the engine opens it, for a provider block of this run (`token =
//! ephemeral.kubernetes_token_request_v1.x.token`). The request is the one the resource of the
//! same name sends ([`crate::kinds::token_request`]); the token expires by itself, so there is
//! nothing to renew or close.

use std::sync::Arc;

use async_trait::async_trait;
use plugin_runtime::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, EphemeralResource, OpenRequest, OpenResponse,
    Schema, Type, Value,
};
use serde_json::Value as Json;

use super::{as_single, required_block};
use crate::context::Context;
use crate::kinds::token_request::{answered_spec, expiration_too_short, issue, spec_block};
use crate::lifecycle::diag;
use crate::plan;

pub struct TokenRequest {
    ctx: Arc<Context>,
}

impl TokenRequest {
    pub fn new(ctx: Arc<Context>) -> TokenRequest {
        TokenRequest { ctx }
    }
}

/// The result: the configuration, its unset computed attributes from the server's answer.
fn result_of(block: &Block, config: &Value, answer: &Json) -> Value {
    let text =
        |pointer: &str| Value::from(answer.pointer(pointer).and_then(Json::as_str).map(str::to_string));
    let observed = Value::object([
        ("token", text("/status/token")),
        ("expiration_timestamp", text("/status/expirationTimestamp")),
        ("spec", answered_spec(answer)),
    ]);
    plan::settle(&plan::unknown_computed(block, config, None), &observed)
}

#[async_trait]
impl EphemeralResource for TokenRequest {
    fn type_name(&self) -> &'static str {
        "kubernetes_token_request_v1"
    }

    fn schema(&self) -> Schema {
        let metadata = Block::new("The service account the token is for.")
            .attribute(Attribute::required(
                "name",
                Type::String,
                "The name of the service account.",
            ))
            .attribute(Attribute::required(
                "namespace",
                Type::String,
                "The namespace of the service account.",
            ));
        let block = Block::new(
            "TokenRequest requests a token for a given service account. The token is asked for each time \
             the engine opens this ephemeral resource and is never stored in a plan or state.",
        )
        .attribute(
            Attribute::optional_computed("token", Type::String, "Token is the opaque bearer token.")
                .sensitive(),
        )
        .attribute(Attribute::optional_computed(
            "expiration_timestamp",
            Type::String,
            "ExpirationTimestamp is the time of expiration of the returned token (RFC 3339).",
        ))
        .block(required_block("metadata", metadata))
        .block(as_single(spec_block()));
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let at = AttributePath::root("spec").attribute("expiration_seconds");
        expiration_too_short(config.get("spec"), at).into_iter().collect()
    }

    async fn open(&self, request: OpenRequest) -> Result<OpenResponse, Diagnostics> {
        let config = &request.config;
        let metadata = config.get("metadata");
        let (Some(namespace), Some(name)) =
            (metadata.get("namespace").as_str(), metadata.get("name").as_str())
        else {
            return Err(diag(
                Diagnostic::error(
                    "Missing service account",
                    "set metadata.name and metadata.namespace to the service account the token is for",
                )
                .at(AttributePath::root("metadata")),
            ));
        };
        let answer = issue(&self.ctx, config, namespace, name).await.map_err(diag)?;
        Ok(OpenResponse {
            result: result_of(&self.schema().block, config, &answer),
            ..OpenResponse::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plugin_runtime::Nesting;
    use serde_json::json;

    fn resource() -> TokenRequest {
        TokenRequest::new(Arc::default())
    }

    fn config(spec: Value) -> Value {
        Value::object([
            ("token", Value::Null),
            ("expiration_timestamp", Value::Null),
            (
                "metadata",
                Value::object([
                    ("name", Value::string("ci")),
                    ("namespace", Value::string("team")),
                ]),
            ),
            ("spec", spec),
        ])
    }

    #[test]
    fn the_schema_nests_single_blocks_as_hashicorps() {
        let schema = resource().schema();
        let metadata = schema.block.find_block("metadata").unwrap();
        assert_eq!((metadata.nesting, metadata.min_items), (Nesting::Single, 1));
        let spec = schema.block.find_block("spec").unwrap();
        assert_eq!(
            (spec.nesting, spec.min_items, spec.max_items),
            (Nesting::Single, 0, 0)
        );
        let bound = spec.block.find_block("bound_object_ref").unwrap();
        assert_eq!(bound.nesting, Nesting::Single);
        let token = schema.block.find_attribute("token").unwrap();
        assert!(token.optional && token.computed && token.sensitive);
    }

    #[test]
    fn the_result_fills_only_what_the_configuration_left_unset() {
        let answer = json!({"spec": {"audiences": ["api"], "expirationSeconds": 3600},
            "status": {"token": "t0ken", "expirationTimestamp": "2030-01-01T00:00:00Z"}});
        let block = resource().schema().block;
        let spec = Value::object([
            ("audiences", Value::Null),
            ("expiration_seconds", Value::int(3600)),
            ("bound_object_ref", Value::Null),
        ]);
        let result = result_of(&block, &config(spec), &answer);
        assert_eq!(result.get("token"), &Value::string("t0ken"));
        assert_eq!(
            result.get("expiration_timestamp"),
            &Value::string("2030-01-01T00:00:00Z")
        );
        assert_eq!(
            result.get("spec").get("audiences"),
            &Value::List(vec![Value::string("api")])
        );
        assert!(result.is_wholly_known());
        // No spec block: it stays absent.
        assert_eq!(
            result_of(&block, &config(Value::Null), &answer).get("spec"),
            &Value::Null
        );
    }

    #[test]
    fn a_short_validity_is_refused_at_its_attribute() {
        let spec = Value::object([("expiration_seconds", Value::int(60))]);
        let found = resource().validate(&config(spec));
        assert_eq!(
            found.0[0].attribute.as_ref().unwrap().to_string(),
            "spec.expiration_seconds"
        );
        assert!(resource().validate(&config(Value::Null)).is_empty());
    }
}
