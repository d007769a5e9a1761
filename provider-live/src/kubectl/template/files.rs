//! File and path functions, as Terraform 0.12 has them: paths are relative to the working
//! directory (where the engine runs the provider), as in the kubectl providers. Messages do not
//! repeat the path: it may come from a sensitive variable.

use std::path::Path;

use base64::Engine as _;

use super::encoding::digests;
use super::value::Value;
use crate::kubectl::documents::glob::{base, clean};

fn path(args: &[Value]) -> Result<String, String> {
    Ok(args[0].to_text()?)
}

fn read(args: &[Value]) -> Result<Vec<u8>, String> {
    std::fs::read(path(args)?).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            "no file exists at the given path (paths are relative to the working directory)".into()
        }
        _ => format!("the file at the given path cannot be read: {}", e.kind()),
    })
}

pub(super) fn file(args: &[Value]) -> Result<Value, String> {
    String::from_utf8(read(args)?)
        .map(Value::String)
        .map_err(|_| "the file is not valid UTF-8 (filebase64 reads binary files)".into())
}

pub(super) fn filebase64(args: &[Value]) -> Result<Value, String> {
    Ok(base64::engine::general_purpose::STANDARD
        .encode(read(args)?)
        .into())
}

pub(super) fn fileexists(args: &[Value]) -> Result<Value, String> {
    match std::fs::metadata(path(args)?) {
        Ok(meta) if meta.is_file() => Ok(Value::Bool(true)),
        Ok(_) => Err("the path names something other than a regular file".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Bool(false)),
        Err(e) => Err(format!("the path cannot be checked: {}", e.kind())),
    }
}

pub(super) fn filemd5(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "md5").into())
}

pub(super) fn filesha1(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "sha1").into())
}

pub(super) fn filesha256(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "sha256").into())
}

pub(super) fn filesha512(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "sha512").into())
}

pub(super) fn filebase64sha256(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "base64sha256").into())
}

pub(super) fn filebase64sha512(args: &[Value]) -> Result<Value, String> {
    Ok(digests(&read(args)?, "base64sha512").into())
}

pub(super) fn basename(args: &[Value]) -> Result<Value, String> {
    Ok(base(&path(args)?).into())
}

/// Go's `filepath.Dir`: all but the last element, cleaned.
pub(super) fn dirname(args: &[Value]) -> Result<Value, String> {
    let p = path(args)?;
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    Ok(clean(dir).into())
}

pub(super) fn abspath(args: &[Value]) -> Result<Value, String> {
    let p = path(args)?;
    if p.starts_with('/') {
        return Ok(clean(&p).into());
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("the working directory is unknown: {}", e.kind()))?;
    Ok(clean(&Path::new(&cwd).join(p).to_string_lossy()).into())
}

/// `~` at the start is the home directory.
pub(super) fn pathexpand(args: &[Value]) -> Result<Value, String> {
    let p = path(args)?;
    let Some(rest) = p.strip_prefix('~').filter(|r| r.is_empty() || r.starts_with('/')) else {
        return Ok(p.into());
    };
    let home = std::env::var("HOME").map_err(|_| "HOME is not set")?;
    Ok(format!("{home}{rest}").into())
}
