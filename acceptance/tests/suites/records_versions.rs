//! Records beyond remote state, with the real engine and the `restricted` identity (which may
//! do nothing but what a producer grants it): a grant of some outputs reads those and is refused
//! the others by name; a read pinned to a serial gets the values of that apply from the history;
//! `max_age` refuses outputs recorded too long ago; a reader's plan warns, naming them, of
//! outputs that changed upstream since its last apply (`records_seen`).
//!
//! Runs against `KUBECONFIG` when set (then `KUBECONFIG_RESTRICTED` names the restricted
//! identity), else against an in-memory test server per test.

use acceptance::records_fixtures::{
    Cleanup, Workdir, annotation, flat, output_secrets, outputs_resource, records_namespace, records_only,
    secret_name, unique_tag,
};
use acceptance::{Cluster, Engine};
use serde_json::{Value, json};

/// A `readers` entry for the restricted identity, optionally for some outputs only.
fn restricted(outputs: Option<&[&str]>) -> String {
    match outputs {
        None => "{ kind = \"User\", name = \"restricted\" }".to_string(),
        Some(outputs) => {
            let quoted: Vec<String> = outputs.iter().map(|o| format!("\"{o}\"")).collect();
            format!(
                "{{ kind = \"User\", name = \"restricted\", outputs = [{}] }}",
                quoted.join(", ")
            )
        }
    }
}

/// A reader of `producer`'s outputs `names`, each shown as a root output, with `extra` lines
/// in the data source and `more` configuration after it.
fn reader_tf(reader: &str, producer: &str, names: &[&str], extra: &str, more: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    let outputs: String = names
        .iter()
        .map(|n| format!("output \"{n}\" {{\n  value = data.terraform_estate_outputs.net.values.{n}\n}}\n"))
        .collect();
    records_only(
        reader,
        &format!(
            "data \"terraform_estate_outputs\" \"net\" {{\n  provider = records\n  estate   = \"{producer}\"\n  \
             names    = [{}]\n{extra}}}\n\n{outputs}{more}",
            quoted.join(", ")
        ),
    )
}

/// Writes `main_tf` and applies it.
fn apply(work: &Workdir, engine: &Engine, main_tf: &str, what: &str) {
    work.write(main_tf);
    let out = engine.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "{what}:\n{out}");
}

/// A producer estate and its working directory, initialised, run as the admin.
struct Producer {
    estate: String,
    work: Workdir,
    engine: Engine,
}

impl Producer {
    fn new(cluster: &Cluster, estate: String) -> Producer {
        let work = Workdir::new();
        work.write(&records_only(&estate, ""));
        let engine = work.engine(cluster.kubeconfig());
        let out = engine.init();
        assert!(out.success(), "producer init:\n{out}");
        Producer { estate, work, engine }
    }

    fn apply(&self, values: &[(&str, &str)], readers: &[String], extra: &str) {
        let body = outputs_resource(values, readers, extra);
        apply(
            &self.work,
            &self.engine,
            &records_only(&self.estate, &body),
            "producer apply",
        );
    }
}

/// A reader estate's working directory, initialised, run as `restricted`.
fn reader(cluster: &Cluster, estate: &str, producer: &str, names: &[&str]) -> (Workdir, Engine) {
    let work = Workdir::new();
    work.write(&reader_tf(estate, producer, names, "", ""));
    let engine = work.engine(&cluster.kubeconfig_for("restricted"));
    let out = engine.init();
    assert!(out.success(), "reader init:\n{out}");
    (work, engine)
}

/// Plans, expecting failure; the output with line wraps undone.
fn failed_plan(engine: &Engine, what: &str) -> String {
    let out = engine.run(&["plan", "-input=false"]);
    assert!(!out.success(), "{what} succeeded:\n{out}");
    flat(&out.combined())
}

/// A test's two estate names (`rv-<tag>-net` producing, `rv-<tag>-app` reading), the producer,
/// and the cleanup of its records namespace, which runs when the last is dropped.
fn estates(cluster: &Cluster) -> (String, String, Producer, Cleanup<'_>) {
    let tag = unique_tag();
    let (net, app) = (format!("rv-{tag}-net"), format!("rv-{tag}-app"));
    let mut cleanup = Cleanup::new(cluster);
    cleanup.add("namespace", &records_namespace(&net));
    let producer = Producer::new(cluster, net.clone());
    (net, app, producer, cleanup)
}

