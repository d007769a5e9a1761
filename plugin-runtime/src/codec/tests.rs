//! Round trips, unknowns and refinements, dynamic values, exact numbers and malformed input.

use std::collections::BTreeMap;

use super::*;
use crate::value::{Number, Refinements};

fn round_trip(value: &Value, ty: &Type) -> Value {
    let bytes = encode_msgpack(value, ty).expect("encodes");
    decode_msgpack(&bytes, ty).expect("decodes")
}

fn every_type() -> Type {
    Type::object([
        ("s", Type::String),
        ("n", Type::Number),
        ("b", Type::Bool),
        ("l", Type::list(Type::String)),
        ("set", Type::set(Type::Number)),
        ("m", Type::map(Type::Bool)),
        ("t", Type::Tuple(vec![Type::String, Type::Number])),
        (
            "o",
            Type::object([("inner", Type::list(Type::object([("x", Type::String)])))]),
        ),
        ("d", Type::Dynamic),
        ("null", Type::String),
        ("unknown", Type::map(Type::String)),
    ])
}

fn every_value() -> Value {
    Value::object([
        ("s", Value::string("héllo")),
        ("n", Value::Number(Number::Float(1.5))),
        ("b", Value::Bool(true)),
        (
            "l",
            Value::List(vec![Value::string("a"), Value::unknown(), Value::Null]),
        ),
        // Not sorted: sets keep the order they were given.
        (
            "set",
            Value::Set(vec![Value::int(3), Value::int(1), Value::int(2)]),
        ),
        (
            "m",
            Value::Map(BTreeMap::from([("k".to_string(), Value::Bool(false))])),
        ),
        ("t", Value::Tuple(vec![Value::string("x"), Value::int(-7)])),
        (
            "o",
            Value::object([(
                "inner",
                Value::List(vec![Value::object([("x", Value::string("y"))])]),
            )]),
        ),
        (
            "d",
            Value::object([("a", Value::int(1)), ("b", Value::string("two"))]),
        ),
        ("null", Value::Null),
        ("unknown", Value::unknown()),
    ])
}

#[test]
fn msgpack_round_trips_every_type() {
    assert_eq!(round_trip(&every_value(), &every_type()), every_value());
}

#[test]
fn long_strings_and_collections_use_wide_headers() {
    let long = "x".repeat(70_000);
    let many: Vec<Value> = (0..70_000).map(Value::int).collect();
    let ty = Type::object([("s", Type::String), ("l", Type::list(Type::Number))]);
    let value = Value::object([("s", Value::string(long)), ("l", Value::List(many))]);
    assert_eq!(round_trip(&value, &ty), value);
}

#[test]
fn missing_object_attributes_decode_as_null() {
    let ty = Type::object([("a", Type::String), ("b", Type::Number)]);
    // {"a": "x"}
    let bytes = [0x81, 0xa1, b'a', 0xa1, b'x'];
    let value = decode_msgpack(&bytes, &ty).expect("decodes");
    assert_eq!(
        value,
        Value::object([("a", Value::string("x")), ("b", Value::Null)])
    );
}

#[test]
fn unknowns_are_written_plain() {
    let refined = Value::Unknown(Refinements {
        not_null: true,
        string_prefix: Some("abc".into()),
        ..Refinements::default()
    });
    assert_eq!(
        encode_msgpack(&refined, &Type::String).expect("encodes"),
        vec![0xd4, 0, 0]
    );
    assert_eq!(
        encode_msgpack(&Value::unknown(), &Type::Dynamic).expect("encodes"),
        vec![0xd4, 0, 0]
    );
    assert_eq!(
        decode_msgpack(&[0xd4, 0, 0], &Type::Number).expect("decodes"),
        Value::unknown()
    );
    // A zero-length extension (ext8, length 0) is a plain unknown too.
    assert_eq!(
        decode_msgpack(&[0xc7, 0, 0], &Type::Bool).expect("decodes"),
        Value::unknown()
    );
}

/// An ext 12 value carrying `map` (msgpack bytes of the refinement map).
fn refined(map: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0xc7, map.len() as u8, 12];
    bytes.extend_from_slice(map);
    bytes
}

