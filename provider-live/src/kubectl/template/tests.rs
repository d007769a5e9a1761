//! The template language of reference/kubectl-providers.md §7.12 and its functions.

use std::collections::BTreeMap;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ok(text: &str, pairs: &[(&str, &str)]) -> String {
    render(text, &vars(pairs), "t.yaml").unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str, pairs: &[(&str, &str)]) -> String {
    render(text, &vars(pairs), "t.yaml").expect_err(text).to_string()
}

#[test]
fn interpolation_and_escapes() {
    assert_eq!(ok("name: ${name}\n", &[("name", "web")]), "name: web\n");
    assert_eq!(ok("a: $${name} %%{x}", &[]), "a: ${name} %{x}");
    assert_eq!(ok("q: \"${\"x${n}\"}\"", &[("n", "1")]), "q: \"x1\"");
    // Backslashes outside sequences are the file's own.
    assert_eq!(ok("a: \"\\n\"\r\n", &[]), "a: \"\\n\"\r\n");
}

#[test]
fn an_undefined_variable_is_an_error_naming_it_and_the_file() {
    let e = err("a: ${missing}", &[("other", "x")]);
    assert!(
        e.contains("t.yaml") && e.contains("\"missing\"") && e.contains("${missing}"),
        "{e}"
    );
    let e = err("%{ if on }x%{ endif }", &[]);
    assert!(e.contains("\"on\""), "{e}");
}

#[test]
fn every_variable_is_a_string_that_converts_where_needed() {
    assert_eq!(ok("${n + 1} ${n * 2 > 3}", &[("n", "2")]), "3 true");
    assert_eq!(
        ok("%{ if enabled }on%{ else }off%{ endif }", &[("enabled", "true")]),
        "on"
    );
    assert_eq!(
        ok("%{ if enabled }on%{ else }off%{ endif }", &[("enabled", "false")]),
        "off"
    );
    assert_eq!(ok("${n == 2} ${n == \"2\"}", &[("n", "2")]), "false true");
    assert!(err("${n + 1}", &[("n", "two")]).contains("not a number"));
}

#[test]
fn strip_markers_trim_the_adjacent_line_of_literal_text() {
    let text = "items:\n%{ for i, x in split(\",\", list) ~}\n  - ${i}-${x}\n%{ endfor ~}\nend\n";
    assert_eq!(ok(text, &[("list", "a,b")]), "items:\n  - 0-a\n  - 1-b\nend\n");
    let text = "items:\n%{ for x in split(\",\", list) }\n  - ${x}\n%{~ endfor }\nend";
    assert_eq!(ok(text, &[("list", "a,b")]), "items:\n\n  - a\n  - b\nend");
    assert_eq!(ok("a  ${~ x ~}  \n\n b", &[("x", "X")]), "aX\n b");
    // `{~` at the start of a line takes the line break before it; indented, only the indentation.
    assert_eq!(ok("a  \n%{~ if true }b%{ endif }", &[]), "ab");
    assert_eq!(ok("a\n  %{~ if true }b%{ endif }", &[]), "a\nb");
    // kubectl's own example: a conditional label inside a loop keeps its indentation.
    let text = "%{ for n in split(\",\", ns) }\n---\nmetadata:\n  labels:\n    name: ${n}\n%{ if on == \"true\" ~}\n    extra: yes\n%{ endif ~}\n%{ endfor }\n";
    let rendered = ok(text, &[("ns", "a"), ("on", "true")]);
    assert_eq!(
        rendered,
        "\n---\nmetadata:\n  labels:\n    name: a\n    extra: yes\n\n"
    );
    assert_eq!(
        ok("%{ for k, v in {b = 2, a = 1} }${k}=${v};%{ endfor }", &[]),
        "a=1;b=2;"
    );
}

#[test]
fn a_for_directive_can_generate_documents() {
    let text = "%{ for name in split(\",\", names) ~}\n---\nkind: ConfigMap\nmetadata:\n  name: ${name}\n%{ endfor ~}\n";
    let rendered = ok(text, &[("names", "a,b,c")]);
    assert_eq!(rendered.matches("kind: ConfigMap").count(), 3, "{rendered}");
    assert!(rendered.contains("name: c"));
}