#[test]
fn a_grant_of_some_outputs_reads_them_and_is_refused_another_by_name() {
    let cluster = Cluster::start();
    let (net, app, producer, _cleanup) = estates(&cluster);
    producer.apply(
        &[("gateway_host", "gw.example"), ("namespace", "platform")],
        &[restricted(Some(&["gateway_host"]))],
        "",
    );
    // The Role of that grant lists exactly the one Secret, and the estate's head.
    let roles = cluster.get_json(&["roles", "-n", &records_namespace(&net)]);
    let roles = roles["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(roles.len(), 1, "{roles:?}");
    assert_eq!(
        roles[0]["rules"],
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
                "resourceNames": [secret_name("gateway_host"), "records-head"]}])
    );
    let plan = producer
        .engine
        .run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(
        plan.code, 0,
        "the producer's plan after apply is not empty:\n{plan}"
    );

    // The granted output reads.
    let (work, engine) = reader(&cluster, &app, &net, &["gateway_host"]);
    let out = engine.run(&["plan", "-input=false"]);
    assert!(out.success(), "the granted read:\n{out}");
    assert!(out.stdout.contains("gw.example"), "{out}");

    // Asking for one more: refused, naming that output and the entry to give the reader.
    work.write(&reader_tf(&app, &net, &["gateway_host", "namespace"], "", ""));
    let text = failed_plan(&engine, "a read of an output not granted");
    assert!(
        text.contains("This estate may not read another estate's outputs"),
        "{text}"
    );
    assert!(
        text.contains("Output \"namespace\" is not granted to it; it may read \"gateway_host\""),
        "{text}"
    );
    assert!(
        text.contains(
            "readers = [{ kind = \"User\", name = \"restricted\", outputs = [\"gateway_host\", \"namespace\"] }]"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("estate \"{net}\"")), "{text}");

    // The producer adds it: both read.
    producer.apply(
        &[("gateway_host", "gw.example"), ("namespace", "platform")],
        &[restricted(Some(&["gateway_host", "namespace"]))],
        "",
    );
    let out = engine.run(&["plan", "-input=false"]);
    assert!(out.success(), "the read after the grant grew:\n{out}");
    assert!(out.stdout.contains("platform"), "{out}");
}

#[test]
fn three_applies_then_a_read_pinned_to_the_first_serial() {
    let cluster = Cluster::start();
    let (net, app, producer, _cleanup) = estates(&cluster);
    let readers = [restricted(None)];
    for host in ["gw-1", "gw-2", "gw-3"] {
        producer.apply(&[("gateway_host", host), ("zone", "eu")], &readers, "");
    }
    let secret = cluster.get_json(&[
        "secret",
        &secret_name("gateway_host"),
        "-n",
        &records_namespace(&net),
    ]);
    assert_eq!(annotation(&secret, "tofu-records/serial"), Some("3"), "{secret}");

    // Pinned to serial 1: the first apply's values, `zone` included (unchanged since).
    let (work, engine) = reader(&cluster, &app, &net, &["gateway_host", "zone"]);
    let pinned = reader_tf(&app, &net, &["gateway_host", "zone"], "  serial   = 1\n", "");
    apply(&work, &engine, &pinned, "pinned read");
    let out = engine.run(&["output", "-json"]);
    assert!(out.success(), "output -json:\n{out}");
    let outputs: Value = serde_json::from_str(&out.stdout).expect("output -json prints JSON");
    assert_eq!(outputs["gateway_host"]["value"], "gw-1", "{outputs}");
    assert_eq!(outputs["zone"]["value"], "eu", "{outputs}");

    // Unpinned: the last apply's.
    apply(
        &work,
        &engine,
        &reader_tf(&app, &net, &["gateway_host"], "", ""),
        "unpinned read",
    );
    let out = engine.run(&["output", "-raw", "gateway_host"]);
    assert_eq!(out.stdout, "gw-3", "{out}");

    // The producer keeps 2 versions from now on: after one more change, serial 1 is gone and
    // the pinned read says which serials remain.
    producer.apply(
        &[("gateway_host", "gw-4"), ("zone", "eu")],
        &readers,
        "  history = 2\n",
    );
    work.write(&reader_tf(&app, &net, &["gateway_host"], "  serial   = 1\n", ""));
    let text = failed_plan(&engine, "a read pinned to a serial no longer kept");
    assert!(
        text.contains(&format!("Serial 1 of estate \"{net}\" is no longer recorded")),
        "{text}"
    );
    assert!(text.contains("keeps serials 4, 3 only"), "{text}");
}

