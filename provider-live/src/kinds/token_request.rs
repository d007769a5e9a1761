//! `kubernetes_token_request_v1`: a token for a ServiceAccount, from the TokenRequest API
//! (`POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`).
//!
//! A TokenRequest is not a stored object, so this is not a typed resource: nothing is written,
//! nothing carries the estate label, and no guard applies. Create asks for the token and keeps
//! it (sensitive) in state with the spec the server settled on. A token cannot be read back,
//! so a refresh keeps the state as it is, unless the service account it was issued for is
//! gone (deleted, or replaced by a new account of the same name): then the resource leaves
//! state and the next apply requests a new token. Delete only forgets the token (it expires by
//! itself), and any change of the configuration replaces it. The token never reaches a log or
//! a diagnostic.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kube::api::{Api, DynamicObject, PostParams};
use kube_estate::{ApiError, ObjectRef, with_retry};
use plugin_runtime::{
    ApplyRequest, ApplyResponse, Attribute, AttributePath, Block, Diagnostic, Diagnostics, ImportRequest,
    ImportResponse, NestedBlock, PlanRequest, PlanResponse, ReadRequest, ReadResponse, Resource, Schema,
    Type, Value,
};
use serde_json::{Map, Value as Json, json};

use super::service_account;
use crate::context::Context;
use crate::kind::api_resource;
use crate::lifecycle::diag;
use crate::objects::{self, Target};
use crate::plan;

const TYPE_NAME: &str = "kubernetes_token_request_v1";

/// The shortest validity the API grants (10 minutes).
const MIN_EXPIRATION_SECONDS: i64 = 600;

/// Why a token request cannot go ahead. Messages never hold the token.
#[derive(Debug, thiserror::Error)]
enum TokenError {
    #[error("the resource has no service account name: set metadata.name")]
    NoName,
    #[error("the API server answered the token request for {0} without a token")]
    NoToken(ObjectRef),
}

impl From<TokenError> for Diagnostic {
    fn from(e: TokenError) -> Diagnostic {
        match e {
            TokenError::NoName => Diagnostic::error("Missing service account name", e.to_string())
                .at(AttributePath::root("metadata").index(0).attribute("name")),
            TokenError::NoToken(_) => Diagnostic::error("No token issued", e.to_string()),
        }
    }
}

pub struct TokenRequest {
    ctx: Arc<Context>,
}

impl TokenRequest {
    pub fn new(ctx: Arc<Context>) -> TokenRequest {
        TokenRequest { ctx }
    }
}

/// The one element of a block nested as a list of at most one (this resource) or as a single
/// object (the ephemeral `kubernetes_token_request_v1`, [`crate::ephemeral`]); `Null` when
/// absent.
fn single(block: &Value) -> &Value {
    match block.plain() {
        Value::List(items) => items.first().unwrap_or(&Value::Null),
        _ => block,
    }
}

/// The metadata element of a resource value (`Null` when absent).
fn metadata(value: &Value) -> &Value {
    single(value.get("metadata"))
}

/// The element of a block of at most one (`Null` when absent).
fn first<'a>(value: &'a Value, block: &str) -> &'a Value {
    single(value.get(block))
}

/// The service account the token is for: (namespace, name). The plan fills the namespace in.
fn account(value: &Value) -> Result<(String, String), TokenError> {
    let meta = metadata(value);
    let name = meta.get("name").as_str().ok_or(TokenError::NoName)?;
    let namespace = meta.get("namespace").as_str().unwrap_or("default");
    Ok((namespace.to_string(), name.to_string()))
}

fn account_target(namespace: &str, name: &str) -> Target {
    Target {
        resource: api_resource(service_account::info()),
        namespace: Some(namespace.to_string()),
        name: name.to_string(),
    }
}

