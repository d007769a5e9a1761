//! The functions a template may call: Terraform 0.12.29's (`lang/funcs` and cty's stdlib), which
//! the kubectl providers vendor; the later ones (`startswith`, `sum`, ...) are missing there too.
//! `try`, `can` and `templatefile` need the expression or the scope and live in `expr`.
//! A failure says what was wrong, never with the argument's value (it may be sensitive).

use super::value::{Mismatch, Value};
use super::{clock, collections, encoding, files, numbers, strings};

/// A function's body: its arguments, already counted against its arity.
pub(super) type Body = fn(&[Value]) -> Result<Value, String>;

/// Why a call failed.
#[derive(Debug)]
pub(super) enum CallError {
    /// No such function.
    Unknown,
    /// A Terraform 0.12 function this provider does not implement.
    Unavailable,
    Failed(String),
}

impl From<Mismatch> for String {
    fn from(m: Mismatch) -> String {
        m.0
    }
}

/// Each function: name, fewest and most arguments (`None`: any number), body.
const FUNCTIONS: &[(&str, usize, Option<usize>, Body)] = &[
    // strings
    ("chomp", 1, Some(1), strings::chomp),
    ("format", 1, None, strings::format),
    ("formatlist", 1, None, strings::formatlist),
    ("indent", 2, Some(2), strings::indent),
    ("join", 2, None, strings::join),
    ("lower", 1, Some(1), strings::lower),
    ("regex", 2, Some(2), strings::regex),
    ("regexall", 2, Some(2), strings::regexall),
    ("replace", 3, Some(3), strings::replace),
    ("split", 2, Some(2), strings::split),
    ("strrev", 1, Some(1), strings::strrev),
    ("substr", 3, Some(3), strings::substr),
    ("title", 1, Some(1), strings::title),
    ("trim", 2, Some(2), strings::trim),
    ("trimprefix", 2, Some(2), strings::trimprefix),
    ("trimspace", 1, Some(1), strings::trimspace),
    ("trimsuffix", 2, Some(2), strings::trimsuffix),
    ("upper", 1, Some(1), strings::upper),
    // collections
    ("chunklist", 2, Some(2), collections::chunklist),
    ("coalesce", 1, None, collections::coalesce),
    ("coalescelist", 1, None, collections::coalescelist),
    ("compact", 1, Some(1), collections::compact),
    ("concat", 1, None, collections::concat),
    ("contains", 2, Some(2), collections::contains),
    ("distinct", 1, Some(1), collections::distinct),
    ("element", 2, Some(2), collections::element),
    ("flatten", 1, Some(1), collections::flatten),
    ("index", 2, Some(2), collections::index),
    ("keys", 1, Some(1), collections::keys),
    ("length", 1, Some(1), collections::length),
    ("list", 0, None, collections::list),
    ("lookup", 2, Some(3), collections::lookup),
    ("map", 0, None, collections::map),
    ("matchkeys", 3, Some(3), collections::matchkeys),
    ("merge", 0, None, collections::merge),
    ("range", 1, Some(3), collections::range),
    ("reverse", 1, Some(1), collections::reverse),
    ("setintersection", 1, None, collections::setintersection),
    ("setproduct", 1, None, collections::setproduct),
    ("setsubtract", 2, Some(2), collections::setsubtract),
    ("setunion", 1, None, collections::setunion),
    ("slice", 3, Some(3), collections::slice),
    ("sort", 1, Some(1), collections::sort),
    ("transpose", 1, Some(1), collections::transpose),
    ("values", 1, Some(1), collections::values),
    ("zipmap", 2, Some(2), collections::zipmap),
    // type conversions
    ("tobool", 1, Some(1), collections::tobool),
    ("tolist", 1, Some(1), collections::tolist),
    ("tomap", 1, Some(1), collections::tomap),
    ("tonumber", 1, Some(1), collections::tonumber),
    ("toset", 1, Some(1), collections::toset),
    ("tostring", 1, Some(1), collections::tostring),
    // numbers
    ("abs", 1, Some(1), numbers::abs),
    ("ceil", 1, Some(1), numbers::ceil),
    ("floor", 1, Some(1), numbers::floor),
    ("log", 2, Some(2), numbers::log),
    ("max", 1, None, numbers::max),
    ("min", 1, None, numbers::min),
    ("parseint", 2, Some(2), numbers::parseint),
    ("pow", 2, Some(2), numbers::pow),
    ("signum", 1, Some(1), numbers::signum),
    // encodings and hashes
    ("base64decode", 1, Some(1), encoding::base64decode),
    ("base64encode", 1, Some(1), encoding::base64encode),
    ("base64sha256", 1, Some(1), encoding::base64sha256),
    ("base64sha512", 1, Some(1), encoding::base64sha512),
    ("csvdecode", 1, Some(1), encoding::csvdecode),
    ("jsondecode", 1, Some(1), encoding::jsondecode),
    ("jsonencode", 1, Some(1), encoding::jsonencode),
    ("md5", 1, Some(1), encoding::md5),
    ("sha1", 1, Some(1), encoding::sha1),
    ("sha256", 1, Some(1), encoding::sha256),
    ("sha512", 1, Some(1), encoding::sha512),
    ("urlencode", 1, Some(1), encoding::urlencode),
    ("uuid", 0, Some(0), encoding::uuid),
    ("uuidv5", 2, Some(2), encoding::uuidv5),
    ("yamldecode", 1, Some(1), encoding::yamldecode),
    ("yamlencode", 1, Some(1), encoding::yamlencode),
    // files (from the working directory) and time
    ("abspath", 1, Some(1), files::abspath),
    ("basename", 1, Some(1), files::basename),
    ("dirname", 1, Some(1), files::dirname),
    ("file", 1, Some(1), files::file),
    ("filebase64", 1, Some(1), files::filebase64),
    ("filebase64sha256", 1, Some(1), files::filebase64sha256),
    ("filebase64sha512", 1, Some(1), files::filebase64sha512),
    ("fileexists", 1, Some(1), files::fileexists),
    ("filemd5", 1, Some(1), files::filemd5),
    ("filesha1", 1, Some(1), files::filesha1),
    ("filesha256", 1, Some(1), files::filesha256),
    ("filesha512", 1, Some(1), files::filesha512),
    ("pathexpand", 1, Some(1), files::pathexpand),
    ("timeadd", 2, Some(2), clock::timeadd),
    ("timestamp", 0, Some(0), clock::timestamp),
];

/// Terraform 0.12 functions left out: password hashing, RSA decryption and gzip (secrets and
/// binary payloads have no place in a manifest), network arithmetic, date formatting and
/// globbing of files.
const UNAVAILABLE: &[&str] = &[
    "base64gzip",
    "bcrypt",
    "cidrhost",
    "cidrnetmask",
    "cidrsubnet",
    "cidrsubnets",
    "fileset",
    "formatdate",
    "rsadecrypt",
];

pub(super) fn call(name: &str, args: &[Value]) -> Result<Value, CallError> {
    let Some((_, fewest, most, body)) = FUNCTIONS.iter().find(|(n, ..)| *n == name) else {
        return Err(if UNAVAILABLE.contains(&name) {
            CallError::Unavailable
        } else {
            CallError::Unknown
        });
    };
    if args.len() < *fewest || most.is_some_and(|most| args.len() > most) {
        let wanted = match most {
            Some(most) if most == fewest => format!("{fewest}"),
            Some(most) => format!("{fewest} to {most}"),
            None => format!("at least {fewest}"),
        };
        return Err(CallError::Failed(format!(
            "it takes {wanted} arguments, not {}",
            args.len()
        )));
    }
    body(args).map_err(CallError::Failed)
}
