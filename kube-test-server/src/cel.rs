//! A small interpreter of the Common Expression Language, enough for the expressions
//! ValidatingAdmissionPolicies are written in: literals, field selection and indexing,
//! `has()`, logical, relational and arithmetic operators, `in`, the ternary, list and map
//! literals, the `all`/`exists`/`exists_one`/`map`/`filter` macros and the common string and
//! conversion functions. Values are JSON.
//!
//! Syntax errors are reported like cel-go's parser reports them (`ERROR: <input>:1:24: Syntax
//! error: mismatched input '<EOF>' expecting {...}` plus the caret lines), so a broken policy is
//! refused with the apiserver's message.

mod evaluation;
mod syntax;

pub use evaluation::{Activation, eval};
pub use syntax::compile;

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::evaluation::EvalError;
    use super::syntax::EXPRESSION_START;
    use super::*;

    struct Vars(Value);

    impl Activation for Vars {
        fn resolve(&self, name: &str) -> Option<Value> {
            self.0.get(name).cloned()
        }
    }

    fn run(source: &str, vars: Value) -> Result<Value, EvalError> {
        eval(&compile(source).unwrap(), &Vars(vars))
    }

    #[test]
    fn policy_expressions() {
        let object =
            json!({"object": {"metadata": {"labels": {"owner": "a"}, "name": "x"}, "spec": {"replicas": 3}}});
        let check = "has(object.metadata.labels) && 'owner' in object.metadata.labels";
        assert_eq!(run(check, object.clone()).unwrap(), json!(true));
        assert_eq!(
            run(check, json!({"object": {"metadata": {}}})).unwrap(),
            json!(false)
        );
        assert_eq!(
            run("object.spec.replicas <= 5 ? 'ok' : 'no'", object.clone()).unwrap(),
            json!("ok")
        );
        assert_eq!(
            run("[1, 2, 3].all(x, x > 0) && [1].exists(x, x == 1)", json!({})).unwrap(),
            json!(true)
        );
        assert_eq!(
            run(
                "object.metadata.name.startsWith('x') && size(object.metadata.labels) == 1",
                object.clone()
            )
            .unwrap(),
            json!(true)
        );
        assert_eq!(
            run("[1, 2, 3].map(x, x * 2)", json!({})).unwrap(),
            json!([2, 4, 6])
        );
        assert!(run("object.spec.missing == 1", object).is_err());
        assert_eq!(
            run("false && object.nothing", json!({"object": {}})).unwrap(),
            json!(false)
        );
    }

    /// A mutating policy's apply configuration and JSON patch build objects by message
    /// construction; the type names only say what the fields are.
    #[test]
    fn message_construction_builds_objects() {
        let vars = json!({"variables": {"team": "platform"}});
        assert_eq!(
            run(
                "Object{metadata: Object.metadata{labels: {\"owner\": variables.team}}}",
                vars.clone()
            )
            .unwrap(),
            json!({"metadata": {"labels": {"owner": "platform"}}})
        );
        assert_eq!(
            run("[JSONPatch{op: \"add\", path: \"/data/a\", value: 'b'}]", vars).unwrap(),
            json!([{"op": "add", "path": "/data/a", "value": "b"}])
        );
        assert_eq!(run("Object{}", json!({})).unwrap(), json!({}));
        assert!(compile("Object{metadata}").is_err());
        assert!(compile("(1){a: 2}").is_err());
    }

    #[test]
    fn syntax_errors_like_cel_go() {
        let e = compile("object.metadata.labels[").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "ERROR: <input>:1:24: Syntax error: mismatched input '<EOF>' expecting {EXPRESSION_START}\n | object.metadata.labels[\n | .......................^"
            )
        );
        assert!(compile("a &&").is_err());
        assert!(compile("(a").is_err());
    }
}