/// The TokenRequest sent for a configuration: only what the user set.
fn request_body(config: &Value, namespace: &str, name: &str) -> Json {
    let meta = metadata(config);
    let mut metadata = Map::new();
    metadata.insert("name".into(), Json::from(name));
    metadata.insert("namespace".into(), Json::from(namespace));
    for (attribute, field) in [("labels", "labels"), ("annotations", "annotations")] {
        if meta.get(attribute).entries().is_some() {
            metadata.insert(field.into(), meta.get(attribute).to_json());
        }
    }
    let spec = first(config, "spec");
    let mut body_spec = Map::new();
    if !spec.get("audiences").is_null() {
        body_spec.insert("audiences".into(), spec.get("audiences").to_json());
    }
    if let Some(seconds) = spec.get("expiration_seconds").as_i64() {
        body_spec.insert("expirationSeconds".into(), Json::from(seconds));
    }
    let bound = first(spec, "bound_object_ref");
    if !bound.is_null() {
        let mut reference = Map::new();
        for (attribute, field) in [
            ("api_version", "apiVersion"),
            ("kind", "kind"),
            ("name", "name"),
            ("uid", "uid"),
        ] {
            if let Some(text) = bound.get(attribute).as_str() {
                reference.insert(field.into(), Json::from(text));
            }
        }
        body_spec.insert("boundObjectRef".into(), Json::Object(reference));
    }
    json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "metadata": metadata,
        "spec": body_spec,
    })
}

/// The spec the server settled on (`audiences`, `expiration_seconds`), from its answer.
pub(crate) fn answered_spec(answer: &Json) -> Value {
    let audiences = answer
        .pointer("/spec/audiences")
        .and_then(Json::as_array)
        .map(|a| {
            Value::List(
                a.iter()
                    .filter_map(|s| Some(Value::string(s.as_str()?)))
                    .collect(),
            )
        })
        .unwrap_or_default();
    Value::object([
        ("audiences", audiences),
        (
            "expiration_seconds",
            Value::from(answer.pointer("/spec/expirationSeconds").and_then(Json::as_i64)),
        ),
    ])
}

/// The new state: the planned value, its unknowns filled from the server's answer.
fn state_of(planned: &Value, answer: &Json) -> Value {
    let text =
        |pointer: &str| Value::from(answer.pointer(pointer).and_then(Json::as_str).map(str::to_string));
    let meta = Value::object([
        ("uid", text("/metadata/uid")),
        ("resource_version", text("/metadata/resourceVersion")),
        (
            "generation",
            Value::from(answer.pointer("/metadata/generation").and_then(Json::as_i64)),
        ),
    ]);
    let spec = answered_spec(answer);
    let planned_specs = planned.get("spec").elements().len();
    let observed = Value::object([
        ("token", text("/status/token")),
        ("metadata", Value::List(vec![meta])),
        ("spec", Value::List(vec![spec; planned_specs])),
    ]);
    plan::settle(planned, &observed)
}

/// The paths where `after` differs from `before`, as deep as both have the same shape.
fn changed_paths(before: &Value, after: &Value, at: &AttributePath, out: &mut Vec<AttributePath>) {
    if before == after {
        return;
    }
    match (before.plain(), after.plain()) {
        (Value::Object(b), Value::Object(a)) => {
            for key in b.keys().chain(a.keys().filter(|k| !b.contains_key(*k))) {
                let path = at.clone().attribute(key);
                changed_paths(before.get(key), after.get(key), &path, out);
            }
        }
        (Value::List(b), Value::List(a)) if b.len() == a.len() && !at.0.is_empty() => {
            for (i, (b, a)) in b.iter().zip(a).enumerate() {
                let path = at.clone().index(i64::try_from(i).unwrap_or(i64::MAX));
                changed_paths(b, a, &path, out);
            }
        }
        _ if !at.0.is_empty() => out.push(at.clone()),
        _ => {}
    }
}

/// The service account uid a token names (`kubernetes.io.serviceaccount.uid` of its JWT
/// claims); `None` when the token is not such a JWT.
fn token_account_uid(token: &str) -> Option<String> {
    let claims = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(claims.trim_end_matches('=')).ok()?;
    let claims: Json = serde_json::from_slice(&bytes).ok()?;
    claims
        .pointer("/kubernetes.io/serviceaccount/uid")
        .and_then(Json::as_str)
        .map(str::to_string)
}

