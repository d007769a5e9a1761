//! Numeric functions, as Terraform 0.12 has them.

use super::value::Value;

fn number(args: &[Value], i: usize) -> Result<f64, String> {
    Ok(args[i].to_number()?)
}

pub(super) fn abs(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(number(args, 0)?.abs()))
}

pub(super) fn ceil(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(number(args, 0)?.ceil()))
}

pub(super) fn floor(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(number(args, 0)?.floor()))
}

pub(super) fn log(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(number(args, 0)?.ln() / number(args, 1)?.ln()))
}

pub(super) fn pow(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(number(args, 0)?.powf(number(args, 1)?)))
}

pub(super) fn signum(args: &[Value]) -> Result<Value, String> {
    let n = number(args, 0)?;
    Ok(Value::Number(if n == 0.0 { 0.0 } else { n.signum() }))
}

fn numbers(args: &[Value]) -> Result<Vec<f64>, String> {
    Ok(args.iter().map(Value::to_number).collect::<Result<_, _>>()?)
}

pub(super) fn max(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(
        numbers(args)?.into_iter().fold(f64::NEG_INFINITY, f64::max),
    ))
}

pub(super) fn min(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Number(
        numbers(args)?.into_iter().fold(f64::INFINITY, f64::min),
    ))
}

/// `parseint(text, base)`, base 2 to 62: digits, then lower-case and upper-case letters (up to
/// base 36 a letter's case does not matter).
pub(super) fn parseint(args: &[Value]) -> Result<Value, String> {
    let text = args[0].to_text()?;
    let base = args[1].to_integer()?;
    if !(2..=62).contains(&base) {
        return Err("the base must be between 2 and 62".into());
    }
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(&text)),
    };
    let digit = |c: char| -> Option<i64> {
        let d = match c {
            '0'..='9' => c as i64 - '0' as i64,
            'a'..='z' => c as i64 - 'a' as i64 + 10,
            'A'..='Z' if base <= 36 => c as i64 - 'A' as i64 + 10,
            'A'..='Z' => c as i64 - 'A' as i64 + 36,
            _ => return None,
        };
        (d < base).then_some(d)
    };
    let fail = || format!("cannot parse the given string as a base {base} integer");
    if digits.is_empty() {
        return Err(fail());
    }
    let mut n: i64 = 0;
    for c in digits.chars() {
        n = n
            .checked_mul(base)
            .and_then(|n| n.checked_add(digit(c)?))
            .ok_or_else(fail)?;
    }
    Ok(Value::Number(if negative { -n } else { n } as f64))
}
