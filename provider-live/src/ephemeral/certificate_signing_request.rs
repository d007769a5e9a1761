//! Ephemeral `kubernetes_certificate_signing_request_v1`: a certificate signed through the
//! certificates.k8s.io API, e.g. a client certificate for a provider block of this run.
//!
//! Open creates the CertificateSigningRequest, approves it unless `auto_approve = false`
//! (approval is the default, as in hashicorp's), waits for the signer to issue the
//! certificate and returns it (PEM). The request is deleted right after, whatever came of it,
//! so none is left behind and there is nothing to close. A signer that issues nothing within
//! [`SIGNING_TIMEOUT`] is an error naming the request and the signer.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Preconditions};
use kube_estate::{ApiError, ObjectRef, with_retry};
use plugin_runtime::{
    Attribute, AttributePath, Block, Diagnostic, Diagnostics, EphemeralResource, NestedBlock, Nesting,
    OpenRequest, OpenResponse, Schema, Type, Value,
};
use serde_json::{Map, Value as Json, json};

use super::required_block;
use crate::behaviour::special::signing;
use crate::context::Context;
use crate::kind::api_resource;
use crate::kinds::token_request::expiration_too_short;
use crate::lifecycle::diag;
use crate::objects::{self, FIELD_MANAGER, Pace, Readiness, Target, WaitError};
use crate::plan;

/// How long a signer may take to issue the certificate.
const SIGNING_TIMEOUT: Duration = Duration::from_secs(300);

/// Time between two looks at the request while waiting for its certificate.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

const APPROVAL_MESSAGE: &str = "This CertificateSigningRequest was auto-approved by Terraform";

/// Why no certificate came. Messages never hold the certificate.
#[derive(Debug, thiserror::Error)]
enum CsrError {
    #[error("spec is required: set spec.request (a PEM certificate request) and spec.signer_name")]
    NoSpec,
    #[error(
        "{object} was not signed within {after:?}: the signer {signer:?} issued no certificate{}. \
         The request was deleted.",
        approval_hint(*approved)
    )]
    NotSigned {
        object: ObjectRef,
        after: Duration,
        signer: String,
        approved: bool,
    },
    #[error("the certificate issued for {0} is not base64-encoded PEM text")]
    BadCertificate(ObjectRef),
    #[error(transparent)]
    Api(Box<ApiError>),
    #[error(transparent)]
    Wait(Box<WaitError>),
}

/// What to look at when no certificate came.
fn approval_hint(approved: bool) -> &'static str {
    if approved {
        " (the request was approved; is that signer's controller running?)"
    } else {
        " (auto_approve is false: was the request approved?)"
    }
}

impl From<CsrError> for Diagnostic {
    fn from(e: CsrError) -> Diagnostic {
        match e {
            CsrError::NoSpec => {
                Diagnostic::error("Missing spec", e.to_string()).at(AttributePath::root("spec"))
            }
            CsrError::NotSigned { .. } => Diagnostic::error("Certificate not issued", e.to_string()),
            CsrError::BadCertificate(_) => Diagnostic::error("Invalid certificate", e.to_string()),
            CsrError::Api(e) => (*e).into(),
            CsrError::Wait(e) => (*e).into(),
        }
    }
}

pub struct CertificateSigningRequest {
    ctx: Arc<Context>,
}

impl CertificateSigningRequest {
    pub fn new(ctx: Arc<Context>) -> CertificateSigningRequest {
        CertificateSigningRequest { ctx }
    }
}

fn target(name: &str) -> Target {
    let info = &crate::catalog::entry("kubernetes_certificate_signing_request_v1")
        .expect("the catalog has certificate signing requests")
        .info;
    Target {
        resource: api_resource(info),
        namespace: None,
        name: name.to_string(),
    }
}

/// The CertificateSigningRequest for a configuration: the PEM request goes base64-encoded,
/// as the API's `[]byte` fields do.
fn request_body(config: &Value) -> Result<Json, CsrError> {
    let spec = config.get("spec");
    let (Some(request), Some(signer)) = (spec.get("request").as_str(), spec.get("signer_name").as_str())
    else {
        return Err(CsrError::NoSpec);
    };
    let mut body_spec = Map::new();
    body_spec.insert("request".into(), Json::from(STANDARD.encode(request)));
    body_spec.insert("signerName".into(), Json::from(signer));
    if !spec.get("usages").is_null() {
        body_spec.insert("usages".into(), spec.get("usages").to_json());
    }
    if let Some(seconds) = spec.get("expiration_seconds").as_i64() {
        body_spec.insert("expirationSeconds".into(), Json::from(seconds));
    }
    Ok(json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": config.get("metadata").get("name").to_json()},
        "spec": body_spec,
    }))
}

