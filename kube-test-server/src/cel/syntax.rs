//! CEL's syntax: the lexer, the recursive-descent parser that builds an [`Expr`], and syntax
//! errors worded and placed as cel-go's parser reports them.

use serde_json::{Number, Value, json};

/// What the parser expects where an expression must start (cel-go's token set).
pub(super) const EXPRESSION_START: &str = "{'[', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// A syntax error at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ERROR: <input>:{line}:{column}: Syntax error: {message}\n | {source_line}\n | {}^", ".".repeat(column.saturating_sub(1)))]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub(super) source_line: String,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Ident(String),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(String),
    Op(&'static str),
    Eof,
}

pub(super) const OPERATORS: &[&str] = &[
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
    /// A message construction, `Object.metadata{labels: {...}}`: its fields (the type name
    /// only says what the fields are, so a JSON object is its value).
    Struct(Vec<(String, Expr)>),
}

pub(super) struct Lexer<'a> {
    pub(super) source: &'a str,
    /// Each token with the byte offset it starts at.
    pub(super) tokens: Vec<(Token, usize)>,
}

pub(super) fn tokenize(source: &str) -> Result<Vec<(Token, usize)>, SyntaxError> {
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
    pub(super) fn push(&mut self, token: Token, offset: usize) {
        self.tokens.push((token, offset));
    }

    pub(super) fn error(&self, offset: usize, message: &str) -> SyntaxError {
        syntax_error(self.source, offset, message)
    }
}

pub(super) fn syntax_error(source: &str, offset: usize, message: &str) -> SyntaxError {
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

pub(super) struct Parser<'a> {
    pub(super) source: &'a str,
    pub(super) tokens: Vec<(Token, usize)>,
    pub(super) at: usize,
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
    pub(super) fn peek(&self) -> &Token {
        &self.tokens[self.at].0
    }

    pub(super) fn next(&mut self) -> Token {
        let t = self.tokens[self.at].0.clone();
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    pub(super) fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Token::Op(o) if *o == op) {
            self.next();
            true
        } else {
            false
        }
    }

    pub(super) fn token_text(&self) -> String {
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

    pub(super) fn unexpected(&self, expecting: &str) -> SyntaxError {
        let message = format!("mismatched input '{}' expecting {expecting}", self.token_text());
        syntax_error(self.source, self.tokens[self.at].1, &message)
    }

    pub(super) fn expect(&mut self, op: &'static str) -> Result<(), SyntaxError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{op}'")))
        }
    }

    pub(super) fn expr(&mut self) -> Result<Expr, SyntaxError> {
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

    pub(super) fn binary(
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

    pub(super) fn or(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["||"], Self::and)
    }

    pub(super) fn and(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["&&"], Self::relation)
    }

    pub(super) fn relation(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["==", "!=", "<", "<=", ">", ">=", "in"], Self::addition)
    }

    pub(super) fn addition(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["+", "-"], Self::multiplication)
    }

    pub(super) fn multiplication(&mut self) -> Result<Expr, SyntaxError> {
        self.binary(&["*", "/", "%"], Self::unary)
    }

    pub(super) fn unary(&mut self) -> Result<Expr, SyntaxError> {
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

    pub(super) fn member(&mut self) -> Result<Expr, SyntaxError> {
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
            } else if is_type_name(&e) && self.eat("{") {
                e = Expr::Struct(self.fields()?);
            } else {
                return Ok(e);
            }
        }
    }

    /// A message construction's `field: value` pairs, after its `{`.
    pub(super) fn fields(&mut self) -> Result<Vec<(String, Expr)>, SyntaxError> {
        let mut fields = Vec::new();
        while !self.eat("}") {
            let name = match self.next() {
                Token::Ident(n) => n,
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected("IDENTIFIER"));
                }
            };
            self.expect(":")?;
            fields.push((name, self.expr()?));
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        Ok(fields)
    }

    pub(super) fn arguments(&mut self, close: &'static str) -> Result<Vec<Expr>, SyntaxError> {
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

    pub(super) fn primary(&mut self) -> Result<Expr, SyntaxError> {
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

/// Whether `e` is a qualified name (`Object`, `Object.spec.template`), which a `{` after makes
/// a message construction.
fn is_type_name(e: &Expr) -> bool {
    match e {
        Expr::Ident(_) => true,
        Expr::Select(target, _) => is_type_name(target),
        _ => false,
    }
}

/// A method call, or one of the comprehension macros.
pub(super) fn method(target: Expr, name: String, args: Vec<Expr>) -> Result<Expr, SyntaxError> {
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
