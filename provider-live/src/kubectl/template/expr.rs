//! Expressions inside template sequences, evaluated as HCL evaluates them: variables, attribute and
//! index access, splats, operators with cty's conversions, conditionals, `for` expressions, and
//! function calls (`try` and `can` take their arguments unevaluated; `templatefile` renders).

use std::collections::BTreeMap;

use hcl::expr::{BinaryOperator, Expression, ObjectKey, TemplateExpr, TraversalOperator, UnaryOperator};
use hcl::template::Template;

use super::functions::{self, CallError};
use super::value::Value;
use super::{EvalError, Scope, render_elements};

/// Nested `templatefile` calls are refused, as Terraform refuses them.
const MAX_DEPTH: usize = 1;

pub(super) fn eval(expr: &Expression, scope: &Scope) -> Result<Value, EvalError> {
    Ok(match expr {
        Expression::Null => Value::Null,
        Expression::Bool(b) => Value::Bool(*b),
        Expression::Number(n) => Value::Number(n.as_f64().unwrap_or_default()),
        Expression::String(s) => Value::String(s.clone()),
        Expression::Array(items) => {
            Value::List(items.iter().map(|e| eval(e, scope)).collect::<Result<_, _>>()?)
        }
        Expression::Object(entries) => {
            let mut out = BTreeMap::new();
            for (key, value) in entries.iter() {
                let key = match key {
                    ObjectKey::Identifier(id) => id.to_string(),
                    ObjectKey::Expression(e) => eval(e, scope)?.to_text()?,
                    _ => {
                        return Err(EvalError::new(
                            "this kind of object key is not supported in a template",
                        ));
                    }
                };
                out.insert(key, eval(value, scope)?);
            }
            Value::Map(out)
        }
        Expression::TemplateExpr(template) => Value::String(template_string(template, scope)?),
        Expression::Variable(v) => scope
            .lookup(v.as_str())
            .cloned()
            .ok_or_else(|| EvalError::new(format!("there is no variable named \"{}\"", v.as_str())))?,
        Expression::Traversal(t) => {
            let operators: Vec<&TraversalOperator> = t.operators.iter().collect();
            traverse(eval(&t.expr, scope)?, &operators, scope)?
        }
        Expression::FuncCall(call) => {
            let name = call.name.name.as_str();
            if call.name.is_namespaced() {
                return Err(EvalError::new(format!(
                    "there is no function named \"{}\"",
                    call.name
                )));
            }
            match name {
                "try" => return attempt(&call.args, scope),
                "can" => {
                    return Ok(Value::Bool(
                        call.args.len() == 1 && eval(&call.args[0], scope).is_ok(),
                    ));
                }
                _ => {}
            }
            let mut args = call
                .args
                .iter()
                .map(|a| eval(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            if call.expand_final {
                let last = args.pop().unwrap_or(Value::Null);
                args.extend(
                    last.as_list()
                        .map_err(|_| EvalError::new("the argument before `...` must be a list"))?
                        .iter()
                        .cloned(),
                );
            }
            if name == "templatefile" {
                return template_file(&args, scope);
            }
            functions::call(name, &args).map_err(|e| match e {
                CallError::Unknown => EvalError::new(format!("there is no function named \"{name}\"")),
                CallError::Unavailable => EvalError::new(format!(
                    "the function \"{name}\" of Terraform 0.12 is not available in this provider"
                )),
                CallError::Failed(why) => {
                    EvalError::new(format!("call to function \"{name}\" failed: {why}"))
                }
            })?
        }
        Expression::Parenthesis(inner) => eval(inner, scope)?,
        Expression::Conditional(c) => {
            if eval(&c.cond_expr, scope)?.to_bool()? {
                eval(&c.true_expr, scope)?
            } else {
                eval(&c.false_expr, scope)?
            }
        }
        Expression::Operation(op) => match op.as_ref() {
            hcl::expr::Operation::Unary(u) => {
                let operand = eval(&u.expr, scope)?;
                match u.operator {
                    UnaryOperator::Neg => Value::Number(-operand.to_number()?),
                    UnaryOperator::Not => Value::Bool(!operand.to_bool()?),
                }
            }
            hcl::expr::Operation::Binary(b) => binary(&b.lhs_expr, b.operator, &b.rhs_expr, scope)?,
        },
        Expression::ForExpr(f) => {
            let collection = eval(&f.collection_expr, scope)?;
            let mut list = Vec::new();
            let mut map: BTreeMap<String, Value> = BTreeMap::new();
            for (key, value) in iterate(collection)? {
                let mut bindings = vec![(f.value_var.to_string(), value)];
                if let Some(key_var) = &f.key_var {
                    bindings.push((key_var.to_string(), key));
                }
                let inner = scope.child(bindings);
                if let Some(cond) = &f.cond_expr
                    && !eval(cond, &inner)?.to_bool()?
                {
                    continue;
                }
                let value = eval(&f.value_expr, &inner)?;
                match &f.key_expr {
                    None => list.push(value),
                    Some(key_expr) => {
                        let key = eval(key_expr, &inner)?.to_text()?;
                        if f.grouping {
                            match map.entry(key).or_insert_with(|| Value::List(Vec::new())) {
                                Value::List(group) => group.push(value),
                                _ => unreachable!("groups are lists"),
                            }
                        } else if map.insert(key, value).is_some() {
                            return Err(EvalError::new(
                                "two elements of a for expression have the same key (add `...` after the value to group them)",
                            ));
                        }
                    }
                }
            }
            if f.key_expr.is_some() {
                Value::Map(map)
            } else {
                Value::List(list)
            }
        }
        _ => {
            return Err(EvalError::new(
                "this kind of expression is not supported in a template",
            ));
        }
    })
}

/// The (key, value) pairs a `for` visits: a list's indices, a map's keys in lexical order.
pub(super) fn iterate(collection: Value) -> Result<Vec<(Value, Value)>, EvalError> {
    match collection {
        Value::List(items) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(i, v)| (Value::Number(i as f64), v))
            .collect()),
        Value::Map(entries) => Ok(entries.into_iter().map(|(k, v)| (Value::String(k), v)).collect()),
        Value::Null => Err(EvalError::new("a for cannot iterate over a null value")),
        other => Err(EvalError::new(format!(
            "a for cannot iterate over a {} (a list or map is required)",
            other.kind()
        ))),
    }
}

