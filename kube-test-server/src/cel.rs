//! A small interpreter of the Common Expression Language, enough for the expressions
//! ValidatingAdmissionPolicies are written in: literals, field selection and indexing,
//! `has()`, logical, relational and arithmetic operators, `in`, the ternary, list and map
//! literals, the `all`/`exists`/`exists_one`/`map`/`filter` macros and the common string and
//! conversion functions. Values are JSON.
//!
//! Syntax errors are reported like cel-go's parser reports them (`ERROR: <input>:1:24: Syntax
//! error: mismatched input '<EOF>' expecting {...}` plus the caret lines), so a broken policy is
//! refused with the apiserver's message.

use serde_json::{Map, Number, Value, json};

/// What the parser expects where an expression must start (cel-go's token set).
const EXPRESSION_START: &str = "{'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// A syntax error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ERROR: <input>:{line}:{column}: Syntax error: {message}\n | {source_line}\n | {}^", ".".repeat(column.saturating_sub(1)))]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    source_line: String,
}

/// An evaluation error (a missing key, a type mismatch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Op(&'static str),
    Eof,
}

const OPERATORS: &[&str] = &[
    "||", "&&", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", "[", "]", "(",
    ")", "{", "}", ",",
];

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Value),
    Ident(String),
    Select(Box<Expr>, String),
    Has(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Call(Option<Box<Expr>>, String, Vec<Expr>),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Not(Box<Expr>),
    Negate(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `target.macro(var, body...)`.
    Comprehension(Box<Expr>, String, String, Vec<Expr>),
}

struct Lexer<'a> {
    source: &'a str,
    /// Each token with the byte offset it starts at.
    tokens: Vec<(Token, usize)>,
}

fn tokenize(source: &str) -> Result<Vec<(Token, usize)>, SyntaxError> {
    let mut lexer = Lexer {
        source,
        tokens: Vec::new(),
    };
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (offset, c) = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = offset;
        if c.is_ascii_alphabetic() || c == '_' {
            let mut end = i;
            while end < chars.len() && (chars[end].1.is_ascii_alphanumeric() || chars[end].1 == '_') {
                end += 1;
            }
            let word: String = chars[i..end].iter().map(|(_, c)| c).collect();
            lexer.push(Token::Ident(word), start);
            i = end;
        } else if c.is_ascii_digit() {
            let mut end = i;
            let mut float = false;
            while end < chars.len()
                && (chars[end].1.is_ascii_digit()
                    || (chars[end].1 == '.'
                        && !float
                        && chars.get(end + 1).is_some_and(|(_, n)| n.is_ascii_digit())))
            {
                float |= chars[end].1 == '.';
                end += 1;
            }
            let text: String = chars[i..end].iter().map(|(_, c)| c).collect();
            let token = if float {
                Token::Double(text.parse().map_err(|_| lexer.error(start, "invalid number"))?)
            } else if chars.get(end).is_some_and(|(_, c)| *c == 'u' || *c == 'U') {
                end += 1;
                Token::Uint(text.parse().map_err(|_| lexer.error(start, "invalid number"))?)
            } else {
                Token::Int(text.parse().map_err(|_| lexer.error(start, "invalid number"))?)
            };
            lexer.push(token, start);
            i = end;
        } else if c == '"' || c == '\'' {
            let mut text = String::new();
            let mut end = i + 1;
            loop {
                let Some(&(_, d)) = chars.get(end) else {
                    return Err(lexer.error(start, "token recognition error at: unterminated string"));
                };
                end += 1;
                match d {
                    d if d == c => break,
                    '\\' => {
                        let (_, e) = *chars
                            .get(end)
                            .ok_or_else(|| lexer.error(start, "unterminated string"))?;
                        end += 1;
                        text.push(match e {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        });
                    }
                    d => text.push(d),
                }
            }
            lexer.push(Token::Str(text), start);
            i = end;
        } else {
            let rest = &source[offset..];
            let op = OPERATORS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| lexer.error(start, &format!("token recognition error at: '{c}'")))?;
            lexer.push(Token::Op(op), start);
            i += op.chars().count();
        }
    }
    let end = source.len();
    lexer.push(Token::Eof, end);
    Ok(lexer.tokens)
}

