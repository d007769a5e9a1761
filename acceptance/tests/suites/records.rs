//! The records provider with the real engine: outputs recorded by one estate and read by another
//! keep their types; reads are fenced by RBAC until the producer names the reader; sensitive
//! outputs stay sensitive; a destroyed estate's outputs are "not recorded"; a read by name costs
//! one GET per output; an apply rewrites only the outputs that changed.
//!
//! Runs against `KUBECONFIG` when set (then `KUBECONFIG_APP_PLANNER` names the app-planner
//! identity), else against an in-memory test server per test.

use std::collections::BTreeMap;

use acceptance::Cluster;
use acceptance::records_fixtures::{
    BIG, Cleanup, ESTATE_LABEL, NESTED_JSON, PLAIN_OUTPUTS, Producer, Reader, SENSITIVE_OUTPUT, Workdir,
    annotation, flat, kubectl_create, output_secrets, records_namespace, secret_name, snapshot, unique_tag,
};
use serde_json::{Value, json};

const GATEWAY_HOST: &str = "gateway.platform.svc.cluster.local";

/// Every output the producer records, sensitive one last.
fn all_outputs() -> Vec<&'static str> {
    PLAIN_OUTPUTS.iter().copied().chain([SENSITIVE_OUTPUT]).collect()
}

/// The serial annotation of a recorded Secret.
fn serial(secret: &Value) -> u64 {
    annotation(secret, "tofu-records/serial")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no serial annotation on {secret}"))
}

/// Recorded Secrets by name.
fn by_name(secrets: Vec<Value>) -> BTreeMap<String, Value> {
    secrets
        .into_iter()
        .map(|s| (s["metadata"]["name"].as_str().unwrap_or_default().to_string(), s))
        .collect()
}

