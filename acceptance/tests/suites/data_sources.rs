//! Every data source of hashicorp/kubernetes 3.4.0 read with the real engine: objects of each
//! kind are created with kubectl (a Node too, labelled so that only it is read), one
//! configuration reads them all and its outputs are checked against the objects; a Secret's
//! values come out only through a sensitive output and never show in the apply. Then the
//! errors: a missing object names the object and the verb `get`; an identity without RBAC
//! permission gets a refusal naming the verb (`get` by name, `list` for a plural one). A plan
//! that reads them all again makes one GET per object, one LIST per plural one, and no write.

use std::path::Path;

use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, quote, unique_name};
use acceptance::objects::base64_of;
use acceptance::requests::RequestCounts;
use acceptance::{Cluster, EngineOutput};
use serde_json::Value;

/// Cluster-scoped objects made for the test, deleted when dropped (also when it fails).
struct ClusterObjects<'a> {
    cluster: &'a Cluster,
    objects: Vec<(&'static str, String)>,
}

impl Drop for ClusterObjects<'_> {
    fn drop(&mut self) {
        for (kind, name) in &self.objects {
            // Best effort: a failure here must not hide the test's own outcome.
            let _ = self
                .cluster
                .kubectl(&["delete", kind, name, "--wait=false", "--ignore-not-found"]);
        }
    }
}

/// `kubectl apply -f` of `yaml`, retried a few times: a Pod waits for its ServiceAccount to be
/// seen by admission.
fn kubectl_apply(cluster: &Cluster, dir: &Path, yaml: &str) {
    let file = dir.join("objects.yaml");
    std::fs::write(&file, yaml).expect("write objects.yaml");
    let file = file.to_string_lossy().to_string();
    let mut out = cluster.kubectl(&["apply", "-f", &file]);
    for _ in 0..10 {
        if out.success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
        out = cluster.kubectl(&["apply", "-f", &file]);
    }
    panic!("kubectl apply:\n{out}");
}

/// The objects every data source reads: namespaced ones in `ns`, cluster-scoped ones named
/// `<kind>-<id>`, the Node labelled `ds-test=<id>`.
fn objects_yaml(ns: &str, id: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata: {{name: cfg, namespace: {ns}, labels: {{app: web}}}}
data: {{color: blue}}
binaryData: {{raw: AAEC}}
---
apiVersion: v1
kind: Secret
metadata: {{name: creds, namespace: {ns}}}
type: Opaque
data: {{password: {password}, blob: AAEC}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: runner, namespace: {ns}}}
imagePullSecrets: [{{name: registry}}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: sc-{id}
  resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {{name: site, namespace: {ns}}}
spec:
  rules:
  - host: site.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {{service: {{name: web, port: {{number: 80}}}}}}
---
apiVersion: v1
kind: Endpoints
metadata: {{name: external, namespace: {ns}}}
subsets:
- addresses: [{{ip: 10.1.2.3}}]
  ports: [{{name: http, port: 8080, protocol: TCP}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {{name: external-1, namespace: {ns}, labels: {{kubernetes.io/service-name: external}}}}
addressType: IPv4
endpoints: [{{addresses: [10.1.2.3]}}]
ports: [{{name: http, port: 8080, protocol: TCP}}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: sc-{id}}}
provisioner: example.com/ds
parameters: {{tier: fast}}
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: pv-{id}}}
spec:
  capacity: {{storage: 2Gi}}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: sc-{id}
  hostPath: {{path: /tmp/pv-{id}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: mwc-{id}}}
webhooks:
- name: widgets.example.com
  clientConfig: {{url: "https://example.com/mutate"}}
  rules: [{{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}}]
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Ignore
---
apiVersion: v1
kind: Node
metadata: {{name: node-{id}, labels: {{ds-test: {id}}}}}
spec:
  podCIDR: 10.244.7.0/24
  taints: [{{key: ds-test, value: "yes", effect: NoSchedule}}]
---
apiVersion: v1
kind: Pod
metadata: {{name: app, namespace: {ns}, labels: {{app: web}}}}
spec:
  serviceAccountName: runner
  containers: [{{name: app, image: "nginx:1.27", ports: [{{containerPort: 80}}]}}]
"#,
        password = base64_of(PASSWORD),
    )
}

const PASSWORD: &str = "s3cr3t-data-source-value";

