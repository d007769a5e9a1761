//! Evaluating a compiled CEL [`Expr`] over JSON values: variables, operators, the standard
//! functions and the comprehension macros, and the errors evaluation reports.

use super::syntax::Expr;
use serde_json::{Map, Number, Value, json};

/// An evaluation error (a missing key, a type mismatch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// Variable bindings for evaluation.
pub trait Activation {
    fn resolve(&self, name: &str) -> Option<Value>;
}

pub(super) struct Scoped<'a> {
    pub(super) parent: &'a dyn Activation,
    pub(super) name: &'a str,
    pub(super) value: &'a Value,
}

impl Activation for Scoped<'_> {
    fn resolve(&self, name: &str) -> Option<Value> {
        if name == self.name {
            Some(self.value.clone())
        } else {
            self.parent.resolve(name)
        }
    }
}

pub(super) fn err<T>(message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(message.into()))
}

pub(super) fn truthy(v: &Value) -> Result<bool, EvalError> {
    v.as_bool()
        .ok_or_else(|| EvalError(format!("no such overload: expected bool, got {v}")))
}

/// Evaluates `expr` with the given variables.
pub fn eval(expr: &Expr, vars: &dyn Activation) -> Result<Value, EvalError> {
    match expr {
        Expr::Literal(v) => Ok(v.clone()),
        Expr::Ident(name) => vars
            .resolve(name)
            .ok_or_else(|| EvalError(format!("undeclared reference to '{name}'"))),
        Expr::Select(target, field) => match eval(target, vars)? {
            Value::Object(m) => m
                .get(field)
                .cloned()
                .ok_or_else(|| EvalError(format!("no such key: {field}"))),
            other => err(format!("no such key: {field} (on {other})")),
        },
        Expr::Has(target, field) => match eval(target, vars)? {
            Value::Object(m) => Ok(json!(m.get(field).is_some_and(|v| !v.is_null()))),
            _ => Ok(json!(false)),
        },
        Expr::Index(target, index) => {
            let (t, i) = (eval(target, vars)?, eval(index, vars)?);
            match (&t, &i) {
                (Value::Array(a), Value::Number(n)) => n
                    .as_u64()
                    .and_then(|i| a.get(i as usize))
                    .cloned()
                    .ok_or_else(|| EvalError(format!("index out of range: {n}"))),
                (Value::Object(m), Value::String(k)) => m
                    .get(k)
                    .cloned()
                    .ok_or_else(|| EvalError(format!("no such key: {k}"))),
                _ => err(format!("no such overload: index {t} with {i}")),
            }
        }
        Expr::List(items) => items
            .iter()
            .map(|i| eval(i, vars))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Expr::Map(entries) => {
            let mut m = Map::new();
            for (k, v) in entries {
                let key = match eval(k, vars)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, eval(v, vars)?);
            }
            Ok(Value::Object(m))
        }
        Expr::Struct(fields) => {
            let mut m = Map::new();
            for (name, value) in fields {
                m.insert(name.clone(), eval(value, vars)?);
            }
            Ok(Value::Object(m))
        }
        Expr::Not(e) => Ok(json!(!truthy(&eval(e, vars)?)?)),
        Expr::Negate(e) => match eval(e, vars)? {
            Value::Number(n) if n.as_i64().is_some() => Ok(json!(-n.as_i64().unwrap_or(0))),
            Value::Number(n) => Ok(json!(-n.as_f64().unwrap_or(0.0))),
            other => err(format!("no such overload: -{other}")),
        },
        Expr::Ternary(c, a, b) => {
            if truthy(&eval(c, vars)?)? {
                eval(a, vars)
            } else {
                eval(b, vars)
            }
        }
        Expr::Binary(op, a, b) => binary(op, a, b, vars),
        Expr::Call(target, name, args) => call(target.as_deref(), name, args, vars),
        Expr::Comprehension(target, name, var, body) => comprehension(target, name, var, body, vars),
    }
}