/// The PEM certificate of a signed request.
fn certificate_of(target: &Target, csr: &Json) -> Result<String, CsrError> {
    let bad = || CsrError::BadCertificate(target.object_ref());
    let encoded = csr
        .pointer("/status/certificate")
        .and_then(Json::as_str)
        .ok_or_else(bad)?;
    let bytes = STANDARD.decode(encoded).map_err(|_| bad())?;
    String::from_utf8(bytes).map_err(|_| bad())
}

/// Approves the created request unless the configuration says not to, then waits for its
/// certificate.
async fn approve_and_wait(
    client: &Client,
    target: &Target,
    created: &Json,
    config: &Value,
    timeout: Duration,
) -> Result<String, CsrError> {
    let approve = config.get("auto_approve").as_bool() != Some(false);
    let seen = if approve {
        objects::approve(client, target, created, APPROVAL_MESSAGE)
            .await
            .map_err(|e| CsrError::Api(Box::new(e)))?
    } else {
        created.clone()
    };
    let pace = Pace::new(POLL_INTERVAL, timeout);
    let check =
        |live: Option<&Json>| live.map_or_else(|| Readiness::Failed("it was deleted".into()), signing);
    match objects::poll(client, target, Some(seen), pace, "be signed", check).await {
        Ok(signed) => certificate_of(target, signed.as_ref().unwrap_or(&Json::Null)),
        Err(WaitError::Timeout(t)) => Err(CsrError::NotSigned {
            object: t.object,
            after: t.after,
            signer: config
                .get("spec")
                .get("signer_name")
                .as_str()
                .unwrap_or_default()
                .to_string(),
            approved: approve,
        }),
        Err(e) => Err(CsrError::Wait(Box::new(e))),
    }
}

/// Deletes the request `uid` names, whatever its version; one already gone is fine.
async fn delete(client: &Client, target: &Target, uid: Option<&str>) -> Result<(), ApiError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &target.resource);
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: uid.map(str::to_string),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match with_retry(|| api.delete(&target.name, &params)).await {
        Ok(_) => Ok(()),
        Err(e) if matches!(&e.error, kube::Error::Api(status) if status.is_not_found()) => Ok(()),
        Err(e) => Err(ApiError::from_kube(e, &target.object_ref(), "delete")),
    }
}

/// Creates the request, has it approved and signed within `timeout`, and deletes it again.
/// Returns the PEM certificate, with a warning when the request could not be deleted.
async fn request_certificate(
    client: &Client,
    config: &Value,
    timeout: Duration,
) -> Result<(String, Diagnostics), Diagnostics> {
    let body = request_body(config).map_err(diag)?;
    let target = target(config.get("metadata").get("name").as_str().unwrap_or_default());
    let created = objects::create(client, &target, &body, FIELD_MANAGER)
        .await
        .map_err(diag)?;
    let outcome = approve_and_wait(client, &target, &created, config, timeout).await;
    // Whatever came of it, the request goes: the next open creates it anew.
    let mut notes = Diagnostics::new();
    let uid = created.pointer("/metadata/uid").and_then(Json::as_str);
    if let Err(e) = delete(client, &target, uid).await {
        notes.push(Diagnostic::warning(
            format!("{} was not deleted", target.object_ref()),
            e.to_string(),
        ));
    }
    match outcome {
        Ok(certificate) => Ok((certificate, notes)),
        Err(e) => {
            let mut errors = diag(e);
            errors.extend(notes);
            Err(errors)
        }
    }
}