#[test]
fn expressions() {
    assert_eq!(ok("${x == \"a\" ? \"yes\" : \"no\"}", &[("x", "a")]), "yes");
    assert_eq!(
        ok(
            "${join(\",\", [for s in split(\",\", l) : upper(s) if s != \"b\"])}",
            &[("l", "a,b,c")]
        ),
        "A,C"
    );
    assert_eq!(
        ok(
            "${jsonencode({for s in split(\",\", l) : s => length(s)})}",
            &[("l", "a,bb")]
        ),
        "{\"a\":1,\"bb\":2}"
    );
    assert_eq!(
        ok(
            "${jsonencode({for s in split(\",\", l) : substr(s, 0, 1) => s...})}",
            &[("l", "ab,ac")]
        ),
        "{\"a\":[\"ab\",\"ac\"]}"
    );
    assert_eq!(
        ok(
            "${jsondecode(j).a[1].b} ${join(\"\", jsondecode(j).a[*].b)}",
            &[("j", r#"{"a":[{"b":"x"},{"b":"y"}]}"#)]
        ),
        "y xy"
    );
    assert_eq!(ok("${join(\"\", [{n = \"p\"}, {n = \"q\"}].*.n)}", &[]), "pq");
    assert_eq!(ok("${!false && -1 < 0}", &[]), "true");
    assert!(err("${[1]}", &[]).contains("a list"));
    assert!(err("${null}", &[]).contains("null"));
    assert!(err("${1 / 0}", &[]).contains("division by zero"));
}

#[test]
fn unknown_and_missing_functions_are_errors_naming_them() {
    assert!(err("${nosuch(1)}", &[]).contains("there is no function named \"nosuch\""));
    assert!(err("${startswith(\"ab\", \"a\")}", &[]).contains("\"startswith\""));
    assert!(err("${bcrypt(\"x\")}", &[]).contains("\"bcrypt\" of Terraform 0.12 is not available"));
    assert!(err("${upper(\"a\", \"b\")}", &[]).contains("takes 1 arguments, not 2"));
}

#[test]
fn try_and_can_catch_failures() {
    assert_eq!(ok("${try(missing, \"fallback\")}", &[]), "fallback");
    assert_eq!(ok("${try(jsondecode(j).a, \"none\")}", &[("j", "{}")]), "none");
    assert_eq!(
        ok(
            "${can(tonumber(x))} ${can(tonumber(y))}",
            &[("x", "1"), ("y", "z")]
        ),
        "true false"
    );
    assert!(err("${try(missing)}", &[]).contains("no expression succeeded"));
}

#[test]
fn string_functions() {
    let cases = [
        ("${upper(\"aé\")}${lower(\"AB\")}", "AÉab"),
        ("${trimspace(\"  x \\n\")}|${chomp(\"x\\n\\r\\n\")}|", "x|x|"),
        (
            "${trim(\"?!x!?\", \"!?\")} ${trimprefix(\"abc\", \"ab\")} ${trimsuffix(\"abc\", \"bc\")}",
            "x c a",
        ),
        (
            "${replace(\"a-b-c\", \"-\", \"+\")} ${replace(\"a1b22\", \"/[0-9]+/\", \"#\")}",
            "a+b+c a#b#",
        ),
        ("${replace(\"ab\", \"/(a)(b)/\", \"$2$1\")}", "ba"),
        ("${join(\"-\", split(\",\", \"a,b\"), [\"c\"])}", "a-b-c"),
        ("${title(\"hello big-world\")}", "Hello Big-World"),
        (
            "${substr(\"hello\", 1, 3)} ${substr(\"hello\", -3, -1)}",
            "ell llo",
        ),
        ("${indent(2, \"a\\nb\")}", "a\n  b"),
        ("${strrev(\"abc\")}", "cba"),
        (
            "${format(\"%s-%d-%05.1f-%q-%v-%t-%x\", \"a\", 7, 3.14159, \"q\", 1.5, true, 255)}",
            "a-7-003.1-\"q\"-1.5-true-ff",
        ),
        (
            "${format(\"%-4s|%4s|%+d|%%\", \"ab\", \"cd\", 5)}",
            "ab  |  cd|+5|%",
        ),
        (
            "${join(\",\", formatlist(\"%s=%s\", [\"a\", \"b\"], \"x\"))}",
            "a=x,b=x",
        ),
        (
            "${regex(\"[a-z]+\", \"12abc3\")} ${join(\",\", regexall(\"[0-9]\", \"a1b2\"))}",
            "abc 1,2",
        ),
        ("${regex(\"(?P<k>\\\\w+)=(?P<v>\\\\w+)\", \"x=y\").v}", "y"),
        ("${urlencode(\"a b&c\")}", "a+b%26c"),
    ];
    for (text, expected) in cases {
        assert_eq!(ok(text, &[]), expected, "{text}");
    }
}

#[test]
fn collection_and_number_functions() {
    let cases = [
        (
            "${length(\"héllo\")} ${length([1, 2])} ${length({a = 1})}",
            "5 2 1",
        ),
        (
            "${lookup({a = \"x\"}, \"a\")} ${lookup({a = \"x\"}, \"b\", \"d\")}",
            "x d",
        ),
        (
            "${contains([\"a\", \"b\"], \"b\")} ${contains([\"a\"], \"c\")}",
            "true false",
        ),
        ("${join(\",\", concat([\"a\"], [\"b\", \"c\"]))}", "a,b,c"),
        ("${element([\"a\", \"b\"], 3)}", "b"),
        ("${coalesce(\"\", \"x\", \"y\")}", "x"),
        ("${join(\",\", compact([\"a\", \"\", \"b\"]))}", "a,b"),
        ("${join(\",\", distinct([\"a\", \"b\", \"a\"]))}", "a,b"),
        ("${join(\",\", flatten([[\"a\", [\"b\"]], \"c\"]))}", "a,b,c"),
        (
            "${join(\",\", reverse([\"a\", \"b\"]))} ${join(\",\", sort([\"b\", \"a\", \"10\"]))}",
            "b,a 10,a,b",
        ),
        (
            "${jsonencode(zipmap([\"a\", \"b\"], [1, 2]))}",
            "{\"a\":1,\"b\":2}",
        ),
        (
            "${join(\",\", keys({b = 1, a = 2}))} ${join(\",\", values({b = 1, a = 2}))}",
            "a,b 2,1",
        ),
        (
            "${jsonencode(merge({a = 1, b = 1}, {b = 2}))}",
            "{\"a\":1,\"b\":2}",
        ),
        (
            "${jsonencode(range(3))} ${jsonencode(range(1, 7, 2))} ${jsonencode(range(3, 0))}",
            "[0,1,2] [1,3,5] [3,2,1]",
        ),
        (
            "${min(3, \"1\", 2)} ${max(3, 1, 2)} ${abs(-2.5)} ${ceil(1.2)} ${floor(1.8)}",
            "1 3 2.5 2 1",
        ),
        (
            "${tostring(1)} ${tonumber(\"2.50\")} ${tobool(\"true\")}",
            "1 2.5 true",
        ),
        (
            "${index([\"a\", \"b\"], \"b\")} ${jsonencode(slice([1, 2, 3], 1, 3))}",
            "1 [2,3]",
        ),
        (
            "${jsonencode(chunklist([1, 2, 3], 2))} ${jsonencode(toset([\"b\", \"a\", \"b\"]))}",
            "[[1,2],[3]] [\"a\",\"b\"]",
        ),
        (
            "${jsonencode(setunion([\"b\"], [\"a\", \"b\"]))} ${jsonencode(setsubtract([1, 2], [2]))}",
            "[\"a\",\"b\"] [1]",
        ),
        (
            "${jsonencode(transpose({a = [\"x\", \"y\"], b = [\"x\"]}))}",
            "{\"x\":[\"a\",\"b\"],\"y\":[\"a\"]}",
        ),
        (
            "${parseint(\"ff\", 16)} ${parseint(\"-101\", 2)} ${pow(2, 10)} ${signum(-3)} ${log(8, 2)}",
            "255 -5 1024 -1 3",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(ok(text, &[]), expected, "{text}");
    }
}

#[test]
fn encoding_and_hash_functions() {
    let cases = [
        (
            "${base64encode(\"hello\")} ${base64decode(\"aGVsbG8=\")}",
            "aGVsbG8= hello",
        ),
        (
            "${jsonencode({a = \"<b>&\", n = [1.5, true, null]})}",
            r#"{"a":"\u003cb\u003e\u0026","n":[1.5,true,null]}"#,
        ),
        ("${jsondecode(\"{\\\"a\\\": [1, 2]}\").a[1]}", "2"),
        (
            "${yamlencode({b = \"x\", a = [1]})}",
            "\"a\":\n- 1\n\"b\": \"x\"\n",
        ),
        ("${yamldecode(\"a: [1, yes]\").a[1]}", "yes"),
        ("${csvdecode(\"a,b\\n1,\\\"x,y\\\"\\n\")[0].b}", "x,y"),
        (
            "${sha256(\"hello\")}",
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        ),
        (
            "${md5(\"hello\")} ${sha1(\"hello\")}",
            "5d41402abc4b2a76b9719d911017c592 aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d",
        ),
        (
            "${base64sha256(\"hello\")}",
            "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=",
        ),
        ("${substr(sha512(\"hello\"), 0, 16)}", "9b71d224bd62f378"),
        (
            "${uuidv5(\"dns\", \"www.terraform.io\")}",
            "a5008fae-b28c-5ba5-96cd-82b4c53552d6",
        ),
        ("${length(uuid())}", "36"),
    ];
    for (text, expected) in cases {
        assert_eq!(ok(text, &[]), expected, "{text}");
    }
    assert!(err("${base64decode(\"!!\")}", &[]).contains("not valid base64"));
}

#[test]
fn file_functions_read_from_the_working_directory() {
    let dir = tempfile::tempdir().expect("a folder");
    let inner = dir.path().join("inner.tpl");
    std::fs::write(&inner, "hello ${who}").expect("write");
    let path = inner.to_string_lossy().to_string();
    let p = [("p", path.as_str())];
    assert_eq!(
        ok("${file(p)}|${fileexists(p)}|${basename(p)}", &p),
        "hello ${who}|true|inner.tpl"
    );
    assert_eq!(ok("${templatefile(p, {who = \"you\"})}", &p), "hello you");
    assert_eq!(
        ok(
            "${filesha256(p) == sha256(file(p))} ${dirname(\"a/b/c\")} ${basename(\"a/b/\")}",
            &p
        ),
        "true a/b b"
    );
    std::fs::write(&inner, "${templatefile(\"x\", {})}").expect("write");
    assert!(err("${templatefile(p, {})}", &p).contains("cannot recursively call templatefile"));
    assert_eq!(ok("${fileexists(\"/nonexistent/file\")}", &[]), "false");
}

#[test]
fn messages_never_show_a_value() {
    let secret = [("s", "hunter2-secret")];
    for text in [
        "${tonumber(s)}",
        "${s.attr}",
        "${s[0]}",
        "${jsondecode(s)}",
        "${base64decode(s)}",
        "${file(s)}",
        "${parseint(s, 10)}",
        "%{ if s }x%{ endif }",
        "${lookup({}, s)}",
        "${element(s, 0)}",
        "${timeadd(s, \"1h\")}",
        "${format(\"%d\", s)}",
    ] {
        let e = err(text, &secret);
        assert!(!e.contains("hunter2"), "{text}: {e}");
    }
}

#[test]
fn parse_errors_name_the_file() {
    let e = err("a: ${ 1 + }", &[]);
    assert!(e.starts_with("t.yaml is not a valid template"), "{e}");
}