/// Whether the token in `state` still belongs to the live service account `live` (`None`:
/// gone). A token whose claims name no account is taken to belong to it.
fn account_still_there(state: &Value, live: Option<&Json>) -> bool {
    let Some(live) = live else {
        return false;
    };
    let issued_for = state.get("token").as_str().and_then(token_account_uid);
    let live_uid = live.pointer("/metadata/uid").and_then(Json::as_str);
    match (issued_for, live_uid) {
        (Some(issued), Some(uid)) => issued == uid,
        _ => true,
    }
}

/// Asks the TokenRequest API for a token for the service account `namespace/name`, with
/// what `config` sets ([`request_body`]). The answer always holds the token.
pub(crate) async fn issue(
    ctx: &Context,
    config: &Value,
    namespace: &str,
    name: &str,
) -> Result<Json, Diagnostic> {
    let conn = ctx.connection()?;
    let target = account_target(namespace, name);
    let body = request_body(config, namespace, name);
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), namespace, &target.resource);
    let params = PostParams::default();
    let answer: Json = with_retry(|| api.create_subresource("token", name, &params, &body))
        .await
        .map_err(|e| ApiError::from_kube(e, &target.object_ref(), "request a token for"))?;
    if answer.pointer("/status/token").and_then(Json::as_str).is_none() {
        return Err(TokenError::NoToken(target.object_ref()).into());
    }
    Ok(answer)
}

/// An error at `at` when `spec` asks for a validity shorter than the API grants.
pub(crate) fn expiration_too_short(spec: &Value, at: AttributePath) -> Option<Diagnostic> {
    let Value::Number(seconds) = spec.get("expiration_seconds").plain() else {
        return None;
    };
    (seconds.as_f64() < MIN_EXPIRATION_SECONDS as f64).then(|| {
        Diagnostic::error(
            "Invalid expiration",
            format!("expiration_seconds must be at least {MIN_EXPIRATION_SECONDS} (10 minutes)."),
        )
        .at(at)
    })
}

impl TokenRequest {
    /// Requests the token; returns the new state.
    async fn request(&self, planned: &Value, config: &Value) -> Result<Value, Diagnostic> {
        let (namespace, name) = account(planned)?;
        let answer = issue(&self.ctx, config, &namespace, &name).await?;
        Ok(state_of(planned, &answer))
    }
}

fn metadata_block() -> NestedBlock {
    let what = "token request";
    let block = Block::new(format!("Standard {what}'s metadata."))
        .attribute(Attribute::optional(
            "annotations",
            Type::map(Type::String),
            &format!("An unstructured key value map stored with the {what} that may be used to store arbitrary metadata."),
        ))
        .attribute(Attribute::optional(
            "generate_name",
            Type::String,
            "Prefix, used by the server, to generate a unique name ONLY IF the `name` field has not been provided.",
        ))
        .attribute(Attribute::computed(
            "generation",
            Type::Number,
            "A sequence number representing a specific generation of the desired state.",
        ))
        .attribute(Attribute::optional(
            "labels",
            Type::map(Type::String),
            &format!("Map of string keys and values that can be used to organize and categorize the {what}."),
        ))
        .attribute(Attribute::optional_computed(
            "name",
            Type::String,
            "The name of the service account the token is for.",
        ))
        .attribute(Attribute::optional_computed(
            "namespace",
            Type::String,
            "The namespace of the service account the token is for. Default `default`.",
        ))
        .attribute(Attribute::computed(
            "resource_version",
            Type::String,
            &format!("An opaque value that represents the internal version of this {what}."),
        ))
        .attribute(Attribute::computed(
            "uid",
            Type::String,
            &format!("The unique in time and space value for this {what}."),
        ));
    NestedBlock::exactly_one("metadata", block)
}

