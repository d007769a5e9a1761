//! The facts of reference/kubectl-providers.md §6.2, §7.1 and §7.2, and go-yaml v2's writing.

use serde_json::json;

use super::*;

fn manifest(body: &str) -> Json {
    parse_manifest(&format!("kind: K\n{body}")).unwrap_or_else(|e| panic!("{body}: {e}"))
}

#[test]
fn yaml_1_1_booleans_in_every_case_form_go_yaml_accepts() {
    for word in [
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
    ] {
        assert_eq!(manifest(&format!("v: {word}"))["v"], json!(true), "{word}");
    }
    for word in [
        "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
    ] {
        assert_eq!(manifest(&format!("v: {word}"))["v"], json!(false), "{word}");
    }
    // Other spellings and quoted words stay strings.
    for (body, text) in [
        ("v: yEs", "yEs"),
        ("v: 'yes'", "yes"),
        ("v: \"on\"", "on"),
        ("v: !!str no", "no"),
    ] {
        assert_eq!(manifest(body)["v"], json!(text), "{body}");
    }
}

#[test]
fn boolean_keys_become_the_strings_true_and_false() {
    assert_eq!(manifest("on: yes")["true"], json!(true));
    assert_eq!(manifest("n: 1")["false"], json!(1));
    let m = manifest("data:\n  Y: a\n  off: b\n  'on': c");
    assert_eq!(m["data"], json!({"true": "a", "false": "b", "on": "c"}));
    // Other keys as Go's %v prints them.
    assert_eq!(
        manifest("m: {1: a, 012: b, 1.5: c, ~: d}")["m"],
        json!({"1": "a", "10": "b", "1.5": "c", "<nil>": "d"})
    );
}

#[test]
fn numbers_resolve_as_go_yaml_v2_does() {
    let m = manifest(
        "a: 012\nb: 0x1F\nc: 0o17\nd: 1_000\ne: -012\nf: 08\ng: 1.5\nh: 1e3\ni: .5\nj: 0b101\nk: +7",
    );
    assert_eq!(m["a"], json!(10));
    assert_eq!(m["b"], json!(31));
    assert_eq!(m["c"], json!(15));
    assert_eq!(m["d"], json!(1000));
    assert_eq!(m["e"], json!(-10));
    // Not octal, so a float, which Go's JSON round trip makes an integer again.
    assert_eq!(m["f"], json!(8));
    assert_eq!(m["g"], json!(1.5));
    assert_eq!(m["h"], json!(1000));
    assert_eq!(m["i"], json!(0.5));
    assert_eq!(m["j"], json!(5));
    assert_eq!(m["k"], json!(7));
    for text in ["0x", "1.2.3", "1e400", "12abc", "+"] {
        assert_eq!(manifest(&format!("v: {text}"))["v"], json!(text), "{text}");
    }
}

#[test]
fn integers_past_int64_lose_precision_through_float64() {
    let m = manifest("big: 12345678901234567890");
    assert_eq!(m["big"].as_f64(), Some(12345678901234567000.0));
    assert!(!m["big"].is_i64());
    assert_eq!(to_yaml(&m), "big: 12345678901234567000\nkind: K\n");
    assert_eq!(manifest("v: 9223372036854775807")["v"], json!(i64::MAX));
}

#[test]
fn nulls_timestamps_and_quoted_scalars() {
    let m = manifest(
        "a: ~\nb: null\nc: NULL\nd:\ne: 2001-12-14t21:59:43.10-05:00\nf: 2002-12-14\ng: '012'\nh: \"true\"",
    );
    for key in ["a", "b", "c", "d"] {
        assert_eq!(m[key], Json::Null, "{key}");
    }
    assert_eq!(m["e"], json!("2001-12-14t21:59:43.10-05:00"));
    assert_eq!(m["f"], json!("2002-12-14"));
    assert_eq!(m["g"], json!("012"));
    assert_eq!(m["h"], json!("true"));
    let blocks = manifest("l: |\n  yes\nf: >\n  012\n");
    assert_eq!(blocks["l"], json!("yes\n"));
    assert_eq!(blocks["f"], json!("012\n"));
}

#[test]
fn only_the_first_document_counts_and_a_leading_separator_is_accepted() {
    let m = parse_manifest("---\nkind: A\n---\nkind: B\n").expect("parses");
    assert_eq!(m["kind"], json!("A"));
    let m = parse_manifest("kind: A\n---\n: : broken [").expect("the rest is not read");
    assert_eq!(m["kind"], json!("A"));
}

#[test]
fn kind_is_required_and_api_version_is_not() {
    for text in [
        "",
        "# only a comment\n",
        "metadata: {name: x}",
        "kind: ''",
        "---\n",
    ] {
        let e = parse_manifest(text).expect_err(text);
        assert!(e.0.contains("Object 'Kind' is missing"), "{text}: {e}");
    }
    let m = parse_manifest("kind: ConfigMap\nmetadata: {name: x}").expect("no apiVersion is fine");
    assert_eq!(m.get("apiVersion"), None);
}