#[test]
fn max_age_refuses_outputs_recorded_too_long_ago() {
    let cluster = Cluster::start();
    let (net, app, producer, _cleanup) = estates(&cluster);
    producer.apply(&[("gateway_host", "gw.example")], &[restricted(None)], "");
    let (work, engine) = reader(&cluster, &app, &net, &["gateway_host"]);
    work.write(&reader_tf(
        &app,
        &net,
        &["gateway_host"],
        "  max_age  = \"24h\"\n",
        "",
    ));
    let out = engine.run(&["plan", "-input=false"]);
    assert!(out.success(), "a read of outputs just recorded:\n{out}");

    // The test's clock: the record says it was applied long ago.
    let past = "2020-01-02T03:04:05Z";
    cluster.kubectl_ok(&[
        "annotate",
        "--overwrite",
        "secret",
        &secret_name("gateway_host"),
        "-n",
        &records_namespace(&net),
        &format!("tofu-records/applied-at={past}"),
    ]);
    let text = failed_plan(&engine, "a read of outputs older than max_age");
    assert!(
        text.contains(&format!("Outputs of estate \"{net}\" are older than max_age 24h")),
        "{text}"
    );
    assert!(text.contains(&format!("old (recorded at {past})")), "{text}");
    assert!(text.contains("\"gateway_host\" is "), "{text}");
    assert!(
        text.contains(&format!(
            "last applied a change to these outputs at {past} (serial 1)"
        )),
        "{text}"
    );

    // A longer max_age accepts them.
    work.write(&reader_tf(
        &app,
        &net,
        &["gateway_host"],
        "  max_age  = \"1000000h\"\n",
        "",
    ));
    let out = engine.run(&["plan", "-input=false"]);
    assert!(out.success(), "a read within max_age:\n{out}");
}

#[test]
fn a_readers_plan_warns_of_outputs_changed_upstream_since_its_last_apply() {
    let cluster = Cluster::start();
    let (net, app, producer, _cleanup) = estates(&cluster);
    let readers = [restricted(None)];
    producer.apply(&[("gateway_host", "gw-1"), ("zone", "eu")], &readers, "");

    // The reader remembers what it applied with, and checks it in a precondition.
    let seen = format!(
        "resource \"records_seen\" \"net\" {{\n  estate   = \"{net}\"\n  \
           versions = data.terraform_estate_outputs.net.versions\n  \
           lifecycle {{\n    precondition {{\n      \
             condition     = data.terraform_estate_outputs.net.versions.gateway_host.serial >= 1\n      \
             error_message = \"gateway_host is not recorded yet\"\n    }}\n  }}\n}}\n"
    );
    let (work, engine) = reader(&cluster, &app, &net, &["gateway_host", "zone"]);
    let main_tf = reader_tf(&app, &net, &["gateway_host", "zone"], "", &seen);
    apply(&work, &engine, &main_tf, "reader apply");
    let out = engine.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(out.code, 0, "the reader's plan after apply is not empty:\n{out}");
    assert!(!flat(&out.combined()).contains("changed since"), "{out}");

    // Upstream changes one output: the reader's next plan names it, and only it.
    producer.apply(&[("gateway_host", "gw-2"), ("zone", "eu")], &readers, "");
    let out = engine.run(&["plan", "-input=false"]);
    assert!(
        out.success(),
        "the reader's plan after the upstream change:\n{out}"
    );
    let text = flat(&out.combined());
    assert!(
        text.contains(&format!(
            "Outputs of estate \"{net}\" changed since this estate's last apply: \"gateway_host\""
        )),
        "{text}"
    );
    assert!(text.contains("\"gateway_host\": serial 1 ("), "{text}");
    assert!(text.contains(") -> serial 2 ("), "{text}");
    assert!(!text.contains("\"zone\":"), "{text}");

    // Applied: seen, so the warning goes.
    let out = engine.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "reader apply after the change:\n{out}");
    let out = engine.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(out.code, 0, "the reader's plan after seeing the change:\n{out}");
    assert!(!flat(&out.combined()).contains("changed since"), "{out}");

    // The records themselves stay one Secret per output.
    assert_eq!(output_secrets(&cluster, &net).len(), 2);
}
