//! hashicorp/kubernetes' per-attribute behaviour (`provider-live/catalog/hashicorp/*.tsv`, facts
//! recorded per schema function with their source lines; its README gives the format) expanded
//! into one row per resource type, attribute path and fact: `provider-live/catalog/facts.tsv`.
//!
//! Expansion follows the recorded mounts from each type's root, evaluating the conditions on the
//! mount parameters (`!isUpdatable`). Where a function and one that mounts it both state a fact
//! of the same kind for the same path, the one nearer the type's root wins: hashicorp patches
//! the schema it mounted (a Job's pod template restarts `Never`, not `Always`). Every path must
//! exist in the reference schema; a constraint naming a path through a list block without its
//! index is dropped, as hashicorp's SDK never finds what it names.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;

use crate::inputs::types;
use crate::{Error, NEW_TYPES, REFERENCE, metadata_model, read};

/// The recorded facts, relative to the workspace root.
const FACTS_DIR: &str = "provider-live/catalog/hashicorp";
/// Where the expanded facts go.
pub const FACTS_OUTPUT: &str = "provider-live/catalog/facts.tsv";

const KINDS: [&str; 18] = [
    "mount",
    "framework",
    "schema_version",
    "state_upgrade",
    "default",
    "reads_absent_as",
    "empty_reads_absent",
    "imports_as",
    "imports_absent_as",
    "computed_block",
    "validate",
    "force_new",
    "diff_suppress",
    "state_func",
    "conflicts_with",
    "exactly_one_of",
    "at_least_one_of",
    "required_with",
];

/// One recorded row.
#[derive(Clone, Debug)]
struct Recorded {
    path: String,
    fact: String,
    argument: String,
    condition: String,
    source: String,
    /// `file:line` of the row, for errors.
    at: String,
}

/// One expanded fact of a type.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fact {
    pub path: String,
    pub fact: String,
    pub argument: String,
    pub source: String,
}

/// A parameter value of a mount: a bool or a string.
#[derive(Clone, Debug, PartialEq)]
enum Param {
    Bool(bool),
    Text(String),
}

/// The shape of each path of a type, from the reference: `(shape, collection, element, flags)`.
type Shapes = BTreeMap<String, (String, String, String, String)>;

/// Every resource type's expanded facts.
pub struct Facts {
    pub by_type: BTreeMap<String, Vec<Fact>>,
}

fn input(file: &str, line: usize, message: String) -> Error {
    Error::Input {
        file: FACTS_DIR,
        line,
        message: format!("{file}: {message}"),
    }
}

/// Reads every recorded file, by fragment.
fn recorded(root: &Path) -> Result<BTreeMap<String, Vec<Recorded>>, Error> {
    let dir = root.join(FACTS_DIR);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|source| Error::Read {
            path: FACTS_DIR.to_string(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    files.sort();
    let mut out: BTreeMap<String, Vec<Recorded>> = BTreeMap::new();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&file).map_err(|source| Error::Read {
            path: file.display().to_string(),
            source,
        })?;
        for (i, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let [fragment, path, fact, argument, condition, source] = cols[..] else {
                return Err(input(&name, i + 1, format!("{} columns, expected 6", cols.len())));
            };
            if !KINDS.contains(&fact) {
                return Err(input(&name, i + 1, format!("unknown fact {fact:?}")));
            }
            out.entry(fragment.to_string()).or_default().push(Recorded {
                path: path.into(),
                fact: fact.into(),
                argument: argument.into(),
                condition: condition.into(),
                source: source.into(),
                at: format!("{name}:{}", i + 1),
            });
        }
    }
    Ok(out)
}