/// One data source per type of the reference (both names where hashicorp has two), and
/// outputs of what each read.
fn config(ns: &str, id: &str) -> String {
    let ns = quote(ns);
    let named = |ty: &str, label: &str, name: &str| {
        format!(
            "data \"{ty}\" \"{label}\" {{\n  metadata {{\n    name      = {}\n    namespace = {ns}\n  }}\n}}\n",
            quote(name)
        )
    };
    let cluster = |ty: &str, label: &str, name: &str| {
        format!(
            "data \"{ty}\" \"{label}\" {{\n  metadata {{\n    name = {}\n  }}\n}}\n",
            quote(name)
        )
    };
    let mut out = String::new();
    for (ty, label, name) in [
        ("kubernetes_config_map_v1", "cm", "cfg"),
        ("kubernetes_config_map", "cm_old", "cfg"),
        ("kubernetes_secret", "secret_old", "creds"),
        ("kubernetes_service_v1", "svc", "web"),
        ("kubernetes_service", "svc_old", "web"),
        ("kubernetes_service_account_v1", "sa", "runner"),
        ("kubernetes_service_account", "sa_old", "runner"),
        ("kubernetes_persistent_volume_claim_v1", "pvc", "data"),
        ("kubernetes_persistent_volume_claim", "pvc_old", "data"),
        ("kubernetes_pod_v1", "pod", "app"),
        ("kubernetes_pod", "pod_old", "app"),
        ("kubernetes_ingress_v1", "ing", "site"),
        ("kubernetes_ingress", "ing_old", "site"),
        ("kubernetes_endpoints_v1", "ep", "external"),
        ("kubernetes_endpoint_slice_v1", "slice", "external-1"),
    ] {
        out.push_str(&named(ty, label, name));
    }
    let (sc, pv, mwc) = (format!("sc-{id}"), format!("pv-{id}"), format!("mwc-{id}"));
    for (ty, label, name) in [
        ("kubernetes_storage_class_v1", "sc", sc.as_str()),
        ("kubernetes_storage_class", "sc_old", sc.as_str()),
        ("kubernetes_persistent_volume_v1", "pv", pv.as_str()),
        (
            "kubernetes_mutating_webhook_configuration_v1",
            "mwc",
            mwc.as_str(),
        ),
    ] {
        out.push_str(&cluster(ty, label, name));
    }
    out.push_str(&format!(
        r#"data "kubernetes_secret_v1" "secret" {{
  metadata {{
    name      = "creds"
    namespace = {ns}
  }}
  binary_data = {{ blob = "" }}
}}

data "kubernetes_namespace_v1" "ns" {{
  metadata {{
    name = {ns}
  }}
}}

data "kubernetes_namespace" "ns_old" {{
  metadata {{
    name = {ns}
  }}
}}

data "kubernetes_nodes" "nodes" {{
  metadata {{
    labels = {{ "ds-test" = {id} }}
  }}
}}

data "kubernetes_all_namespaces" "all" {{}}

data "kubernetes_server_version" "version" {{}}

data "kubernetes_resource" "cm" {{
  api_version = "v1"
  kind        = "ConfigMap"
  metadata {{
    name      = "cfg"
    namespace = {ns}
  }}
}}

data "kubernetes_resources" "cms" {{
  api_version    = "v1"
  kind           = "ConfigMap"
  namespace      = {ns}
  label_selector = "app=web"
  field_selector = "metadata.name=cfg"
  limit          = 5
}}

output "secret" {{
  sensitive = true
  value = {{
    data        = data.kubernetes_secret_v1.secret.data
    binary_data = data.kubernetes_secret_v1.secret.binary_data
    old         = data.kubernetes_secret.secret_old.data
  }}
}}

output "got" {{
  value = {{
    cm_data        = data.kubernetes_config_map_v1.cm.data
    cm_binary      = data.kubernetes_config_map_v1.cm.binary_data
    cm_labels      = data.kubernetes_config_map_v1.cm.metadata[0].labels
    cm_uid         = data.kubernetes_config_map_v1.cm.metadata[0].uid
    cm_id          = data.kubernetes_config_map_v1.cm.id
    cm_old_data    = data.kubernetes_config_map.cm_old.data
    secret_type    = data.kubernetes_secret_v1.secret.type
    svc_ip         = data.kubernetes_service_v1.svc.spec[0].cluster_ip
    svc_type       = data.kubernetes_service_v1.svc.spec[0].type
    svc_affinity   = data.kubernetes_service_v1.svc.spec[0].session_affinity
    svc_port       = data.kubernetes_service_v1.svc.spec[0].port[0]
    svc_selector   = data.kubernetes_service.svc_old.spec[0].selector
    sa_pull        = data.kubernetes_service_account_v1.sa.image_pull_secret[*].name
    sa_old_name    = data.kubernetes_service_account.sa_old.metadata[0].name
    pvc_class      = data.kubernetes_persistent_volume_claim_v1.pvc.spec[0].storage_class_name
    pvc_modes      = data.kubernetes_persistent_volume_claim_v1.pvc.spec[0].access_modes
    pvc_request    = data.kubernetes_persistent_volume_claim.pvc_old.spec[0].resources[0].requests
    pod_image      = data.kubernetes_pod_v1.pod.spec[0].container[0].image
    pod_sa         = data.kubernetes_pod_v1.pod.spec[0].service_account_name
    pod_phase      = data.kubernetes_pod.pod_old.status
    ing_host       = data.kubernetes_ingress_v1.ing.spec[0].rule[0].host
    ing_service    = data.kubernetes_ingress_v1.ing.spec[0].rule[0].http[0].path[0].backend[0].service[0].name
    ing_old_svc    = data.kubernetes_ingress.ing_old.spec[0].rule[0].http[0].path[0].backend[0].service_name
    ep_ip          = [for s in data.kubernetes_endpoints_v1.ep.subset : [for a in s.address : a.ip]]
    slice_type     = data.kubernetes_endpoint_slice_v1.slice.address_type
    slice_address  = data.kubernetes_endpoint_slice_v1.slice.endpoint[0].addresses
    slice_port     = data.kubernetes_endpoint_slice_v1.slice.port[0].port
    sc_provisioner = data.kubernetes_storage_class_v1.sc.storage_provisioner
    sc_parameters  = data.kubernetes_storage_class.sc_old.parameters
    sc_binding     = data.kubernetes_storage_class_v1.sc.volume_binding_mode
    pv_capacity    = data.kubernetes_persistent_volume_v1.pv.spec[0].capacity
    pv_path        = data.kubernetes_persistent_volume_v1.pv.spec[0].persistent_volume_source[0].host_path[0].path
    mwc_webhook    = data.kubernetes_mutating_webhook_configuration_v1.mwc.webhook[0].name
    mwc_url        = data.kubernetes_mutating_webhook_configuration_v1.mwc.webhook[0].client_config[0].url
    ns_uid         = data.kubernetes_namespace_v1.ns.metadata[0].uid
    ns_old_id      = data.kubernetes_namespace.ns_old.id
    node_names     = data.kubernetes_nodes.nodes.nodes[*].metadata[0].name
    node_cidr      = data.kubernetes_nodes.nodes.nodes[0].spec[0].pod_cidr
    node_taints    = [for t in data.kubernetes_nodes.nodes.nodes[0].spec[0].taints : t.key]
    namespaces     = data.kubernetes_all_namespaces.all.namespaces
    git_version    = data.kubernetes_server_version.version.git_version
    version        = data.kubernetes_server_version.version.version
    resource_color = data.kubernetes_resource.cm.object.data.color
    resource_kind  = data.kubernetes_resource.cm.object.kind
    resources      = [for o in data.kubernetes_resources.cms.objects : o.metadata.name]
  }}
}}
"#,
        id = quote(id),
    ));
    out
}