#[test]
fn refinements_are_read() {
    // {1: false, 2: "pre"}
    let string = refined(&[0x82, 0x01, 0xc2, 0x02, 0xa3, b'p', b'r', b'e']);
    assert_eq!(
        decode_msgpack(&string, &Type::String).expect("decodes"),
        Value::Unknown(Refinements {
            not_null: true,
            string_prefix: Some("pre".into()),
            ..Refinements::default()
        })
    );

    // {3: [0, true], 4: ["1e300", false]}: bounds may be decimal text
    let mut number = vec![0x82, 0x03, 0x92, 0x00, 0xc3, 0x04, 0x92, 0xa5];
    number.extend_from_slice(b"1e300");
    number.push(0xc2);
    assert_eq!(
        decode_msgpack(&refined(&number), &Type::Number).expect("decodes"),
        Value::Unknown(Refinements {
            number_lower: Some((Number::Int(0), true)),
            number_upper: Some((Number::Decimal("1e300".into()), false)),
            ..Refinements::default()
        })
    );

    // {5: 1, 6: 3, 9: [1]}: an unknown key is skipped.
    let list = refined(&[0x83, 0x05, 0x01, 0x06, 0x03, 0x09, 0x91, 0x01]);
    assert_eq!(
        decode_msgpack(&list, &Type::list(Type::String)).expect("decodes"),
        Value::Unknown(Refinements {
            length_lower: Some(1),
            length_upper: Some(3),
            ..Refinements::default()
        })
    );
}

#[test]
fn bad_extensions_are_errors() {
    let wrong_code = [0xd5, 5, 1, 2];
    assert!(matches!(
        decode_msgpack(&wrong_code, &Type::String).map_err(|e| e.kind),
        Err(CodecErrorKind::BadUnknown(_))
    ));
    let not_a_map = refined(&[0x92, 0x01, 0x02]);
    assert!(matches!(
        decode_msgpack(&not_a_map, &Type::String).map_err(|e| e.kind),
        Err(CodecErrorKind::BadUnknown(_))
    ));
    let prefix_on_number = refined(&[0x81, 0x02, 0xa1, b'x']);
    assert!(matches!(
        decode_msgpack(&prefix_on_number, &Type::Number).map_err(|e| e.kind),
        Err(CodecErrorKind::BadUnknown(_))
    ));
    let truncated_payload = [0xd6, 12, 0x81];
    assert_eq!(
        decode_msgpack(&truncated_payload, &Type::String).map_err(|e| e.kind),
        Err(CodecErrorKind::Truncated)
    );
}

