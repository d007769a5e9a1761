//! Stages 12 and 13: objects created by hashicorp/kubernetes migrated with `import` blocks,
//! then both estates torn down.

use super::steps::{
    apply, broken, expect_counts, expect_label, expect_no_changes, expect_pending, file, managed_count, plan,
};
use acceptance::ensure;
use acceptance::scenario::{
    Check, Estates, estate_of, known_differences, pending, resource_change, snapshot, snapshot_changes, write,
};

pub(super) fn legacy_objects(mode: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: legacy-settings
  namespace: shop
data:
  mode: {mode}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: legacy-bot
  namespace: shop
automountServiceAccountToken: true
"#
    )
}

pub(super) const MIGRATE_CONFIG: &str = r#"import {
  to = kubernetes_config_map.legacy
  id = "shop/legacy-settings"
}

resource "kubernetes_config_map" "legacy" {
  metadata {
    name      = "legacy-settings"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  data = {
    mode = "legacy"
  }
}

import {
  to = kubernetes_service_account.legacy
  id = "shop/legacy-bot"
}

resource "kubernetes_service_account" "legacy" {
  metadata {
    name      = "legacy-bot"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  automount_service_account_token = true
}
"#;

pub(super) const MIGRATED: [(&str, &str, &str); 2] = [
    ("kubernetes_config_map.legacy", "configmaps", "legacy-settings"),
    (
        "kubernetes_service_account.legacy",
        "serviceaccounts",
        "legacy-bot",
    ),
];

/// Stage 12: Unlabelled objects made by another tool are imported; the plan only stamps the label.
pub(super) fn migrate(estates: &Estates) -> Check {
    let legacy = estates.scratch().join("legacy.yaml");
    write(
        &legacy,
        &legacy_objects(if broken(12) { "other" } else { "legacy" }),
    )?;
    estates.kubectl(&["create", "--validate=false", "-f", &legacy.to_string_lossy()])?;
    for (_, resource, name) in MIGRATED {
        let object = estates.existing(resource, Some("shop"), name)?;
        ensure!(
            estate_of(&object).is_none(),
            "{name} already carries an estate label"
        );
    }
    write(&file(estates, "app", "migrate.tf"), MIGRATE_CONFIG)?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(&plan, &MIGRATED.map(|(address, _, _)| (address, &["update"][..])))?;
    for (address, _, _) in MIGRATED {
        let change =
            &resource_change(&plan, address).ok_or(format!("the plan does not mention {address}"))?["change"];
        ensure!(
            change["importing"].is_object(),
            "{address} is not imported by the plan"
        );
        let differences = known_differences(change);
        ensure!(
            differences == ["estate"],
            "{address}'s update changes {differences:?}, expected only the estate"
        );
    }
    apply(&estates.app, &[], (0, 2, 0))?;
    for (_, resource, name) in MIGRATED {
        expect_label(&estates.existing(resource, Some("shop"), name)?, "app")?;
    }
    expect_no_changes(&estates.app)
}

/// Stage 13: app destroyed first with network untouched, then network; nothing labelled remains and
/// network's outputs are no longer recorded.
pub(super) fn teardown(estates: &Estates) -> Check {
    let network_objects = || -> Result<_, String> {
        let mut objects = estates.labelled(Some("network"))?;
        objects.extend(estates.records("network")?);
        Ok(snapshot(&objects))
    };
    let network_before = network_objects()?;
    if broken(13) {
        let out = estates.network.run(&["destroy", "-auto-approve"]);
        ensure!(out.success(), "destroy of network failed:\n{out}");
    }

    let managed = managed_count(&estates.app)?;
    let plan = plan(&estates.app, &["-destroy"])?;
    let changes = pending(&plan);
    ensure!(
        changes.len() == managed && changes.iter().all(|(_, a)| a == &["delete"]),
        "expected {managed} deletes, the destroy plan proposes {changes:?}"
    );
    let out = estates.app.run(&["destroy", "-auto-approve"]);
    ensure!(out.success(), "destroy of app failed:\n{out}");
    expect_counts(&out, (0, 0, managed as u64))?;
    estates.wait_gone("namespaces", None, "shop")?;
    let changes = snapshot_changes(&network_before, &network_objects()?);
    ensure!(changes.is_empty(), "destroying app touched network: {changes:?}");
    estates.wait_unlabelled(Some("app"))?;
    let records = estates.records("app")?;
    ensure!(
        records.is_empty(),
        "app's records survived its destroy: {:?}",
        snapshot(&records).keys()
    );

    let out = estates.network.run(&["destroy", "-auto-approve"]);
    ensure!(out.success(), "destroy of network failed:\n{out}");
    estates.wait_gone("namespaces", None, "platform")?;
    estates.wait_unlabelled(None)?;
    let records = estates.records("network")?;
    ensure!(
        records.is_empty(),
        "network's output Secrets survived: {:?}",
        snapshot(&records).keys()
    );

    let read = estates.app.run(&["plan"]);
    ensure!(
        !read.success(),
        "app's plan read network's outputs after network's destroy:\n{read}"
    );
    ensure!(
        read.combined()
            .contains("Outputs of estate \"network\" are not recorded"),
        "the read is not told network's outputs are not recorded:\n{read}"
    );
    Ok(())
}
