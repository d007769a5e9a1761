//! Kubernetes resource quantities ("500m", "0.5", "1Gi", "1024Mi", "1e3") compared by meaning.
//!
//! The API server rewrites quantities into canonical form, so a configured "0.5" comes back
//! as "500m". Two spellings are the same quantity when their exact values agree; the kinds
//! then keep the configuration's spelling and no diff appears.

/// An exact quantity value: `mantissa * 10^exponent`, with no trailing zeros in `mantissa`.
#[derive(Debug, PartialEq, Eq)]
struct Exact {
    mantissa: i128,
    exponent: i32,
}

/// The value of a quantity, or `None` when the text is not one.
fn parse(text: &str) -> Option<Exact> {
    let text = text.trim();
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    if digits.len() > 36 {
        return None;
    }
    let mut mantissa: i128 = digits.parse().ok()?;
    let mut exponent = -i32::try_from(fraction.len()).ok()?;
    match suffix {
        "" => {}
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => {
            let power = 10 * (1 + "KMGTPE".find(&suffix[..1])? as u32);
            mantissa = mantissa.checked_mul(1i128.checked_shl(power)?)?;
        }
        "n" => exponent -= 9,
        "u" => exponent -= 6,
        "m" => exponent -= 3,
        "k" => exponent += 3,
        "M" => exponent += 6,
        "G" => exponent += 9,
        "T" => exponent += 12,
        "P" => exponent += 15,
        "E" => exponent += 18,
        _ => {
            let power = suffix.strip_prefix(['e', 'E'])?;
            exponent = exponent.checked_add(power.parse::<i32>().ok()?)?;
        }
    }
    if negative {
        mantissa = -mantissa;
    }
    if mantissa == 0 {
        return Some(Exact {
            mantissa: 0,
            exponent: 0,
        });
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    Some(Exact { mantissa, exponent })
}

/// True when `text` is a valid quantity.
pub fn is_valid(text: &str) -> bool {
    parse(text).is_some()
}

/// True when both texts are quantities of the same value (or, failing that, the same text).
pub fn same(a: &str, b: &str) -> bool {
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_the_server_writes_are_equal_to_what_users_write() {
        for (user, server) in [
            ("0.1", "100m"),
            ("0.5", "500m"),
            ("1024Mi", "1Gi"),
            ("1", "1"),
            ("1000m", "1"),
            ("1e3", "1k"),
            ("1.5Gi", "1536Mi"),
            ("128974848", "128974848"),
            ("129e6", "129M"),
            ("0", "0"),
            ("0.0", "0"),
            ("+2", "2"),
        ] {
            assert!(same(user, server), "{user} vs {server}");
        }
    }

    #[test]
    fn different_values_differ() {
        for (a, b) in [
            ("0.5", "50m"),
            ("1Gi", "1G"),
            ("1Mi", "1M"),
            ("1", "-1"),
            ("100m", "0.01"),
        ] {
            assert!(!same(a, b), "{a} vs {b}");
        }
    }

    #[test]
    fn rejects_non_quantities() {
        for bad in ["", "abc", "1x", "1.2.3", ".", "Mi", "1e", "5%"] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert!(!same("abc", "abd"));
        assert!(same("abc", "abc"));
    }
}
