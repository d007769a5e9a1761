//! HCL native templates, as `kubectl_path_documents` renders each file before splitting it (the
//! language of Terraform's `templatefile`): `${expr}`, `%{ if }`/`%{ else }`/`%{ endif }`,
//! `%{ for x in xs }`, `~` strip markers (which trim the adjacent line of literal text),
//! and the escapes `$${` and `%%{`. Every variable is a string; the functions are Terraform
//! 0.12's. hcl-rs parses; the evaluation is ours, because HCL converts values as cty does (`"3"`
//! is a number where one is needed) and hcl-rs's evaluator does not, and because its messages
//! quote values, which may be sensitive: ours never do.
//! Facts: reference/kubectl-providers.md §7.12.

mod clock;
mod collections;
mod encoding;
mod expr;
mod files;
mod functions;
mod numbers;
mod strings;
mod value;

use std::collections::BTreeMap;
use std::str::FromStr;

use hcl::template::{Directive, Element, Template};

use value::Value;

/// Why a file could not be rendered; it names the file, and never a variable's value.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error(
        "{file} is not a valid template (write a literal `${{` as `$${{` and `%{{` as `%%{{`): {message}"
    )]
    Parse { file: String, message: String },
    #[error("{file}: {message}, in `{expression}`")]
    Eval {
        file: String,
        expression: String,
        message: String,
    },
}

/// `text` (the content of `file`) rendered with `vars`, each a string.
pub fn render(text: &str, vars: &BTreeMap<String, String>, file: &str) -> Result<String, TemplateError> {
    let vars = vars
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    render_with(text, vars, file, 0)
}

/// [`render`] with values of any type: `templatefile` inside a template passes its own.
fn render_with(
    text: &str,
    vars: BTreeMap<String, Value>,
    file: &str,
    depth: usize,
) -> Result<String, TemplateError> {
    let template = Template::from_str(text).map_err(|e| TemplateError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let scope = Scope {
        parent: None,
        vars,
        file,
        depth,
    };
    let mut out = String::new();
    render_elements(&template, &scope, false, false, &mut out).map_err(|e| TemplateError::Eval {
        file: file.to_string(),
        expression: e.expression.unwrap_or_default(),
        message: e.message,
    })?;
    Ok(out)
}

/// The variables in reach: the template's own, then those of the `for` loops around.
struct Scope<'a> {
    parent: Option<&'a Scope<'a>>,
    vars: BTreeMap<String, Value>,
    /// The file being rendered, for file functions' messages.
    file: &'a str,
    /// How many `templatefile` calls deep this is.
    depth: usize,
}

impl<'a> Scope<'a> {
    fn lookup(&self, name: &str) -> Option<&Value> {
        self.vars
            .get(name)
            .or_else(|| self.parent.and_then(|p| p.lookup(name)))
    }

    fn child(&'a self, bindings: impl IntoIterator<Item = (String, Value)>) -> Scope<'a> {
        Scope {
            parent: Some(self),
            vars: bindings.into_iter().collect(),
            file: self.file,
            depth: self.depth,
        }
    }
}

/// A failed evaluation: what went wrong, and the template sequence it went wrong in.
#[derive(Debug)]
struct EvalError {
    message: String,
    expression: Option<String>,
}

impl EvalError {
    fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
            expression: None,
        }
    }

    /// The innermost sequence is the one named.
    fn within(mut self, sequence: impl FnOnce() -> String) -> EvalError {
        self.expression.get_or_insert_with(sequence);
        self
    }
}

impl From<value::Mismatch> for EvalError {
    fn from(m: value::Mismatch) -> EvalError {
        EvalError::new(m.0)
    }
}

/// Whether an element strips the whitespace before it (`{~`) and after it (`~}`).
fn strips(element: &Element) -> (bool, bool) {
    match element {
        Element::Literal(_) => (false, false),
        Element::Interpolation(i) => (i.strip.strip_start(), i.strip.strip_end()),
        Element::Directive(d) => match d.as_ref() {
            Directive::If(d) => (d.if_strip.strip_start(), d.endif_strip.strip_end()),
            Directive::For(d) => (d.for_strip.strip_start(), d.endfor_strip.strip_end()),
        },
    }
}

