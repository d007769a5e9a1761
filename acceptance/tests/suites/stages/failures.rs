//! Stages 9 to 11, when things go wrong: the engine killed mid-apply, a reviewed plan that went
//! stale, and lost state.

use super::steps::{
    GATEWAY_URL, apply, broken, expect_counts, expect_label, expect_no_changes, expect_pending, field, file,
    managed_count, plan,
};
use acceptance::PlanSummary;
use acceptance::ensure;
use acceptance::scenario::{
    Check, Estates, ObjectVersion, kill_tree, pending, remove, snapshot, snapshot_changes, wait_until, write,
};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Two new ConfigMaps, the first holding the engine after its create (while `hold` exists): the
/// create is in the cluster, the state not yet saved, which is where stage 9 kills the engine.
pub(super) fn crash_config(hold: &Path) -> String {
    format!(
        r#"resource "kubernetes_config_map" "crash_first" {{
  metadata {{
    name      = "crash-first"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}
  data = {{
    step = "first"
  }}

  provisioner "local-exec" {{
    command = "while [ -e '{}' ]; do sleep 0.1; done"
  }}
}}

resource "kubernetes_config_map" "crash_second" {{
  metadata {{
    name      = "crash-second"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}
  data = {{
    step = "second"
  }}

  depends_on = [kubernetes_config_map.crash_first]
}}
"#,
        hold.display()
    )
}

pub(super) const FOREIGN_CONFIG: &str = r#"resource "kubernetes_config_map" "foreign" {
  metadata {
    name      = "crash-foreign"
    namespace = kubernetes_namespace.shop.metadata[0].name
  }
  data = {
    owner = "app"
  }
}
"#;

/// Stage 9: Killed between a create and the state save: the re-apply adopts the object; an object of
/// another estate is never adopted.
pub(super) fn crash_mid_apply(estates: &Estates) -> Check {
    let hold = estates.scratch().join("hold");
    write(&hold, "")?;
    let crash = file(estates, "app", "crash.tf");
    write(&crash, &crash_config(&hold))?;
    let mut engine = estates.app.spawn(&["apply", "-auto-approve", "-parallelism=1"]);
    let seen = wait_until(Duration::from_secs(60), || {
        if let Some(status) = engine
            .try_wait()
            .map_err(|e| format!("waiting for the engine: {e}"))?
        {
            return Err(format!("the engine ended ({status}) before crash-first appeared"));
        }
        Ok(estates
            .object("configmaps", Some("shop"), "crash-first")?
            .is_some())
    });
    kill_tree(engine.id())?;
    let status = engine
        .wait()
        .map_err(|e| format!("waiting for the killed engine: {e}"))?;
    ensure!(
        seen?,
        "crash-first did not appear within a minute (engine {status})"
    );
    remove(&hold)?;

    let first = estates.existing("configmaps", Some("shop"), "crash-first")?;
    expect_label(&first, "app")?;
    ensure!(
        estates
            .object("configmaps", Some("shop"), "crash-second")?
            .is_none(),
        "crash-second was created"
    );
    let state = estates.app.run(&["state", "list"]);
    ensure!(state.success(), "state list after the kill failed:\n{state}");
    ensure!(
        !state.stdout.contains("crash_"),
        "the killed apply saved its creates in the state:\n{state}"
    );

    let plan = plan(&estates.app, &[])?;
    expect_pending(
        &plan,
        &[
            ("kubernetes_config_map.crash_first", &["create"]),
            ("kubernetes_config_map.crash_second", &["create"]),
        ],
    )?;
    let out = apply(&estates.app, &[], (2, 0, 0))?;
    // One warning names one of the two; the engine folds the other into "1 more similar warning".
    ensure!(
        out.combined()
            .contains("Adopting an existing object of this estate")
            && ["crash-first", "crash-second"].iter().any(|name| out
                .combined()
                .contains(&format!("ConfigMap \"shop/{name}\" already exists"))),
        "the re-apply does not say it adopted crash-first and crash-second:\n{out}"
    );
    let adopted = estates.existing("configmaps", Some("shop"), "crash-first")?;
    ensure!(
        adopted["metadata"]["uid"] == first["metadata"]["uid"],
        "crash-first was recreated instead of adopted"
    );
    expect_label(&adopted, "app")?;
    expect_label(
        &estates.existing("configmaps", Some("shop"), "crash-second")?,
        "app",
    )?;
    expect_no_changes(&estates.app)?;

    let owner = if broken(9) {
        "tofu-estate=app"
    } else {
        "tofu-estate=other"
    };
    estates.kubectl(&[
        "create",
        "configmap",
        "crash-foreign",
        "-n",
        "shop",
        "--from-literal=owner=other",
    ])?;
    estates.kubectl(&["label", "configmap", "crash-foreign", "-n", "shop", owner])?;
    let foreign = estates.existing("configmaps", Some("shop"), "crash-foreign")?;
    let foreign_tf = file(estates, "app", "foreign.tf");
    write(&foreign_tf, FOREIGN_CONFIG)?;
    let refused = estates.app.run(&["apply", "-auto-approve"]);
    ensure!(
        !refused.success(),
        "apply adopted an object labelled by another estate:\n{refused}"
    );
    ensure!(
        refused.combined().contains("\"other\""),
        "the refusal does not name estate \"other\":\n{refused}"
    );
    let untouched = estates.existing("configmaps", Some("shop"), "crash-foreign")?;
    ensure!(
        untouched["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"],
        "the foreign object was modified: {} -> {}",
        foreign["metadata"],
        untouched["metadata"]
    );

    remove(&foreign_tf)?;
    remove(&crash)?;
    apply(&estates.app, &[], (0, 0, 2))?;
    estates.kubectl(&["delete", "configmap", "crash-foreign", "-n", "shop"])?;
    Ok(())
}