#[test]
fn a_top_level_list_or_value_is_refused() {
    assert!(
        parse_manifest("- kind: A")
            .expect_err("a list")
            .0
            .contains("is a list")
    );
    assert!(
        parse_manifest("just text")
            .expect_err("a value")
            .0
            .contains("single value")
    );
    assert!(
        parse_manifest("kind: [")
            .expect_err("bad YAML")
            .0
            .contains("invalid YAML")
    );
}

#[test]
fn anchors_aliases_and_merge_keys() {
    // (`y` would be the key "true": YAML 1.1.)
    let m = manifest("base: &b {x: 1, z: 2}\nover: {<<: *b, z: 3}\nlist: [&i 4, *i]");
    assert_eq!(m["over"], json!({"x": 1, "z": 3}));
    assert_eq!(m["list"], json!([4, 4]));
    let m = manifest("a: &a {k: a}\nb: &b {k: b, j: b}\nc: {<<: [*a, *b]}");
    assert_eq!(m["c"], json!({"k": "a", "j": "b"}));
    assert!(parse_manifest("kind: K\nx: *nowhere").is_err());
}

#[test]
fn errors_never_quote_the_text() {
    for text in [
        "kind: K\nv: .inf",
        "kind: K\nv: !!int secret-value",
        "secret-value",
        "- secret-value",
    ] {
        let e = parse_manifest(text).expect_err(text);
        assert!(!e.0.contains("secret"), "{text}: {e}");
    }
}

#[test]
fn split_on_lines_starting_with_three_dashes_and_drop_the_rest_of_that_line() {
    let text = "kind: A\n----\nkind: B\n---foo\nkind: C\n--- # comment\nkind: D\n";
    assert_eq!(
        split_documents(text).expect("splits"),
        ["kind: A", "kind: B", "kind: C", "kind: D"]
    );
    // An indented one, or one not at a line start, does not split.
    let text = "kind: A\ndata:\n  x: |\n    a\n    ---\n    b\n";
    assert_eq!(split_documents(text).expect("one"), [text.trim()]);
    assert_eq!(split_documents("kind: A\nv: a---b").expect("one").len(), 1);
}

#[test]
fn empty_and_comment_only_parts_are_skipped() {
    let text = "\n---\n# just a comment\n---\n\n---\nkind: A\n---\n{}\n---\n~\n---\n";
    assert_eq!(split_documents(text).expect("splits"), ["kind: A"]);
    assert!(split_documents("").expect("nothing").is_empty());
}

#[test]
fn a_part_that_fails_or_is_a_list_is_an_error_naming_it() {
    let e = split_documents("kind: A\n---\nkind: [\n").expect_err("bad YAML");
    assert!(e.0.starts_with("document 2: invalid YAML"), "{e}");
    let e = split_documents("kind: A\n---\n- a\n- b\n").expect_err("a list");
    assert!(e.0.starts_with("document 2: the YAML document is a list"), "{e}");
    assert!(split_documents("plain text").is_err());
}

#[test]
fn documents_are_the_raw_trimmed_text() {
    // The first keeps a leading `---`, an end marker stays, and so does a CR of CRLF lines.
    let text = "---\nkind: A # note\nv:   'x'\n...\n---\r\nkind: B\r\nv: 1\r\n";
    let docs = split_documents(text).expect("splits");
    assert_eq!(docs, ["---\nkind: A # note\nv:   'x'\n...", "kind: B\r\nv: 1"]);
    assert_eq!(parse_manifest(&docs[1]).expect("CRLF parses")["v"], json!(1));
}

#[test]
fn self_links_as_the_kubectl_providers_build_them() {
    let cases = [
        (
            "apps/v1",
            "Deployment",
            Some("ns"),
            "/apis/apps/v1/namespaces/ns/deployments/x",
        ),
        ("v1", "Namespace", None, "/api/v1/namespaces/x"),
        (
            "networking.k8s.io/v1",
            "Ingress",
            None,
            "/apis/networking.k8s.io/v1/ingresses/x",
        ),
        ("v1", "Endpoints", Some("d"), "/api/v1/namespaces/d/endpointses/x"),
        (
            "networking.k8s.io/v1",
            "NetworkPolicy",
            Some("n"),
            "/apis/networking.k8s.io/v1/namespaces/n/networkpolicys/x",
        ),
    ];
    for (api_version, kind, namespace, link) in cases {
        let m = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": namespace}});
        assert_eq!(self_link(&m), link);
    }
    // A document without apiVersion or name leaves no empty segment (alekc's
    // TestAccKubectlDataSourceFileDocuments_single).
    assert_eq!(self_link(&json!({"kind": "Service1"})), "/apis/service1s");
}

