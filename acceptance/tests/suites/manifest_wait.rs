//! One `kubernetes_manifest` `wait` block holds `fields` and a `condition` together
//! (hashicorp/terraform-provider-kubernetes#2798 asks for it: hashicorp's takes one or the
//! other): the apply ends once both hold, and a condition that never comes keeps it waiting
//! although the fields match, until its timeout, which names what was awaited.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, quote, unique_name};

/// A Job in `ns` that runs for two seconds, awaited until it has succeeded once and has the
/// condition `condition` = "True".
fn awaited_job(ns: &str, name: &str, condition: &str, timeout: &str) -> String {
    format!(
        r#"
resource "kubernetes_manifest" "{name}" {{
  manifest = {{
    apiVersion = "batch/v1"
    kind       = "Job"
    metadata   = {{ name = {job}, namespace = {ns} }}
    spec = {{
      backoffLimit = 0
      template = {{
        spec = {{
          restartPolicy = "Never"
          containers = [{{
            name    = "work"
            image   = "busybox"
            command = ["sleep", "2"]
          }}]
        }}
      }}
    }}
  }}
  wait {{
    fields = {{ "status.succeeded" = "1" }}
    condition {{
      type   = {condition}
      status = "True"
    }}
  }}
  timeouts {{
    create = {timeout}
  }}
}}
"#,
        job = quote(name),
        ns = quote(ns),
        condition = quote(condition),
        timeout = quote(timeout),
    )
}

#[test]
fn a_wait_holds_fields_and_a_condition_together() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "mwait");
    let work = LiveDir::new(&unique_name("mwait"), cluster.kubeconfig());

    work.write(&awaited_job(&ns.name, "done", "Complete", "3m"));
    work.apply_ok("a Job awaited until it succeeded and is Complete");
    let job = cluster.get_json(&["job", "done", "-n", &ns.name]);
    assert_eq!(job["status"]["succeeded"], 1, "{job}");
    let next = work.plan_exit();
    assert_eq!(next.code, 0, "the plan after the wait is not empty:\n{next}");

    // The fields match once the Job succeeds; the condition `Failed` never comes.
    work.write(&format!(
        "{}{}",
        awaited_job(&ns.name, "done", "Complete", "3m"),
        awaited_job(&ns.name, "never", "Failed", "40s")
    ));
    let out = work.apply();
    assert!(
        !out.success(),
        "the apply ended although a condition never held:\n{out}"
    );
    let flat = out.flat();
    assert!(
        flat.contains(&format!("Job \"{}/never\"", ns.name)) && flat.contains("wait"),
        "the error does not name the awaited Job:\n{out}"
    );
    let never = cluster.get_json(&["job", "never", "-n", &ns.name]);
    assert_eq!(never["status"]["succeeded"], 1, "the fields alone held:\n{never}");

    work.write("");
    work.apply_ok("destroy");
}