#[test]
fn dynamic_values_carry_their_type() {
    let value = Value::List(vec![Value::string("a"), Value::string("b")]);
    let bytes = encode_msgpack(&value, &Type::Dynamic).expect("encodes");
    let type_json = br#"["list","string"]"#;
    assert_eq!(&bytes[..3], &[0x92, 0xc4, type_json.len() as u8]);
    assert_eq!(&bytes[3..3 + type_json.len()], type_json);
    assert_eq!(decode_msgpack(&bytes, &Type::Dynamic).expect("decodes"), value);

    // The engine may send the type JSON as a str rather than bin.
    let mut as_str = vec![0x92, 0xa8];
    as_str.extend_from_slice(br#""number""#);
    as_str.push(0x2a);
    assert_eq!(
        decode_msgpack(&as_str, &Type::Dynamic).expect("decodes"),
        Value::int(42)
    );

    assert_eq!(
        encode_msgpack(&Value::Null, &Type::Dynamic).expect("encodes"),
        vec![0xc0]
    );
    let bad_type = [0x92, 0xa4, b'"', b'x', b'y', b'"', 0xc0];
    assert!(matches!(
        decode_msgpack(&bad_type, &Type::Dynamic).map_err(|e| e.kind),
        Err(CodecErrorKind::BadType(_))
    ));
}

#[test]
fn big_integers_lose_nothing() {
    let cases = [
        Number::Int((1 << 53) + 1),
        Number::Int(i64::MIN),
        Number::Int(i64::MAX),
        Number::Decimal("18446744073709551621".into()), // 2^64 + 5
        Number::Decimal("18446744073709551615".into()), // u64::MAX, sent as uint64
        Number::Decimal("-9223372036854775809".into()), // below i64
        Number::Decimal("3.14159265358979323846264338327950288".into()),
        Number::Float(0.1),
    ];
    for n in cases {
        let value = Value::Number(n.clone());
        assert_eq!(round_trip(&value, &Type::Number), value, "{n}");
    }
    // uint64 from the wire beyond i64 becomes decimal text.
    let mut max = vec![0xcf];
    max.extend_from_slice(&u64::MAX.to_be_bytes());
    assert_eq!(
        decode_msgpack(&max, &Type::Number).expect("decodes"),
        Value::Number(Number::Decimal(u64::MAX.to_string()))
    );
    // A number written as a string.
    let mut text = vec![0xb5];
    text.extend_from_slice(b"123456789012345678901");
    assert_eq!(
        decode_msgpack(&text, &Type::Number).expect("decodes"),
        Value::Number(Number::Decimal("123456789012345678901".into()))
    );
}

#[test]
fn malformed_msgpack_is_a_typed_error() {
    let kind = |bytes: &[u8], ty: &Type| decode_msgpack(bytes, ty).map_err(|e| e.kind).unwrap_err();
    assert_eq!(kind(&[], &Type::String), CodecErrorKind::Truncated);
    assert_eq!(
        kind(&[0x92, 0x01], &Type::list(Type::Number)),
        CodecErrorKind::Truncated
    );
    assert_eq!(kind(&[0xa5, b'a'], &Type::String), CodecErrorKind::Truncated);
    // A huge claimed length with no data behind it.
    assert_eq!(
        kind(&[0xdd, 0xff, 0xff, 0xff, 0xff], &Type::list(Type::Number)),
        CodecErrorKind::Truncated
    );
    assert_eq!(kind(&[0xc1], &Type::String), CodecErrorKind::BadMarker(0xc1));
    assert_eq!(
        kind(&[0xc0, 0xc0], &Type::String),
        CodecErrorKind::TrailingBytes(1)
    );
    assert_eq!(kind(&[0xa2, 0xff, 0xfe], &Type::String), CodecErrorKind::BadUtf8);
    assert_eq!(
        kind(&[0xa1, b'x'], &Type::Number),
        CodecErrorKind::BadNumber("x".into())
    );
    assert_eq!(
        kind(&[0x92, 0x01, 0x02], &Type::Tuple(vec![Type::Number])),
        CodecErrorKind::TupleLength {
            expected: 1,
            found: 2
        }
    );
    assert_eq!(
        kind(&[0x81, 0x01, 0x01], &Type::map(Type::Number)),
        CodecErrorKind::NonStringKey
    );
    let mut deep = vec![0x91; MAX_DEPTH + 2];
    deep.push(0xc0);
    let mut nested = Type::String;
    for _ in 0..MAX_DEPTH + 2 {
        nested = Type::list(nested);
    }
    assert_eq!(kind(&deep, &nested), CodecErrorKind::TooDeep);
}

#[test]
fn errors_name_the_attribute_path() {
    let ty = Type::object([(
        "metadata",
        Type::list(Type::object([("labels", Type::map(Type::String))])),
    )]);
    // {"metadata": [{"labels": {"app": 1}}]}
    let mut bytes = vec![0x81, 0xa8];
    bytes.extend_from_slice(b"metadata");
    bytes.extend_from_slice(&[0x91, 0x81, 0xa6]);
    bytes.extend_from_slice(b"labels");
    bytes.extend_from_slice(&[0x81, 0xa3, b'a', b'p', b'p', 0x01]);
    let error = decode_msgpack(&bytes, &ty).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"at metadata[0].labels["app"]: a string is required, found number"#
    );

    let extra = [0x81, 0xa1, b'z', 0xc0];
    assert_eq!(
        decode_msgpack(&extra, &Type::object([("a", Type::String)])).map_err(|e| e.kind),
        Err(CodecErrorKind::UnsupportedAttribute("z".into()))
    );
}

