//! `kubernetes_manifest` edges with the real engine: a Secret's values, marked sensitive in the
//! configuration, never show in a plan, a saved plan's `show` or the state's `show` (the
//! provider's `object` holds only markers), while changes still plan and apply; a field
//! another manager owns stops the apply with that manager's name, the field and
//! `force_conflicts`, which then takes it over; Ctrl-C ends a `wait` at once, the object kept in
//! state (tainted); values go in the types the API's schema gives them, built-in and custom
//! kinds alike (`port = { number = "80" }` as 80), with an empty plan after, and a value that
//! reads as no such type is refused at plan, naming its path.

use std::time::{Duration, Instant};

use acceptance::engine::collect;
use acceptance::hcl::{LiveDir, ScratchNamespace, gizmo, gizmo_crd, quote, unique_name};
use acceptance::objects::base64_of;
use acceptance::{Cluster, EngineOutput};

/// Standard base64 of `text`, as the API stores Secret data.
/// Secret `db` in `ns` with `password` in `data` and `user` in `stringData`, both marked
/// sensitive, and labels `labels`.
fn secret_manifest(ns: &str, password: &str, user: &str, labels: &str) -> String {
    format!(
        "resource \"kubernetes_manifest\" \"db\" {{\n  manifest = {{\n    apiVersion = \"v1\"\n    \
         kind       = \"Secret\"\n    metadata = {{\n      name      = \"db\"\n      namespace = {}\n      \
         labels    = {labels}\n    }}\n    data       = {{ password = base64encode(sensitive({})) }}\n    \
         stringData = {{ user = sensitive({}) }}\n  }}\n}}\n",
        quote(ns),
        quote(password),
        quote(user),
    )
}

/// Neither `values` nor their base64 appear in `out`.
fn assert_hidden(what: &str, out: &EngineOutput, values: &[&str]) {
    for value in values {
        for text in [value.to_string(), base64_of(value)] {
            assert!(
                !out.stdout.contains(&text) && !out.stderr.contains(&text),
                "{what} shows {text:?}:\n{out}"
            );
        }
    }
}

#[test]
fn secret_values_never_show_in_plans_or_state_yet_changes_plan_and_apply() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "msec");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    let password = format!("pw-{}", unique_name("hunter"));
    let user = format!("user-{}", unique_name("admin"));
    let drifted = format!("dr-{}", unique_name("drift"));
    let secrets = [password.as_str(), user.as_str(), drifted.as_str()];
    work.write(&secret_manifest(ns, &password, &user, "{ app = \"db\" }"));

    // The warning says what only the configuration can hide.
    let out = work.run(&["validate"]);
    assert!(out.success(), "validate:\n{out}");
    assert!(
        out.flat()
            .contains("Secret values in a manifest show in plans unless marked sensitive"),
        "{out}"
    );

    // Plan, saved plan, apply, state: the values show nowhere.
    let plan_file = work.path().join("create.tfplan");
    let out_arg = format!("-out={}", plan_file.display());
    let out = work.run(&["plan", "-input=false", &out_arg]);
    assert!(out.success(), "plan:\n{out}");
    assert_hidden("the plan", &out, &secrets);
    let out = work.run(&["show", &plan_file.to_string_lossy()]);
    assert!(out.success(), "show of the saved plan:\n{out}");
    assert_hidden("show of the saved plan", &out, &secrets);
    let out = work.run(&["apply", "-input=false", &plan_file.to_string_lossy()]);
    assert!(out.success(), "apply of the saved plan:\n{out}");
    assert_hidden("the apply", &out, &secrets);
    let live = cluster.get_json(&["secret", "db", "-n", ns]);
    assert_eq!(live["data"]["password"], base64_of(&password).as_str());
    assert_eq!(live["data"]["user"], base64_of(&user).as_str());
    let out = work.run(&["show"]);
    assert!(out.success(), "show:\n{out}");
    assert!(out.stdout.contains("kubernetes_manifest.db"), "{out}");
    assert_hidden("show of the state", &out, &secrets);

    // Settled: nothing to do (stringData included, which the server keeps in data).
    let out = work.plan_exit();
    assert_eq!(out.code, 0, "a plan right after apply is not empty:\n{out}");
    assert_hidden("the settled plan", &out, &secrets);

    // A change elsewhere in the manifest: the prior object in the diff shows no values.
    work.write(&secret_manifest(
        ns,
        &password,
        &user,
        "{ app = \"db\", tier = \"data\" }",
    ));
    let out = work.plan_exit();
    assert_eq!(out.code, 2, "a label change plans nothing:\n{out}");
    assert_hidden("the update plan", &out, &secrets);
    let out = work.apply_ok("label change");
    assert_hidden("the update", &out, &secrets);

    // A value changed by another manager (kubectl): whatever the plan makes of it, it shows
    // neither the old value nor the new one.
    let patch = format!(r#"{{"data":{{"password":"{}"}}}}"#, base64_of(&drifted));
    let patched = cluster.kubectl(&["patch", "secret", "db", "-n", ns, "--type", "merge", "-p", &patch]);
    assert!(patched.success(), "kubectl patch:\n{patched}");
    let out = work.run(&["plan", "-input=false"]);
    assert!(out.success(), "plan after kubectl's change:\n{out}");
    assert_hidden("the plan after kubectl's change", &out, &secrets);
}