/// The `spec` block (a list of at most one; the ephemeral resource nests it as a single
/// object).
pub(crate) fn spec_block() -> NestedBlock {
    let bound = Block::new(
        "BoundObjectRef is a reference to an object that the token will be bound to. The token will only \
         be valid for as long as the bound object exists.",
    )
    .attribute(Attribute::optional(
        "api_version",
        Type::String,
        "API version of the referent.",
    ))
    .attribute(Attribute::optional(
        "kind",
        Type::String,
        "Kind of the referent. Valid kinds are 'Pod' and 'Secret'.",
    ))
    .attribute(Attribute::optional("name", Type::String, "Name of the referent."))
    .attribute(Attribute::optional("uid", Type::String, "UID of the referent."));
    let spec = Block::new("Spec holds information about the request being evaluated.")
        .attribute(Attribute::optional_computed(
            "audiences",
            Type::list(Type::String),
            "Audiences are the intended audiences of the token. A recipient of a token must identify \
             themself with an identifier in the list of audiences of the token, and otherwise should \
             reject the token. Default: the API server's audiences.",
        ))
        .attribute(Attribute::optional_computed(
            "expiration_seconds",
            Type::Number,
            "The requested duration of validity of the token, at least 600 (10 minutes). The token issuer \
             may return a token with a different validity duration. Default 3600.",
        ))
        .block(NestedBlock::at_most_one("bound_object_ref", bound));
    NestedBlock::at_most_one("spec", spec)
}