#[async_trait]
impl EphemeralResource for CertificateSigningRequest {
    fn type_name(&self) -> &'static str {
        "kubernetes_certificate_signing_request_v1"
    }

    fn schema(&self) -> Schema {
        let metadata = Block::new("The request's metadata.").attribute(Attribute::required(
            "name",
            Type::String,
            "The name of the CertificateSigningRequest (cluster-wide). It is deleted once the \
             certificate is read, so the name is free again for the next run.",
        ));
        let spec = Block::new("The certificate request.")
            .attribute(Attribute::optional(
                "expiration_seconds",
                Type::Number,
                "The requested duration of validity of the issued certificate, at least 600. The \
                 signer may issue a certificate with a different validity duration.",
            ))
            .attribute(Attribute::required(
                "request",
                Type::String,
                "The PEM-encoded x509 certificate request (`-----BEGIN CERTIFICATE REQUEST-----`).",
            ))
            .attribute(Attribute::required(
                "signer_name",
                Type::String,
                "The signer the request is for, e.g. `kubernetes.io/kube-apiserver-client`.",
            ))
            .attribute(Attribute::optional(
                "usages",
                Type::list(Type::String),
                "The key usages requested in the issued certificate, e.g. `client auth`, `digital \
                 signature`.",
            ));
        let block = Block::new(
            "A certificate signed by a signer of the cluster through a CertificateSigningRequest, \
             which is created, approved (unless `auto_approve` is false) and deleted again once the \
             certificate is issued. Never stored in a plan or state.",
        )
        .attribute(Attribute::optional(
            "auto_approve",
            Type::Bool,
            "Automatically approve the Certificate Signing Request. Default true.",
        ))
        .attribute(Attribute::optional_computed(
            "certificate",
            Type::String,
            "The PEM-encoded certificate the signer issued.",
        ))
        .block(required_block("metadata", metadata))
        .block(NestedBlock::new("spec", Nesting::Single, spec));
        Schema::new(0, block)
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let spec = config.get("spec");
        if spec.is_null() {
            return diag(CsrError::NoSpec);
        }
        let at = AttributePath::root("spec").attribute("expiration_seconds");
        expiration_too_short(spec, at).into_iter().collect()
    }

    async fn open(&self, request: OpenRequest) -> Result<OpenResponse, Diagnostics> {
        let conn = self.ctx.connection().map_err(diag)?;
        let config = &request.config;
        let (certificate, diagnostics) = request_certificate(&conn.client, config, SIGNING_TIMEOUT).await?;
        let observed = Value::object([("certificate", Value::String(certificate))]);
        let planned = plan::unknown_computed(&self.schema().block, config, None);
        Ok(OpenResponse {
            result: plan::settle(&planned, &observed),
            diagnostics,
            ..OpenResponse::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube_test_server::{Options, TestServer};

    fn config(auto_approve: Value, name: &str) -> Value {
        Value::object([
            ("auto_approve", auto_approve),
            ("certificate", Value::Null),
            ("metadata", Value::object([("name", Value::string(name))])),
            (
                "spec",
                Value::object([
                    ("expiration_seconds", Value::Null),
                    (
                        "request",
                        Value::string("-----BEGIN CERTIFICATE REQUEST-----\n..."),
                    ),
                    ("signer_name", Value::string("example.com/signer")),
                    ("usages", Value::List(vec![Value::string("client auth")])),
                ]),
            ),
        ])
    }

    #[test]
    fn the_request_carries_the_pem_base64_encoded() {
        let body = request_body(&config(Value::Null, "a")).unwrap();
        let request = STANDARD
            .decode(body["spec"]["request"].as_str().unwrap())
            .unwrap();
        assert!(request.starts_with(b"-----BEGIN CERTIFICATE REQUEST-----"));
        assert_eq!(body["spec"]["usages"], json!(["client auth"]));
        assert_eq!(body["metadata"]["name"], "a");
        assert!(body["spec"].get("expirationSeconds").is_none());
        let no_spec = Value::object([("spec", Value::Null)]);
        assert!(matches!(request_body(&no_spec), Err(CsrError::NoSpec)));
        let refused = CertificateSigningRequest::new(Arc::default()).validate(&no_spec);
        assert_eq!(refused.0[0].attribute.as_ref().unwrap().to_string(), "spec");
    }

    #[tokio::test]
    async fn an_unsigned_request_times_out_naming_it_and_is_deleted() {
        let server = TestServer::start(Options::default());
        let client = objects::test_client(&server).await;
        let errors = request_certificate(&client, &config(Value::Null, "unsigned"), Duration::from_secs(2))
            .await
            .unwrap_err();
        let error = &errors.0[0];
        assert_eq!(error.summary, "Certificate not issued");
        assert!(
            error.detail.contains("CertificateSigningRequest \"unsigned\"")
                && error.detail.contains("\"example.com/signer\"")
                && error.detail.contains("was approved"),
            "{}",
            error.detail
        );
        assert_eq!(errors.0.len(), 1, "deleted without a warning: {errors:?}");
        let target = target("unsigned");
        assert!(
            objects::get(&client, &target).await.unwrap().is_none(),
            "the request was deleted"
        );
    }
}
