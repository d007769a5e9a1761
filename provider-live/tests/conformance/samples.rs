//! Values each validator of the facts refuses and accepts, chosen per validator kind (the
//! names of `catalog/hashicorp/README.md`), as JSON; the test types them to the attribute.

use serde_json::{Value as Json, json};

/// What `validator` (a fact's argument: `port_number`, `one_of ["A","B"]`) refuses and
/// accepts; `None` for a validator this table does not know (the test then fails on it).
pub fn of(validator: &str) -> Option<(Vec<Json>, Vec<Json>)> {
    let (name, argument) = match validator.split_once(' ') {
        Some((name, rest)) => (name, serde_json::from_str::<Json>(rest).ok()),
        None => (validator, None),
    };
    let int = || argument.as_ref().and_then(Json::as_i64);
    let strings = || -> Vec<String> {
        argument
            .as_ref()
            .and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default()
    };
    let both = |refused: Json, accepted: Vec<Json>| Some((vec![refused], accepted));
    match name {
        "one_of" | "one_of_ci" => {
            let allowed = strings();
            both(
                json!("conformance-refused"),
                allowed.into_iter().map(Json::from).collect(),
            )
        }
        "positive_int" => both(json!(-1), vec![json!(1), json!(2)]),
        "non_negative_int" => both(json!(-1), vec![json!(0), json!(1)]),
        "port_number" => both(json!(70000), vec![json!(80), json!(8080)]),
        "port_number_or_zero" => both(json!(70000), vec![json!(0), json!(80)]),
        "int_at_least" => int().and_then(|n| both(json!(n - 1), vec![json!(n), json!(n + 1)])),
        "int_greater_than" => int().and_then(|n| both(json!(n), vec![json!(n + 1), json!(n + 2)])),
        "int_between" => {
            let bounds: (i64, i64) = serde_json::from_value(argument?).ok()?;
            both(json!(bounds.1 + 1), vec![json!(bounds.0), json!(bounds.1)])
        }
        "int_not_in" => {
            let refused: Vec<i64> = serde_json::from_value(argument?).ok()?;
            let free = refused.iter().max().copied().unwrap_or(0) + 1;
            both(json!(refused.first()?), vec![json!(free), json!(free + 1)])
        }
        "port_name_or_number" => both(json!("70000"), vec![json!("http"), json!("8080")]),
        "mode_bits" => both(json!("01000"), vec![json!("0644"), json!("0755")]),
        "nullable_int_string" => both(json!("abc"), vec![json!("1"), json!("2")]),
        "nullable_int_or_percent_string" => both(json!("125%"), vec![json!("25%"), json!("1")]),
        "non_negative_int_string" => both(json!("-1"), vec![json!("0"), json!("1")]),
        "quantity" => both(json!("abc"), vec![json!("1Gi"), json!("500m")]),
        "quantity_map" => both(
            json!({"cpu": "abc"}),
            vec![json!({"cpu": "1"}), json!({"cpu": "2"})],
        ),
        "label_map" => both(
            json!({"-bad": "x"}),
            vec![json!({"app": "web"}), json!({"app.kubernetes.io/name": "api"})],
        ),
        "annotation_map" => both(
            json!({"-bad": "x"}),
            vec![json!({"example.com/note": "any text"}), json!({"note": "other"})],
        ),
        "base64_map" => both(
            json!({"k": "not base64!"}),
            vec![json!({"k": "aGVsbG8="}), json!({"k": "d29ybGQ="})],
        ),
        "name" => both(
            json!("Bad_Name"),
            vec![json!("conformance"), json!("conformance-b")],
        ),
        "generate_name" => both(json!("Bad_"), vec![json!("conformance-"), json!("other-")]),
        "dns_label" => both(json!("Bad.Label"), vec![json!("conformance"), json!("other")]),
        "path" => both(json!("../etc"), vec![json!("config/app.yaml"), json!("other")]),
        "path_segment_name" => both(json!("a/b"), vec![json!("conformance"), json!("other")]),
        "ip_address" => both(json!("not-an-ip"), vec![json!("10.0.0.1"), json!("10.0.0.2")]),
        "cidr" => both(
            json!("10.0.0.0/33"),
            vec![json!("10.0.0.0/16"), json!("10.1.0.0/16")],
        ),
        "not_whitespace" => both(json!("  "), vec![json!("conformance"), json!("other")]),
        "valid_regexp" => both(json!("("), vec![json!("a+"), json!("b+")]),
        "cron" => both(json!("every hour"), vec![json!("*/5 * * * *"), json!("@hourly")]),
        "webhook_url" => both(
            json!("http://hooks.example.com/x"),
            vec![
                json!("https://hooks.example.com/x"),
                json!("https://hooks.example.com/y"),
            ],
        ),
        "regex" => {
            let pattern = match argument? {
                Json::String(p) => p,
                Json::Array(items) => items.first()?.as_str()?.to_string(),
                _ => return None,
            };
            let regex = regex::Regex::new(&pattern).ok()?;
            let pick = |candidates: &[&str], matching: bool| -> Vec<Json> {
                candidates
                    .iter()
                    .filter(|c| regex.is_match(c) == matching)
                    .map(|c| json!(c))
                    .collect()
            };
            let refused = pick(&["!bad", "-bad", "Bad Value!"], false);
            let accepted = pick(&["1", "25%", "conformance", "a1"], true);
            Some((refused.into_iter().take(1).collect(), accepted))
        }
        // Refused by every alternative: the first one's refused values are nonsense to all.
        "any" => {
            let parts: Vec<String> = strings();
            let mut refused = Vec::new();
            let mut accepted = Vec::new();
            for part in &parts {
                let (r, a) = of(part)?;
                if refused.is_empty() {
                    refused = r;
                }
                accepted.extend(a);
            }
            Some((refused, accepted))
        }
        _ => None,
    }
}