#[async_trait]
impl Resource for TokenRequest {
    fn type_name(&self) -> &'static str {
        TYPE_NAME
    }

    fn schema(&self) -> Schema {
        let mut block = Block::new(
            "A token for a service account, requested through the TokenRequest API. The token is kept \
             (sensitive) in state and never read back; any change of the configuration requests a new one. \
             Nothing is written to the cluster.",
        )
        .attribute(Attribute::optional_computed(
            "id",
            Type::String,
            "`<namespace>/<name>` of the service account.",
        ))
        .attribute(
            Attribute::computed("token", Type::String, "Token is the opaque bearer token.").sensitive(),
        )
        .block(metadata_block())
        .block(spec_block());
        let _ = crate::facts::annotate(TYPE_NAME, &mut block);
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut out = Diagnostics::new();
        let meta = metadata(config);
        if !meta.is_null() && meta.get("name").is_null() {
            out.push(TokenError::NoName.into());
        }
        let at = AttributePath::root("spec")
            .index(0)
            .attribute("expiration_seconds");
        if let Some(short) = expiration_too_short(first(config, "spec"), at) {
            out.push(short);
        }
        out
    }

    async fn plan(&self, req: PlanRequest) -> Result<PlanResponse, Diagnostics> {
        let prior = Some(&req.prior_state).filter(|p| !p.is_null());
        let mut planned = plan::unknown_computed(&self.schema().block, &req.proposed_new_state, prior);
        if let Some(Value::List(items)) = planned.get_mut("metadata")
            && let Some(meta) = items.first_mut()
            && metadata(&req.config).get("namespace").is_null()
        {
            meta.set("namespace", self.ctx.planned_namespace());
        }
        if req.config.get("id").is_null() {
            let id = match account(&planned) {
                Ok((namespace, name)) if metadata(&planned).get("namespace").as_str().is_some() => {
                    Value::string(format!("{namespace}/{name}"))
                }
                _ => Value::unknown(),
            };
            planned.set("id", id);
        }
        let mut response = PlanResponse::default();
        if let Some(prior) = prior {
            // A token cannot be changed: every difference asks for a new one.
            changed_paths(
                prior,
                &planned,
                &AttributePath::default(),
                &mut response.requires_replace,
            );
        }
        response.planned_state = planned;
        Ok(response)
    }

    async fn apply(&self, req: ApplyRequest) -> ApplyResponse {
        if req.planned_state.is_null() {
            // Delete: the token expires by itself; there is nothing to remove.
            return ApplyResponse::default();
        }
        if !req.prior_state.is_null() {
            // Every change replaces, so an update only moves state along.
            return ApplyResponse {
                new_state: plan::settle(&req.planned_state, &req.prior_state),
                ..ApplyResponse::default()
            };
        }
        match self.request(&req.planned_state, &req.config).await {
            Ok(new_state) => ApplyResponse {
                new_state,
                ..ApplyResponse::default()
            },
            Err(e) => ApplyResponse {
                new_state: Value::Null,
                diagnostics: e.into(),
                ..ApplyResponse::default()
            },
        }
    }

    async fn read(&self, req: ReadRequest) -> Result<ReadResponse, Diagnostics> {
        let state = req.current_state;
        if state.is_null() {
            return Ok(ReadResponse {
                private: req.private,
                ..ReadResponse::default()
            });
        }
        let conn = self.ctx.connection().map_err(diag)?;
        let (namespace, name) = account(&state).map_err(|e| diag(Diagnostic::from(e)))?;
        let live = objects::get(&conn.client, &account_target(&namespace, &name))
            .await
            .map_err(diag)?;
        let new_state = if account_still_there(&state, live.as_ref()) {
            state
        } else {
            Value::Null
        };
        Ok(ReadResponse {
            new_state,
            private: req.private,
            ..ReadResponse::default()
        })
    }

    async fn import(&self, _req: ImportRequest) -> Result<ImportResponse, Diagnostics> {
        Err(Diagnostic::error(
            "Import not supported",
            format!(
                "{TYPE_NAME} cannot be imported: a token cannot be read back from the cluster. \
                 Declare the resource and apply to request a new token."
            ),
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource() -> TokenRequest {
        TokenRequest::new(Arc::default())
    }

    fn config(spec: Vec<Value>) -> Value {
        Value::object([
            ("id", Value::Null),
            ("token", Value::Null),
            (
                "metadata",
                Value::List(vec![Value::object([
                    ("annotations", Value::Null),
                    ("generate_name", Value::Null),
                    ("generation", Value::Null),
                    ("labels", Value::Null),
                    ("name", Value::string("ci")),
                    ("namespace", Value::Null),
                    ("resource_version", Value::Null),
                    ("uid", Value::Null),
                ])]),
            ),
            ("spec", Value::List(spec)),
        ])
    }

    fn spec(audiences: Value, seconds: Value) -> Value {
        Value::object([
            ("audiences", audiences),
            ("expiration_seconds", seconds),
            ("bound_object_ref", Value::List(vec![])),
        ])
    }

    async fn plan(prior: &Value, config: &Value) -> PlanResponse {
        resource()
            .plan(PlanRequest {
                type_name: TYPE_NAME.into(),
                prior_state: prior.clone(),
                proposed_new_state: config.clone(),
                config: config.clone(),
                prior_private: Vec::new(),
            })
            .await
            .unwrap()
    }

    fn jwt(claims: &Json) -> String {
        let part = |j: &Json| URL_SAFE_NO_PAD.encode(j.to_string());
        format!("{}.{}.c2lnbmF0dXJl", part(&json!({"alg": "RS256"})), part(claims))
    }

    #[test]
    fn the_schema_is_hashicorps() {
        let schema = resource().schema();
        let token = schema.block.find_attribute("token").unwrap();
        assert!(token.computed && token.sensitive && !token.optional);
        let id = schema.block.find_attribute("id").unwrap();
        assert!(id.optional && id.computed);
        let metadata = schema.block.find_block("metadata").unwrap();
        assert_eq!((metadata.min_items, metadata.max_items), (1, 1));
        let spec = schema.block.find_block("spec").unwrap();
        assert_eq!((spec.min_items, spec.max_items), (0, 1));
        let audiences = spec.block.find_attribute("audiences").unwrap();
        assert_eq!(audiences.ty, Type::list(Type::String));
        assert!(audiences.optional && audiences.computed);
        let bound = spec.block.find_block("bound_object_ref").unwrap();
        assert_eq!(bound.block.attributes.len(), 4);
    }

    #[tokio::test]
    async fn a_create_plans_an_unknown_token_and_a_known_id() {
        let planned = plan(&Value::Null, &config(vec![])).await.planned_state;
        assert!(planned.get("token").is_unknown());
        assert_eq!(planned.get("id"), &Value::string("default/ci"));
        assert_eq!(metadata(&planned).get("namespace"), &Value::string("default"));
        assert!(metadata(&planned).get("uid").is_unknown());
    }

    #[tokio::test]
    async fn any_change_replaces_and_no_change_plans_nothing() {
        let created = state_of(
            &plan(&Value::Null, &config(vec![spec(Value::Null, Value::Null)]))
                .await
                .planned_state,
            &json!({"metadata": {"name": "ci", "namespace": "default"},
                "spec": {"audiences": ["api"], "expirationSeconds": 3600},
                "status": {"token": "t0ken"}}),
        );
        assert_eq!(created.get("token"), &Value::string("t0ken"));
        let spec0 = first(&created, "spec");
        assert_eq!(spec0.get("audiences"), &Value::List(vec![Value::string("api")]));
        assert_eq!(spec0.get("expiration_seconds"), &Value::int(3600));
        assert!(created.is_wholly_known());

        // Unchanged: the engine proposes the prior's computed values again.
        let same = plan(&created, &created).await;
        assert_eq!(same.planned_state, created);
        assert!(same.requires_replace.is_empty());

        let mut longer = created.clone();
        if let Some(Value::List(specs)) = longer.get_mut("spec") {
            specs[0].set("expiration_seconds", Value::int(7200));
        }
        let changed = plan(&created, &longer).await;
        let paths: Vec<String> = changed.requires_replace.iter().map(ToString::to_string).collect();
        assert_eq!(paths, ["spec[0].expiration_seconds"]);
    }

    #[test]
    fn the_request_carries_only_what_is_configured() {
        let mut bound = spec(Value::List(vec![Value::string("vault")]), Value::int(600));
        bound.set(
            "bound_object_ref",
            Value::List(vec![Value::object([
                ("api_version", Value::string("v1")),
                ("kind", Value::string("Pod")),
                ("name", Value::string("runner")),
                ("uid", Value::Null),
            ])]),
        );
        assert_eq!(
            request_body(&config(vec![bound]), "ci-ns", "ci"),
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "metadata": {"name": "ci", "namespace": "ci-ns"},
                "spec": {"audiences": ["vault"], "expirationSeconds": 600,
                    "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "runner"}}})
        );
        assert_eq!(request_body(&config(vec![]), "default", "ci")["spec"], json!({}));
    }

    #[test]
    fn a_token_belongs_to_the_account_it_names() {
        let token = jwt(&json!({"kubernetes.io": {"serviceaccount": {"name": "ci", "uid": "u-1"}}}));
        assert_eq!(token_account_uid(&token).as_deref(), Some("u-1"));
        let state = Value::object([("token", Value::string(token))]);
        let account = |uid: &str| json!({"metadata": {"name": "ci", "uid": uid}});
        assert!(account_still_there(&state, Some(&account("u-1"))));
        assert!(!account_still_there(&state, Some(&account("u-2"))), "recreated");
        assert!(!account_still_there(&state, None), "deleted");
        let opaque = Value::object([("token", Value::string("not-a-jwt"))]);
        assert!(account_still_there(&opaque, Some(&account("u-2"))));
    }

    #[test]
    fn configuration_errors_point_at_their_attribute() {
        let mut short = config(vec![spec(Value::Null, Value::int(60))]);
        let found = resource().validate(&short);
        assert_eq!(
            found.0[0].attribute.as_ref().unwrap().to_string(),
            "spec[0].expiration_seconds"
        );
        if let Some(Value::List(items)) = short.get_mut("metadata") {
            items[0].set("name", Value::Null);
        }
        assert_eq!(resource().validate(&short).0.len(), 2);
        assert!(resource().validate(&config(vec![])).is_empty());
    }
}
