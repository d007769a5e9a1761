//! String functions, as Terraform 0.12 has them: case, trimming, splitting and joining, `format`
//! with Go's verbs, and regular expressions (RE2 syntax, which the `regex` crate shares).

use super::encoding::json_text;
use super::value::Value;
use crate::kubectl::yaml::go_float_g;

fn text(args: &[Value], i: usize) -> Result<String, String> {
    Ok(args[i].to_text()?)
}

pub(super) fn chomp(args: &[Value]) -> Result<Value, String> {
    Ok(text(args, 0)?.trim_end_matches(['\r', '\n']).into())
}

pub(super) fn indent(args: &[Value]) -> Result<Value, String> {
    let spaces =
        " ".repeat(usize::try_from(args[0].to_integer()?).map_err(|_| "the indent must not be negative")?);
    Ok(text(args, 1)?.replace('\n', &format!("\n{spaces}")).into())
}

pub(super) fn join(args: &[Value]) -> Result<Value, String> {
    let separator = text(args, 0)?;
    let mut parts = Vec::new();
    for list in &args[1..] {
        parts.extend(list.to_texts()?);
    }
    Ok(parts.join(&separator).into())
}

pub(super) fn lower(args: &[Value]) -> Result<Value, String> {
    Ok(text(args, 0)?.to_lowercase().into())
}

pub(super) fn upper(args: &[Value]) -> Result<Value, String> {
    Ok(text(args, 0)?.to_uppercase().into())
}

/// Go's `strings.Title`: each letter after a separator (anything but a letter, digit or `_`)
/// upper-cased.
pub(super) fn title(args: &[Value]) -> Result<Value, String> {
    let mut previous = ' ';
    let titled = text(args, 0)?
        .chars()
        .flat_map(|c| {
            let separator = !(previous.is_alphanumeric() || previous == '_');
            previous = c;
            let upper: Vec<char> = if separator {
                c.to_uppercase().collect()
            } else {
                vec![c]
            };
            upper
        })
        .collect::<String>();
    Ok(titled.into())
}

pub(super) fn split(args: &[Value]) -> Result<Value, String> {
    let (separator, s) = (text(args, 0)?, text(args, 1)?);
    let parts: Vec<Value> = if separator.is_empty() {
        s.chars().map(|c| Value::String(c.to_string())).collect()
    } else {
        s.split(separator.as_str()).map(Value::from).collect()
    };
    Ok(Value::List(parts))
}

pub(super) fn strrev(args: &[Value]) -> Result<Value, String> {
    Ok(text(args, 0)?.chars().rev().collect::<String>().into())
}

/// `substr(s, offset, length)` in characters: a negative offset counts from the end, a length of
/// -1 takes the rest.
pub(super) fn substr(args: &[Value]) -> Result<Value, String> {
    let chars: Vec<char> = text(args, 0)?.chars().collect();
    let (mut offset, length) = (args[1].to_integer()?, args[2].to_integer()?);
    if offset < 0 {
        offset = (offset + chars.len() as i64).max(0);
    }
    let start = (offset as usize).min(chars.len());
    let end = if length < 0 {
        chars.len()
    } else {
        (start + length as usize).min(chars.len())
    };
    Ok(chars[start..end].iter().collect::<String>().into())
}

pub(super) fn trim(args: &[Value]) -> Result<Value, String> {
    let cutset: Vec<char> = text(args, 1)?.chars().collect();
    Ok(text(args, 0)?.trim_matches(cutset.as_slice()).into())
}

pub(super) fn trimprefix(args: &[Value]) -> Result<Value, String> {
    let (s, prefix) = (text(args, 0)?, text(args, 1)?);
    Ok(s.strip_prefix(prefix.as_str()).unwrap_or(&s).into())
}

pub(super) fn trimsuffix(args: &[Value]) -> Result<Value, String> {
    let (s, suffix) = (text(args, 0)?, text(args, 1)?);
    Ok(s.strip_suffix(suffix.as_str()).unwrap_or(&s).into())
}

pub(super) fn trimspace(args: &[Value]) -> Result<Value, String> {
    Ok(text(args, 0)?.trim().into())
}

