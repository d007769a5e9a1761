//! Tests of the function RPCs.

use super::*;

#[tokio::test]
async fn functions_take_typed_arguments_and_return_dynamic_values() {
    let call = |arguments: Vec<pb::DynamicValue>| async move {
        service()
            .call_function(Request::new(pb::call_function::Request {
                name: "describe".into(),
                arguments,
            }))
            .await
            .expect("rpc")
            .into_inner()
    };
    let answer = call(vec![
        argument(&Value::string("x"), &Type::String),
        argument(&Value::int(1), &Type::Number),
        argument(&Value::int(2), &Type::Number),
    ])
    .await;
    assert_eq!(answer.error, None);
    let result = answer.result.expect("result");
    // A dynamic return goes as [type, value]: the type is the value's own.
    let value = codec::decode_msgpack(&result.msgpack, &Type::Dynamic).expect("decodes");
    assert_eq!(
        value.infer_type(),
        Type::object([
            ("text", Type::String),
            ("numbers", Type::Tuple(vec![Type::Number, Type::Number])),
        ])
    );
    assert_eq!(value.get("numbers").elements(), [Value::int(1), Value::int(2)]);

    let refused = call(vec![argument(&Value::string(""), &Type::String)]).await;
    assert_eq!(refused.result, None);
    let error = refused.error.expect("error");
    assert_eq!(
        (error.text.as_str(), error.function_argument),
        ("text is empty", Some(0))
    );

    let missing = call(vec![]).await.error.expect("error");
    assert!(missing.text.contains("takes 1 argument"), "{missing:?}");
    assert_eq!(missing.function_argument, None);

    // A number where text is due: the argument it came in is named.
    let wrong = call(vec![
        argument(&Value::string("x"), &Type::String),
        argument(&Value::string("y"), &Type::String),
    ])
    .await
    .error
    .expect("error");
    assert_eq!(wrong.function_argument, Some(1), "{wrong:?}");

    let unknown = service()
        .call_function(Request::new(pb::call_function::Request {
            name: "nope".into(),
            arguments: vec![],
        }))
        .await
        .expect("rpc")
        .into_inner();
    assert!(unknown.error.expect("error").text.contains("\"nope\""));
}