#[test]
fn yaml_is_written_in_block_style_with_sorted_keys() {
    let m = manifest(
        "apiVersion: v1\nmetadata: {name: x, labels: {b: '2', a: '1'}}\nspec:\n  ports: [{port: 80, name: http}]\n  \
         list: [[1, 2], {}, []]\n  empty: {}\n",
    );
    let expected = "apiVersion: v1\nkind: K\nmetadata:\n  labels:\n    a: \"1\"\n    b: \"2\"\n  name: x\nspec:\n  \
                    empty: {}\n  list:\n  - - 1\n    - 2\n  - {}\n  - []\n  ports:\n  - name: http\n    port: 80\n";
    assert_eq!(to_yaml(&m), expected);
    assert_eq!(to_yaml(&json!({})), "{}\n");
}

#[test]
fn strings_are_quoted_only_where_go_yaml_must() {
    let cases = [
        ("yes", "\"yes\""),
        ("", "\"\""),
        ("123", "\"123\""),
        ("1.5", "\"1.5\""),
        ("null", "\"null\""),
        ("~", "\"~\""),
        ("1:20", "\"1:20\""),
        ("2001-12-14", "\"2001-12-14\""),
        ("2001-12-14 1:2:3.5", "\"2001-12-14 1:2:3.5\""),
        ("2001-13-14", "2001-13-14"),
        ("a: b", "'a: b'"),
        ("- x", "'- x'"),
        (" lead", "' lead'"),
        ("*star", "'*star'"),
        ("it's", "it's"),
        ("#x", "'#x'"),
        ("a #x", "'a #x'"),
        ("tab\there", "\"tab\\there\""),
        ("smile \u{1F600}", "\"smile \\U0001F600\""),
        ("café", "café"),
        ("---", "'---'"),
    ];
    for (text, written) in cases {
        assert_eq!(
            to_yaml(&json!({ "v": text })),
            format!("v: {written}\n"),
            "{text}"
        );
    }
    assert_eq!(to_yaml(&json!({"true": 1, "": 2})), "\"\": 2\n\"true\": 1\n");
}

#[test]
fn multi_line_strings_are_literal_blocks() {
    assert_eq!(to_yaml(&json!({"v": "a\nb\n"})), "v: |\n  a\n  b\n");
    assert_eq!(to_yaml(&json!({"v": "a\n\nb"})), "v: |-\n  a\n\n  b\n");
    assert_eq!(to_yaml(&json!({"v": "a\n\n"})), "v: |+\n  a\n\n");
    assert_eq!(to_yaml(&json!({"v": " a\nb"})), "v: |2-\n   a\n  b\n");
    assert_eq!(to_yaml(&json!({"l": ["x\ny"]})), "l:\n- |-\n  x\n  y\n");
    // A space before a line break rules the block out.
    assert_eq!(to_yaml(&json!({"v": "a \nb"})), "v: \"a \\nb\"\n");
}

#[test]
fn long_strings_fold_at_80_columns() {
    let words = vec!["word"; 30].join(" ");
    let written = to_yaml(&json!({ "key": words }));
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 2, "{written}");
    assert!(lines[0].len() > 80 && lines[0].len() < 90, "{written}");
    assert!(lines[1].starts_with("  word"), "{written}");
    let back: serde_yaml::Value = serde_yaml::from_str(&written).expect("reads back");
    assert_eq!(back["key"].as_str(), Some(words.as_str()));
    let quoted = format!("'{words}");
    let written = to_yaml(&json!({ "key": quoted }));
    let back: serde_yaml::Value = serde_yaml::from_str(&written).expect("reads back");
    assert_eq!(back["key"].as_str(), Some(quoted.as_str()), "{written}");
}

#[test]
fn keys_sort_in_go_yaml_order() {
    let m = json!({"item10": 1, "item9": 2, "B": 3, "a": 4, "_x": 5, "a-b": 6, "ab": 7});
    assert_eq!(
        to_yaml(&m),
        "_x: 5\nB: 3\na: 4\na-b: 6\nab: 7\nitem9: 2\nitem10: 1\n"
    );
}

#[test]
fn numbers_are_written_as_go_yaml_reads_them_back() {
    let m = json!({"a": 1.5, "b": 3.0, "c": 1e21, "d": 1234567.5, "e": 0.000001, "f": -0.0, "g": 100000.5});
    assert_eq!(
        to_yaml(&m),
        "a: 1.5\nb: 3\nc: 1e+21\nd: 1.2345675e+06\ne: 1e-06\nf: 0\ng: 100000.5\n"
    );
}

#[test]
fn yamlencode_quotes_every_string() {
    let v = json!({"b": "x", "a": [1, {"k": "v"}, true, null]});
    assert_eq!(
        yamlencode(&v),
        "\"b\": \"x\"\n\"a\":\n- 1\n- \"k\": \"v\"\n- true\n- null\n"
    );
}