/// `replace(s, old, new)`; an `old` written `/.../` is a regular expression and `new` may name
/// its groups (`$1`).
pub(super) fn replace(args: &[Value]) -> Result<Value, String> {
    let (s, old, new) = (text(args, 0)?, text(args, 1)?, text(args, 2)?);
    match old.strip_prefix('/').and_then(|o| o.strip_suffix('/')) {
        Some(pattern) if old.len() > 1 => Ok(compile(pattern)?
            .replace_all(&s, new.as_str())
            .into_owned()
            .into()),
        _ => Ok(s.replace(&old, &new).into()),
    }
}

fn compile(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(pattern).map_err(|e| format!("invalid regular expression: {e}"))
}

/// One match as Terraform returns it: the text without groups, a list of unnamed groups, or a
/// map of named ones.
fn captured(re: &regex::Regex, caps: &regex::Captures) -> Result<Value, String> {
    let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
    let group = |i: usize| caps.get(i).map_or(Value::Null, |m| Value::from(m.as_str()));
    if names.is_empty() {
        return Ok(group(0));
    }
    match (
        names.iter().all(Option::is_some),
        names.iter().all(Option::is_none),
    ) {
        (true, _) => Ok(Value::Map(
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (n.unwrap_or_default().to_string(), group(i + 1)))
                .collect(),
        )),
        (_, true) => Ok(Value::List((1..=names.len()).map(group).collect())),
        _ => Err("the pattern must use either all named or all unnamed capture groups".into()),
    }
}

pub(super) fn regex(args: &[Value]) -> Result<Value, String> {
    let (pattern, s) = (text(args, 0)?, text(args, 1)?);
    let re = compile(&pattern)?;
    let caps = re
        .captures(&s)
        .ok_or("the pattern did not match any part of the given string")?;
    captured(&re, &caps)
}

pub(super) fn regexall(args: &[Value]) -> Result<Value, String> {
    let (pattern, s) = (text(args, 0)?, text(args, 1)?);
    let re = compile(&pattern)?;
    Ok(Value::List(
        re.captures_iter(&s)
            .map(|c| captured(&re, &c))
            .collect::<Result<_, _>>()?,
    ))
}

pub(super) fn format(args: &[Value]) -> Result<Value, String> {
    Ok(format_with(&text(args, 0)?, &args[1..])?.into())
}

/// `format` once per element of the list arguments (the others repeat).
pub(super) fn formatlist(args: &[Value]) -> Result<Value, String> {
    let spec = text(args, 0)?;
    let mut length = None;
    for arg in &args[1..] {
        if let Value::List(items) = arg {
            match length {
                Some(n) if n != items.len() => {
                    return Err("all list arguments must have the same length".into());
                }
                _ => length = Some(items.len()),
            }
        }
    }
    let rows = (0..length.unwrap_or(1)).map(|i| {
        let row: Vec<Value> = args[1..]
            .iter()
            .map(|a| match a {
                Value::List(items) => items[i].clone(),
                other => other.clone(),
            })
            .collect();
        format_with(&spec, &row).map(Value::String)
    });
    Ok(Value::List(rows.collect::<Result<_, _>>()?))
}

#[derive(Default)]
struct Flags {
    plus: bool,
    minus: bool,
    space: bool,
    zero: bool,
    sharp: bool,
}

/// Go's `fmt` verbs as cty's `format` takes them: `%v %#v %s %q %t %d %b %o %x %X %e %E %f %g
/// %G`, flags `+ - space 0 #`, a width, a precision and an argument index `%[2]s`.
fn format_with(spec: &str, args: &[Value]) -> Result<String, String> {
    let chars: Vec<char> = spec.chars().collect();
    let (mut out, mut i, mut next) = (String::new(), 0, 0);
    let number = |i: &mut usize| {
        let start = *i;
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>().parse::<usize>().ok()
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let mut flags = Flags::default();
        while let Some(f) = chars.get(i) {
            match f {
                '+' => flags.plus = true,
                '-' => flags.minus = true,
                ' ' => flags.space = true,
                '0' => flags.zero = true,
                '#' => flags.sharp = true,
                _ => break,
            }
            i += 1;
        }
        if chars.get(i) == Some(&'[') {
            i += 1;
            let index = number(&mut i)
                .filter(|n| *n > 0)
                .ok_or("an argument index must be a number from 1")?;
            if chars.get(i) != Some(&']') {
                return Err("an argument index must end with `]`".into());
            }
            i += 1;
            next = index - 1;
        }
        let width = number(&mut i);
        let precision = if chars.get(i) == Some(&'.') {
            i += 1;
            Some(number(&mut i).unwrap_or(0))
        } else {
            None
        };
        let verb = *chars.get(i).ok_or("the format ends inside a verb")?;
        i += 1;
        let arg = args
            .get(next)
            .ok_or_else(|| format!("not enough arguments for the verb %{verb}"))?;
        next += 1;
        let (sign, body) = verb_text(verb, arg, &flags, precision)?;
        out.push_str(&pad(sign, body, width, &flags, "bdoxXeEfgG".contains(verb)));
    }
    if next < args.len() {
        return Err("too many arguments; no verbs left for the last ones".into());
    }
    Ok(out)
}

