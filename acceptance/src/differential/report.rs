//! What a differential run found: a verdict per configuration, a summary line of counts, and a
//! TSV of every distinct difference in `known.tsv`'s columns (the undocumented ones with reason
//! `NEW`), ready to be reviewed into it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::Path;

use super::compare::generalised;
use super::known::Known;
use super::{Difference, Stage};

/// The outcome of [`super::run`].
pub struct Report {
    /// The two sides' names, ours first.
    pub names: (&'static str, &'static str),
    /// The configurations run (module names: the corpus files' types).
    pub modules: Vec<String>,
    /// Every difference that is not volatile or allowed, with the row that documents it if any.
    pub differences: Vec<Difference>,
    /// Rows of `known.tsv` no difference of this run matched (fixed, or not met on this cluster).
    pub unseen: Vec<Known>,
}

/// A difference as `known.tsv` counts it: type, stage, path with indices as `*`.
type Row = (String, Stage, String);

impl Report {
    pub fn new(
        names: (&'static str, &'static str),
        modules: Vec<String>,
        found: Vec<Difference>,
        rows: Vec<Known>,
    ) -> Report {
        let mut used = BTreeSet::new();
        let mut differences = Vec::new();
        for mut d in found {
            let text = described(names, &d);
            let hit = rows
                .iter()
                .position(|k| k.covers(&d.type_name, d.stage.name(), &d.path, &text));
            if let Some(i) = hit {
                let row = &rows[i];
                used.insert(i);
                if row.ignored() {
                    continue;
                }
                d.known = Some(row.clone());
            }
            differences.push(d);
        }
        let unseen = rows
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !used.contains(i))
            .map(|(_, k)| k)
            .collect();
        Report {
            names,
            modules,
            differences,
            unseen,
        }
    }

    /// The differences no row of `known.tsv` documents.
    pub fn undocumented(&self) -> Vec<&Difference> {
        self.differences.iter().filter(|d| d.known.is_none()).collect()
    }

    /// Distinct differences (type, stage, generalised path), each with whether it is documented.
    fn rows(&self) -> BTreeMap<Row, (&Difference, bool)> {
        let mut rows: BTreeMap<Row, (&Difference, bool)> = BTreeMap::new();
        for d in &self.differences {
            let row = (d.type_name.clone(), d.stage, generalised(&d.path));
            rows.entry(row).or_insert((d, d.known.is_some()));
        }
        rows
    }

    /// How many configurations show no difference at `stage`, and how many only documented ones.
    fn matching(&self, stage: Stage) -> (usize, usize) {
        let at: Vec<&Difference> = self.differences.iter().filter(|d| d.stage == stage).collect();
        let clean = self
            .modules
            .iter()
            .filter(|m| !at.iter().any(|d| d.module == **m))
            .count();
        let documented = self
            .modules
            .iter()
            .filter(|m| {
                let mine: Vec<&&Difference> = at.iter().filter(|d| d.module == **m).collect();
                !mine.is_empty() && mine.iter().all(|d| d.known.is_some())
            })
            .count();
        (clean, documented)
    }

    /// `differential <module>: plan ok, state 2 documented, …` and the undocumented differences.
    pub fn verdict(&self, module: &str) -> String {
        let mine: Vec<&Difference> = self.differences.iter().filter(|d| d.module == module).collect();
        let stages: Vec<String> = Stage::ALL
            .iter()
            .map(|stage| {
                let at: Vec<&&Difference> = mine.iter().filter(|d| d.stage == *stage).collect();
                let new = at.iter().filter(|d| d.known.is_none()).count();
                match (at.len() - new, new) {
                    (0, 0) => format!("{} ok", stage.name()),
                    (documented, 0) => format!("{} {documented} documented", stage.name()),
                    (documented, new) => format!("{} {new} NEW + {documented} documented", stage.name()),
                }
            })
            .collect();
        let mut out = format!("differential {module}: {}", stages.join(", "));
        for d in mine.iter().filter(|d| d.known.is_none()) {
            out.push_str(&format!(
                "\n    NEW {} {} {}: {} {}, {} {}",
                d.stage.name(),
                d.address,
                d.path,
                self.names.0,
                d.ours,
                self.names.1,
                d.theirs
            ));
        }
        out
    }

    /// `differential: N configurations run; plans: …; states: …; differences: …`, counting
    /// distinct differences as `known.tsv` rows do.
    pub fn summary(&self) -> String {
        let rows = self.rows();
        let documented = rows.values().filter(|(_, k)| *k).count();
        let by_stage: Vec<String> = Stage::ALL
            .iter()
            .map(|s| {
                let at: Vec<bool> = rows
                    .iter()
                    .filter(|(r, _)| r.1 == *s)
                    .map(|(_, (_, k))| *k)
                    .collect();
                let new = at.iter().filter(|k| !**k).count();
                format!("{} {} ({new} new)", s.name(), at.len())
            })
            .collect();
        let (plans, plans_documented) = self.matching(Stage::Plan);
        let (states, states_documented) = self.matching(Stage::State);
        format!(
            "differential: {} configurations run; plans: {plans} match, {plans_documented} differ only as documented; \
             states: {states} match, {states_documented} differ only as documented; differences: {} ({documented} documented, {} new): {}",
            self.modules.len(),
            rows.len(),
            rows.len() - documented,
            by_stage.join(", ")
        )
    }

    /// Prints every verdict, the rows of `known.tsv` not met, and the summary, past the test
    /// harness's capture (`make test`'s summary shows the last line).
    pub fn print(&self) {
        let mut out = std::io::stdout().lock();
        let mut line = |text: String| {
            // A closed stdout loses the report, not the run.
            let _ = writeln!(out, "{text}");
        };
        for module in &self.modules {
            line(self.verdict(module));
        }
        // The generated rows cover every added field, most of which no configuration sets: only
        // their count is worth a line.
        let (generated, written): (Vec<&Known>, Vec<&Known>) = self
            .unseen
            .iter()
            .partition(|k| k.reason == super::beyond::REASON);
        for k in written {
            line(format!(
                "differential: known.tsv row not met: {}\t{}\t{}",
                k.type_name, k.stage, k.path
            ));
        }
        line(format!(
            "differential: {} generated rows for fields beyond hashicorp/kubernetes 3.4.0 not met",
            generated.len()
        ));
        line(self.summary());
    }

    /// Writes every distinct difference to `path` in `known.tsv`'s columns, the reason of an
    /// undocumented one being `NEW`.
    pub fn write_tsv(&self, path: &Path) {
        let mut text = String::from("# type\tstage\tpath\tdifference\treason\n");
        for ((type_name, stage, generalised), (d, _)) in self.rows() {
            let reason = d.known.as_ref().map_or("NEW", |k| k.reason.as_str());
            text.push_str(&format!(
                "{type_name}\t{}\t{generalised}\t{}\t{reason}\n",
                stage.name(),
                described(self.names, d)
            ));
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("the report's folder");
        }
        fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// A difference as `known.tsv`'s difference column matches it: `ours X; hashicorp Y`.
fn described(names: (&str, &str), d: &Difference) -> String {
    format!("{} {}; {} {}", names.0, d.ours, names.1, d.theirs)
}
