//! List, map and set functions and the type conversions, as Terraform 0.12 has them. Sets are
//! lists without duplicates, in cty's order (numbers by value, strings lexically).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::encoding::json_text;
use super::value::Value;

/// The most elements `range` makes, as Terraform limits it.
const RANGE_LIMIT: usize = 1024;

fn list_arg(args: &[Value], i: usize) -> Result<&[Value], String> {
    Ok(args[i].as_list()?)
}

fn map_arg(args: &[Value], i: usize) -> Result<&BTreeMap<String, Value>, String> {
    Ok(args[i].as_map()?)
}

pub(super) fn length(args: &[Value]) -> Result<Value, String> {
    let n = match &args[0] {
        Value::String(s) => s.chars().count(),
        Value::List(items) => items.len(),
        Value::Map(entries) => entries.len(),
        other => return Err(format!("a {} has no length", other.kind())),
    };
    Ok(Value::Number(n as f64))
}

pub(super) fn lookup(args: &[Value]) -> Result<Value, String> {
    let key = args[1].to_text()?;
    match (map_arg(args, 0)?.get(&key), args.get(2)) {
        (Some(value), _) => Ok(value.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err("the map has no element for the given key, and no default is given".into()),
    }
}

pub(super) fn contains(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Bool(list_arg(args, 0)?.contains(&args[1])))
}

pub(super) fn concat(args: &[Value]) -> Result<Value, String> {
    let mut out = Vec::new();
    for i in 0..args.len() {
        out.extend_from_slice(list_arg(args, i)?);
    }
    Ok(Value::List(out))
}

/// `element(list, i)`: the index wraps around the end.
pub(super) fn element(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    let index = usize::try_from(args[1].to_integer()?).map_err(|_| "the index must not be negative")?;
    if items.is_empty() {
        return Err("cannot use element with an empty list".into());
    }
    Ok(items[index % items.len()].clone())
}

pub(super) fn coalesce(args: &[Value]) -> Result<Value, String> {
    args.iter()
        .find(|v| !matches!(v, Value::Null) && v != &&Value::String(String::new()))
        .cloned()
        .ok_or_else(|| "no non-null, non-empty-string arguments".into())
}

pub(super) fn coalescelist(args: &[Value]) -> Result<Value, String> {
    for i in 0..args.len() {
        if !list_arg(args, i)?.is_empty() {
            return Ok(args[i].clone());
        }
    }
    Err("no non-empty list arguments".into())
}

/// The list's strings without the empty ones (and nulls).
pub(super) fn compact(args: &[Value]) -> Result<Value, String> {
    let mut out = Vec::new();
    for item in list_arg(args, 0)? {
        if !matches!(item, Value::Null) {
            let text = item.to_text()?;
            if !text.is_empty() {
                out.push(Value::String(text));
            }
        }
    }
    Ok(Value::List(out))
}

pub(super) fn distinct(args: &[Value]) -> Result<Value, String> {
    let mut out: Vec<Value> = Vec::new();
    for item in list_arg(args, 0)? {
        if !out.contains(item) {
            out.push(item.clone());
        }
    }
    Ok(Value::List(out))
}

pub(super) fn flatten(args: &[Value]) -> Result<Value, String> {
    fn into(out: &mut Vec<Value>, items: &[Value]) {
        for item in items {
            match item {
                Value::List(inner) => into(out, inner),
                other => out.push(other.clone()),
            }
        }
    }
    let mut out = Vec::new();
    into(&mut out, list_arg(args, 0)?);
    Ok(Value::List(out))
}

pub(super) fn reverse(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(list_arg(args, 0)?.iter().rev().cloned().collect()))
}

/// The strings of the list in lexical order.
pub(super) fn sort(args: &[Value]) -> Result<Value, String> {
    let mut texts = args[0].to_texts()?;
    texts.sort();
    Ok(Value::List(texts.into_iter().map(Value::String).collect()))
}

pub(super) fn zipmap(args: &[Value]) -> Result<Value, String> {
    let (keys, values) = (args[0].to_texts()?, list_arg(args, 1)?);
    if keys.len() != values.len() {
        return Err("the keys and the values must have the same number of elements".into());
    }
    Ok(Value::Map(keys.into_iter().zip(values.iter().cloned()).collect()))
}

pub(super) fn keys(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(
        map_arg(args, 0)?
            .keys()
            .map(|k| Value::from(k.as_str()))
            .collect(),
    ))
}

pub(super) fn values(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(map_arg(args, 0)?.values().cloned().collect()))
}