pub(super) fn binary(op: &str, a: &Expr, b: &Expr, vars: &dyn Activation) -> Result<Value, EvalError> {
    // Logical operators absorb errors on the side that does not decide the result.
    match op {
        "&&" => {
            let left = eval(a, vars).and_then(|v| truthy(&v));
            if left == Ok(false) {
                return Ok(json!(false));
            }
            let right = eval(b, vars).and_then(|v| truthy(&v));
            return match (left, right) {
                (_, Ok(false)) => Ok(json!(false)),
                (Ok(true), Ok(true)) => Ok(json!(true)),
                (Err(e), _) | (_, Err(e)) => Err(e),
                _ => Ok(json!(false)),
            };
        }
        "||" => {
            let left = eval(a, vars).and_then(|v| truthy(&v));
            if left == Ok(true) {
                return Ok(json!(true));
            }
            let right = eval(b, vars).and_then(|v| truthy(&v));
            return match (left, right) {
                (_, Ok(true)) => Ok(json!(true)),
                (Ok(false), Ok(false)) => Ok(json!(false)),
                (Err(e), _) | (_, Err(e)) => Err(e),
                _ => Ok(json!(false)),
            };
        }
        _ => {}
    }
    let (l, r) = (eval(a, vars)?, eval(b, vars)?);
    match op {
        "==" => Ok(json!(equal(&l, &r))),
        "!=" => Ok(json!(!equal(&l, &r))),
        "in" => match &r {
            Value::Array(items) => Ok(json!(items.iter().any(|i| equal(i, &l)))),
            Value::Object(m) => Ok(json!(l.as_str().is_some_and(|k| m.contains_key(k)))),
            _ => err(format!("no such overload: {l} in {r}")),
        },
        "<" | "<=" | ">" | ">=" => {
            let ordering = match (&l, &r) {
                (Value::Number(x), Value::Number(y)) => x.as_f64().partial_cmp(&y.as_f64()),
                (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
                _ => None,
            }
            .ok_or_else(|| EvalError(format!("no such overload: {l} {op} {r}")))?;
            Ok(json!(match op {
                "<" => ordering.is_lt(),
                "<=" => ordering.is_le(),
                ">" => ordering.is_gt(),
                _ => ordering.is_ge(),
            }))
        }
        _ => arithmetic(op, &l, &r),
    }
}

pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        _ => a == b,
    }
}

pub(super) fn arithmetic(op: &str, l: &Value, r: &Value) -> Result<Value, EvalError> {
    match (l, r) {
        (Value::String(x), Value::String(y)) if op == "+" => Ok(json!(format!("{x}{y}"))),
        (Value::Array(x), Value::Array(y)) if op == "+" => {
            Ok(Value::Array(x.iter().chain(y).cloned().collect()))
        }
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(a), Some(b)) = (x.as_i64(), y.as_i64()) {
                let result = match op {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "/" if b != 0 => Some(a / b),
                    "%" if b != 0 => Some(a % b),
                    "/" | "%" => return err("division by zero"),
                    _ => None,
                };
                return result
                    .map(|v| json!(v))
                    .ok_or_else(|| EvalError("return error for overflow".into()));
            }
            let (a, b) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            let v = match op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                _ => return err(format!("no such overload: {l} {op} {r}")),
            };
            Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
        }
        _ => err(format!("no such overload: {l} {op} {r}")),
    }
}

pub(super) fn size(v: &Value) -> Result<Value, EvalError> {
    Ok(json!(match v {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        Value::Object(m) => m.len(),
        other => return err(format!("no such overload: size({other})")),
    }))
}

