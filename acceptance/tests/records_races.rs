//! Records under races: two states claim one estate (two workspaces by mistake) and apply its
//! outputs at the same time, round after round, while another estate reads them. Of two
//! writers at once one is refused, naming the estate, and writes nothing; no history entry is
//! lost (the serial counts the applies that succeeded, each output's history is contiguous);
//! and every read sees the outputs of one apply, never a mix.

use std::sync::atomic::{AtomicBool, Ordering};

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, unique_name};
use serde_json::Value;

const OUTPUTS: usize = 20;
const ROUNDS: usize = 5;

/// The producer: every output holds `run`.
fn producer(run: &str) -> String {
    format!(
        "resource \"records_outputs\" \"this\" {{\n  values = {{ for i in range({OUTPUTS}) : \"o${{i}}\" => \"{run}\" }}\n}}\n"
    )
}

/// The reader: every output of `estate` by name, and which different values they hold.
fn reader(estate: &str) -> String {
    let names: Vec<String> = (0..OUTPUTS).map(|i| format!("\"o{i}\"")).collect();
    format!(
        "data \"terraform_estate_outputs\" \"up\" {{\n  provider = records\n  estate   = \"{estate}\"\n  \
         names    = [{}]\n}}\n\noutput \"distinct\" {{\n  value = distinct(values(data.terraform_estate_outputs.up.values))\n}}\n",
        names.join(", ")
    )
}

fn outputs(dir: &LiveDir) -> Value {
    let out = dir.run(&["output", "-json"]);
    assert!(out.success(), "{out}");
    serde_json::from_str(&out.stdout).expect("output -json")
}

#[test]
fn two_writers_of_one_estate_lose_nothing_and_readers_never_see_a_mix() {
    let cluster = Cluster::start();
    let estate = unique_name("race");
    let writers = [
        LiveDir::with_records(&estate, cluster.kubeconfig()),
        LiveDir::with_records(&estate, cluster.kubeconfig()),
    ];
    writers[0].write(&producer("first"));
    writers[0].apply_ok("the first record");
    let watcher = LiveDir::with_records(&unique_name("watch"), cluster.kubeconfig());
    watcher.write(&reader(&estate));

    let writing = AtomicBool::new(true);
    let (applies, reads) = std::thread::scope(|s| {
        let reads = s.spawn(|| {
            let mut seen = Vec::new();
            while writing.load(Ordering::SeqCst) {
                let out = watcher.run(&["apply", "-auto-approve", "-input=false"]);
                if !out.success() {
                    return Err(format!("a read failed:\n{out}"));
                }
                let distinct = outputs(&watcher)["distinct"]["value"].clone();
                if distinct.as_array().map(Vec::len) != Some(1) {
                    return Err(format!("a read saw the outputs of two applies: {distinct}"));
                }
                seen.push(distinct[0].clone());
            }
            Ok(seen)
        });
        let mut applies = Vec::new();
        for round in 0..ROUNDS {
            let runs: Vec<_> = writers
                .iter()
                .enumerate()
                .map(|(w, dir)| {
                    dir.write(&producer(&format!("w{w}-r{round}")));
                    s.spawn(move || dir.run(&["apply", "-auto-approve", "-input=false"]))
                })
                .collect();
            applies.extend(runs.into_iter().map(|run| run.join().expect("an apply")));
        }
        writing.store(false, Ordering::SeqCst);
        (applies, reads.join().expect("the reader"))
    });
    let reads = reads.unwrap_or_else(|e| panic!("{e}"));
    let mut succeeded = 1;
    let mut refused = 0;
    for out in &applies {
        if out.success() {
            succeeded += 1;
            continue;
        }
        // The engine wraps a diagnostic's lines and frames them with '│'.
        let text = format!("{}{}", out.stdout, out.stderr).replace('│', " ");
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains(&format!(
                "Another apply is writing the records of estate \"{estate}\""
            )) && text.contains("Two states claim one estate"),
            "a writer failed otherwise:\n{out}"
        );
        refused += 1;
    }

    // Every apply that succeeded is one serial, and each output keeps its history whole.
    let secrets = cluster.get_json(&["secrets", "-n", &format!("tofu-records-{estate}")]);
    let items = secrets["items"].as_array().expect("a list");
    let head = items
        .iter()
        .find(|s| s["metadata"]["name"] == "records-head")
        .expect("the head");
    let committed: u64 = head["metadata"]["annotations"]["tofu-records/serial"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("a committed serial");
    assert_eq!(
        committed, succeeded,
        "{succeeded} applies succeeded ({refused} refused), the serial is {committed}"
    );
    let values: Vec<&Value> = items
        .iter()
        .filter(|s| s["metadata"]["name"] != "records-head")
        .map(|s| &s["data"]["value"])
        .collect();
    assert_eq!(values.len(), OUTPUTS);
    assert!(
        values.windows(2).all(|w| w[0] == w[1]),
        "the outputs hold values of two applies: {values:?}"
    );
    say(&format!(
        "{} rounds of two writers: {succeeded} applies recorded, {refused} refused; {} reads, each of one apply",
        ROUNDS,
        reads.len()
    ));
}

fn say(line: &str) {
    eprintln!("records races: {line}");
}
