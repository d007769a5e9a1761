//! A validating webhook with `failurePolicy: Fail` whose service does not answer (issue 47): the
//! API server refuses every write it selects with 500 `failed calling webhook "x"`. The apply
//! fails at once with one error naming the webhook and the object, is not retried as the
//! server being unavailable, writes nothing, and converges once the webhook is gone. With the
//! kubectl providers' `apply_retry_count`, `kubectl_manifest` tries such a write again as asked,
//! and converges in the same apply once the webhook is gone.

use std::time::{Duration, Instant};

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};

/// A `failurePolicy: Fail` webhook on ConfigMaps in `ns` whose service does not answer, named
/// `gate` (a label on `ns` selects it).
fn silent_webhook(cluster: &Cluster, ns: &ScratchNamespace, gate: &str) {
    cluster.kubectl_ok(&["label", "namespace", &ns.name, &format!("gate={gate}")]);
    let webhook = format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n\
         metadata:\n  name: {gate}\nwebhooks:\n- name: check.example.com\n  admissionReviewVersions: [v1]\n  \
         sideEffects: None\n  failurePolicy: Fail\n  namespaceSelector:\n    matchLabels: {{gate: {gate}}}\n  \
         rules: [{{apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}}]\n  \
         clientConfig:\n    service: {{namespace: {ns}, name: check, path: /check}}\n",
        ns = ns.name
    );
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("webhook.yaml");
    std::fs::write(&file, webhook).expect("the webhook");
    cluster.kubectl_ok(&["apply", "-f", &file.to_string_lossy()]);
}

#[test]
fn a_webhook_that_does_not_answer_is_named_and_not_retried() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "webhook");
    let gate = unique_name("gate");
    silent_webhook(&cluster, &ns, &gate);

    let work = LiveDir::new(&unique_name("webhook"), cluster.kubeconfig());
    work.write(&format!(
        "resource \"kubernetes_config_map_v1\" \"gated\" {{\n  metadata {{\n    name      = \"gated\"\n    \
         namespace = {}\n  }}\n  data = {{ a = \"1\" }}\n}}\n",
        quote(&ns.name)
    ));
    let started = Instant::now();
    let out = work.run(&["apply", "-auto-approve", "-input=false"]);
    let took = started.elapsed();
    cluster.kubectl_ok(&["delete", "validatingwebhookconfiguration", &gate]);
    assert!(!out.success(), "the apply succeeded past the webhook:\n{out}");
    let text = out.flat();
    assert!(
        text.contains("admission webhook \"check.example.com\" did not answer")
            && text.contains(&format!("ConfigMap \"{}/gated\"", ns.name)),
        "the error does not name the webhook and the object:\n{out}"
    );
    assert!(
        !text.contains("unavailable") && !text.contains("Tried "),
        "retried as unavailable:\n{out}"
    );
    assert!(took < Duration::from_secs(15), "the refusal took {took:?}");
    let live = cluster.kubectl(&["get", "configmap", "gated", "-n", &ns.name]);
    assert!(!live.success(), "a ConfigMap was written past the webhook");

    // Once the webhook is gone, the same apply converges.
    work.apply_ok("the apply once the webhook is gone");
    assert_eq!(work.plan_exit().code, 0);
    work.write("");
    work.apply_ok("destroy");
}

#[test]
fn apply_retry_count_tries_a_silent_webhook_again_until_it_is_gone() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "kwebhook");
    let gate = unique_name("gate");
    silent_webhook(&cluster, &ns, &gate);
    let work = LiveDir::as_kubectl(
        &unique_name("kwebhook"),
        cluster.kubeconfig(),
        "  apply_retry_count = 3\n",
    );
    work.write(&format!(
        "resource \"kubectl_manifest\" \"gated\" {{\n  yaml_body = <<-YAML\n    apiVersion: v1\n    kind: ConfigMap\n    \
         metadata:\n      name: gated\n      namespace: {}\n  YAML\n}}\n",
        ns.name
    ));
    // Tries at about 0, 3 and 9 s (3 s apart, doubling): the webhook goes at 5 s.
    let out = std::thread::scope(|scope| {
        let apply = scope.spawn(|| work.run(&["apply", "-auto-approve", "-input=false"]));
        std::thread::sleep(Duration::from_secs(5));
        cluster.kubectl_ok(&["delete", "validatingwebhookconfiguration", &gate]);
        apply.join().expect("the apply")
    });
    assert!(
        out.success(),
        "the apply did not converge once the webhook was gone:\n{out}"
    );
    assert_eq!(work.plan_exit().code, 0);
    work.write("");
    work.apply_ok("destroy");
}