/// ConfigMap `shared` in `ns` with `data.a = a`, forcing conflicts when `force`.
fn shared_manifest(ns: &str, a: &str, force: bool) -> String {
    let field_manager = if force {
        "  field_manager {\n    force_conflicts = true\n  }\n"
    } else {
        ""
    };
    format!(
        "resource \"kubernetes_manifest\" \"shared\" {{\n  manifest = {{\n    apiVersion = \"v1\"\n    \
         kind       = \"ConfigMap\"\n    metadata = {{\n      name      = \"shared\"\n      namespace = {}\n    \
         }}\n    data = {{ a = {} }}\n  }}\n{field_manager}}}\n",
        quote(ns),
        quote(a),
    )
}

#[test]
fn a_field_another_manager_owns_is_named_with_its_manager_and_force_conflicts() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mfld");
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    let ns = ns.name.as_str();
    work.write(&shared_manifest(ns, "1", false));
    work.apply_ok("create");

    // Another team takes data.a with its own server-side apply.
    let file = work.path().join("other-team.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: {ns}\ndata:\n  a: \"2\"\n"
        ),
    )
    .expect("write the other team's manifest");
    let taken = cluster.kubectl(&[
        "apply",
        "--server-side",
        "--field-manager=other-team",
        "--force-conflicts",
        "-f",
        &file.to_string_lossy(),
    ]);
    assert!(taken.success(), "kubectl apply --server-side:\n{taken}");

    work.write(&shared_manifest(ns, "3", false));
    let out = work.apply();
    assert!(
        !out.success(),
        "apply over another manager's field succeeded:\n{out}"
    );
    let text = out.flat();
    assert!(text.contains("Field manager conflict"), "{out}");
    assert!(
        text.contains("\"other-team\""),
        "the error does not name the manager:\n{out}"
    );
    assert!(
        text.contains(".data.a"),
        "the error does not name the field:\n{out}"
    );
    assert!(text.contains("force_conflicts = true"), "{out}");
    assert!(!text.contains("since it was read"), "{out}");
    let live = cluster.get_json(&["configmap", "shared", "-n", ns]);
    assert_eq!(live["data"]["a"], "2", "the refused apply wrote");

    work.write(&shared_manifest(ns, "3", true));
    work.apply_ok("forced");
    let live = cluster.get_json(&["configmap", "shared", "-n", ns]);
    assert_eq!(live["data"]["a"], "3");
}

/// A ConfigMap whose `wait` asks for `data.ready = "yes"`, with `data.ready = ready`.
fn awaited_config_map(ns: &str, ready: &str) -> String {
    format!(
        r#"
resource "kubernetes_manifest" "awaited" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = {{ name = "awaited", namespace = {ns} }}
    data       = {{ ready = {ready} }}
  }}
  wait {{
    fields = {{ "data.ready" = "yes" }}
  }}
  timeouts {{
    create = "10m"
  }}
}}
"#,
        ns = quote(ns),
        ready = quote(ready),
    )
}