#[test]
fn encoding_a_value_that_does_not_fit_is_an_error() {
    let ty = Type::object([("a", Type::list(Type::Number))]);
    let value = Value::object([("a", Value::List(vec![Value::int(1), Value::string("two")]))]);
    let error = encode_msgpack(&value, &ty).unwrap_err();
    assert_eq!(error.to_string(), "at a[1]: a number is required, found string");

    let extra = Value::object([("a", Value::Null), ("b", Value::Null)]);
    assert_eq!(
        encode_msgpack(&extra, &ty).map_err(|e| e.kind),
        Err(CodecErrorKind::UnsupportedAttribute("b".into()))
    );
    let short = Value::Tuple(vec![Value::int(1)]);
    assert!(matches!(
        encode_msgpack(&short, &Type::Tuple(vec![Type::Number, Type::Number])).map_err(|e| e.kind),
        Err(CodecErrorKind::TupleLength { .. })
    ));
}

#[test]
fn json_state_decodes_against_the_current_schema() {
    let ty = Type::object([
        ("id", Type::String),
        ("replicas", Type::Number),
        ("enabled", Type::Bool),
        ("tags", Type::set(Type::String)),
        ("extra", Type::Dynamic),
        ("added_later", Type::String),
    ]);
    let state = br#"{
        "id": "ns/name\u00e9\ud83d\ude00",
        "replicas": 18446744073709551621,
        "enabled": "true",
        "tags": ["b", "a"],
        "extra": {"value": {"k": [1, "x"]}, "type": ["object", {"k": ["tuple", ["number", "string"]]}]},
        "removed_since": 7
    }"#;
    let value = decode_json(state, &ty).expect("decodes");
    assert_eq!(
        value,
        Value::object([
            ("id", Value::string("ns/nameé😀")),
            (
                "replicas",
                Value::Number(Number::Decimal("18446744073709551621".into()))
            ),
            ("enabled", Value::Bool(true)),
            ("tags", Value::Set(vec![Value::string("b"), Value::string("a")])),
            (
                "extra",
                Value::object([("k", Value::Tuple(vec![Value::int(1), Value::string("x")]))])
            ),
            ("added_later", Value::Null),
        ])
    );
}

#[test]
fn json_primitives_convert_like_cty() {
    assert_eq!(
        decode_json(b"42", &Type::String).expect("decodes"),
        Value::string("42")
    );
    assert_eq!(
        decode_json(b"true", &Type::String).expect("decodes"),
        Value::string("true")
    );
    assert_eq!(
        decode_json(br#""2.5""#, &Type::Number).expect("decodes"),
        Value::Number(Number::Float(2.5))
    );
    assert_eq!(
        decode_json(b"null", &Type::Dynamic).expect("decodes"),
        Value::Null
    );
}

#[test]
fn malformed_json_is_a_typed_error() {
    let kind = |bytes: &[u8], ty: &Type| decode_json(bytes, ty).map_err(|e| e.kind).unwrap_err();
    assert_eq!(kind(br#"{"a": [1, 2"#, &Type::Dynamic), CodecErrorKind::Truncated);
    assert_eq!(kind(br#""abc"#, &Type::String), CodecErrorKind::Truncated);
    assert!(matches!(
        kind(b"[1,]", &Type::list(Type::Number)),
        CodecErrorKind::BadJson(_)
    ));
    assert!(matches!(
        kind(b"{} {}", &Type::Dynamic),
        CodecErrorKind::BadJson(_)
    ));
    assert!(matches!(
        kind(br#""\ud800""#, &Type::String),
        CodecErrorKind::BadJson(_)
    ));
    assert_eq!(kind(b"[1]", &Type::Dynamic), CodecErrorKind::BadDynamic);
    let error = decode_json(
        br#"{"a": {"b": [true]}}"#,
        &Type::object([("a", Type::map(Type::list(Type::Number)))]),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"at a["b"][0]: a number is required, found bool"#
    );
}

#[test]
fn dynamic_value_prefers_msgpack_then_json_then_null() {
    assert_eq!(
        decode_dynamic_value(&[0x01], b"2", &Type::Number).expect("decodes"),
        Value::int(1)
    );
    assert_eq!(
        decode_dynamic_value(&[], b"2", &Type::Number).expect("decodes"),
        Value::int(2)
    );
    assert_eq!(
        decode_dynamic_value(&[], &[], &Type::Number).expect("decodes"),
        Value::Null
    );
}
