//! JSON written as YAML by go-yaml v2's emitter (libyaml's): block style, indentation 2, a list
//! under a key at the key's column, scalars plain where they read back as the same string, else
//! single-quoted, double-quoted or a literal block as libyaml falls back, and long lines folded at
//! 80 columns. sigs.k8s.io/yaml sorts keys in go-yaml's order; Terraform's `yamlencode`
//! (go-cty-yaml) double-quotes every string and keeps the keys' order.

use std::cmp::Ordering;

use serde_json::{Number, Value as Json};

use super::{Node, go_float_g, resolve};

/// Writes `value` as one YAML document.
pub(super) fn document(value: &Json, flavour: Flavour) -> String {
    let mut emitter = Emitter {
        flavour,
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
    };
    emitter.node(value, -1, false);
    emitter.write_indent(0);
    emitter.out
}

/// Whose emitter settings to follow.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Flavour {
    /// sigs.k8s.io/yaml: go-yaml v2 Marshal of the JSON re-read as YAML.
    GoYaml,
    /// Terraform's `yamlencode` (go-cty-yaml).
    Cty,
}

/// Where go-yaml folds long scalars, and how far it indents.
const WIDTH: usize = 80;
const INDENT: i32 = 2;

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

/// A block-style YAML writer, following libyaml's emitter: where it breaks lines and which
/// quoting it falls back to.
struct Emitter {
    flavour: Flavour,
    out: String,
    column: usize,
    /// The last character written is whitespace (or nothing is written yet).
    whitespace: bool,
    /// Only indentation is written on this line.
    indention: bool,
}

impl Emitter {
    /// `value` under a parent indented `parent` (-1 at the root); `in_mapping` for a value.
    fn node(&mut self, value: &Json, parent: i32, in_mapping: bool) {
        let nested = if parent < 0 { 0 } else { parent + INDENT };
        match value {
            Json::Object(map) if map.is_empty() => self.indicator("{}", true, false, false),
            Json::Array(items) if items.is_empty() => self.indicator("[]", true, false, false),
            Json::Object(map) => {
                let mut entries: Vec<(&String, &Json)> = map.iter().collect();
                if self.flavour == Flavour::GoYaml {
                    insertion_sort(&mut entries, |a, b| key_order(a.0, b.0));
                }
                for (key, value) in entries {
                    self.write_indent(nested);
                    let key_json = Json::String(key.clone());
                    if key.len() <= 128 && !key.contains(is_break) {
                        self.scalar(&key_json, nested + INDENT, true);
                        self.indicator(":", false, false, false);
                    } else {
                        self.indicator("?", true, false, true);
                        self.scalar(&key_json, nested + INDENT, false);
                        self.write_indent(nested);
                        self.indicator(":", true, false, true);
                    }
                    self.node(value, nested, true);
                }
            }
            Json::Array(items) => {
                // A list that is a mapping's value starts at its key's column.
                let indent = if parent >= 0 && in_mapping && !self.indention {
                    parent
                } else {
                    nested
                };
                for item in items {
                    self.write_indent(indent);
                    self.indicator("-", true, false, true);
                    self.node(item, indent, false);
                }
            }
            scalar => self.scalar(scalar, if parent < 0 { INDENT } else { parent + INDENT }, false),
        }
    }

    fn scalar(&mut self, value: &Json, indent: i32, simple_key: bool) {
        let (text, wanted) = match value {
            Json::Null => ("null".to_string(), Style::Plain),
            Json::Bool(b) => (b.to_string(), Style::Plain),
            Json::Number(n) => (self.number(n), Style::Plain),
            Json::String(s) if s.contains('\n') => (s.clone(), Style::Literal),
            Json::String(s) if self.flavour == Flavour::GoYaml && reads_back_as_string(s) => {
                (s.clone(), Style::Plain)
            }
            Json::String(s) => (s.clone(), Style::Double),
            Json::Array(_) | Json::Object(_) => unreachable!("collections are written as blocks"),
        };
        let allowed = Allowed::of(&text);
        let mut style = wanted;
        if style == Style::Plain && (!allowed.plain || (text.is_empty() && simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !allowed.single {
            style = Style::Double;
        }
        if style == Style::Literal && (!allowed.block || simple_key) {
            style = Style::Double;
        }
        let indent = indent.max(0) as usize;
        match style {
            Style::Plain => self.plain(&text, indent, !simple_key),
            Style::Single => self.single_quoted(&text, indent, !simple_key),
            Style::Double => self.double_quoted(&text, indent, !simple_key),
            Style::Literal => self.literal(&text, indent),
        }
    }

    fn number(&self, n: &Number) -> String {
        match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) if self.flavour == Flavour::Cty => f.to_string(),
            // Go's JSON writes a whole float below 1e21 in full, which go-yaml re-reads as an
            // integer when it fits 64 bits.
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => {
                let text = if f == 0.0 { "0".to_string() } else { f.to_string() };
                match text
                    .parse::<i64>()
                    .map(|_| ())
                    .or(text.parse::<u64>().map(|_| ()))
                {
                    Ok(()) => text,
                    Err(_) => go_float_g(f),
                }
            }
            (_, _, Some(f)) => go_float_g(f),
            _ => n.to_string(),
        }
    }

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn write_indent(&mut self, indent: i32) {
        let indent = indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.out.push('\n');
            self.column = 0;
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn indicator(&mut self, text: &str, need_space: bool, is_whitespace: bool, is_indention: bool) {
        if need_space && !self.whitespace {
            self.put(' ');
        }
        text.chars().for_each(|c| self.put(c));
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    /// Whether a space at `i` is where a long line folds.
    fn folds(&self, allow_breaks: bool, spaces: bool, chars: &[char], i: usize) -> bool {
        allow_breaks && !spaces && self.column > WIDTH && chars.get(i + 1).is_some_and(|c| *c != ' ')
    }

    fn plain(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' && self.folds(allow_breaks, spaces, &chars, i) {
                self.write_indent(indent as i32);
            } else {
                self.put(c);
            }
            spaces = c == ' ';
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.indicator("'", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' && i > 0 && self.folds(allow_breaks, spaces, &chars, i) {
                self.write_indent(indent as i32);
            } else {
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
            }
            spaces = c == ' ';
        }
        self.indicator("'", false, false, false);
    }