/// Ctrl-C while the provider waits on the cluster: the engine sends StopProvider, the wait ends
/// at once (not after its 10 minutes) with an error that says so, and the object, which was
/// created, stays in state, tainted, so the next apply replaces it.
#[test]
fn ctrl_c_ends_a_wait_at_once_and_keeps_the_object_in_state() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "stop");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&awaited_config_map(ns, "no"));
    let mut apply = work.engine().spawn(&["apply", "-auto-approve", "-input=false"]);

    // Once the ConfigMap exists, the provider is waiting on it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cluster
        .kubectl(&["get", "configmap", "awaited", "-n", ns])
        .success()
    {
        assert!(Instant::now() < deadline, "the apply never created the ConfigMap");
        assert!(
            apply.try_wait().expect("wait").is_none(),
            "the apply ended before its wait"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(1));
    let interrupted = Instant::now();
    let pid = i32::try_from(apply.id()).expect("a pid");
    // SAFETY: kill(2) on the engine we started and have not reaped.
    assert_eq!(
        unsafe { libc::kill(pid, libc::SIGINT) },
        0,
        "SIGINT to the engine"
    );
    let out = collect(apply, Duration::from_secs(60), &"the interrupted apply");
    let took = interrupted.elapsed();
    assert!(!out.success(), "an interrupted apply succeeded:\n{out}");
    assert!(
        took < Duration::from_secs(20),
        "the engine took {took:?} to end after Ctrl-C:\n{out}"
    );
    let flat = out.flat();
    assert!(
        flat.contains(&format!("Stopped waiting for ConfigMap \"{ns}/awaited\""))
            && flat.contains("interrupted while waiting"),
        "the error does not say the wait was interrupted:\n{out}"
    );

    let kept = work.state_instance("kubernetes_manifest.awaited");
    assert!(!kept.is_null(), "the created ConfigMap is not in state");
    assert_eq!(kept["status"], "tainted", "{kept}");

    // Ready now: the next apply replaces the tainted object and its wait ends.
    work.write(&awaited_config_map(ns, "yes"));
    let out = work.apply_ok("after the interrupted one");
    assert!(out.flat().contains("1 added, 0 changed, 1 destroyed"), "{out}");
    let out = work.run(&["destroy", "-auto-approve"]);
    assert!(out.success(), "destroy:\n{out}");
}

/// An Ingress whose backend port is `port`, a Service whose target ports are `"8080"` and the
/// number 9080, and a ConfigMap whose `data.replicas` is the number 1, all in `ns`, as configs
/// write them.
fn typed_manifests(ns: &str, port: &str) -> String {
    format!(
        r#"resource "kubernetes_manifest" "ingress" {{
  manifest = {{
    apiVersion = "networking.k8s.io/v1"
    kind       = "Ingress"
    metadata   = {{ name = "web", namespace = {ns} }}
    spec = {{
      rules = [{{
        http = {{
          paths = [{{
            path     = "/"
            pathType = "Prefix"
            backend  = {{ service = {{ name = "web", port = {{ number = {port} }} }} }}
          }}]
        }}
      }}]
    }}
  }}
}}

resource "kubernetes_manifest" "service" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "Service"
    metadata   = {{ name = "web", namespace = {ns} }}
    spec = {{
      ports = [
        {{ name = "http", port = "80", targetPort = "8080" }},
        {{ name = "admin", port = 81, targetPort = 9080 }},
      ]
    }}
  }}
}}

resource "kubernetes_manifest" "settings" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = {{ name = "settings", namespace = {ns} }}
    data       = {{ replicas = 1, debug = true }}
  }}
}}
"#,
        ns = quote(ns),
    )
}