/// A quoted string or heredoc with sequences of its own.
fn template_string(template: &TemplateExpr, scope: &Scope) -> Result<String, EvalError> {
    let template = Template::from_expr(template).map_err(|e| EvalError::new(e.to_string()))?;
    let mut out = String::new();
    render_elements(&template, scope, false, false, &mut out)?;
    Ok(out)
}

fn traverse(mut value: Value, operators: &[&TraversalOperator], scope: &Scope) -> Result<Value, EvalError> {
    for (i, operator) in operators.iter().enumerate() {
        value = match operator {
            TraversalOperator::GetAttr(name) => attribute(value, name.as_str())?,
            TraversalOperator::Index(index) => {
                let key = eval(index, scope)?;
                element(value, &key)?
            }
            TraversalOperator::LegacyIndex(index) => element(value, &Value::Number(*index as f64))?,
            TraversalOperator::AttrSplat | TraversalOperator::FullSplat => {
                // `.*` applies the attribute accesses right after it to each element, `[*]` all
                // the rest; a single value counts as a list of one, null as an empty list.
                let rest = &operators[i + 1..];
                let taken = match operator {
                    TraversalOperator::AttrSplat => rest
                        .iter()
                        .take_while(|o| matches!(o, TraversalOperator::GetAttr(_)))
                        .count(),
                    _ => rest.len(),
                };
                let items = match value {
                    Value::List(items) => items,
                    Value::Null => Vec::new(),
                    single => vec![single],
                };
                let mapped = items
                    .into_iter()
                    .map(|item| traverse(item, &rest[..taken], scope))
                    .collect::<Result<Vec<_>, _>>()?;
                return traverse(Value::List(mapped), &rest[taken..], scope);
            }
        };
    }
    Ok(value)
}

fn attribute(value: Value, name: &str) -> Result<Value, EvalError> {
    match value {
        Value::Map(mut entries) => entries
            .remove(name)
            .ok_or_else(|| EvalError::new(format!("the map has no element \"{name}\""))),
        Value::Null => Err(EvalError::new(format!(
            "cannot read attribute \"{name}\" of a null value"
        ))),
        other => Err(EvalError::new(format!(
            "cannot read attribute \"{name}\" of a {}",
            other.kind()
        ))),
    }
}