impl Lexer<'_> {
    fn push(&mut self, token: Token, offset: usize) {
        self.tokens.push((token, offset));
    }

    fn error(&self, offset: usize, message: &str) -> SyntaxError {
        syntax_error(self.source, offset, message)
    }
}

fn syntax_error(source: &str, offset: usize, message: &str) -> SyntaxError {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    let column = before[line_start..].chars().count() + 1;
    let source_line = source[line_start..].lines().next().unwrap_or("").to_string();
    SyntaxError {
        line,
        column,
        message: message.to_string(),
        source_line,
    }
}

struct Parser<'a> {
    source: &'a str,
    tokens: Vec<(Token, usize)>,
    at: usize,
}

/// Parses an expression.
pub fn compile(source: &str) -> Result<Expr, SyntaxError> {
    let mut p = Parser {
        source,
        tokens: tokenize(source)?,
        at: 0,
    };
    let e = p.expr()?;
    if p.peek() != &Token::Eof {
        return Err(p.unexpected("<EOF>"));
    }
    Ok(e)
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }

    fn next(&mut self) -> Token {
        let t = self.tokens[self.at].0.clone();
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Token::Op(o) if *o == op) {
            self.next();
            true
        } else {
            false
        }
    }

    fn token_text(&self) -> String {
        let (token, offset) = &self.tokens[self.at];
        match token {
            Token::Eof => "<EOF>".into(),
            Token::Ident(s) => s.clone(),
            Token::Op(o) => (*o).into(),
            _ => self.source[*offset..]
                .split(|c: char| c.is_whitespace() || "()[]{},".contains(c))
                .next()
                .unwrap_or("")
                .to_string(),
        }
    }

    fn unexpected(&self, expecting: &str) -> SyntaxError {
        let message = format!("mismatched input '{}' expecting {expecting}", self.token_text());
        syntax_error(self.source, self.tokens[self.at].1, &message)
    }

    fn expect(&mut self, op: &'static str) -> Result<(), SyntaxError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{op}'")))
        }
    }

    fn expr(&mut self) -> Result<Expr, SyntaxError> {
        let condition = self.or()?;
        if self.eat("?") {
            let then = self.or()?;
            self.expect(":")?;
            let otherwise = self.expr()?;
            return Ok(Expr::Ternary(
                Box::new(condition),
                Box::new(then),
                Box::new(otherwise),
            ));
        }
        Ok(condition)
    }

    fn binary(
        &mut self,
        ops: &[&'static str],
        next: fn(&mut Self) -> Result<Expr, SyntaxError>,
    ) -> Result<Expr, SyntaxError> {
        let mut left = next(self)?;
        loop {
            let op = match self.peek() {
                Token::Op(o) if ops.contains(o) => *o,
                Token::Ident(w) if w == "in" && ops.contains(&"in") => "in",
                _ => return Ok(left),
            };
            self.next();
            let right = next(self)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn or(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["||"], Self::and)
    }

    fn and(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["&&"], Self::relation)
    }

    fn relation(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["==", "!=", "<", "<=", ">", ">=", "in"], Self::addition)
    }

    fn addition(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["+", "-"], Self::multiplication)
    }

    fn multiplication(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["*", "/", "%"], Self::unary)
    }

    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(match self.unary()? {
                Expr::Literal(Value::Number(n)) if n.as_i64().is_some() => {
                    Expr::Literal(json!(-n.as_i64().unwrap_or(0)))
                }
                e => Expr::Negate(Box::new(e)),
            });
        }
        self.member()
    }

    fn member(&mut self) -> Result<Expr, SyntaxError> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let name = match self.next() {
                    Token::Ident(n) => n,
                    _ => {
                        self.at -= 1;
                        return Err(self.unexpected("IDENTIFIER"));
                    }
                };
                if self.eat("(") {
                    let args = self.arguments(")")?;
                    e = method(e, name, args)?;
                } else {
                    e = Expr::Select(Box::new(e), name);
                }
            } else if self.eat("[") {
                let index = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    fn arguments(&mut self, close: &'static str) -> Result<Vec<Expr>, SyntaxError> {
        let mut args = Vec::new();
        if self.eat(close) {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(close) {
                return Ok(args);
            }
            self.expect(",")?;
            if self.eat(close) {
                return Ok(args);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, SyntaxError> {
        match self.peek().clone() {
            Token::Int(n) => {
                self.next();
                Ok(Expr::Literal(json!(n)))
            }
            Token::Uint(n) => {
                self.next();
                Ok(Expr::Literal(json!(n)))
            }
            Token::Double(d) => {
                self.next();
                Ok(Expr::Literal(
                    Number::from_f64(d).map_or(Value::Null, Value::Number),
                ))
            }
            Token::Str(s) => {
                self.next();
                Ok(Expr::Literal(json!(s)))
            }
            Token::Ident(word) => {
                self.next();
                match word.as_str() {
                    "true" => return Ok(Expr::Literal(json!(true))),
                    "false" => return Ok(Expr::Literal(json!(false))),
                    "null" => return Ok(Expr::Literal(Value::Null)),
                    _ => {}
                }
                if self.eat("(") {
                    let args = self.arguments(")")?;
                    if word == "has" {
                        return match args.as_slice() {
                            [Expr::Select(target, field)] => Ok(Expr::Has(target.clone(), field.clone())),
                            _ => Err(syntax_error(
                                self.source,
                                self.tokens[self.at].1,
                                "invalid argument to has() macro",
                            )),
                        };
                    }
                    return Ok(Expr::Call(None, word, args));
                }
                Ok(Expr::Ident(word))
            }
            Token::Op("(") => {
                self.next();
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Token::Op("[") => {
                self.next();
                Ok(Expr::List(self.arguments("]")?))
            }
            Token::Op("{") => {
                self.next();
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let key = self.expr()?;
                        self.expect(":")?;
                        entries.push((key, self.expr()?));
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                Ok(Expr::Map(entries))
            }
            _ => Err(self.unexpected(EXPRESSION_START)),
        }
    }
}

/// A method call, or one of the comprehension macros.
fn method(target: Expr, name: String, args: Vec<Expr>) -> Result<Expr, SyntaxError> {
    if matches!(name.as_str(), "all" | "exists" | "exists_one" | "map" | "filter")
        && let Some(Expr::Ident(var)) = args.first()
    {
        let var = var.clone();
        return Ok(Expr::Comprehension(
            Box::new(target),
            name,
            var,
            args[1..].to_vec(),
        ));
    }
    Ok(Expr::Call(Some(Box::new(target)), name, args))
}

/// Variable bindings for evaluation.
pub trait Activation {
    fn resolve(&self, name: &str) -> Option<Value>;
}

struct Scoped<'a> {
    parent: &'a dyn Activation,
    name: &'a str,
    value: &'a Value,
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

fn err<T>(message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(message.into()))
}

fn truthy(v: &Value) -> Result<bool, EvalError> {
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

fn binary(op: &str, a: &Expr, b: &Expr, vars: &dyn Activation) -> Result<Value, EvalError> {
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

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        _ => a == b,
    }
}

fn arithmetic(op: &str, l: &Value, r: &Value) -> Result<Value, EvalError> {
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

fn size(v: &Value) -> Result<Value, EvalError> {
    Ok(json!(match v {
        Value::String(s) => s.chars().count(),
        Value::Array(a) => a.len(),
        Value::Object(m) => m.len(),
        other => return err(format!("no such overload: size({other})")),
    }))
}

fn call(target: Option<&Expr>, name: &str, args: &[Expr], vars: &dyn Activation) -> Result<Value, EvalError> {
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

fn comprehension(
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

#[cfg(test)]
mod tests {
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