/// Stage 10: A saved plan whose object changed since it was made is refused, then applies once the
/// change is reverted.
pub(super) fn plan_review_apply(estates: &Estates) -> Check {
    // The state first holds what a refresh reads (controllers still finishing the last stage's
    // rollouts move resource versions): a refused apply of a saved plan writes the plan's
    // refreshed state, and the engine would call the plan stale for that alone.
    let state = file(estates, "app", "terraform.tfstate");
    let serial = || -> Result<Value, String> {
        let text = std::fs::read_to_string(&state).map_err(|e| format!("{}: {e}", state.display()))?;
        let parsed: Value = serde_json::from_str(&text).map_err(|e| format!("the state: {e}"))?;
        Ok(parsed["serial"].clone())
    };
    let settled = wait_until(Duration::from_secs(60), || {
        let before = serial()?;
        let out = estates.app.run(&["apply", "-refresh-only", "-auto-approve"]);
        ensure!(out.success(), "apply -refresh-only failed:\n{out}");
        Ok(serial()? == before)
    })?;
    ensure!(settled, "the estate's objects kept changing for a minute");
    write(
        &file(estates, "app", "review.auto.tfvars"),
        "log_level = \"debug\"\n",
    )?;
    let planned = estates
        .app
        .run(&["plan", "-detailed-exitcode", "-out=review.tfplan"]);
    ensure!(
        planned.code == 2,
        "plan -out should propose changes (exit code 2):\n{planned}"
    );
    let show = estates.app.run(&["show", "-json", "review.tfplan"]);
    ensure!(show.success(), "show -json review.tfplan failed:\n{show}");
    let saved =
        PlanSummary::from_json(serde_json::from_str(&show.stdout).map_err(|e| format!("show -json: {e}"))?);
    expect_pending(&saved, &[("kubernetes_config_map.app", &["update"])])?;

    let hand_edit = r#"{"data":{"gateway":"http://hand-edited.example:80"}}"#;
    if !broken(10) {
        estates.kubectl(&[
            "patch",
            "configmap",
            "app-config",
            "-n",
            "shop",
            "--type",
            "merge",
            "-p",
            hand_edit,
        ])?;
    }
    let edited = estates.existing("configmaps", Some("shop"), "app-config")?;
    let refused = estates.app.run(&["apply", "review.tfplan"]);
    ensure!(!refused.success(), "the stale saved plan was applied:\n{refused}");
    ensure!(
        refused.combined().contains("no longer matches"),
        "the refusal does not say the approved plan no longer matches the live system:\n{refused}"
    );
    let after = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        after["metadata"]["resourceVersion"] == edited["metadata"]["resourceVersion"],
        "the refused apply changed app-config: {} -> {}",
        edited["data"],
        after["data"]
    );

    let revert = format!(r#"{{"data":{{"gateway":"{GATEWAY_URL}"}}}}"#);
    estates.kubectl(&[
        "patch",
        "configmap",
        "app-config",
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        &revert,
    ])?;
    let out = estates.app.run(&["apply", "review.tfplan"]);
    ensure!(
        out.success(),
        "after the revert, the saved plan should apply:\n{out}"
    );
    expect_counts(&out, (0, 1, 0))?;
    let config = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        field(&config, "/data/log_level") == "debug",
        "app-config after the saved plan: {}",
        config["data"]
    );
    expect_no_changes(&estates.app)
}

/// Every object app owns, its records included, by identity.
pub(super) fn app_objects(
    estates: &Estates,
) -> Result<std::collections::BTreeMap<String, ObjectVersion>, String> {
    let mut objects = estates.labelled(Some("app"))?;
    objects.extend(estates.records("app")?);
    Ok(snapshot(&objects))
}

/// Stage 11: With app's state deleted, apply finds and adopts every object; nothing created or destroyed.
pub(super) fn lost_state(estates: &Estates) -> Check {
    let before = app_objects(estates)?;
    let managed = managed_count(&estates.app)?;
    for name in ["terraform.tfstate", "terraform.tfstate.backup"] {
        remove(&file(estates, "app", name))?;
    }
    if broken(11) {
        estates.kubectl(&["delete", "configmap", "shard-0", "-n", "shop"])?;
    }
    let plan = plan(&estates.app, &[])?;
    let changes = pending(&plan);
    ensure!(
        changes.len() == managed && changes.iter().all(|(_, a)| a == &["create"]),
        "expected {managed} creates (one per object, each found again), the plan proposes {changes:?}"
    );
    apply(&estates.app, &[], (managed as u64, 0, 0))?;
    let after = app_objects(estates)?;
    let recreated: Vec<String> = snapshot_changes(&before, &after)
        .into_iter()
        .filter(|c| !c.contains(": modified"))
        .collect();
    ensure!(
        recreated.is_empty(),
        "objects were created twice or destroyed: {recreated:?}"
    );
    expect_no_changes(&estates.app)
}