/// Renders `template` into `out`; `strip_first`/`strip_last` say whether the sequences around
/// it strip its leading and trailing whitespace.
fn render_elements(
    template: &Template,
    scope: &Scope,
    strip_first: bool,
    strip_last: bool,
    out: &mut String,
) -> Result<(), EvalError> {
    let elements = template.elements();
    for (i, element) in elements.iter().enumerate() {
        match element {
            Element::Literal(text) => {
                let strip_start = if i == 0 {
                    strip_first
                } else {
                    strips(&elements[i - 1]).1
                };
                let strip_end = if i + 1 == elements.len() {
                    strip_last
                } else {
                    strips(&elements[i + 1]).0
                };
                out.push_str(&stripped(text, strip_start, strip_end));
            }
            Element::Interpolation(interpolation) => {
                let sequence = || format!("${{{}}}", interpolation.expr);
                let value = expr::eval(&interpolation.expr, scope).map_err(|e| e.within(sequence))?;
                out.push_str(&interpolated(&value).map_err(|e| e.within(sequence))?);
            }
            Element::Directive(directive) => match directive.as_ref() {
                Directive::If(d) => {
                    let sequence = || format!("%{{ if {} }}", d.cond_expr);
                    let condition = expr::eval(&d.cond_expr, scope)
                        .and_then(|c| Ok(c.to_bool()?))
                        .map_err(|e| e.within(sequence))?;
                    match (&d.false_template, condition) {
                        (_, true) => {
                            let end = if d.false_template.is_some() {
                                d.else_strip
                            } else {
                                d.endif_strip
                            };
                            render_elements(
                                &d.true_template,
                                scope,
                                d.if_strip.strip_end(),
                                end.strip_start(),
                                out,
                            )?;
                        }
                        (Some(otherwise), false) => {
                            let (start, end) = (d.else_strip.strip_end(), d.endif_strip.strip_start());
                            render_elements(otherwise, scope, start, end, out)?;
                        }
                        (None, false) => {}
                    }
                }
                Directive::For(d) => {
                    let sequence = || format!("%{{ for {} in {} }}", d.value_var, d.collection_expr);
                    let collection = expr::eval(&d.collection_expr, scope).map_err(|e| e.within(sequence))?;
                    for (key, value) in expr::iterate(collection).map_err(|e| e.within(sequence))? {
                        let mut bindings = vec![(d.value_var.to_string(), value)];
                        if let Some(key_var) = &d.key_var {
                            bindings.push((key_var.to_string(), key));
                        }
                        let inner = scope.child(bindings);
                        let (start, end) = (d.for_strip.strip_end(), d.endfor_strip.strip_start());
                        render_elements(&d.template, &inner, start, end, out)?;
                    }
                }
            },
        }
    }
    Ok(())
}

/// A literal with its strip markers applied. HCL scans a template's literal text line by line
/// (each line keeps its newline), and a marker trims only the adjacent line: `~}` the first,
/// `{~` the last. So `~}` followed by a newline eats that newline and keeps the next line's
/// indentation, and `{~` after an indented line eats the indentation but not the line break.
fn stripped(text: &str, strip_start: bool, strip_end: bool) -> String {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if strip_start && let Some(first) = lines.first_mut() {
        *first = first.trim_start();
    }
    if strip_end && let Some(last) = lines.last_mut() {
        *last = last.trim_end();
    }
    lines.concat()
}

/// What an interpolation writes: strings, numbers and booleans.
fn interpolated(value: &Value) -> Result<String, EvalError> {
    match value {
        Value::Null => Err(EvalError::new(
            "the expression result is null, which a template cannot include",
        )),
        Value::List(_) | Value::Map(_) => Err(EvalError::new(format!(
            "the expression result is a {}, which a template cannot include (a string is required)",
            value.kind()
        ))),
        other => Ok(other.to_text()?),
    }
}

#[cfg(test)]
mod tests;