#[test]
fn outputs_keep_their_types_only_changes_are_rewritten_and_destroyed_outputs_are_not_recorded() {
    let cluster = Cluster::start();
    let admin = cluster.kubeconfig().to_path_buf();
    let tag = unique_tag();
    let (producer, reader) = (format!("rec-{tag}-net"), format!("rec-{tag}-app"));
    let app_ns = format!("rec-{tag}-shop");
    let token = format!("tok-{tag}-secret");
    let mut cleanup = Cleanup::new(&cluster);
    cleanup.add("namespace", &records_namespace(&producer));
    cleanup.add("namespace", &app_ns);
    cluster.kubectl_ok(&["create", "namespace", &app_ns]);

    // The producer records strings, a nested object, numbers (int, float, beyond 64 bits)
    // and a sensitive string.
    let net = Workdir::new();
    let mut spec = Producer {
        estate: &producer,
        gateway_host: GATEWAY_HOST,
        token: &token,
        readers: &[],
    };
    net.write(&spec.main_tf());
    let tf_net = net.engine(&admin);
    let out = tf_net.init();
    assert!(out.success(), "producer init:\n{out}");
    let out = tf_net.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "producer apply:\n{out}");

    // One Secret per output, labelled with the estate.
    let first = by_name(output_secrets(&cluster, &producer));
    let expected: Vec<String> = {
        let mut names: Vec<String> = all_outputs().iter().map(|o| secret_name(o)).collect();
        names.sort();
        names
    };
    assert_eq!(first.keys().cloned().collect::<Vec<_>>(), expected);
    for (name, secret) in &first {
        assert_eq!(
            secret["metadata"]["labels"][ESTATE_LABEL],
            producer.as_str(),
            "{name}"
        );
        assert_eq!(
            secret["metadata"]["namespace"],
            records_namespace(&producer).as_str()
        );
    }

    // The reader reads them all (one list) and builds a ConfigMap from them.
    let app = Workdir::new();
    app.write(
        &Reader {
            estate: &reader,
            producer: &producer,
            namespace: &app_ns,
            names: None,
        }
        .main_tf(),
    );
    let tf_app = app.engine(&admin);
    let out = tf_app.init();
    assert!(out.success(), "reader init:\n{out}");
    let out = tf_app.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "reader apply:\n{out}");

    let config_map = cluster.get_json(&["configmap", "app-config", "-n", &app_ns]);
    let data = &config_map["data"];
    assert_eq!(data["gateway"], GATEWAY_HOST);
    assert_eq!(data["namespace"], "platform");
    assert_eq!(data["nested"], NESTED_JSON);
    assert_eq!(data["replicas"], "3");
    assert_eq!(data["ratio"], "1.5");
    assert_eq!(data["big"], BIG);
    assert_eq!(data["token"], token.as_str());

    // `output -json`: each output keeps its type (numbers stay numbers, objects objects).
    let out = tf_app.run(&["output", "-json"]);
    assert!(out.success(), "reader output -json:\n{out}");
    let outputs: Value = serde_json::from_str(&out.stdout).expect("output -json prints JSON");
    let typed = |name: &str| (outputs[name]["type"].clone(), outputs[name]["value"].clone());
    assert_eq!(typed("gateway_host"), (json!("string"), json!(GATEWAY_HOST)));
    assert_eq!(typed("namespace"), (json!("string"), json!("platform")));
    assert_eq!(
        typed("nested"),
        (
            json!(["object", {"a": ["object", {"b": ["tuple", ["number", "number"]]}], "c": "bool"}]),
            serde_json::from_str::<Value>(NESTED_JSON).expect("nested JSON")
        )
    );
    assert_eq!(typed("replicas"), (json!("number"), json!(3)));
    assert_eq!(typed("ratio"), (json!("number"), json!(1.5)));
    assert_eq!(outputs["big"]["type"], "number");
    // Every digit, as a JSON number (not a string, not rounded to a double).
    assert!(
        flat(&out.stdout).contains(&format!("\"value\": {BIG}")),
        "big integer lost digits:\n{}",
        out.stdout
    );
    assert_eq!(outputs[SENSITIVE_OUTPUT]["sensitive"], true);
    assert_eq!(typed(SENSITIVE_OUTPUT), (json!("string"), json!(token)));

    // A re-apply with one changed value rewrites that Secret only; its serial grows.
    let new_host = "gateway-2.platform.svc.cluster.local";
    spec.gateway_host = new_host;
    net.write(&spec.main_tf());
    let out = tf_net.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "producer re-apply:\n{out}");
    let second = by_name(output_secrets(&cluster, &producer));
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        first.keys().collect::<Vec<_>>()
    );
    let changed = secret_name("gateway_host");
    let rv = |s: &Value| {
        s["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let max_serial = first.values().map(serial).max().expect("outputs recorded");
    for (name, before) in &first {
        let after = &second[name];
        if *name == changed {
            assert_ne!(rv(after), rv(before), "{name} was not rewritten");
            assert!(
                serial(after) > max_serial,
                "{name}: serial {} after {max_serial}",
                serial(after)
            );
        } else {
            assert_eq!(rv(after), rv(before), "unchanged output {name} was rewritten");
            assert_eq!(serial(after), serial(before), "{name}");
        }
    }

    // Destroyed: nothing recorded any more, and the reader is told so.
    let out = tf_net.run(&["destroy", "-auto-approve"]);
    assert!(out.success(), "producer destroy:\n{out}");
    assert_eq!(output_secrets(&cluster, &producer), Vec::<Value>::new());
    let out = tf_app.run(&["plan", "-input=false"]);
    assert!(
        !out.success(),
        "reader plan after the producer was destroyed:\n{out}"
    );
    let text = flat(&out.combined());
    assert!(
        text.contains(&format!("Outputs of estate \"{producer}\" are not recorded")),
        "{out}"
    );
}

#[test]
fn reading_needs_a_grant_by_name_costs_one_get_per_output_and_keeps_sensitive_values_hidden() {
    let cluster = Cluster::start();
    let admin = cluster.kubeconfig().to_path_buf();
    let planner = cluster.kubeconfig_for("app-planner");
    let tag = unique_tag();
    let (producer, reader) = (format!("rec-{tag}-net"), format!("rec-{tag}-app"));
    let records_ns = records_namespace(&producer);
    let app_ns = format!("rec-{tag}-shop");
    let token = format!("tok-{tag}-secret");
    let mut cleanup = Cleanup::new(&cluster);
    cleanup.add("namespace", &records_ns);
    cleanup.add("namespace", &app_ns);

    // app-planner may read what its own plan needs elsewhere: ConfigMaps in the app's
    // namespace and namespaces (cluster objects); nothing in the producer's records.
    let view = format!("rec-{tag}-planner-view");
    cleanup.add("clusterrole", &view);
    cleanup.add("clusterrolebinding", &view);
    cluster.kubectl_ok(&["create", "namespace", &app_ns]);
    kubectl_create(
        &cluster,
        &format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: planner, namespace: {app_ns}}}\n\
             rules:\n- {{apiGroups: [\"\"], resources: [configmaps], verbs: [get, list, watch]}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n\
             metadata: {{name: planner, namespace: {app_ns}}}\n\
             roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: planner}}\n\
             subjects:\n- {{apiGroup: rbac.authorization.k8s.io, kind: User, name: app-planner}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {{name: {view}}}\n\
             rules:\n- {{apiGroups: [\"\"], resources: [namespaces], verbs: [get, list, watch]}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {{name: {view}}}\n\
             roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {view}}}\n\
             subjects:\n- {{apiGroup: rbac.authorization.k8s.io, kind: User, name: app-planner}}\n"
        ),
    );

    let net = Workdir::new();
    let mut spec = Producer {
        estate: &producer,
        gateway_host: GATEWAY_HOST,
        token: &token,
        readers: &[],
    };
    net.write(&spec.main_tf());
    let tf_net = net.engine(&admin);
    let out = tf_net.init();
    assert!(out.success(), "producer init:\n{out}");
    let out = tf_net.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "producer apply:\n{out}");

    let names = all_outputs();
    let app = Workdir::new();
    app.write(
        &Reader {
            estate: &reader,
            producer: &producer,
            namespace: &app_ns,
            names: Some(&names),
        }
        .main_tf(),
    );
    let tf_app = app.engine(&planner);
    let out = tf_app.init();
    assert!(out.success(), "reader init:\n{out}");

    // No grant: refused, naming the estate and its records namespace; nothing written.
    let before = snapshot(&cluster, &records_ns);
    assert_eq!(
        before.len(),
        names.len() + 1,
        "one Secret per output and the head, no grant yet: {before:?}"
    );
    // (An errored plan may still be saved, for `show`: the exit code is what counts.)
    let (out, _) = tf_app.plan_json(&[]);
    assert!(!out.success(), "plan without a grant:\n{out}");
    let text = flat(&out.combined());
    assert!(
        text.contains("This estate may not read another estate's outputs"),
        "{out}"
    );
    assert!(text.contains(&format!("estate \"{producer}\"")), "{out}");
    assert!(text.contains(&format!("namespace \"{records_ns}\"")), "{out}");
    assert!(text.contains("User \"app-planner\""), "{out}");
    assert_eq!(
        snapshot(&cluster, &records_ns),
        before,
        "the refused plan changed records"
    );

    // The producer names the reader: one Role, get by name only, and its binding.
    spec.readers = &["app-planner"];
    net.write(&spec.main_tf());
    let out = tf_net.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "producer apply with readers:\n{out}");
    let granted = snapshot(&cluster, &records_ns);
    assert_eq!(
        granted.len(),
        before.len() + 2,
        "one Role and one RoleBinding added: {granted:?}"
    );
    for name in names.iter().map(|n| secret_name(n)) {
        let key = format!("Secret/{name}");
        assert_eq!(
            granted.get(&key),
            before.get(&key),
            "adding readers rewrote {key}"
        );
    }
    let roles = cluster.get_json(&["roles", "-n", &records_ns]);
    let roles = roles["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(roles.len(), 1, "{roles:?}");
    let rules = roles[0]["rules"].as_array().cloned().unwrap_or_default();
    assert_eq!(rules.len(), 1, "{rules:?}");
    assert_eq!(rules[0]["verbs"], json!(["get"]));
    assert_eq!(rules[0]["resources"], json!(["secrets"]));
    let mut granted_names: Vec<String> = rules[0]["resourceNames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    granted_names.sort();
    // Every output's Secret, and the estate's head (a reader reads as of its commit).
    let mut expected: Vec<String> = names.iter().map(|n| secret_name(n)).collect();
    expected.push("records-head".to_string());
    expected.sort();
    assert_eq!(granted_names, expected);
    let bindings = cluster.get_json(&["rolebindings", "-n", &records_ns]);
    let subjects = &bindings["items"][0]["subjects"];
    assert_eq!(subjects[0]["kind"], "User", "{bindings}");
    assert_eq!(subjects[0]["name"], "app-planner", "{bindings}");

    // The same plan now succeeds with k GETs for k names; the sensitive value stays hidden.
    let ((out, plan), counted) = cluster.count_requests(|| tf_app.plan_json(&[]));
    assert!(out.success(), "plan with the grant:\n{out}");
    let plan = plan.expect("a saved plan");
    assert_eq!(
        snapshot(&cluster, &records_ns),
        granted,
        "the plan changed records"
    );
    assert!(
        flat(&out.combined()).contains(&format!(
            "Outputs of estate \"{producer}\" are as of its last apply"
        )),
        "{out}"
    );
    assert!(
        !out.stdout.contains(&token) && !out.stderr.contains(&token),
        "{out}"
    );
    assert_eq!(
        plan.raw["output_changes"][SENSITIVE_OUTPUT]["after_sensitive"],
        true
    );
    let config_map = plan.raw["resource_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["address"] == "kubernetes_config_map.app")
        .unwrap_or_else(|| panic!("no ConfigMap change in {}", plan.raw));
    let sensitive_data = &config_map["change"]["after_sensitive"]["data"];
    assert!(
        *sensitive_data == json!(true) || sensitive_data["token"] == json!(true),
        "ConfigMap data.token not marked sensitive: {sensitive_data}"
    );
    assert_eq!(config_map["change"]["after"]["data"]["gateway"], GATEWAY_HOST);
    // From the API server's /metrics: the plan ran alone, as the only client besides the
    // control plane's own.
    // One GET per named output and one of the estate's head.
    let gets = counted.get("GET", "secrets");
    assert!(
        gets <= names.len() as u64 + 1,
        "{gets} GETs of secrets for {} names",
        names.len()
    );
    assert!(gets > 0, "the plan read no Secret at all");
    println!(
        "a read of {} named outputs cost {gets} GETs of secrets",
        names.len()
    );
    assert_eq!(counted.get("LIST", "secrets"), 0, "a read by name listed secrets");

    // Destroyed: the outputs went (the grant stays); the reader is told they are not recorded.
    let out = tf_net.run(&["destroy", "-auto-approve"]);
    assert!(out.success(), "producer destroy:\n{out}");
    assert_eq!(output_secrets(&cluster, &producer), Vec::<Value>::new());
    let (out, _) = tf_app.plan_json(&[]);
    assert!(!out.success(), "plan after destroy:\n{out}");
    let text = flat(&out.combined());
    assert!(
        text.contains(&format!("Outputs of estate \"{producer}\" are not recorded")),
        "{out}"
    );
}

/// The producer of [`outputs_keep_the_exact_types_the_engine_sent`]: values whose content does
/// not say their type (empty collections, typed nulls) beside an object of mixed types, and
/// the values as its own output.
fn typed_producer(estate: &str) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    records = {{ source = \"choudoufu/records\" }}\n  }}\n}}\n\
         provider \"records\" {{\n  estate = \"{estate}\"\n}}\n\n\
         variable \"ids\" {{\n  type    = list(string)\n  default = []\n}}\n\
         variable \"m\" {{\n  type    = map(string)\n  default = {{}}\n}}\n\
         variable \"s\" {{\n  type    = set(string)\n  default = []\n}}\n\
         variable \"n\" {{\n  type    = string\n  default = null\n}}\n\
         variable \"nm\" {{\n  type    = map(string)\n  default = null\n}}\n\n\
         resource \"records_outputs\" \"this\" {{\n  values = {{\n    \
           ids   = var.ids\n    m     = var.m\n    e     = tomap({{}})\n    s     = var.s\n    \
           n     = var.n\n    nm    = var.nm\n    mixed = {{ a = 1, b = \"x\", c = [true] }}\n  }}\n}}\n\n\
         output \"values\" {{\n  value = records_outputs.this.values\n}}\n"
    )
}

/// The reader of [`outputs_keep_the_exact_types_the_engine_sent`]: every output, as one value
/// and `ids` alone.
fn typed_reader(estate: &str, producer: &str) -> String {
    format!(
        "terraform {{\n  required_providers {{\n    records = {{ source = \"choudoufu/records\" }}\n  }}\n}}\n\
         provider \"records\" {{\n  estate = \"{estate}\"\n}}\n\n\
         data \"terraform_estate_outputs\" \"producer\" {{\n  provider = records\n  estate   = \"{producer}\"\n}}\n\n\
         output \"values\" {{\n  value = data.terraform_estate_outputs.producer.values\n}}\n\
         output \"ids\" {{\n  value = data.terraform_estate_outputs.producer.values.ids\n}}\n"
    )
}

/// `output -json` of `engine`'s root module, parsed.
fn outputs_json(engine: &acceptance::Engine) -> Value {
    let out = engine.run(&["output", "-json"]);
    assert!(out.success(), "output -json:\n{out}");
    serde_json::from_str(&out.stdout).expect("output -json prints JSON")
}

#[test]
fn outputs_keep_the_exact_types_the_engine_sent() {
    use base64::Engine as _;

    let cluster = Cluster::start();
    let admin = cluster.kubeconfig().to_path_buf();
    let tag = unique_tag();
    let (producer, reader) = (format!("rec-{tag}-typed"), format!("rec-{tag}-reader"));
    let mut cleanup = Cleanup::new(&cluster);
    cleanup.add("namespace", &records_namespace(&producer));
    let expected = json!(["object", {
        "e": ["map", "dynamic"],
        "ids": ["list", "string"],
        "m": ["map", "string"],
        "mixed": ["object", {"a": "number", "b": "string", "c": ["tuple", ["bool"]]}],
        "n": "string",
        "nm": ["map", "string"],
        "s": ["set", "string"],
    }]);

    // An empty list(string), a null string, tomap({}), ... plan and apply as they are.
    let net = Workdir::new();
    net.write(&typed_producer(&producer));
    let tf_net = net.engine(&admin);
    let out = tf_net.init();
    assert!(out.success(), "producer init:\n{out}");
    let out = tf_net.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "producer apply:\n{out}");
    let out = tf_net.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(out.code, 0, "the plan after apply is not empty:\n{out}");
    assert_eq!(outputs_json(&tf_net)["values"]["type"], expected);

    // Each record holds the type the engine sent, not one guessed from the value.
    let recorded = by_name(output_secrets(&cluster, &producer));
    let type_of = |output: &str| -> Value {
        let secret = &recorded[&secret_name(output)];
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(secret["data"]["type"].as_str().unwrap_or_default())
            .expect("base64 data");
        serde_json::from_slice(&bytes).expect("type JSON")
    };
    assert_eq!(type_of("ids"), json!(["list", "string"]));
    assert_eq!(type_of("nm"), json!(["map", "string"]));
    assert_eq!(type_of("n"), json!("string"));
    assert_eq!(type_of("s"), json!(["set", "string"]));

    // Another estate reads every value with exactly that type.
    let app = Workdir::new();
    app.write(&typed_reader(&reader, &producer));
    let tf_app = app.engine(&admin);
    let out = tf_app.init();
    assert!(out.success(), "reader init:\n{out}");
    let out = tf_app.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "reader apply:\n{out}");
    let read = outputs_json(&tf_app);
    assert_eq!(read["values"]["type"], expected, "{read}");
    assert_eq!(read["ids"]["type"], json!(["list", "string"]), "{read}");
    assert_eq!(read["ids"]["value"], json!([]), "{read}");
    assert_eq!(read["values"]["value"]["n"], Value::Null, "{read}");
    let out = tf_app.run(&["plan", "-input=false", "-detailed-exitcode"]);
    assert_eq!(out.code, 0, "the reader's plan after apply is not empty:\n{out}");

    let out = tf_net.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(out.success(), "producer destroy:\n{out}");
}