pub(super) fn call(
    target: Option<&Expr>,
    name: &str,
    args: &[Expr],
    vars: &dyn Activation,
) -> Result<Value, EvalError> {
    let args: Vec<Value> = args.iter().map(|a| eval(a, vars)).collect::<Result<_, _>>()?;
    let receiver = target.map(|t| eval(t, vars)).transpose()?;
    let string_arg = |i: usize| args.get(i).and_then(Value::as_str).unwrap_or("");
    match (receiver.as_ref(), name) {
        (None, "size") => size(args.first().unwrap_or(&Value::Null)),
        (Some(r), "size") => size(r),
        (Some(Value::String(s)), "startsWith") => Ok(json!(s.starts_with(string_arg(0)))),
        (Some(Value::String(s)), "endsWith") => Ok(json!(s.ends_with(string_arg(0)))),
        (Some(Value::String(s)), "contains") => Ok(json!(s.contains(string_arg(0)))),
        (Some(Value::String(s)), "lowerAscii") => Ok(json!(s.to_ascii_lowercase())),
        (Some(Value::String(s)), "upperAscii") => Ok(json!(s.to_ascii_uppercase())),
        (Some(Value::String(s)), "trim") => Ok(json!(s.trim())),
        (Some(Value::String(s)), "split") => Ok(json!(s.split(string_arg(0)).collect::<Vec<_>>())),
        (Some(Value::Array(items)), "join") => {
            let parts: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            Ok(json!(parts.join(string_arg(0))))
        }
        (None, "string") => Ok(match args.first() {
            Some(Value::String(s)) => json!(s),
            Some(other) => json!(other.to_string()),
            None => json!(""),
        }),
        (None, "int") => match args.first() {
            Some(Value::Number(n)) => Ok(json!(n.as_f64().unwrap_or(0.0) as i64)),
            Some(Value::String(s)) => s
                .parse::<i64>()
                .map(|n| json!(n))
                .map_err(|_| EvalError(format!("cannot convert {s} to int"))),
            other => err(format!("no such overload: int({other:?})")),
        },
        (None, "bool") => match args.first() {
            Some(Value::Bool(b)) => Ok(json!(b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(json!(s == "true")),
            other => err(format!("no such overload: bool({other:?})")),
        },
        (None, "dyn") => Ok(args.first().cloned().unwrap_or(Value::Null)),
        _ => err(format!("found no matching overload for '{name}'")),
    }
}

pub(super) fn comprehension(
    target: &Expr,
    name: &str,
    var: &str,
    body: &[Expr],
    vars: &dyn Activation,
) -> Result<Value, EvalError> {
    let items: Vec<Value> = match eval(target, vars)? {
        Value::Array(a) => a,
        Value::Object(m) => m.keys().map(|k| json!(k)).collect(),
        other => return err(format!("no such overload: {name} on {other}")),
    };
    let run = |item: &Value, e: &Expr| {
        let scope = Scoped {
            parent: vars,
            name: var,
            value: item,
        };
        eval(e, &scope)
    };
    let predicate = |item: &Value| {
        body.first()
            .map_or(Ok(false), |e| run(item, e).and_then(|v| truthy(&v)))
    };
    match name {
        "all" => {
            for i in &items {
                if !predicate(i)? {
                    return Ok(json!(false));
                }
            }
            Ok(json!(true))
        }
        "exists" => {
            for i in &items {
                if predicate(i)? {
                    return Ok(json!(true));
                }
            }
            Ok(json!(false))
        }
        "exists_one" => {
            let mut count = 0;
            for i in &items {
                count += usize::from(predicate(i)?);
            }
            Ok(json!(count == 1))
        }
        "filter" => {
            let mut out = Vec::new();
            for i in items {
                if predicate(&i)? {
                    out.push(i);
                }
            }
            Ok(Value::Array(out))
        }
        _ => {
            // map(x, transform) or map(x, filter, transform)
            let mut out = Vec::new();
            for i in &items {
                match body {
                    [transform] => out.push(run(i, transform)?),
                    [filter, transform] => {
                        if truthy(&run(i, filter)?)? {
                            out.push(run(i, transform)?);
                        }
                    }
                    _ => return err("wrong number of arguments to map"),
                }
            }
            Ok(Value::Array(out))
        }
    }
}