fn element(value: Value, key: &Value) -> Result<Value, EvalError> {
    match value {
        Value::List(mut items) => {
            let index = key.to_integer()?;
            let len = items.len();
            usize::try_from(index)
                .ok()
                .filter(|i| *i < len)
                .map(|i| items.swap_remove(i))
                .ok_or_else(|| {
                    EvalError::new(format!("the index is out of range for a list of {len} elements"))
                })
        }
        Value::Map(mut entries) => {
            let key = key.to_text()?;
            entries
                .remove(&key)
                .ok_or_else(|| EvalError::new("the map has no element for the given key"))
        }
        Value::Null => Err(EvalError::new("cannot index a null value")),
        other => Err(EvalError::new(format!("cannot index a {}", other.kind()))),
    }
}

fn binary(
    lhs: &Expression,
    operator: BinaryOperator,
    rhs: &Expression,
    scope: &Scope,
) -> Result<Value, EvalError> {
    use BinaryOperator as Op;
    // `&&` and `||` stop at the first operand that decides, as HCL does today.
    match operator {
        Op::And => {
            return Ok(Value::Bool(
                eval(lhs, scope)?.to_bool()? && eval(rhs, scope)?.to_bool()?,
            ));
        }
        Op::Or => {
            return Ok(Value::Bool(
                eval(lhs, scope)?.to_bool()? || eval(rhs, scope)?.to_bool()?,
            ));
        }
        _ => {}
    }
    let (a, b) = (eval(lhs, scope)?, eval(rhs, scope)?);
    let numbers = || -> Result<(f64, f64), EvalError> { Ok((a.to_number()?, b.to_number()?)) };
    Ok(match operator {
        Op::Eq => Value::Bool(a == b),
        Op::NotEq => Value::Bool(a != b),
        Op::Less => numbers().map(|(x, y)| Value::Bool(x < y))?,
        Op::LessEq => numbers().map(|(x, y)| Value::Bool(x <= y))?,
        Op::Greater => numbers().map(|(x, y)| Value::Bool(x > y))?,
        Op::GreaterEq => numbers().map(|(x, y)| Value::Bool(x >= y))?,
        Op::Plus => numbers().map(|(x, y)| Value::Number(x + y))?,
        Op::Minus => numbers().map(|(x, y)| Value::Number(x - y))?,
        Op::Mul => numbers().map(|(x, y)| Value::Number(x * y))?,
        Op::Div | Op::Mod => {
            let (x, y) = numbers()?;
            if y == 0.0 {
                return Err(EvalError::new("division by zero"));
            }
            Value::Number(if operator == Op::Div { x / y } else { x % y })
        }
        Op::And | Op::Or => unreachable!("handled above"),
    })
}

/// `try(a, b, ...)`: the first argument that evaluates without error.
fn attempt(args: &[Expression], scope: &Scope) -> Result<Value, EvalError> {
    let mut last = EvalError::new("try needs at least one argument");
    for arg in args {
        match eval(arg, scope) {
            Ok(value) => return Ok(value),
            Err(e) => last = e,
        }
    }
    Err(EvalError::new(format!(
        "call to function \"try\" failed: no expression succeeded; the last: {}",
        last.message
    )))
}

/// `templatefile(path, vars)`: the file at `path` (from the working directory) rendered with
/// `vars`, which may be of any type; it cannot call `templatefile` again.
fn template_file(args: &[Value], scope: &Scope) -> Result<Value, EvalError> {
    let fail = |why: String| EvalError::new(format!("call to function \"templatefile\" failed: {why}"));
    if scope.depth >= MAX_DEPTH {
        return Err(fail(
            "cannot recursively call templatefile from inside templatefile call".into(),
        ));
    }
    let [path, vars] = args else {
        return Err(fail(format!("it takes 2 arguments, not {}", args.len())));
    };
    let path = path.to_text()?;
    let vars = vars.as_map()?.clone();
    let text = std::fs::read_to_string(&path).map_err(|e| fail(format!("cannot read {path}: {e}")))?;
    let rendered =
        super::render_with(&text, vars, &path, scope.depth + 1).map_err(|e| fail(e.to_string()))?;
    Ok(Value::String(rendered))
}