/// `output -json`, parsed.
fn outputs(work: &LiveDir) -> Value {
    let out = work.run(&["output", "-json"]);
    assert!(out.success(), "output -json:\n{out}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("output -json printed no JSON ({e}):\n{out}"))
}

fn assert_fails_with(out: &EngineOutput, what: &str, phrases: &[&str]) {
    assert!(!out.success(), "{what} should fail:\n{out}");
    let text = out.flat();
    for phrase in phrases {
        assert!(text.contains(phrase), "{what}: no {phrase:?} in:\n{out}");
    }
}

#[test]
fn every_data_source_reads_the_live_objects() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "ds");
    let id = unique_name("ds");
    let _cleanup = ClusterObjects {
        cluster: &cluster,
        objects: vec![
            ("node", format!("node-{id}")),
            ("persistentvolume", format!("pv-{id}")),
            ("storageclass", format!("sc-{id}")),
            ("mutatingwebhookconfiguration", format!("mwc-{id}")),
        ],
    };
    let estate = unique_name("est");
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    kubectl_apply(&cluster, work.path(), &objects_yaml(&ns.name, &id));
    work.write(&config(&ns.name, &id));

    let out = work.apply_ok("read every data source");
    for shown in [PASSWORD, base64_of(PASSWORD).as_str()] {
        assert!(
            !out.stdout.contains(shown) && !out.stderr.contains(shown),
            "the apply shows the Secret's value {shown:?}:\n{out}"
        );
    }
    let outputs = outputs(&work);
    assert_eq!(outputs["secret"]["sensitive"], true);
    let secret = &outputs["secret"]["value"];
    assert_eq!(secret["data"]["password"], PASSWORD, "decoded, as hashicorp's");
    assert!(
        secret["data"].get("blob").is_none(),
        "a binary key is not in data: {secret}"
    );
    assert_eq!(secret["binary_data"]["blob"], "AAEC", "base64, as hashicorp's");
    assert_eq!(
        secret["old"]["blob"], "\u{0}\u{1}\u{2}",
        "no binary keys named: all decoded"
    );

    let got = &outputs["got"]["value"];
    let live_cm = cluster.get_json(&["configmap", "cfg", "-n", &ns.name]);
    assert_eq!(got["cm_data"]["color"], "blue");
    assert_eq!(got["cm_binary"]["raw"], "AAEC");
    assert_eq!(got["cm_labels"]["app"], "web");
    assert_eq!(got["cm_uid"], live_cm["metadata"]["uid"]);
    assert_eq!(got["cm_id"], format!("{}/cfg", ns.name).as_str());
    assert_eq!(got["cm_old_data"]["color"], "blue");
    assert_eq!(got["secret_type"], "Opaque");
    let live_svc = cluster.get_json(&["service", "web", "-n", &ns.name]);
    assert_eq!(got["svc_ip"], live_svc["spec"]["clusterIP"]);
    assert_eq!(
        got["svc_type"], "ClusterIP",
        "the server's default, as the live object has it"
    );
    assert_eq!(got["svc_affinity"], "None");
    assert_eq!(got["svc_port"]["port"], 80);
    assert_eq!(got["svc_port"]["target_port"], "8080");
    assert_eq!(got["svc_port"]["protocol"], "TCP");
    assert_eq!(got["svc_selector"]["app"], "web");
    assert_eq!(got["sa_pull"], serde_json::json!(["registry"]));
    assert_eq!(got["sa_old_name"], "runner");
    assert_eq!(got["pvc_class"], format!("sc-{id}").as_str());
    assert_eq!(got["pvc_modes"], serde_json::json!(["ReadWriteOnce"]));
    assert_eq!(got["pvc_request"]["storage"], "1Gi");
    assert_eq!(got["pod_image"], "nginx:1.27");
    assert_eq!(got["pod_sa"], "runner");
    let live_pod = cluster.get_json(&["pod", "app", "-n", &ns.name]);
    assert_eq!(got["pod_phase"], live_pod["status"]["phase"]);
    assert_eq!(got["ing_host"], "site.example.com");
    assert_eq!(got["ing_service"], "web");
    assert_eq!(got["ing_old_svc"], "web");
    assert_eq!(got["ep_ip"], serde_json::json!([["10.1.2.3"]]));
    assert_eq!(got["slice_type"], "IPv4");
    assert_eq!(got["slice_address"], serde_json::json!(["10.1.2.3"]));
    assert_eq!(got["slice_port"], "8080", "a string in hashicorp's schema");
    assert_eq!(got["sc_provisioner"], "example.com/ds");
    assert_eq!(got["sc_parameters"]["tier"], "fast");
    assert_eq!(got["sc_binding"], "WaitForFirstConsumer");
    assert_eq!(got["pv_capacity"]["storage"], "2Gi");
    assert_eq!(got["pv_path"], format!("/tmp/pv-{id}").as_str());
    assert_eq!(got["mwc_webhook"], "widgets.example.com");
    assert_eq!(got["mwc_url"], "https://example.com/mutate");
    let live_ns = cluster.get_json(&["namespace", &ns.name]);
    assert_eq!(got["ns_uid"], live_ns["metadata"]["uid"]);
    assert_eq!(got["ns_old_id"], ns.name.as_str());
    assert_eq!(got["node_names"], serde_json::json!([format!("node-{id}")]));
    assert_eq!(got["node_cidr"], "10.244.7.0/24");
    assert!(
        got["node_taints"]
            .as_array()
            .is_some_and(|t| t.iter().any(|k| k == "ds-test")),
        "{}",
        got["node_taints"]
    );
    assert!(
        got["namespaces"]
            .as_array()
            .is_some_and(|n| n.iter().any(|n| n == ns.name.as_str())),
        "{}",
        got["namespaces"]
    );
    let live_version = {
        let out = cluster.kubectl(&["version", "-o", "json"]);
        assert!(out.success(), "kubectl version:\n{out}");
        let v: Value = serde_json::from_str(&out.stdout).expect("kubectl version JSON");
        v["serverVersion"]["gitVersion"].clone()
    };
    assert_eq!(got["git_version"], live_version);
    assert_eq!(
        got["version"].as_str(),
        live_version.as_str().map(|v| v.trim_start_matches('v'))
    );
    assert_eq!(got["resource_color"], "blue");
    assert_eq!(got["resource_kind"], "ConfigMap");
    assert_eq!(got["resources"], serde_json::json!(["cfg"]));

    // Reading again: one GET per object read by name, one LIST per plural data source, and
    // never a write. The counts are the API server's, so a client outside this process (another
    // suite on a shared cluster) adds to them: up to three measurements, one must be exact.
    let mut found = Vec::new();
    for _ in 0..3 {
        let (out, requests) = cluster.count_requests(|| work.run(&["plan", "-input=false"]));
        // (Outputs may differ from the apply's on a shared cluster: the list of all namespaces.)
        assert!(out.success(), "a second plan:\n{out}");
        found = read_counts_off(&requests);
        if found.is_empty() {
            break;
        }
    }
    assert!(found.is_empty(), "the reads' requests:\n  {}", found.join("\n  "));
}

