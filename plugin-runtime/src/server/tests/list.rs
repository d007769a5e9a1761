//! Tests of the list resource RPCs.

use super::*;

async fn list(
    type_name: &str,
    config: Value,
    include_resource_object: bool,
    limit: i64,
) -> Vec<pb::list_resource::Event> {
    use futures::StreamExt;
    let ty = Widgets.schema().value_type();
    let response = service()
        .list_resource(Request::new(pb::list_resource::Request {
            type_name: type_name.into(),
            config: Some(encode(&config, &ty, "config").unwrap()),
            include_resource_object,
            limit,
        }))
        .await
        .unwrap();
    response.into_inner().map(|event| event.unwrap()).collect().await
}

#[tokio::test]
async fn list_resources_stream_identities_up_to_the_limit_and_stop_at_an_error() {
    let svc = service();
    let metadata = svc
        .get_metadata(Request::new(pb::get_metadata::Request {}))
        .await
        .unwrap()
        .into_inner();
    let names: Vec<_> = metadata
        .list_resources
        .iter()
        .map(|l| l.type_name.as_str())
        .collect();
    assert_eq!(names, ["test_widget", "test_widget_v1"]);
    let schema = svc
        .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
        .await
        .unwrap()
        .into_inner();
    assert!(schema.list_resource_schemas.contains_key("test_widget_v1"));

    let identity_type = Widget.identity_schema().unwrap().value_type();
    let config =
        |count: i64, fail: bool| Value::object([("count", Value::from(count)), ("fail", Value::Bool(fail))]);
    let events = list("test_widget", config(5, false), false, 2).await;
    assert_eq!(events.len(), 2);
    let identity = events[1].identity.as_ref().and_then(|i| i.identity_data.as_ref());
    let identity = decode(identity, &identity_type, "identity").unwrap();
    assert_eq!(identity.get("name").as_str(), Some("w1"));
    assert_eq!(events[1].display_name, "w1");
    assert!(events[1].resource_object.is_none());

    // No limit: every object, each with its resource object in the resource's schema.
    let events = list("test_widget_v1", config(3, false), true, 0).await;
    assert_eq!(events.len(), 3);
    let object = decode(events[2].resource_object.as_ref(), &widget_type(), "object").unwrap();
    assert_eq!(object.get("id").as_str(), Some("w2"));

    // An error is the last event.
    let events = list("test_widget", config(1, true), false, 10).await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].diagnostic[0].summary, "Listing failed");

    let events = list("test_nothing", config(1, false), false, 10).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].diagnostic[0].summary, "Unknown list resource type");

    let ty = Widgets.schema().value_type();
    let validated = svc
        .validate_list_resource_config(Request::new(pb::validate_list_resource_config::Request {
            type_name: "test_widget".into(),
            config: Some(encode(&config(-1, false), &ty, "config").unwrap()),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(validated.diagnostics[0].summary, "Negative count");
}
