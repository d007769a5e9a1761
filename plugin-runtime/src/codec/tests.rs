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

/// A dynamic value as cty writes it: `[type JSON as bin, value]`.
fn pair(type_json: &str, value: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0x92, 0xc4, type_json.len() as u8];
    bytes.extend_from_slice(type_json.as_bytes());
    bytes.extend_from_slice(value);
    bytes
}

/// Decodes `bytes` as a dynamic value, checks it says `type_json` as its type and encodes
/// back to the very same bytes; returns the value.
fn keeps_its_type(bytes: &[u8], type_json: &str) -> Value {
    let value = decode_msgpack(bytes, &Type::Dynamic).expect("decodes");
    let ty = Type::from_json_bytes(type_json.as_bytes()).expect("a type");
    assert_eq!(value.infer_type(), ty, "{value:?}");
    assert_eq!(
        encode_msgpack(&value, &Type::Dynamic).expect("encodes"),
        bytes,
        "{type_json} came back changed"
    );
    value
}

#[test]
fn a_typed_null_keeps_its_type() {
    let value = keeps_its_type(&pair(r#"["map","string"]"#, &[0xc0]), r#"["map","string"]"#);
    assert!(matches!(&value, Value::Typed(t) if *t.ty() == Type::map(Type::String) && t.value().is_null()));
    assert!(value.is_null());
    assert_eq!(value.to_json(), serde_json::Value::Null);
    keeps_its_type(&pair(r#""string""#, &[0xc0]), r#""string""#);
    // A typed unknown stays typed too.
    let unknown = keeps_its_type(
        &pair(r#"["list","number"]"#, &[0xd4, 0, 0]),
        r#"["list","number"]"#,
    );
    assert!(unknown.is_unknown() && !unknown.is_wholly_known());
}

#[test]
fn empty_collections_keep_their_types() {
    let list = keeps_its_type(&pair(r#"["list","string"]"#, &[0x90]), r#"["list","string"]"#);
    assert_eq!(list.elements(), &[] as &[Value]);
    keeps_its_type(&pair(r#"["set","string"]"#, &[0x90]), r#"["set","string"]"#);
    // tomap({}) and toset([]): collections of `dynamic`.
    let map = keeps_its_type(&pair(r#"["map","dynamic"]"#, &[0x80]), r#"["map","dynamic"]"#);
    assert_eq!(map.entries().map(BTreeMap::len), Some(0));
    keeps_its_type(&pair(r#"["set","dynamic"]"#, &[0x90]), r#"["set","dynamic"]"#);
    keeps_its_type(&pair(r#"["map","string"]"#, &[0x80]), r#"["map","string"]"#);
    // Non-empty ones need nothing carried: their content says their type.
    let strings =
        decode_msgpack(&pair(r#"["list","string"]"#, &[0x91, 0xa1, b'a']), &Type::Dynamic).expect("decodes");
    assert_eq!(strings, Value::List(vec![Value::string("a")]));
}

#[test]
fn objects_of_mixed_types_keep_each_attributes_type() {
    // {ids: [] of string, m: null map(string), n: 1, s: "x", t: [true]}
    let type_json = r#"["object",{"ids":["list","string"],"m":["map","string"],"n":"number","s":"string","t":["tuple",["bool"]]}]"#;
    let mut value = vec![
        0x85, 0xa3, b'i', b'd', b's', 0x90, 0xa1, b'm', 0xc0, 0xa1, b'n', 0x01,
    ];
    value.extend_from_slice(&[0xa1, b's', 0xa1, b'x', 0xa1, b't', 0x91, 0xc3]);
    let object = keeps_its_type(&pair(type_json, &value), type_json);
    // Taken out of the object, each attribute still knows its type.
    assert_eq!(object.get("ids").infer_type(), Type::list(Type::String));
    assert_eq!(object.get("m").infer_type(), Type::map(Type::String));
    assert!(object.get("m").is_null());
    assert_eq!(object.get("s").as_str(), Some("x"));
    // Plain where the content says the type: resources match on it as always.
    assert!(matches!(object, Value::Object(_)));
    assert!(matches!(object.get("t"), Value::Tuple(_)));
}

#[test]
fn nested_dynamic_values_keep_their_types() {
    // An object type whose attribute is itself dynamic: a pair inside the pair.
    let inner = pair(r#"["list","string"]"#, &[0x90]);
    let mut value = vec![0x81, 0xa1, b'd'];
    value.extend_from_slice(&inner);
    let type_json = r#"["object",{"d":"dynamic"}]"#;
    let outer = keeps_its_type(&pair(type_json, &value), type_json);
    assert_eq!(outer.get("d").infer_type(), Type::list(Type::String));

    // A dynamic attribute of a schema object, beside plain ones.
    let ty = Type::object([("manifest", Type::Dynamic), ("id", Type::String)]);
    let manifest_type =
        r#"["object",{"metadata":["object",{"annotations":["map","string"],"name":"string"}]}]"#;
    let mut manifest = vec![0x81, 0xa8];
    manifest.extend_from_slice(b"metadata");
    manifest.extend_from_slice(&[0x82, 0xab]);
    manifest.extend_from_slice(b"annotations");
    manifest.extend_from_slice(&[0xc0, 0xa4, b'n', b'a', b'm', b'e', 0xa1, b'x']);
    let mut bytes = vec![0x82, 0xa2, b'i', b'd', 0xa1, b'i', 0xa8];
    bytes.extend_from_slice(b"manifest");
    bytes.extend_from_slice(&pair(manifest_type, &manifest));
    let state = decode_msgpack(&bytes, &ty).expect("decodes");
    assert_eq!(encode_msgpack(&state, &ty).expect("encodes"), bytes);
    assert_eq!(
        state.get("manifest").to_json(),
        serde_json::json!({"metadata": {"annotations": null, "name": "x"}})
    );
}

#[test]
fn json_state_keeps_dynamic_types_for_msgpack() {
    let ty = Type::object([("values", Type::Dynamic)]);
    let state = br#"{"values": {
        "value": {"ids": [], "m": {}, "s": [], "n": null, "mixed": {"a": 1, "b": "x"}},
        "type": ["object", {"ids": ["list","string"], "m": ["map","string"], "s": ["set","string"],
                 "n": "string", "mixed": ["object", {"a": "number", "b": "string"}]}]
    }}"#;
    let value = decode_json(state, &ty).expect("decodes");
    let values = value.get("values");
    assert_eq!(values.get("ids").infer_type(), Type::list(Type::String));
    assert_eq!(values.get("m").infer_type(), Type::map(Type::String));
    assert_eq!(values.get("s").infer_type(), Type::set(Type::String));
    assert_eq!(values.get("n").infer_type(), Type::String);
    let bytes = encode_msgpack(&value, &ty).expect("encodes");
    let type_json = r#"["object",{"ids":["list","string"],"m":["map","string"],"mixed":["object",{"a":"number","b":"string"}],"n":"string","s":["set","string"]}]"#;
    assert!(
        bytes.windows(type_json.len()).any(|w| w == type_json.as_bytes()),
        "the exact type is not on the wire: {}",
        String::from_utf8_lossy(&bytes)
    );
    assert_eq!(decode_msgpack(&bytes, &ty).expect("decodes"), value);

    // A typed null at the root of a dynamic attribute.
    let null_map =
        decode_json(br#"{"values": {"value": null, "type": ["map","string"]}}"#, &ty).expect("decodes");
    assert!(null_map.get("values").is_null());
    let bytes = encode_msgpack(&null_map, &ty).expect("encodes");
    let mut expected = vec![0x81, 0xa6];
    expected.extend_from_slice(b"values");
    expected.extend_from_slice(&pair(r#"["map","string"]"#, &[0xc0]));
    assert_eq!(bytes, expected);
}

#[test]
fn changing_a_typed_value_infers_its_type_again() {
    let mut map = Value::typed(&Type::map(Type::String), Value::Map(BTreeMap::new()));
    assert_eq!(map.infer_type(), Type::map(Type::String));
    map.set("k", Value::int(1));
    assert_eq!(map.infer_type(), Type::map(Type::Number));
    // Retyping replaces the old type; `dynamic` keeps the value as it is.
    let list = Value::typed(&Type::list(Type::String), Value::List(vec![]));
    let retyped = Value::typed(&Type::list(Type::Number), list.clone());
    assert_eq!(retyped.infer_type(), Type::list(Type::Number));
    assert_eq!(Value::typed(&Type::Dynamic, list.clone()), list);
    // Values of different types differ even when their content is the same.
    assert_ne!(list, Value::typed(&Type::list(Type::Number), Value::List(vec![])));
}

#[test]
fn non_finite_floats_are_not_numbers() {
    for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut bytes = vec![0xcb];
        bytes.extend_from_slice(&f.to_bits().to_be_bytes());
        assert!(matches!(
            decode_msgpack(&bytes, &Type::Number).map_err(|e| e.kind),
            Err(CodecErrorKind::BadNumber(_))
        ));
    }
}

#[test]
fn integral_doubles_are_written_as_integers_like_cty() {
    // The same number from JSON state (an integer) and from a double: the same bytes.
    let big = -26_736_878_629_270_824i64;
    let from_double = encode_msgpack(&Value::Number(Number::Float(big as f64)), &Type::Number);
    assert_eq!(from_double, encode_msgpack(&Value::int(big), &Type::Number));
    // 2^63 is beyond i64: it stays a double.
    let two_63 = encode_msgpack(
        &Value::Number(Number::Float(9.223_372_036_854_776e18)),
        &Type::Number,
    );
    assert_eq!(two_63.expect("encodes")[0], 0xcb);
}
