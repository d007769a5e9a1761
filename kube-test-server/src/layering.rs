//! The module layering README.md documents ("Module layers"), held against the sources: every
//! module of `src/` is in exactly one layer, uses (`crate::…` outside its tests) only modules of
//! its own layer or below, and no chain of uses leads back to where it started.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name -> its layer (1 = bottom), from the README's numbered list.
fn documented_layers(readme: &str) -> BTreeMap<String, usize> {
    let section = readme
        .split("\n## Module layers\n")
        .nth(1)
        .expect("README.md has a \"Module layers\" section");
    let section = section.split("\n## ").next().unwrap_or(section);
    // A layer is a numbered item ("3. **registry**, …: a, b, c — what they are"), maybe wrapped
    // over several lines; its modules are the comma-separated names after the first colon, up
    // to the dash.
    let mut items: Vec<String> = Vec::new();
    for line in section.lines() {
        let trimmed = line.trim_start();
        let numbered = trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| n.parse::<usize>().is_ok());
        if numbered {
            items.push(trimmed.to_string());
        } else if line.starts_with("   ") && !items.is_empty() {
            let last = items.last_mut().expect("an item");
            last.push(' ');
            last.push_str(trimmed);
        } else if trimmed.is_empty() && !items.is_empty() {
            break;
        }
    }
    let mut layers = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let list = item.split_once(": ").map(|(_, rest)| rest).unwrap_or_default();
        let list = list.split(" — ").next().unwrap_or_default();
        for name in list.split(',') {
            let name = name.split_whitespace().next().unwrap_or_default();
            let name = name.trim_end_matches('.');
            assert!(
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "README.md layer {}: {name:?} is not a module name",
                index + 1
            );
            let earlier = layers.insert(name.to_string(), index + 1);
            assert!(earlier.is_none(), "README.md names {name} in two layers");
        }
    }
    layers
}

/// The modules `source` uses through `crate::` paths, outside its `#[cfg(test)] mod tests`.
fn uses(source: &str) -> BTreeSet<String> {
    let code = source.split("#[cfg(test)]\nmod tests").next().unwrap_or(source);
    let code: String = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a, b::{c, d}, e}`: the first segment of each top-level entry.
            let mut depth = 0;
            let mut entry_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => entry_start = true,
                    c if entry_start && !c.is_whitespace() => {
                        found.insert(ident(&group[i..]));
                        entry_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found
}

/// Each module of `src/` (a file, with its folder of submodules) and the modules it uses; the
/// crate root, the binary and this test-only module are no part of the layers.
fn module_uses(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut visit = |module: &str, file: &Path| {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        graph.entry(module.to_string()).or_default().extend(uses(&text));
    };
    for entry in std::fs::read_dir(src).expect("src/") {
        let path = entry.expect("an entry of src/").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        if path.extension().is_some_and(|e| e == "rs")
            && !["lib", "main", "layering"].contains(&name.as_str())
        {
            visit(&name, &path);
        } else if path.is_dir() && name != "bin" {
            for sub in std::fs::read_dir(&path).expect("a module folder") {
                let sub = sub.expect("an entry").path();
                if sub.extension().is_some_and(|e| e == "rs") {
                    visit(&name, &sub);
                }
            }
        }
    }
    for (module, used) in graph.iter_mut() {
        used.remove(module);
    }
    graph
}

/// Every way `graph` breaks `layers`: a module without a layer, a use of a higher layer, a cycle.
fn violations(layers: &BTreeMap<String, usize>, graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for name in layers.keys().filter(|name| !graph.contains_key(*name)) {
        out.push(format!("{name} is in a layer but is no module of src/"));
    }
    for (module, used) in graph {
        let Some(&layer) = layers.get(module) else {
            out.push(format!("{module} is in no layer"));
            continue;
        };
        for dep in used.iter().filter(|dep| graph.contains_key(*dep)) {
            let dep_layer = layers.get(dep).copied().unwrap_or(usize::MAX);
            if dep_layer > layer {
                out.push(format!("{module} (layer {layer}) uses {dep} (layer {dep_layer})"));
            }
        }
    }
    // A cycle: depth-first, a module reached again while still on the path.
    fn walk<'g>(
        module: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
        out: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            out.push(format!("cycle: {} -> {module}", path[at..].join(" -> ")));
            return;
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for dep in graph.get(module).into_iter().flatten() {
            if graph.contains_key(dep) {
                walk(dep, graph, path, done, out);
            }
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        walk(module, graph, &mut Vec::new(), &mut done, &mut out);
    }
    out
}

#[test]
fn the_modules_keep_the_documented_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let layers = documented_layers(&readme);
    let graph = module_uses(&root.join("src"));
    assert!(graph.len() > 40, "the sources were not found: {graph:?}");
    let problems = violations(&layers, &graph);
    assert!(
        problems.is_empty(),
        "README.md's module layers do not hold:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn upward_uses_and_cycles_are_found() {
    let layers = documented_layers(
        "# x\n\n## Module layers\n\nText.\n\n1. **low**: a, b — the bottom.\n2. **high**: c,\n   d — the top.\n\n## Next\n",
    );
    assert_eq!(
        layers,
        BTreeMap::from([("a".into(), 1), ("b".into(), 1), ("c".into(), 2), ("d".into(), 2)])
    );
    let graph = |edges: &[(&str, &str)]| {
        let mut graph: BTreeMap<String, BTreeSet<String>> = ["a", "b", "c", "d"]
            .iter()
            .map(|m| (m.to_string(), BTreeSet::new()))
            .collect();
        for (from, to) in edges {
            graph.get_mut(*from).unwrap().insert(to.to_string());
        }
        graph
    };
    assert!(violations(&layers, &graph(&[("c", "a"), ("d", "c"), ("b", "a")])).is_empty());
    assert_eq!(
        violations(&layers, &graph(&[("a", "c")])),
        ["a (layer 1) uses c (layer 2)"]
    );
    assert_eq!(
        violations(&layers, &graph(&[("c", "d"), ("d", "a"), ("a", "b"), ("b", "a")])),
        ["cycle: a -> b -> a"]
    );
    let mut extra = graph(&[]);
    extra.insert("e".into(), BTreeSet::new());
    assert_eq!(violations(&layers, &extra), ["e is in no layer"]);
    assert_eq!(
        uses(
            "use crate::{a, b::{C, d::E}, f};\nuse crate::g::H; // crate::x\nfn t() { crate::i::j(); }\n#[cfg(test)]\nmod tests {\n    use crate::k;\n}\n"
        ),
        BTreeSet::from(["a", "b", "f", "g", "i"].map(String::from))
    );
}
