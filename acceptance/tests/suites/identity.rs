//! Resource identity with the real engine (issue 16): every typed resource and
//! `kubernetes_manifest` stores an identity (`api_version`, `kind`, `name`, `namespace`) beside
//! its state, and `import { to = ..., identity = {...} }` adopts an object by it, giving the
//! same state an import by id gives. An identity of another kind is refused with a message
//! naming both kinds.

use acceptance::Cluster;
use acceptance::hcl::{LiveDir, ScratchNamespace, metadata, quote, unique_name};
use acceptance::imports;
use serde_json::{Value, json};

/// The three resources under test: a namespaced typed kind, a cluster-scoped typed kind and a
/// manifest.
fn resources(ns: &str, cm: &str, space: &str, manifest: &str) -> String {
    format!(
        r#"
resource "kubernetes_config_map_v1" "cm" {{
{cm_metadata}  data = {{ k = "v" }}
}}

resource "kubernetes_namespace_v1" "space" {{
  metadata {{
    name = {space}
  }}
}}

resource "kubernetes_manifest" "handoff" {{
  manifest = {{
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = {{ name = {manifest}, namespace = {ns} }}
    data       = {{ k = "v" }}
  }}
}}
"#,
        cm_metadata = metadata(cm, ns),
        ns = quote(ns),
        space = quote(space),
        manifest = quote(manifest),
    )
}

/// `import` blocks naming each object by identity.
fn imports(ns: &str, cm: &str, space: &str, manifest: &str) -> String {
    format!(
        r#"
import {{
  to       = kubernetes_config_map_v1.cm
  identity = {{ api_version = "v1", kind = "ConfigMap", name = {cm}, namespace = {ns} }}
}}

import {{
  to       = kubernetes_namespace_v1.space
  identity = {{ api_version = "v1", kind = "Namespace", name = {space} }}
}}

import {{
  to       = kubernetes_manifest.handoff
  identity = {{ api_version = "v1", kind = "ConfigMap", name = {manifest}, namespace = {ns} }}
}}
"#,
        cm = quote(cm),
        ns = quote(ns),
        space = quote(space),
        manifest = quote(manifest),
    )
}

/// The identity the state file holds for `address`.
fn stored_identity(work: &LiveDir, address: &str) -> Value {
    work.state_instance(address)["identity"].take()
}

#[test]
fn objects_carry_an_identity_and_import_by_it() {
    let cluster = Cluster::start();
    let ns = ScratchNamespace::create(&cluster, "identity");
    let (cm, space, manifest) = (unique_name("cm"), unique_name("space"), unique_name("handoff"));
    let work = LiveDir::new(&unique_name("estate"), cluster.kubeconfig());
    let body = resources(&ns.name, &cm, &space, &manifest);

    work.write(&body);
    work.apply_ok("create");
    assert_eq!(
        stored_identity(&work, "kubernetes_config_map_v1.cm"),
        json!({"api_version": "v1", "kind": "ConfigMap", "name": cm, "namespace": ns.name})
    );
    assert_eq!(
        stored_identity(&work, "kubernetes_namespace_v1.space"),
        // A cluster-scoped kind's identity has no namespace, as hashicorp's.
        json!({"api_version": "v1", "kind": "Namespace", "name": space})
    );
    assert_eq!(
        stored_identity(&work, "kubernetes_manifest.handoff"),
        json!({"api_version": "v1", "kind": "ConfigMap", "name": manifest, "namespace": ns.name})
    );
    let addresses = [
        "kubernetes_config_map_v1.cm",
        "kubernetes_namespace_v1.space",
        "kubernetes_manifest.handoff",
    ];
    let before: Vec<Value> = addresses.iter().map(|a| work.state_values(a)).collect();

    // Forget all three, then adopt them again by identity alone.
    for address in addresses {
        let out = work.run(&["state", "rm", address]);
        assert!(out.success(), "state rm {address}:\n{out}");
    }
    work.write(&format!("{body}{}", imports(&ns.name, &cm, &space, &manifest)));
    let out = work.apply_ok("import by identity");
    assert!(
        out.stdout
            .contains("Resources: 3 imported, 0 added, 0 changed, 0 destroyed"),
        "import by identity was not a pure import:\n{out}"
    );
    let after: Vec<Value> = addresses.iter().map(|a| work.state_values(a)).collect();
    let settled = |states: &[Value]| states.iter().map(imports::without_settings).collect::<Vec<_>>();
    assert_eq!(
        settled(&after),
        settled(&before),
        "state imported by identity differs from the state it replaces"
    );
    assert_eq!(
        stored_identity(&work, "kubernetes_config_map_v1.cm")["name"],
        json!(cm)
    );
    let plan = work.plan_exit();
    assert_eq!(plan.code, 0, "plan after the import is not empty:\n{plan}");

    // An identity of another kind is refused, naming both kinds.
    work.run(&["state", "rm", "kubernetes_config_map_v1.cm"]);
    work.write(&format!(
        "{body}\nimport {{\n  to       = kubernetes_config_map_v1.cm\n  identity = {{ api_version = \"v1\", \
         kind = \"Secret\", name = {}, namespace = {} }}\n}}\n",
        quote(&cm),
        quote(&ns.name)
    ));
    let refused = work.plan_exit();
    assert!(
        !refused.success(),
        "an identity of another kind was accepted:\n{refused}"
    );
    assert!(
        refused
            .flat()
            .contains("manages v1 ConfigMap objects, but the identity names v1 Secret"),
        "the refusal does not name both kinds:\n{refused}"
    );

    // The right identity takes it back; then everything goes.
    work.write(&format!(
        "{body}\nimport {{\n  to       = kubernetes_config_map_v1.cm\n  identity = {{ api_version = \"v1\", \
         kind = \"ConfigMap\", name = {}, namespace = {} }}\n}}\n",
        quote(&cm),
        quote(&ns.name)
    ));
    work.apply_ok("import the ConfigMap again");
    work.write(&body);
    let destroy = work.run(&["destroy", "-auto-approve", "-input=false"]);
    assert!(destroy.success(), "destroy failed:\n{destroy}");
}