    fn double_quoted(&mut self, text: &str, indent: usize, allow_breaks: bool) {
        self.indicator("\"", true, false, false);
        let chars: Vec<char> = text.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                let escape = match c {
                    '\0' => "0".to_string(),
                    '\x07' => "a".into(),
                    '\x08' => "b".into(),
                    '\t' => "t".into(),
                    '\n' => "n".into(),
                    '\x0b' => "v".into(),
                    '\x0c' => "f".into(),
                    '\r' => "r".into(),
                    '\x1b' => "e".into(),
                    '"' => "\"".into(),
                    '\\' => "\\".into(),
                    '\u{85}' => "N".into(),
                    '\u{2028}' => "L".into(),
                    '\u{2029}' => "P".into(),
                    c if (c as u32) <= 0xFF => format!("x{:02X}", c as u32),
                    c if (c as u32) <= 0xFFFF => format!("u{:04X}", c as u32),
                    c => format!("U{:08X}", c as u32),
                };
                self.put('\\');
                escape.chars().for_each(|e| self.put(e));
                spaces = false;
            } else if c == ' '
                && i > 0
                && allow_breaks
                && !spaces
                && self.column > WIDTH
                && i + 1 < chars.len()
            {
                self.write_indent(indent as i32);
                if chars[i + 1] == ' ' {
                    self.put('\\');
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = c == ' ';
            }
        }
        self.indicator("\"", false, false, false);
    }

    fn literal(&mut self, text: &str, indent: usize) {
        self.indicator("|", true, false, false);
        if text.starts_with(|c| c == ' ' || is_break(c)) {
            self.indicator(&INDENT.to_string(), false, false, false);
        }
        let mut ends = text.chars().rev();
        if !ends.next().is_some_and(is_break) {
            self.indicator("-", false, false, false);
        } else if text.chars().count() == 1 || ends.next().is_some_and(is_break) {
            self.indicator("+", false, false, false);
        }
        self.out.push('\n');
        self.column = 0;
        self.indention = true;
        self.whitespace = true;
        let mut at_line_start = true;
        for c in text.chars() {
            if is_break(c) {
                self.out.push(c);
                self.column = 0;
                self.indention = true;
                at_line_start = true;
            } else {
                if at_line_start {
                    self.write_indent(indent as i32);
                    at_line_start = false;
                }
                self.put(c);
                self.indention = false;
            }
        }
    }
}

/// What libyaml's scalar analysis allows for a text, in block context.
struct Allowed {
    plain: bool,
    single: bool,
    block: bool,
}

