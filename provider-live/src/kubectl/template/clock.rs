//! Time functions, as Terraform 0.12 has them: `timestamp` (now, in UTC) and `timeadd`, both in
//! RFC 3339 without fractional seconds.

use ::time::OffsetDateTime;
use ::time::format_description::well_known::Rfc3339;

use super::value::Value;

fn rfc3339(at: OffsetDateTime) -> Result<Value, String> {
    let at = at.replace_nanosecond(0).map_err(|e| e.to_string())?;
    at.format(&Rfc3339)
        .map(Value::String)
        .map_err(|_| "the time cannot be written in RFC 3339".into())
}

pub(super) fn timestamp(_: &[Value]) -> Result<Value, String> {
    rfc3339(OffsetDateTime::now_utc())
}

/// `timeadd(time, duration)`: the duration in Go's syntax (`1h30m`, `-10s`, `1.5h`).
pub(super) fn timeadd(args: &[Value]) -> Result<Value, String> {
    let at = OffsetDateTime::parse(&args[0].to_text()?, &Rfc3339)
        .map_err(|_| "the time is not an RFC 3339 timestamp")?;
    let nanos =
        go_duration(&args[1].to_text()?).ok_or("the duration is not valid (write it as 1h30m or -10s)")?;
    let moved = at
        .checked_add(::time::Duration::nanoseconds_i128(nanos))
        .ok_or("the resulting time is out of range")?;
    rfc3339(moved)
}

/// Go's `time.ParseDuration`, in nanoseconds.
fn go_duration(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_end);
        if number.is_empty() || number == "." {
            return None;
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += number.parse::<f64>().ok()? * scale;
        rest = after;
    }
    let nanos = total.round() as i128;
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_go_syntax() {
        assert_eq!(go_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(go_duration("-10s"), Some(-10_000_000_000));
        assert_eq!(go_duration("1.5h"), Some(5_400_000_000_000));
        assert_eq!(go_duration("0"), Some(0));
        assert_eq!(go_duration("10"), None);
        assert_eq!(go_duration("1d"), None);
    }

    #[test]
    fn timeadd_keeps_the_offset_and_drops_fractions() {
        let at = |t: &str, d: &str| timeadd(&[t.into(), d.into()]).expect("adds");
        assert_eq!(
            at("2017-11-22T00:00:00Z", "10m"),
            Value::from("2017-11-22T00:10:00Z")
        );
        assert_eq!(
            at("2017-11-22T00:00:00+02:00", "-1h"),
            Value::from("2017-11-21T23:00:00+02:00")
        );
        assert!(timeadd(&["yesterday".into(), "1h".into()]).is_err());
    }
}
