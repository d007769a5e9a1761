//! Tests of the ephemeral resource RPCs.

use super::*;

#[tokio::test]
async fn ephemeral_resources_open_renew_and_close_with_their_private_bytes() {
    let service = service();
    let config = Value::object([("holder", Value::string("me")), ("id", Value::Null)]);
    let validated = service
        .validate_ephemeral_resource_config(Request::new(pb::validate_ephemeral_resource_config::Request {
            type_name: "test_lease".into(),
            config: Some(argument(
                &Value::object([("holder", Value::string(""))]),
                &lease_type(),
            )),
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(validated.diagnostics[0].summary, "Empty holder");

    let opened = service
        .open_ephemeral_resource(Request::new(pb::open_ephemeral_resource::Request {
            type_name: "test_lease".into(),
            config: Some(argument(&config, &lease_type())),
            client_capabilities: None,
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert!(opened.diagnostics.is_empty(), "{:?}", opened.diagnostics);
    let result = decode(opened.result.as_ref(), &lease_type(), "result").expect("decodes");
    assert_eq!(result.get("id").as_str(), Some("lease-of-me"));
    assert_eq!(opened.renew_at.map(|t| t.seconds), Some(1_000));
    assert_eq!(opened.private.as_deref(), Some(&b"lease-of-me"[..]));

    let renewed = service
        .renew_ephemeral_resource(Request::new(pb::renew_ephemeral_resource::Request {
            type_name: "test_lease".into(),
            private: opened.private,
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(renewed.renew_at, None);
    assert_eq!(renewed.private.as_deref(), Some(&b"lease-of-me+renewed"[..]));

    let closed = service
        .close_ephemeral_resource(Request::new(pb::close_ephemeral_resource::Request {
            type_name: "test_lease".into(),
            private: renewed.private,
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(closed.diagnostics[0].detail, "lease-of-me+renewed");

    let unknown = service
        .open_ephemeral_resource(Request::new(pb::open_ephemeral_resource::Request {
            type_name: "test_other".into(),
            ..Default::default()
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert_eq!(unknown.diagnostics[0].summary, "Unknown ephemeral resource type");
    assert_eq!(unknown.result, None);
}