/// `name(a=true,b="x")` as the fragment name and its parameters.
fn parse_mount(argument: &str) -> Option<(String, BTreeMap<String, Param>)> {
    let (name, rest) = match argument.split_once('(') {
        Some((name, rest)) => (name, rest.strip_suffix(')')?),
        None => (argument, ""),
    };
    let mut params = BTreeMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let (value, tail) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"')?;
            (Param::Text(quoted[..end].to_string()), &quoted[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            let value = match after[..end].trim() {
                "true" => Param::Bool(true),
                "false" => Param::Bool(false),
                other => Param::Text(other.to_string()),
            };
            (value, &after[end..])
        };
        params.insert(key.trim().to_string(), value);
        rest = tail.trim_start_matches(',').trim();
    }
    Some((name.to_string(), params))
}

/// A condition over the parameters: `a`, `!a`, `a && !b`, `a || b` (no parentheses).
fn holds(condition: &str, params: &BTreeMap<String, Param>) -> Result<bool, String> {
    let atom = |term: &str| -> Result<bool, String> {
        let term = term.trim();
        let (negated, name) = match term.strip_prefix('!') {
            Some(name) => (true, name.trim()),
            None => (false, term),
        };
        match params.get(name) {
            Some(Param::Bool(b)) => Ok(*b != negated),
            _ => Err(format!("parameter {name:?} is not a bool here")),
        }
    };
    if condition.trim().is_empty() {
        return Ok(true);
    }
    for alternative in condition.split("||") {
        let mut all = true;
        for term in alternative.split("&&") {
            all &= atom(term)?;
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Expands every type of the reference that has a root row.
pub fn expand(root: &Path) -> Result<Facts, Error> {
    let fragments = recorded(root)?;
    let mut shapes: BTreeMap<String, Shapes> = BTreeMap::new();
    for line in read(root, REFERENCE)?.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let ["resource", ty, path, shape, collection, element, flags] = cols[..] {
            shapes.entry(ty.to_string()).or_default().insert(
                path.to_string(),
                (shape.into(), collection.into(), element.into(), flags.into()),
            );
        }
    }
    let mut by_type = BTreeMap::new();
    let mut problems = Vec::new();
    for (ty, paths) in &shapes {
        if !fragments.contains_key(ty) {
            continue;
        }
        // (path, fact) -> (depth, facts at that depth)
        let mut found: BTreeMap<(String, String), (usize, Vec<Fact>)> = BTreeMap::new();
        let mut stack = vec![(ty.clone(), String::new(), BTreeMap::new(), 0usize)];
        while let Some((fragment, prefix, params, depth)) = stack.pop() {
            let Some(rows) = fragments.get(&fragment) else {
                problems.push(format!("{ty}: fragment {fragment:?} (at {prefix:?}) has no rows"));
                continue;
            };
            if depth > 40 {
                problems.push(format!("{ty}: mounts nest deeper than 40 at {prefix}"));
                continue;
            }
            for row in rows {
                match holds(&row.condition, &params) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(why) => {
                        problems.push(format!("{}: {ty}: {why}", row.at));
                        continue;
                    }
                }
                let path = match (row.path.as_str(), prefix.is_empty()) {
                    (".", _) => prefix.clone(),
                    (p, true) => p.to_string(),
                    (p, false) => format!("{prefix}.{p}"),
                };
                if row.fact == "mount" {
                    match parse_mount(&row.argument) {
                        Some((name, p)) => stack.push((name, path, p, depth + 1)),
                        None => problems.push(format!("{}: bad mount {:?}", row.at, row.argument)),
                    }
                    continue;
                }
                if let Some(problem) = upgrade_problem(row, &path, paths) {
                    problems.push(format!("{}: {ty} {problem}", row.at));
                    continue;
                }
                // A fact of the whole type, or a dropped attribute the schema no longer has.
                let whole = matches!(row.fact.as_str(), "framework" | "schema_version");
                if whole || (row.fact == "state_upgrade" && row.argument.ends_with(" drop")) {
                    let path = if whole { ".".to_string() } else { path };
                    let fact = Fact {
                        path: path.clone(),
                        fact: row.fact.clone(),
                        argument: row.argument.clone(),
                        source: row.source.clone(),
                    };
                    found
                        .entry((path, row.fact.clone()))
                        .or_insert((depth, vec![fact]));
                    continue;
                }
                let Some(shape) = paths.get(&path) else {
                    problems.push(format!("{}: {ty} has no path {path}", row.at));
                    continue;
                };
                let Some(argument) = normalised(row, shape, paths) else {
                    continue;
                };
                let fact = Fact {
                    path: path.clone(),
                    fact: row.fact.clone(),
                    argument,
                    source: row.source.clone(),
                };
                let entry = found
                    .entry((path, row.fact.clone()))
                    .or_insert((depth, Vec::new()));
                if depth < entry.0 {
                    *entry = (depth, vec![fact]);
                } else if depth == entry.0 && !entry.1.contains(&fact) {
                    entry.1.push(fact);
                }
            }
        }
        let mut facts: Vec<Fact> = found.into_values().flat_map(|(_, f)| f).collect();
        facts.sort();
        by_type.insert(ty.clone(), facts);
    }
    // A type beyond 3.4.0 has its metadata model's block, and so that block's facts.
    for ty in types(NEW_TYPES, &read(root, NEW_TYPES)?)? {
        let model = metadata_model(&ty.scope).and_then(|m| by_type.get(m));
        let metadata: Vec<Fact> = model
            .into_iter()
            .flatten()
            .filter(|f| f.path == "metadata" || f.path.starts_with("metadata."))
            .cloned()
            .collect();
        by_type.insert(ty.name, metadata);
    }
    if problems.is_empty() {
        Ok(Facts { by_type })
    } else {
        problems.sort();
        problems.dedup();
        Err(Error::Unmatched(problems))
    }
}

/// What is wrong with a `schema_version` or `state_upgrade` row at `path`, if anything: a
/// version is a whole number; an upgrade is `<from version> block_to_map` at a map attribute
/// of the current schema, or `<from version> drop` of an attribute it no longer has.
fn upgrade_problem(row: &Recorded, path: &str, paths: &Shapes) -> Option<String> {
    let number = |text: &str| text.parse::<u32>().is_ok();
    match row.fact.as_str() {
        "schema_version" if !number(&row.argument) => Some(format!("bad schema version {:?}", row.argument)),
        "state_upgrade" => match row.argument.split_once(' ') {
            Some((from, "block_to_map")) if number(from) => match paths.get(path) {
                Some((shape, collection, ..)) if shape == "attribute" && collection == "map" => None,
                _ => Some(format!("has no map attribute {path} for {:?}", row.argument)),
            },
            Some((from, "drop")) if number(from) => paths
                .contains_key(path)
                .then(|| format!("still has {path}, which {:?} drops", row.argument)),
            _ => Some(format!("bad state upgrade {:?}", row.argument)),
        },
        _ => None,
    }
}

/// The argument as the provider reads it, or `None` for a fact that never takes effect: a
/// default as JSON of the attribute's type, a constraint only when every path it names
/// resolves through list indices.
fn normalised(row: &Recorded, shape: &(String, String, String, String), paths: &Shapes) -> Option<String> {
    match row.fact.as_str() {
        "default" | "reads_absent_as" | "imports_as" | "imports_absent_as" => {
            let value: Json = serde_json::from_str(&row.argument).ok()?;
            let typed = match (shape.2.as_str(), &value) {
                ("string", Json::String(_)) | ("number", Json::Number(_)) | ("bool", Json::Bool(_)) => value,
                ("string", Json::Number(n)) => Json::from(n.to_string()),
                ("string", Json::Bool(b)) => Json::from(b.to_string()),
                _ => value,
            };
            Some(typed.to_string())
        }
        "conflicts_with" | "exactly_one_of" | "at_least_one_of" | "required_with" => {
            let listed: Vec<String> = serde_json::from_str(&row.argument).ok()?;
            listed
                .iter()
                .all(|p| resolves(p, paths))
                .then(|| row.argument.clone())
        }
        _ => Some(row.argument.clone()),
    }
}

/// Whether an SDK path (`spec.0.selector`) names an attribute: every list or set block on the
/// way is followed by an index.
fn resolves(sdk_path: &str, paths: &Shapes) -> bool {
    let mut dotted = String::new();
    let mut steps = sdk_path.split('.').peekable();
    while let Some(step) = steps.next() {
        if step.parse::<usize>().is_ok() {
            continue;
        }
        if !dotted.is_empty() {
            dotted.push('.');
        }
        dotted.push_str(step);
        let Some((shape, collection, ..)) = paths.get(&dotted) else {
            return false;
        };
        let repeated = shape == "block" && matches!(collection.as_str(), "list" | "set");
        let indexed = steps.peek().is_some_and(|s| s.parse::<usize>().is_ok());
        if repeated && steps.peek().is_some() && !indexed {
            return false;
        }
    }
    true
}

/// `facts.tsv`: every expanded fact, by type and path.
pub fn generate_facts(root: &Path) -> Result<String, Error> {
    let facts = expand(root)?;
    let mut out = String::from(
        "# GENERATED by `make catalog` (kind-catalog) from provider-live/catalog/hashicorp/*.tsv: do not edit.\n\
         # type\tpath\tfact\targument\tsource (hashicorp/terraform-provider-kubernetes at 3a33fb6cc)\n",
    );
    for (ty, facts) in &facts.by_type {
        for f in facts {
            let _ = writeln!(out, "{ty}\t{}\t{}\t{}\t{}", f.path, f.fact, f.argument, f.source);
        }
    }
    Ok(out)
}

/// Where the table of every fact goes.
pub const BEHAVIOUR_DOC: &str = "docs/hashicorp-behaviour.md";

/// `docs/hashicorp-behaviour.md`: every attribute whose behaviour comes from a recorded fact,
/// with its source, one table per type (a type hashicorp gives the same facts under another
/// name is listed once, with its other names).
pub fn generate_behaviour_doc(root: &Path) -> Result<String, Error> {
    let facts = expand(root)?;
    let mut groups: Vec<(Vec<&String>, &Vec<Fact>)> = Vec::new();
    for (ty, list) in &facts.by_type {
        match groups.iter_mut().find(|(_, other)| *other == list) {
            Some((names, _)) => names.push(ty),
            None => groups.push((vec![ty], list)),
        }
    }
    let mut out = String::from(
        "<!-- GENERATED by `make catalog` (kind-catalog) from provider-live/catalog/hashicorp/*.tsv: do not edit. -->\n\
         # hashicorp/kubernetes behaviour, attribute by attribute\n\n\
         What `choudoufu/live` does beyond each attribute's type, as hashicorp/kubernetes 3.4.0 does it: the \
         default planned when the configuration leaves an attribute out, the values it refuses at \
         `validate`, the changes that replace the object, the values that mean the same, and the \
         attributes that exclude or need each other. Each fact names its source in \
         hashicorp/terraform-provider-kubernetes (commit 3a33fb6cc). The provider reads them from \
         `provider-live/catalog/facts.tsv`; `provider-live/catalog/hashicorp/README.md` says how they are recorded.\n\n\
         | fact | meaning |\n|---|---|\n\
         | `default` | planned where the configuration leaves the attribute null |\n\
         | `validate` | refused at `terraform validate` unless it holds |\n\
         | `force_new` | a change replaces the object (on a block: a change of its number of elements) |\n\
         | `diff_suppress` | a value that means the same as the prior one keeps the prior's spelling |\n\
         | `empty_reads_absent` | a block whose object holds nothing reads as no block (a data source's read, an import) |\n\
         | `imports_as` | the value an import gives a Terraform-only setting (others an import leaves unset) |\n\
         | `imports_absent_as` | the value an import reads where the object has no such field (a ConfigMap without `data` imports `data = {}`) |\n\
         | `conflicts_with`, `exactly_one_of`, `at_least_one_of`, `required_with` | constraints between attributes |\n\
         | `schema_version` | the type's schema version, which the engine stores with its state |\n\
         | `state_upgrade` | how a state of an older version becomes the current one (`0 block_to_map`: a block of one became this map; `0 drop`: the attribute is gone) |\n\n\
         ## How it is checked\n\n\
         `provider-live/tests/conformance.rs` reads `facts.tsv` and proves, for every type, through the \
         protocol layer: each `validate` fact refuses a value chosen for its validator (a negative number, \
         port 70000, a value outside `one_of`, mode `01000`, quantity `abc`, label key `-bad`, ...) at \
         `terraform validate` with an error naming its path, and accepts a valid one; each `default` is \
         planned on a create whose configuration has the enclosing block but leaves the attribute out; \
         each `force_new` replaces the object when a plan changes the attribute (a block: its number of \
         elements). A fact it cannot check says why, in the test. `make test` prints the counts per type.\n",
    );
    for (names, list) in groups {
        let _ = write!(
            out,
            "\n## {}\n\n| attribute | fact | value | source |\n|---|---|---|---|\n",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        for f in list {
            let value = f.argument.replace('|', "\\|");
            let _ = writeln!(out, "| `{}` | {} | `{value}` | {} |", f.path, f.fact, f.source);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_parse_with_their_parameters() {
        let (name, params) = parse_mount(r#"podSpecFields(isUpdatable=false,owner="deployment")"#).unwrap();
        assert_eq!(name, "podSpecFields");
        assert_eq!(params["isUpdatable"], Param::Bool(false));
        assert_eq!(params["owner"], Param::Text("deployment".into()));
        assert_eq!(parse_mount("containerFields").unwrap().1.len(), 0);
    }

    #[test]
    fn conditions_evaluate_over_bool_parameters() {
        let params = BTreeMap::from([
            ("a".to_string(), Param::Bool(true)),
            ("b".to_string(), Param::Bool(false)),
        ]);
        assert!(holds("", &params).unwrap());
        assert!(holds("a && !b", &params).unwrap());
        assert!(!holds("b", &params).unwrap());
        assert!(holds("b || a", &params).unwrap());
        assert!(holds("c", &params).is_err());
    }

    #[test]
    fn sdk_paths_resolve_only_with_indices_through_lists() {
        let shapes: Shapes = [
            ("metadata", ("block", "list", "object", "required")),
            ("metadata.name", ("attribute", "simple", "string", "optional")),
        ]
        .into_iter()
        .map(|(p, (a, b, c, d))| (p.to_string(), (a.into(), b.into(), c.into(), d.into())))
        .collect();
        assert!(resolves("metadata.0.name", &shapes));
        assert!(!resolves("metadata.name", &shapes));
        assert!(!resolves("spec.0.x", &shapes));
    }

    #[test]
    fn the_nearest_fact_wins_and_every_path_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let facts = expand(&root).unwrap_or_else(|e| panic!("{e}"));
        let job = &facts.by_type["kubernetes_job_v1"];
        let restart: Vec<&Fact> = job
            .iter()
            .filter(|f| f.path == "spec.template.spec.restart_policy" && f.fact == "default")
            .collect();
        assert_eq!(restart.len(), 1);
        assert_eq!(restart[0].argument, "\"Never\"");
        let config_map = &facts.by_type["kubernetes_config_map_v1"];
        assert!(
            config_map.iter().any(|f| f.path == "metadata.namespace"
                && f.fact == "default"
                && f.argument == "\"default\"")
        );
        assert!(
            !config_map.iter().any(|f| f.fact == "conflicts_with"),
            "metadata.name names no attribute through the metadata list"
        );
    }
}
