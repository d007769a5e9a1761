//! Go's `filepath.Glob`, which the kubectl providers' `pattern` is: `*` and `?` within one path
//! element (so `**` is no more than `*`), `[a-z]` and `[^a-z]` classes, `\` escapes. Matches
//! are joined as Go joins them (`./x/*.yaml` gives `x/a.yaml`); no match is no error, a malformed
//! pattern is. The `glob` crate reads `**` as any depth and has no `\` escapes, hence this.

use std::path::Path;

/// A pattern Go's `filepath.Match` refuses.
#[derive(Debug, thiserror::Error)]
#[error("syntax error in pattern")]
pub struct BadPattern;

#[derive(Debug)]
enum Token {
    Literal(char),
    /// `?`: one character other than `/`.
    Any,
    /// `*`: any characters other than `/`.
    Star,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

fn tokens(pattern: &str) -> Result<Vec<Token>, BadPattern> {
    let mut chars = pattern.chars().peekable();
    let mut out = Vec::new();
    let escaped = |chars: &mut std::iter::Peekable<std::str::Chars>| match chars.next() {
        Some('\\') => chars.next().ok_or(BadPattern),
        Some('-' | ']') | None => Err(BadPattern),
        Some(c) => Ok(c),
    };
    while let Some(c) = chars.next() {
        out.push(match c {
            '*' => Token::Star,
            '?' => Token::Any,
            '\\' => Token::Literal(chars.next().ok_or(BadPattern)?),
            '[' => {
                let negated = chars.next_if_eq(&'^').is_some();
                let mut ranges = Vec::new();
                loop {
                    if !ranges.is_empty() && chars.next_if_eq(&']').is_some() {
                        break;
                    }
                    let low = escaped(&mut chars)?;
                    let high = if chars.next_if_eq(&'-').is_some() {
                        escaped(&mut chars)?
                    } else {
                        low
                    };
                    ranges.push((low, high));
                }
                Token::Class { negated, ranges }
            }
            c => Token::Literal(c),
        });
    }
    Ok(out)
}

/// Whether `name` matches all of `tokens`.
fn matches(tokens: &[Token], name: &[char]) -> bool {
    match tokens.split_first() {
        None => name.is_empty(),
        Some((Token::Star, rest)) => (0..=name.len())
            .take_while(|&i| i == 0 || name[i - 1] != '/')
            .any(|i| matches(rest, &name[i..])),
        Some((token, rest)) => {
            let Some((&c, tail)) = name.split_first() else {
                return false;
            };
            let one = match token {
                Token::Literal(l) => *l == c,
                Token::Any => c != '/',
                Token::Class { negated, ranges } => {
                    ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
                }
                Token::Star => unreachable!("handled above"),
            };
            one && matches(rest, tail)
        }
    }
}

fn has_meta(path: &str) -> bool {
    path.contains(['*', '?', '[', '\\'])
}

/// The paths matching `pattern`, in directory order (each directory's entries sorted).
pub fn glob(pattern: &str) -> Result<Vec<String>, BadPattern> {
    tokens(pattern)?;
    if !has_meta(pattern) {
        return Ok(if std::fs::symlink_metadata(pattern).is_ok() {
            vec![pattern.to_string()]
        } else {
            Vec::new()
        });
    }
    let (dir, file) = match pattern.rfind('/') {
        Some(i) => pattern.split_at(i + 1),
        None => ("", pattern),
    };
    let dir = match dir {
        "" => ".",
        "/" => "/",
        d => &d[..d.len() - 1],
    };
    let file = tokens(file)?;
    let mut out = Vec::new();
    if !has_meta(dir) {
        entries(dir, &file, &mut out);
    } else if dir == pattern {
        return Err(BadPattern);
    } else {
        for d in glob(dir)? {
            entries(&d, &file, &mut out);
        }
    }
    Ok(out)
}

/// The entries of `dir` matching `pattern`; a directory that cannot be read has none, as in Go.
fn entries(dir: &str, pattern: &[Token], out: &mut Vec<String>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = read
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        if matches(pattern, &name.chars().collect::<Vec<_>>()) {
            out.push(clean(&Path::new(dir).join(&name).to_string_lossy()));
        }
    }
}

/// Go's `filepath.Base`: the last element, `.` for an empty path, `/` for the root.
pub(in crate::kubectl) fn base(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    match (path.is_empty(), trimmed.is_empty()) {
        (true, _) => ".".into(),
        (false, true) => "/".into(),
        _ => trimmed.rsplit('/').next().unwrap_or(trimmed).into(),
    }
}

/// Go's `filepath.Clean` on Unix: `.` and empty elements dropped, `..` resolved lexically.
pub(in crate::kubectl) fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            part => parts.push(part),
        }
    }
    match (rooted, parts.join("/")) {
        (true, joined) => format!("/{joined}"),
        (false, joined) if joined.is_empty() => ".".into(),
        (false, joined) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(pattern: &str, name: &str) -> bool {
        matches(
            &tokens(pattern).expect("a pattern"),
            &name.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn patterns_match_as_go_filepath_match() {
        assert!(is_match("*.yaml", "a.yaml"));
        assert!(is_match("*.yaml", ".hidden.yaml"));
        assert!(!is_match("*.yaml", "a.yml"));
        assert!(is_match("a?c", "abc"));
        assert!(is_match("[a-c]x", "bx"));
        assert!(!is_match("[^a-c]x", "bx"));
        assert!(is_match("\\*", "*"));
        assert!(is_match("**.yaml", "a.yaml"));
        assert!(!is_match("*", "a/b"));
        for bad in ["[", "[]", "a\\", "[a-]", "[^]"] {
            assert!(tokens(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn paths_are_cleaned_as_go_cleans_them() {
        for (path, cleaned) in [
            ("./a/b", "a/b"),
            ("a//b/", "a/b"),
            ("a/../..", ".."),
            ("/../a", "/a"),
            ("", "."),
            ("/", "/"),
        ] {
            assert_eq!(clean(path), cleaned, "{path}");
        }
    }

    #[test]
    fn glob_walks_directories_in_sorted_order() {
        let dir = tempfile::tempdir().expect("a folder");
        for f in ["b/2.yaml", "b/1.yaml", "a/3.yaml", "a/x.txt", "c.yaml"] {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, "").expect("write");
        }
        let root = dir.path().to_string_lossy().to_string();
        let found = glob(&format!("{root}/*/*.yaml")).expect("globs");
        let relative: Vec<String> = found.iter().map(|f| f[root.len() + 1..].to_string()).collect();
        assert_eq!(relative, ["a/3.yaml", "b/1.yaml", "b/2.yaml"]);
        assert_eq!(
            glob(&format!("{root}/**/*.yaml")).expect("globs").len(),
            3,
            "`**` is one level"
        );
        assert_eq!(
            glob(&format!("{root}/./c.yaml")).expect("no meta"),
            [format!("{root}/./c.yaml")]
        );
        assert!(glob(&format!("{root}/none/*.yaml")).expect("no match").is_empty());
        assert!(glob(&format!("{root}/[")).is_err());
    }
}