impl Allowed {
    fn of(text: &str) -> Allowed {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            return Allowed {
                plain: true,
                single: true,
                block: false,
            };
        }
        let mut indicators = text.starts_with("---") || text.starts_with("...");
        let (mut special, mut line_breaks, mut space_break, mut break_space) = (false, false, false, false);
        let (mut previous_space, mut previous_break, mut preceded_by_blank) = (false, false, true);
        for (i, &c) in chars.iter().enumerate() {
            let followed_by_blank = chars.get(i + 1).is_none_or(|n| *n == ' ' || *n == '\t');
            indicators |= match (i, c) {
                (
                    0,
                    '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@'
                    | '`',
                ) => true,
                (0, '?' | ':' | '-') | (_, ':') => followed_by_blank,
                (_, '#') => preceded_by_blank,
                _ => false,
            };
            special |= !is_printable(c);
            if c == ' ' {
                break_space |= previous_break;
                (previous_space, previous_break) = (true, false);
            } else if is_break(c) {
                line_breaks = true;
                space_break |= previous_space;
                (previous_space, previous_break) = (false, true);
            } else {
                (previous_space, previous_break) = (false, false);
            }
            preceded_by_blank = c == ' ' || c == '\t' || is_break(c);
        }
        let (first, last) = (chars[0], chars[chars.len() - 1]);
        let edges = first == ' ' || is_break(first) || last == ' ' || is_break(last);
        Allowed {
            plain: !(edges || break_space || space_break || special || line_breaks || indicators),
            single: !(break_space || space_break || special),
            block: !(last == ' ' || space_break || special),
        }
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml's printable set: astral characters (emoji) are not, so they are escaped.
fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

/// Whether go-yaml writes `s` plain: read back unquoted it must still be that string (not a bool,
/// number, null or timestamp) and not look like a YAML 1.1 base-60 float (`1:20`).
fn reads_back_as_string(s: &str) -> bool {
    !s.is_empty() && matches!(resolve(s), Node::Str(_)) && !is_base60_float(s) && !is_timestamp(s)
}

/// go-yaml v2's timestamps: `2006-1-2`, then `T`/`t` and `15:4:5[.9]` with `Z` or `±07:00`, or a
/// space and `15:4:5[.9]` alone; a real date and time.
fn is_timestamp(s: &str) -> bool {
    fn number(s: &str, max_len: usize, range: std::ops::RangeInclusive<u32>) -> Option<u32> {
        let ok = !s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| s.parse().ok()).flatten().filter(|n| range.contains(n))
    }
    fn clock(s: &str) -> bool {
        let (hms, fraction) = s.split_once('.').unwrap_or((s, "0"));
        let parts: Vec<&str> = hms.split(':').collect();
        parts.len() == 3
            && number(parts[0], 2, 0..=23).is_some()
            && number(parts[1], 2, 0..=59).is_some()
            && number(parts[2], 2, 0..=59).is_some()
            && number(fraction, 9, 0..=999_999_999).is_some()
    }
    let split = s.find(['T', 't', ' ']).unwrap_or(s.len());
    let (date, rest) = s.split_at(split);
    let parts: Vec<&str> = date.split('-').collect();
    let date_ok = parts.len() == 3 && parts[0].len() == 4 && {
        let year = number(parts[0], 4, 0..=9999);
        let month = number(parts[1], 2, 1..=12);
        let days = |y: u32, m: u32| match m {
            2 if y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400)) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        matches!((year, month), (Some(y), Some(m)) if number(parts[2], 2, 1..=days(y, m)).is_some())
    };
    if !date_ok {
        return false;
    }
    match rest.chars().next() {
        None => true,
        Some(' ') => clock(&rest[1..]),
        Some(_) => {
            let time = &rest[1..];
            let (clock_part, zone) = match time.find(['Z', '+', '-']) {
                Some(i) => time.split_at(i),
                None => return false,
            };
            let zone_ok = zone == "Z"
                || zone.len() == 6 && zone.as_bytes()[3] == b':' && {
                    number(&zone[1..3], 2, 0..=99).is_some() && number(&zone[4..], 2, 0..=99).is_some()
                };
            clock(clock_part) && zone_ok
        }
    }
}

/// `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?`
fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (whole, fraction) = s.split_once('.').unwrap_or((s, ""));
    let mut parts = whole.split(':');
    let head = parts.next().unwrap_or_default();
    let sexagesimal: Vec<&str> = parts.collect();
    head.starts_with(|c: char| c.is_ascii_digit())
        && head.chars().all(|c| c.is_ascii_digit() || c == '_')
        && !sexagesimal.is_empty()
        && sexagesimal.iter().all(|p| match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        })
        && fraction.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// go-yaml v2's key order: letters after other characters, runs of digits compared as numbers
/// (`item2` before `item10`).
fn key_order(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (a_letter, b_letter) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if a_letter && b_letter {
            return a[i].cmp(&b[i]);
        }
        if a_letter || b_letter {
            return if b_letter {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if a[i] == '0' || b[i] == '0' {
            // Inside a number, a zero counts as a digit like any other.
            if a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .any(|c| *c != '0')
            {
                (an, bn) = (1, 1);
            }
        }
        let number = |s: &[char], mut n: i64| {
            let run = s[i..].iter().take_while(|c| c.is_ascii_digit());
            let len = run.clone().count();
            for c in run {
                n = n.wrapping_mul(10).wrapping_add(i64::from(*c as u8 - b'0'));
            }
            (n, len)
        };
        let ((an, alen), (bn, blen)) = (number(&a, an), number(&b, bn));
        if an != bn {
            return an.cmp(&bn);
        }
        if alen != blen {
            return alen.cmp(&blen);
        }
        return a[i].cmp(&b[i]);
    }
    a.len().cmp(&b.len())
}

/// A stable sort that tolerates an order that is not total (go-yaml's is not quite), where
/// `sort_by` may panic.
fn insertion_sort<T>(items: &mut [T], order: impl Fn(&T, &T) -> Ordering) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && order(&items[j], &items[j - 1]) == Ordering::Less {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
}