#[test]
fn a_reader_that_may_not_see_namespaces_is_told_a_destroyed_estates_outputs_are_not_recorded() {
    let cluster = Cluster::start();
    let admin = cluster.kubeconfig().to_path_buf();
    // `restricted` may do nothing but what the producer grants it: not even get namespaces.
    let restricted = cluster.kubeconfig_for("restricted");
    let tag = unique_tag();
    let (producer, reader) = (format!("rec-{tag}-net"), format!("rec-{tag}-app"));
    let records_ns = records_namespace(&producer);
    let token = format!("tok-{tag}-secret");
    let mut cleanup = Cleanup::new(&cluster);
    cleanup.add("namespace", &records_ns);

    let net = Workdir::new();
    net.write(
        &Producer {
            estate: &producer,
            gateway_host: GATEWAY_HOST,
            token: &token,
            readers: &["restricted"],
        }
        .main_tf(),
    );
    let tf_net = net.engine(&admin);
    let out = tf_net.init();
    assert!(out.success(), "producer init:\n{out}");
    let out = tf_net.run(&["apply", "-auto-approve"]);
    assert!(out.success(), "producer apply:\n{out}");

    // The reader: the data source by name and one output, nothing else to read.
    let app = Workdir::new();
    app.write(&format!(
        "terraform {{\n  required_providers {{\n    records = {{ source = \"choudoufu/records\" }}\n  }}\n}}\n\
         provider \"records\" {{\n  estate = \"{reader}\"\n}}\n\
         data \"terraform_estate_outputs\" \"producer\" {{\n  provider = records\n  \
           estate   = \"{producer}\"\n  names    = [\"gateway_host\"]\n}}\n\
         output \"gateway_host\" {{\n  value = data.terraform_estate_outputs.producer.values.gateway_host\n}}\n"
    ));
    let tf_app = app.engine(&restricted);
    let out = tf_app.init();
    assert!(out.success(), "reader init:\n{out}");
    let out = tf_app.run(&["plan", "-input=false"]);
    assert!(out.success(), "the granted reader's plan:\n{out}");
    assert!(out.stdout.contains(GATEWAY_HOST), "{out}");

    // Destroyed: the outputs go, the grant stays (and with it the namespace), so the reader's
    // get finds nothing rather than being refused.
    let out = tf_net.run(&["destroy", "-auto-approve"]);
    assert!(out.success(), "producer destroy:\n{out}");
    assert_eq!(output_secrets(&cluster, &producer), Vec::<Value>::new());
    let out = tf_app.run(&["plan", "-input=false"]);
    assert!(
        !out.success(),
        "reader plan after the producer was destroyed:\n{out}"
    );
    let text = flat(&out.combined());
    assert!(
        text.contains(&format!("Outputs of estate \"{producer}\" are not recorded")),
        "{out}"
    );
    assert!(text.contains("\"gateway_host\""), "{out}");
    assert!(!text.contains("may not read"), "{out}");
}
