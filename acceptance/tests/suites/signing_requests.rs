//! A certificate signing request lives in the state, as hashicorp's does
//! (resource_kubernetes_certificate_signing_request_v1.go): once signed, the request is deleted
//! and the state keeps the certificate, and a refresh that finds no request keeps the state.
//! The cluster's cleaner deletes a signed request within the hour anyway, so a provider that
//! read it back would plan a new certificate every hour after.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, unique_name};

/// A request for a client certificate (the signer refuses one without "client auth").
fn request(name: &str, auto_approve: bool) -> String {
    format!(
        r#"resource "kubernetes_certificate_signing_request_v1" "client" {{
  metadata {{ name = "{name}" }}
  spec {{
    signer_name = "kubernetes.io/kube-apiserver-client"
    usages      = ["client auth"]
    request     = <<-EOT
    -----BEGIN CERTIFICATE REQUEST-----
    MIHLMHMCAQAwETEPMA0GA1UEAwwGY29ycHVzMFkwEwYHKoZIzj0CAQYIKoZIzj0D
    AQcDQgAERDLLn/L+IlcEPSsFfUlU+0tbWyVeS5wZ8xXi+ZZ0XHUajMvi3dYaYe0c
    Am3+kPPy2IQUxTCCBUJIBCajQKWGYaAAMAoGCCqGSM49BAMCA0gAMEUCIQCDbbh6
    cfWjxXW7ypxbV5jO1jjCqwaQ7ITyyCqEWULRSAIgNDzP6Rzm3tOJPI6/xgSdYeSr
    eNaGmdL2++9YH+oo4JY=
    -----END CERTIFICATE REQUEST-----
    EOT
  }}
  auto_approve = {auto_approve}
}}

output "certificate" {{
  value = kubernetes_certificate_signing_request_v1.client.certificate
}}
"#
    )
}

fn exists(cluster: &Cluster, name: &str) -> bool {
    let out = cluster.kubectl(&["get", "csr", name, "--ignore-not-found", "-o", "name"]);
    assert!(out.success(), "kubectl get csr:\n{out}");
    !out.stdout.trim().is_empty()
}

fn certificate(work: &LiveDir) -> String {
    let out = work.run(&["output", "-raw", "certificate"]);
    assert!(out.success(), "output:\n{out}");
    out.stdout
}

#[test]
fn a_signed_request_is_deleted_and_its_certificate_kept() {
    let cluster = Cluster::start();
    let name = unique_name("csr");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&request(&name, true));
    work.apply_ok("the signing request");
    assert!(
        certificate(&work).contains("BEGIN CERTIFICATE"),
        "no certificate in the state"
    );
    assert!(
        !exists(&cluster, &name),
        "the signed request is still in the cluster"
    );
    let again = work.plan_exit();
    assert_eq!(
        again.code, 0,
        "the plan after the request was deleted is not empty:\n{again}"
    );
    let destroy = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(destroy.success(), "destroy:\n{destroy}");
}

#[test]
fn a_request_left_to_an_administrator_outlives_its_object() {
    let cluster = Cluster::start();
    let name = unique_name("csr");
    let work = LiveDir::new(&unique_name("est"), cluster.kubeconfig());
    work.write(&request(&name, false));
    work.apply_ok("the signing request");
    assert!(
        exists(&cluster, &name),
        "a request nobody approved yet is kept for its approver"
    );
    let approve = cluster.kubectl(&["certificate", "approve", &name]);
    assert!(approve.success(), "kubectl certificate approve:\n{approve}");
    // The signer's answer reaches the state on a refresh.
    let mut signed = false;
    for _ in 0..60 {
        let refresh = work.run(&["apply", "-refresh-only", "-auto-approve", "-input=false"]);
        assert!(refresh.success(), "refresh:\n{refresh}");
        if certificate(&work).contains("BEGIN CERTIFICATE") {
            signed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
    assert!(
        signed,
        "the approved request's certificate never reached the state"
    );
    // The cluster's cleaner deletes it; the state keeps the certificate and plans nothing.
    let delete = cluster.kubectl(&["delete", "csr", &name]);
    assert!(delete.success(), "kubectl delete csr:\n{delete}");
    let again = work.plan_exit();
    assert_eq!(again.code, 0, "a deleted request planned a new one:\n{again}");
    assert!(
        certificate(&work).contains("BEGIN CERTIFICATE"),
        "the certificate was lost"
    );
}
