//! Neighbours on one cluster, for the tests of `tests/neighbours.rs` and `tests/records_races.rs`
//! and for `bench_living`: two estates (or two states of one estate) applying into one namespace
//! at the same time, and two writers of one estate's records with a reader beside them. Each run
//! returns what it measured; the callers judge it.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fault_proxy::{FaultPlan, FaultProxy};
use serde_json::Value;

use crate::hcl::{LiveDir, ScratchNamespace, quote, unique_name};
use crate::{Cluster, EngineOutput};

/// How many ConfigMaps each side wants: names both want, names of its own, and creates the
/// server names.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub shared: usize,
    pub own: usize,
    pub generated: usize,
}

/// Requests wait up to this long in a proxy, as on a remote control plane, so both sides look at
/// a name before either has created it.
const LATENCY: Duration = Duration::from_millis(300);

/// How long two states of one estate wait, once both applies have begun, before either writes:
/// long enough that every object either creates was created at least two whole seconds after
/// the other began, which the guard tells from a stopped run's leftovers.
const TWO_STATES_HOLD: Duration = Duration::from_secs(3);

/// An estate's ConfigMaps in `ns`: `shared` (a set of `shared-<i>` names), `own-<estate>-<i>`
/// and `gen-<estate>-…`, each recording in `data.estate` which estate wrote it.
pub fn config(estate: &str, ns: &str, shared: &BTreeSet<String>, sizes: Sizes) -> String {
    let shared: Vec<String> = shared.iter().map(|n| quote(n)).collect();
    format!(
        r#"locals {{
  ns     = {ns}
  estate = {estate}
}}

resource "kubernetes_config_map_v1" "shared" {{
  for_each = toset([{shared}])
  metadata {{
    name      = each.key
    namespace = local.ns
  }}
  data = {{ estate = local.estate }}
}}

resource "kubernetes_config_map_v1" "own" {{
  count = {own}
  metadata {{
    name      = "own-${{local.estate}}-${{count.index}}"
    namespace = local.ns
  }}
  data = {{ estate = local.estate }}
}}

resource "kubernetes_config_map_v1" "generated" {{
  count = {generated}
  metadata {{
    generate_name = "gen-${{local.estate}}-"
    namespace     = local.ns
  }}
  data = {{ estate = local.estate }}
}}
"#,
        ns = quote(ns),
        estate = quote(estate),
        shared = shared.join(", "),
        own = sizes.own,
        generated = sizes.generated,
    )
}

/// One ConfigMap of the namespace: its name, estate label and `data.estate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub label: Option<String>,
    pub data: Option<String>,
}

/// The ConfigMaps of `ns`, but the one Kubernetes puts in every namespace.
pub fn config_maps(cluster: &Cluster, ns: &str) -> Vec<Found> {
    let list = cluster.get_json(&["configmaps", "-n", ns]);
    let text = |v: &Value| v.as_str().map(str::to_string);
    list["items"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|o| Found {
            name: text(&o["metadata"]["name"]).unwrap_or_default(),
            label: text(&o["metadata"]["labels"]["tofu-estate"]),
            data: text(&o["data"]["estate"]),
        })
        .filter(|f| f.name != "kube-root-ca.crt")
        .collect()
}

/// A diagnostic's text as one line: the engine wraps it and frames it with '│'.
pub fn flat(out: &EngineOutput) -> String {
    let text = format!("{}{}", out.stdout, out.stderr).replace('│', " ");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Two sides applying into one namespace through a slow proxy.
pub struct Neighbours<'a> {
    pub cluster: &'a Cluster,
    pub ns: ScratchNamespace<'a>,
    pub estates: [String; 2],
    pub dirs: [LiveDir; 2],
    pub shared: BTreeSet<String>,
    pub sizes: Sizes,
    proxy: FaultProxy,
    _folder: tempfile::TempDir,
}