#[test]
fn values_are_sent_in_the_types_of_the_api_schema_and_the_next_plan_is_empty() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mtyp");
    let ns = ns.name.as_str();
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());

    // A port that reads as no number is refused at plan, at its path, before any write.
    work.write(&typed_manifests(ns, "\"eighty\""));
    let out = work.run(&["plan", "-input=false"]);
    assert!(!out.success(), "a plan with port \"eighty\" succeeded:\n{out}");
    let text = out.flat();
    assert!(
        text.contains("manifest.spec.rules[0].http.paths[0].backend.service.port.number")
            && text.contains("an integer")
            && text.contains("\"eighty\""),
        "the error does not name the path and the type:\n{out}"
    );
    assert!(!text.contains("typed patch"), "{out}");

    // "80" goes as the integer 80, "8080" for an int-or-string port as 8080, the number 1 and
    // true in a ConfigMap's data as "1" and "true".
    work.write(&typed_manifests(ns, "\"80\""));
    work.apply_ok("manifests with values in other types");
    let ingress = cluster.get_json(&["ingress", "web", "-n", ns]);
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"]["number"],
        80
    );
    let service = cluster.get_json(&["service", "web", "-n", ns]);
    assert_eq!(service["spec"]["ports"][0]["port"], 80);
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 8080);
    assert_eq!(service["spec"]["ports"][1]["targetPort"], 9080);
    let settings = cluster.get_json(&["configmap", "settings", "-n", ns]);
    assert_eq!(settings["data"]["replicas"], "1");
    assert_eq!(settings["data"]["debug"], "true");

    // The state keeps the manifest as written and the object as the server holds it (both
    // dynamic values, stored with their types).
    let state = work.state_values("kubernetes_manifest.ingress");
    let port = |v: &serde_json::Value| {
        v["value"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"]["number"].clone()
    };
    assert_eq!(port(&state["manifest"]), "80", "{state}");
    assert_eq!(port(&state["object"]), 80, "{state}");
    // An int-or-string field is text in `object`, as hashicorp's state types it: an output
    // reading it keeps its type across a move between the providers.
    let state = work.state_values("kubernetes_manifest.service");
    let target = |v: &serde_json::Value, i: usize| v["value"]["spec"]["ports"][i]["targetPort"].clone();
    assert_eq!(target(&state["manifest"], 1), 9080, "{state}");
    assert_eq!(target(&state["object"], 0), "8080", "{state}");
    assert_eq!(target(&state["object"], 1), "9080", "{state}");

    let out = work.plan_exit();
    assert_eq!(out.code, 0, "a plan right after apply is not empty:\n{out}");
}

/// A CustomResourceDefinition of group `group`: kind Gizmo with an integer `size`, a boolean
/// `enabled`, a string `label`, an int-or-string `port` and a free-form `extra`.
fn typed_crd(group: &str) -> String {
    gizmo_crd(
        group,
        r#"
        size    = { type = "integer" }
        enabled = { type = "boolean" }
        label   = { type = "string" }
        port    = { "x-kubernetes-int-or-string" = true }
        extra   = { type = "object", "x-kubernetes-preserve-unknown-fields" = true }
      "#,
    )
}

/// A Gizmo `g` in `ns` with `size`, as configs write it.
fn typed_gizmo(group: &str, ns: &str, size: &str) -> String {
    gizmo(
        group,
        ns,
        &format!(
            r#"{{
      size    = {size}
      enabled = "true"
      label   = 7
      port    = "8080"
      extra   = {{ note = "1" }}
    }}"#
        ),
    )
}

#[test]
fn a_custom_kind_types_values_with_its_definitions_schema() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mcrd");
    let ns = ns.name.as_str();
    let group = format!("{}.typed.example.com", unique_name("t"));
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&typed_crd(&group));
    work.apply_ok("the CustomResourceDefinition");

    work.write(&(typed_crd(&group) + &typed_gizmo(&group, ns, "\"three\"")));
    let out = work.run(&["plan", "-input=false"]);
    assert!(!out.success(), "a plan with size \"three\" succeeded:\n{out}");
    assert!(
        out.flat().contains("manifest.spec.size") && out.flat().contains("an integer"),
        "the error does not name the path and the type:\n{out}"
    );

    work.write(&(typed_crd(&group) + &typed_gizmo(&group, ns, "\"3\"")));
    work.apply_ok("a Gizmo with values in other types");
    let resource = format!("gizmos.{group}");
    let live = cluster.get_json(&[&resource, "g", "-n", ns]);
    assert_eq!(live["spec"]["size"], 3, "{live}");
    assert_eq!(live["spec"]["enabled"], true, "{live}");
    assert_eq!(live["spec"]["label"], "7", "{live}");
    assert_eq!(live["spec"]["port"], 8080, "{live}");
    assert_eq!(
        live["spec"]["extra"]["note"], "1",
        "free-form fields go as written: {live}"
    );

    let out = work.plan_exit();
    assert_eq!(out.code, 0, "a plan right after apply is not empty:\n{out}");
    let _ = cluster.kubectl(&["delete", "customresourcedefinition", &resource, "--wait=false"]);
}