/// A verb's text, its sign apart so that zero padding goes between them.
fn verb_text(
    verb: char,
    arg: &Value,
    flags: &Flags,
    precision: Option<usize>,
) -> Result<(String, String), String> {
    let signed = |n: f64, body: String| {
        let sign = if n < 0.0 {
            "-"
        } else if flags.plus {
            "+"
        } else if flags.space {
            " "
        } else {
            ""
        };
        Ok((sign.to_string(), body))
    };
    match verb {
        'v' if flags.sharp => Ok((String::new(), json_text(arg))),
        'v' => Ok((
            String::new(),
            match arg {
                Value::Null => "null".into(),
                Value::List(_) | Value::Map(_) => json_text(arg),
                other => other.to_text()?,
            },
        )),
        's' => {
            let s = arg.to_text()?;
            Ok((
                String::new(),
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                },
            ))
        }
        'q' => Ok((String::new(), json_text(&Value::String(arg.to_text()?)))),
        't' => Ok((String::new(), arg.to_bool()?.to_string())),
        'x' | 'X' if matches!(arg, Value::String(_)) && arg.to_number().is_err() => {
            let hex: String = arg.to_text()?.bytes().map(|b| format!("{b:02x}")).collect();
            Ok((String::new(), if verb == 'X' { hex.to_uppercase() } else { hex }))
        }
        'd' | 'b' | 'o' | 'x' | 'X' => {
            let n = arg.to_integer()?;
            let magnitude = n.unsigned_abs();
            let body = match verb {
                'd' => magnitude.to_string(),
                'b' => format!("{magnitude:b}"),
                'o' => format!("{magnitude:o}"),
                'x' => format!("{magnitude:x}"),
                _ => format!("{magnitude:X}"),
            };
            signed(n as f64, body)
        }
        'e' | 'E' | 'f' | 'g' | 'G' => {
            let n = arg.to_number()?;
            let magnitude = n.abs();
            let body = match verb {
                'f' => format!("{magnitude:.*}", precision.unwrap_or(6)),
                'e' | 'E' => go_exponent(&format!("{magnitude:.*e}", precision.unwrap_or(6))),
                _ => match precision {
                    None => go_float_g(magnitude),
                    Some(p) => {
                        let rounded: f64 = format!("{magnitude:.*e}", p.max(1) - 1)
                            .parse()
                            .unwrap_or(magnitude);
                        go_float_g(rounded)
                    }
                },
            };
            let body = if verb.is_uppercase() {
                body.to_uppercase()
            } else {
                body
            };
            signed(n, body)
        }
        other => Err(format!("unrecognized format verb %{other}")),
    }
}

/// Rust's `1.5e0` as Go writes it: `1.5e+00`.
fn go_exponent(rust: &str) -> String {
    match rust.split_once('e') {
        Some((mantissa, exponent)) => {
            let e: i32 = exponent.parse().unwrap_or_default();
            format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
        }
        None => rust.to_string(),
    }
}

fn pad(sign: String, body: String, width: Option<usize>, flags: &Flags, numeric: bool) -> String {
    let length = sign.chars().count() + body.chars().count();
    let fill = width.unwrap_or(0).saturating_sub(length);
    if flags.minus {
        format!("{sign}{body}{}", " ".repeat(fill))
    } else if flags.zero && numeric {
        format!("{sign}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{sign}{body}", " ".repeat(fill))
    }
}