impl<'a> Neighbours<'a> {
    /// Two estates (`same_estate`: two states of one estate), each configured with `sizes`.
    pub fn new(cluster: &'a Cluster, sizes: Sizes, same_estate: bool) -> Neighbours<'a> {
        let ns = ScratchNamespace::create(cluster, "nbr");
        let shared: BTreeSet<String> = (0..sizes.shared).map(|i| format!("shared-{i}")).collect();
        let first = unique_name("east");
        let second = if same_estate {
            first.clone()
        } else {
            unique_name("west")
        };
        let proxy = FaultProxy::start(
            cluster.kubeconfig(),
            FaultPlan {
                latency: LATENCY,
                ..FaultPlan::none(4)
            },
        );
        let folder = tempfile::tempdir().expect("a folder");
        let kubeconfig = folder.path().join("proxy.kubeconfig");
        proxy.write_kubeconfig(&kubeconfig);
        let dir = |estate: &str| {
            let dir = LiveDir::new(estate, &kubeconfig);
            dir.write(&config(estate, &ns.name, &shared, sizes));
            dir
        };
        let dirs = [dir(&first), dir(&second)];
        Neighbours {
            cluster,
            ns,
            estates: [first, second],
            dirs,
            shared,
            sizes,
            proxy,
            _folder: folder,
        }
    }

    /// Both sides apply at the same time; their outputs (a side whose plan failed: the plan's).
    ///
    /// Each side saves its plan, and both plans are made before either side applies, so both see
    /// the cluster before either side created anything. Without that, a loaded machine can start
    /// one side's plan after the other's creates, and that plan rightly adopts them. Two states of
    /// one estate also have their writes held for `TWO_STATES_HOLD` once both applies have
    /// begun: an object created in the second an apply began, or the next, counts as a stopped
    /// run's leftover (creation times have whole seconds), and adopting it is right then.
    pub fn apply_both(&self) -> [EngineOutput; 2] {
        let plans =
            self.on_both(|_, dir| dir.run(&["plan", "-input=false", "-parallelism=10", "-out=both.tfplan"]));
        if self.estates[0] == self.estates[1] {
            self.proxy.hold_writes_for(TWO_STATES_HOLD);
        }
        let applies = self.on_both(|i, dir| {
            plans[i]
                .success()
                .then(|| dir.run(&["apply", "-input=false", "-parallelism=10", "both.tfplan"]))
        });
        let [plan0, plan1] = plans;
        let [apply0, apply1] = applies;
        [apply0.unwrap_or(plan0), apply1.unwrap_or(plan1)]
    }

    /// `run` on both sides' folders at once (with the side's index).
    fn on_both<T: Send>(&self, run: impl Fn(usize, &LiveDir) -> T + Sync) -> [T; 2] {
        std::thread::scope(|s| {
            let run = &run;
            let runs = [0, 1].map(|i| {
                let dir = &self.dirs[i];
                s.spawn(move || run(i, dir))
            });
            runs.map(|r| r.join().expect("an engine run"))
        })
    }

    pub fn objects(&self) -> Vec<Found> {
        config_maps(self.cluster, &self.ns.name)
    }

    /// The shared names whose object carries `estate`'s label.
    pub fn won_by(&self, estate: &str) -> BTreeSet<String> {
        self.objects()
            .into_iter()
            .filter(|f| f.label.as_deref() == Some(estate) && f.name.starts_with("shared-"))
            .map(|f| f.name)
            .collect()
    }

    /// Side `i` lets go of the shared names not in `keep`, applies and plans: whether the
    /// apply succeeded and the plan after it is empty.
    pub fn converge(&self, i: usize, keep: &BTreeSet<String>) -> Result<(), String> {
        let dir = &self.dirs[i];
        dir.write(&config(&self.estates[i], &self.ns.name, keep, self.sizes));
        let out = apply(dir);
        if !out.success() {
            return Err(format!("apply after letting go:\n{out}"));
        }
        let plan = dir.plan_exit();
        if plan.code != 0 {
            return Err(format!("plan after letting go:\n{plan}"));
        }
        Ok(())
    }

    /// The names of the ConfigMaps side `i`'s state manages.
    pub fn names_in_state(&self, i: usize) -> BTreeSet<String> {
        self.dirs[i]
            .state_instances()
            .values()
            .filter_map(|s| {
                s.stored["attributes"]["metadata"][0]["name"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect()
    }

    pub fn destroy(&self, i: usize) -> EngineOutput {
        self.dirs[i].run(&["destroy", "-auto-approve", "-input=false", "-parallelism=10"])
    }
}

fn apply(dir: &LiveDir) -> EngineOutput {
    dir.run(&["apply", "-auto-approve", "-input=false", "-parallelism=10"])
}

/// Two writers of one estate's records, round after round, and a reader in a loop beside them.
pub struct RecordsRace {
    pub estate: String,
    /// Each writer apply's output, round by round.
    pub applies: Vec<EngineOutput>,
    /// What each read saw: the distinct values of the outputs (one apply's: one value).
    pub reads: Vec<Value>,
    /// A read that failed, if one did.
    pub read_failure: Option<String>,
    /// The head's committed serial and each output Secret's value at the end.
    pub committed: Option<u64>,
    pub values: Vec<Value>,
}

/// The producer: every output holds `run`.
fn producer(run: &str, outputs: usize) -> String {
    format!(
        "resource \"records_outputs\" \"this\" {{\n  values = {{ for i in range({outputs}) : \"o${{i}}\" => \"{run}\" }}\n}}\n"
    )
}

/// The reader: every output of `estate` by name, and which different values they hold.
fn reader(estate: &str, outputs: usize) -> String {
    let names: Vec<String> = (0..outputs).map(|i| format!("\"o{i}\"")).collect();
    format!(
        "data \"terraform_estate_outputs\" \"up\" {{\n  provider = records\n  estate   = \"{estate}\"\n  \
         names    = [{}]\n}}\n\noutput \"distinct\" {{\n  value = distinct(values(data.terraform_estate_outputs.up.values))\n}}\n",
        names.join(", ")
    )
}

/// Runs a race on the cluster of `kubeconfig`: estate `estate` records `outputs` outputs once,
/// then two writers apply at once `rounds` times while a reader reads.
pub fn records_race(cluster: &Cluster, kubeconfig: &Path, outputs: usize, rounds: usize) -> RecordsRace {
    let estate = unique_name("race");
    let writers = [
        LiveDir::with_records(&estate, kubeconfig),
        LiveDir::with_records(&estate, kubeconfig),
    ];
    writers[0].write(&producer("first", outputs));
    writers[0].apply_ok("the first record");
    let watcher = LiveDir::with_records(&unique_name("watch"), kubeconfig);
    watcher.write(&reader(&estate, outputs));
    let writing = AtomicBool::new(true);
    let (applies, (reads, read_failure)) = std::thread::scope(|s| {
        let reading = s.spawn(|| {
            let mut seen = Vec::new();
            while writing.load(Ordering::SeqCst) {
                let out = watcher.run(&["apply", "-auto-approve", "-input=false"]);
                if !out.success() {
                    return (seen, Some(format!("a read failed:\n{out}")));
                }
                let json = watcher.run(&["output", "-json"]);
                let parsed: Value = serde_json::from_str(&json.stdout).unwrap_or_default();
                seen.push(parsed["distinct"]["value"].clone());
            }
            (seen, None)
        });
        let mut applies = Vec::new();
        for round in 0..rounds {
            let runs: Vec<_> = writers
                .iter()
                .enumerate()
                .map(|(w, dir)| {
                    dir.write(&producer(&format!("w{w}-r{round}"), outputs));
                    s.spawn(move || dir.run(&["apply", "-auto-approve", "-input=false"]))
                })
                .collect();
            applies.extend(runs.into_iter().map(|run| run.join().expect("an apply")));
        }
        writing.store(false, Ordering::SeqCst);
        (applies, reading.join().expect("the reader"))
    });
    let secrets = cluster.get_json(&["secrets", "-n", &format!("tofu-records-{estate}")]);
    let items = secrets["items"].as_array().cloned().unwrap_or_default();
    let is_head = |s: &Value| s["metadata"]["name"] == "records-head";
    let committed = items.iter().find(|s| is_head(s)).and_then(|h| {
        h["metadata"]["annotations"]["tofu-records/serial"]
            .as_str()?
            .parse()
            .ok()
    });
    let values = items
        .iter()
        .filter(|s| !is_head(s))
        .map(|s| s["data"]["value"].clone())
        .collect();
    for dir in &writers {
        dir.run(&["destroy", "-auto-approve", "-input=false"]);
    }
    RecordsRace {
        estate,
        applies,
        reads,
        read_failure,
        committed,
        values,
    }
}

impl RecordsRace {
    /// The applies that recorded (the first one included) and those refused because the other
    /// writer held the estate; `Err` with the first apply that failed otherwise.
    pub fn counts(&self) -> Result<(u64, u64), String> {
        let busy = format!(
            "Another apply is writing the records of estate \"{}\"",
            self.estate
        );
        let (mut recorded, mut refused) = (1, 0);
        for out in &self.applies {
            if out.success() {
                recorded += 1;
                continue;
            }
            let text = flat(out);
            if !(text.contains(&busy) && text.contains("Two states claim one estate")) {
                return Err(format!("a writer failed otherwise:\n{out}"));
            }
            refused += 1;
        }
        Ok((recorded, refused))
    }

    /// Reads that saw the outputs of more than one apply.
    pub fn mixed_reads(&self) -> usize {
        self.reads
            .iter()
            .filter(|r| r.as_array().map(Vec::len) != Some(1))
            .count()
    }
}
