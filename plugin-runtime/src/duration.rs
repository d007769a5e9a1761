//! Go duration strings ("30s", "5m", "1h30m", "1.5h"), the format Terraform providers use for
//! timeouts and ages, read as Go's `time.ParseDuration` reads them, within its range.

use std::time::Duration;

/// The longest duration Go (and so hashicorp/kubernetes) can hold: 2^63-1 nanoseconds,
/// about 292 years. Beyond it a deadline would overflow the clock.
const MAX_SECONDS: f64 = i64::MAX as f64 / 1e9;

/// Why a text is not a duration; the message shows the forms that are.
#[derive(Debug, thiserror::Error)]
pub enum DurationError {
    /// Not Go's syntax (the text).
    #[error("{0:?} is not a duration: use a number with a unit, e.g. \"30s\", \"5m\" or \"1h30m\"")]
    Malformed(String),
    /// Longer than Go can hold (the text).
    #[error("{0:?} is too long: a duration can be at most 2562047h (about 292 years)")]
    TooLong(String),
}

/// Parses a Go duration of whole or fractional h, m, s, ms, us, ns units.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let bad = || DurationError::Malformed(text.to_string());
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    // Checked, not Duration::from_secs_f64, which panics beyond u64 seconds.
    if total > MAX_SECONDS {
        return Err(DurationError::TooLong(text.to_string()));
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
}

/// A duration as Go prints it, to whole seconds: "26h30m0s", "5m3s", "12s"; [`parse`] reads it.
pub fn format(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m{sec}s"),
        (h, min, sec) => format!("{h}h{min}m{sec}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse("1.5m").unwrap(), Duration::from_secs(90));
        assert!(parse("5").is_err());
        assert!(parse("5 minutes").is_err());
        assert!(parse("").is_err());
        assert_eq!(parse("1500ms").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("2562047h").unwrap(), Duration::from_secs(2562047 * 3600));
    }

    #[test]
    fn formats_as_go_prints_and_reads_back() {
        for (secs, text) in [
            (12, "12s"),
            (125, "2m5s"),
            (95_459, "26h30m59s"),
            (3600, "1h0m0s"),
        ] {
            assert_eq!(format(Duration::from_secs(secs)), text);
            assert_eq!(parse(text).unwrap(), Duration::from_secs(secs));
        }
    }

    #[test]
    fn absurd_durations_are_errors_not_panics() {
        for text in ["99999999999999999999h", "2562048h", "1e400s", "1e30h"] {
            let err = parse(text).unwrap_err();
            assert!(
                matches!(err, DurationError::TooLong(_) | DurationError::Malformed(_)),
                "{text}: {err:?}"
            );
        }
        assert!(matches!(
            parse("99999999999999999999h"),
            Err(DurationError::TooLong(_))
        ));
    }
}