/// Where `requests` are not those of one read of [`config`]'s data sources, one line each.
fn read_counts_off(requests: &RequestCounts) -> Vec<String> {
    let mut off = Vec::new();
    let verbs = requests.by_verb();
    for write in ["POST", "PUT", "PATCH", "APPLY", "DELETE"] {
        if let Some(n) = verbs.get(write) {
            off.push(format!("{n} {write} while reading"));
        }
    }
    for (verb, resource, count) in [
        ("GET", "configmaps", 3),
        ("LIST", "configmaps", 1),
        ("GET", "secrets", 2),
        ("GET", "pods", 2),
        ("GET", "services", 2),
        ("GET", "namespaces", 2),
        ("LIST", "namespaces", 1),
        ("LIST", "nodes", 1),
        ("GET", "storageclasses", 2),
    ] {
        let n = requests.get(verb, resource);
        if n != count {
            off.push(format!("{verb} {resource}: {n}, expected {count}"));
        }
    }
    off
}

#[test]
fn a_missing_object_reads_empty_and_a_refused_read_names_the_object_and_the_verb() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "dserr");
    let estate = unique_name("est");
    let read_cm = |name: &str| {
        format!(
            "data \"kubernetes_config_map_v1\" \"cm\" {{\n{}}}\n",
            metadata(name, &ns.name)
        )
    };

    // As hashicorp's: a missing object is the data source's own arguments and nothing else,
    // which configurations test for; its persistent volume is the one that fails.
    let work = LiveDir::new(&estate, cluster.kubeconfig());
    work.write(&format!(
        "{}output \"found\" {{\n  value = data.kubernetes_config_map_v1.cm.data == null ? \"no\" : \"yes\"\n}}\n\
         output \"name\" {{\n  value = data.kubernetes_config_map_v1.cm.metadata[0].name\n}}\n",
        read_cm("nowhere")
    ));
    let out = work.run(&["apply", "-auto-approve", "-input=false"]);
    assert!(out.success(), "reading a missing ConfigMap:\n{out}");
    for (output, expected) in [("found", "no"), ("name", "nowhere")] {
        let value = work.run(&["output", "-raw", output]);
        assert_eq!(value.stdout, expected, "output {output}:\n{value}");
    }
    work.write(&format!(
        "data \"kubernetes_persistent_volume_v1\" \"pv\" {{\n  metadata {{\n    name = {}\n  }}\n}}\n",
        quote(&unique_name("nowhere"))
    ));
    let out = work.run(&["plan", "-input=false"]);
    assert_fails_with(
        &out,
        "reading a missing PersistentVolume",
        &["PersistentVolume", "not found", "answered the get of"],
    );

    let out = cluster.kubectl(&["create", "configmap", "there", "-n", &ns.name]);
    assert!(out.success(), "kubectl create configmap:\n{out}");
    let restricted = LiveDir::new(&estate, &cluster.kubeconfig_for("restricted"));
    restricted.write(&read_cm("there"));
    let out = restricted.run(&["plan", "-input=false"]);
    assert_fails_with(
        &out,
        "a restricted identity reading a ConfigMap",
        &[&format!("Not allowed to get ConfigMap \"{}/there\"", ns.name)],
    );
    restricted.write("data \"kubernetes_all_namespaces\" \"all\" {}\n");
    let out = restricted.run(&["plan", "-input=false"]);
    assert_fails_with(
        &out,
        "a restricted identity listing Namespaces",
        &["Not allowed to list Namespace"],
    );
}