/// Later maps win; null arguments are skipped.
pub(super) fn merge(args: &[Value]) -> Result<Value, String> {
    let mut out = BTreeMap::new();
    for arg in args.iter().filter(|a| !matches!(a, Value::Null)) {
        out.extend(arg.as_map()?.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Ok(Value::Map(out))
}

/// `range(limit)`, `range(start, limit)`, `range(start, limit, step)`.
pub(super) fn range(args: &[Value]) -> Result<Value, String> {
    let numbers = args
        .iter()
        .map(Value::to_number)
        .collect::<Result<Vec<f64>, _>>()?;
    let (start, limit, step) = match numbers[..] {
        [limit] => (0.0, limit, 1.0),
        [start, limit] => (start, limit, if start <= limit { 1.0 } else { -1.0 }),
        [start, limit, step] => (start, limit, step),
        _ => unreachable!("arity is checked"),
    };
    if step == 0.0 {
        return Err("the step must not be zero".into());
    }
    if (step > 0.0 && start > limit) || (step < 0.0 && start < limit) {
        return Err("the step moves away from the limit".into());
    }
    let mut out = Vec::new();
    let mut n = start;
    while (step > 0.0 && n < limit) || (step < 0.0 && n > limit) {
        if out.len() == RANGE_LIMIT {
            return Err(format!("more than {RANGE_LIMIT} values were generated"));
        }
        out.push(Value::Number(n));
        n += step;
    }
    Ok(Value::List(out))
}

pub(super) fn index(args: &[Value]) -> Result<Value, String> {
    let position = list_arg(args, 0)?
        .iter()
        .position(|v| v == &args[1])
        .ok_or("the item was not found in the list")?;
    Ok(Value::Number(position as f64))
}

pub(super) fn slice(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    let bound = |i: usize| {
        usize::try_from(args[i].to_integer()?).map_err(|_| "an index must not be negative".to_string())
    };
    let (start, end) = (bound(1)?, bound(2)?);
    if start > end || end > items.len() {
        return Err("the start and end indices are out of order or past the end of the list".into());
    }
    Ok(Value::List(items[start..end].to_vec()))
}

/// Lists of `size` elements (size 0: one list of all).
pub(super) fn chunklist(args: &[Value]) -> Result<Value, String> {
    let items = list_arg(args, 0)?;
    let size = usize::try_from(args[1].to_integer()?).map_err(|_| "the size must not be negative")?;
    if size == 0 {
        return Ok(Value::List(vec![Value::List(items.to_vec())]));
    }
    Ok(Value::List(
        items.chunks(size).map(|c| Value::List(c.to_vec())).collect(),
    ))
}

pub(super) fn list(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(args.to_vec()))
}

/// The deprecated `map("k1", v1, "k2", v2, ...)`.
pub(super) fn map(args: &[Value]) -> Result<Value, String> {
    if !args.len().is_multiple_of(2) {
        return Err("map takes an even number of arguments: keys and values".into());
    }
    let mut out = BTreeMap::new();
    for pair in args.chunks(2) {
        out.insert(pair[0].to_text()?, pair[1].clone());
    }
    Ok(Value::Map(out))
}

pub(super) fn matchkeys(args: &[Value]) -> Result<Value, String> {
    let (values, keys, search) = (list_arg(args, 0)?, list_arg(args, 1)?, list_arg(args, 2)?);
    if values.len() != keys.len() {
        return Err("the values and the keys must have the same number of elements".into());
    }
    Ok(Value::List(
        values
            .iter()
            .zip(keys)
            .filter(|(_, k)| search.contains(k))
            .map(|(v, _)| v.clone())
            .collect(),
    ))
}

/// cty's order of set elements: numbers by value, strings lexically, then the rest by JSON.
fn set_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => json_text(a).cmp(&json_text(b)),
    }
}

fn as_set(items: impl IntoIterator<Item = Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out.sort_by(set_order);
    out
}

pub(super) fn toset(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(as_set(list_arg(args, 0)?.iter().cloned())))
}

pub(super) fn setunion(args: &[Value]) -> Result<Value, String> {
    let mut all = Vec::new();
    for i in 0..args.len() {
        all.extend_from_slice(list_arg(args, i)?);
    }
    Ok(Value::List(as_set(all)))
}

pub(super) fn setintersection(args: &[Value]) -> Result<Value, String> {
    let mut common = as_set(list_arg(args, 0)?.iter().cloned());
    for i in 1..args.len() {
        let other = list_arg(args, i)?;
        common.retain(|v| other.contains(v));
    }
    Ok(Value::List(common))
}

pub(super) fn setsubtract(args: &[Value]) -> Result<Value, String> {
    let remove = list_arg(args, 1)?;
    Ok(Value::List(as_set(
        list_arg(args, 0)?.iter().filter(|v| !remove.contains(v)).cloned(),
    )))
}

pub(super) fn setproduct(args: &[Value]) -> Result<Value, String> {
    let mut product: Vec<Vec<Value>> = vec![Vec::new()];
    for i in 0..args.len() {
        let set = as_set(list_arg(args, i)?.iter().cloned());
        product = product
            .into_iter()
            .flat_map(|prefix| {
                set.iter()
                    .map(move |v| [prefix.clone(), vec![v.clone()]].concat())
            })
            .collect();
    }
    Ok(Value::List(product.into_iter().map(Value::List).collect()))
}

/// `{k = [v, ...]}` turned to `{v = [k, ...]}`.
pub(super) fn transpose(args: &[Value]) -> Result<Value, String> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (key, values) in map_arg(args, 0)? {
        for value in values.to_texts()? {
            out.entry(value).or_default().push(Value::from(key.as_str()));
        }
    }
    Ok(Value::Map(
        out.into_iter().map(|(k, v)| (k, Value::List(v))).collect(),
    ))
}

pub(super) fn tolist(args: &[Value]) -> Result<Value, String> {
    Ok(Value::List(list_arg(args, 0)?.to_vec()))
}

pub(super) fn tomap(args: &[Value]) -> Result<Value, String> {
    Ok(Value::Map(map_arg(args, 0)?.clone()))
}

/// The conversions leave null as null.
fn convert(arg: &Value, to: impl Fn(&Value) -> Result<Value, String>) -> Result<Value, String> {
    if matches!(arg, Value::Null) {
        Ok(Value::Null)
    } else {
        to(arg)
    }
}

pub(super) fn tostring(args: &[Value]) -> Result<Value, String> {
    convert(&args[0], |v| Ok(Value::String(v.to_text()?)))
}

pub(super) fn tonumber(args: &[Value]) -> Result<Value, String> {
    convert(&args[0], |v| Ok(Value::Number(v.to_number()?)))
}

pub(super) fn tobool(args: &[Value]) -> Result<Value, String> {
    convert(&args[0], |v| Ok(Value::Bool(v.to_bool()?)))
}
