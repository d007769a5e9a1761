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

/// How a quantity is written, which decides how the API server writes it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, ... (powers of 1024).
    Binary,
    /// `m`, `k`, `M`, ... or no suffix.
    Decimal,
    /// `e3`, `E-6`.
    Exponent,
}

fn format_of(text: &str) -> Format {
    let suffix = text
        .trim()
        .trim_start_matches(['+', '-'])
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    if suffix.ends_with('i') {
        Format::Binary
    } else if suffix.starts_with(['e', 'E']) {
        Format::Exponent
    } else {
        Format::Decimal
    }
}

/// The quantity as the API server writes it back (Kubernetes' canonical form): `0.5` is
/// `500m`, `1024Mi` is `1Gi`, `1500` stays; a binary quantity below 1Ki, or not a whole
/// number, is written in decimal. Finer than a nano rounds up, as the server does. `None` for
/// text that is not a quantity.
pub fn canonical(text: &str) -> Option<String> {
    let Exact {
        mut mantissa,
        mut exponent,
    } = parse(text)?;
    if mantissa == 0 {
        return Some("0".to_string());
    }
    if exponent < -9 {
        // Round away from zero to nanos.
        let scale = 10i128.checked_pow(u32::try_from(-9 - exponent).ok()?)?;
        let rounded = (mantissa.abs() + scale - 1) / scale;
        mantissa = rounded * mantissa.signum();
        exponent = -9;
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
    }
    let mut format = format_of(text);
    if format == Format::Binary {
        let whole = (exponent >= 0)
            .then(|| {
                10i128
                    .checked_pow(exponent as u32)
                    .and_then(|p| mantissa.checked_mul(p))
            })
            .flatten();
        match whole {
            Some(bytes) if bytes.abs() >= 1024 => {
                let (mut amount, mut power) = (bytes, 0);
                while amount % 1024 == 0 && power < 6 {
                    amount /= 1024;
                    power += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][power];
                return Some(format!("{amount}{suffix}"));
            }
            _ => format = Format::Decimal,
        }
    }
    // Down to a multiple of 3 of the exponent.
    let shift = exponent.rem_euclid(3);
    mantissa = mantissa.checked_mul(10i128.pow(shift as u32))?;
    exponent -= shift;
    let suffix = match format {
        Format::Exponent if exponent == 0 => String::new(),
        Format::Exponent => format!("e{exponent}"),
        _ => match exponent {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => return Some(format!("{mantissa}e{exponent}")),
        }
        .to_string(),
    };
    Some(format!("{mantissa}{suffix}"))
}

/// Quantities that mean the same (`1Gi`, `1024Mi`), alone or as a map's values: a plan keeps
/// the prior's spelling of an equivalent value, and plans a computed one as the server will
/// write it back.
pub struct SameQuantity;

impl plugin_runtime::rules::Equivalence for SameQuantity {
    fn equivalent(&self, prior: &plugin_runtime::Value, planned: &plugin_runtime::Value) -> bool {
        use plugin_runtime::Value;
        match (prior.plain(), planned.plain()) {
            (Value::String(a), Value::String(b)) => same(a, b),
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).is_some_and(|w| self.equivalent(v, w)))
            }
            _ => false,
        }
    }

    fn canonical(&self, value: &plugin_runtime::Value) -> Option<plugin_runtime::Value> {
        use plugin_runtime::Value;
        match value.plain() {
            Value::String(s) => canonical(s).map(Value::String),
            Value::Map(m) => Some(Value::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), self.canonical(v).unwrap_or_else(|| v.clone())))
                    .collect(),
            )),
            _ => None,
        }
    }

    fn describe(&self) -> String {
        "the same quantity (`1Gi` is `1024Mi`)".to_string()
    }
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
    fn canonical_forms_are_the_servers() {
        for (written, server) in [
            ("0.5", "500m"),
            ("0.1", "100m"),
            ("1", "1"),
            ("1000m", "1"),
            ("1500", "1500"),
            ("1000", "1k"),
            ("1024Mi", "1Gi"),
            ("1.5Gi", "1536Mi"),
            ("512Ki", "512Ki"),
            ("0.5Ki", "512"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("1e3", "1e3"),
            ("12e2", "1200"),
            ("0", "0"),
            ("-1.5", "-1500m"),
            ("0.0000000001", "1n"),
            ("256Mi", "256Mi"),
            ("2G", "2G"),
        ] {
            assert_eq!(canonical(written).as_deref(), Some(server), "{written}");
        }
        assert_eq!(canonical("lots"), None);
    }

    #[test]
    fn equivalent_quantities_alone_and_in_maps_and_their_canonical_form() {
        use plugin_runtime::Value;
        use plugin_runtime::rules::Equivalence;
        let same = SameQuantity;
        assert!(same.equivalent(&Value::string("1Gi"), &Value::string("1024Mi")));
        assert!(!same.equivalent(&Value::string("1Gi"), &Value::string("1G")));
        let map = |v: &str| Value::string_map([("memory", v)]);
        assert!(same.equivalent(&map("1Gi"), &map("1024Mi")));
        assert!(!same.equivalent(&map("1Gi"), &Value::string_map([("cpu", "1Gi")])));
        assert_eq!(
            same.canonical(&Value::string_map([("cpu", "0.5"), ("memory", "1024Mi")])),
            Some(Value::string_map([("cpu", "500m"), ("memory", "1Gi")]))
        );
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
