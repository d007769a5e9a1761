//! Stages 4 to 8, the everyday changes: drift reverted, a rename, a removed block, a changed
//! count, and create_before_destroy.

use super::steps::{
    GATEWAY_URL, apply, broken, expect_label, expect_no_changes, expect_pending, field, file, plan,
};
use acceptance::ensure;
use acceptance::scenario::{
    Check, Estates, pending, read, remove, remove_block, replace_all, resource_change, write,
};

/// Stage 4: A kubectl edit of app-config is one in-place update, which apply reverts.
pub(super) fn drift(estates: &Estates) -> Check {
    let (target, patch) = if broken(4) {
        ("shard-0", r#"{"data":{"index":"9"}}"#)
    } else {
        (
            "app-config",
            r#"{"data":{"gateway":"http://drifted.example:80"}}"#,
        )
    };
    estates.kubectl(&[
        "patch",
        "configmap",
        target,
        "-n",
        "shop",
        "--type",
        "merge",
        "-p",
        patch,
    ])?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(&plan, &[("kubernetes_config_map.app", &["update"])])?;
    apply(&estates.app, &[], (0, 1, 0))?;
    let config = estates.existing("configmaps", Some("shop"), "app-config")?;
    ensure!(
        field(&config, "/data/gateway") == GATEWAY_URL,
        "apply left app-config's gateway at {:?}",
        config["data"]
    );
    expect_no_changes(&estates.app)
}

/// Stage 5: A `moved` block renames the ServiceAccount's address without touching the object.
pub(super) fn rename(estates: &Estates) -> Check {
    let before = estates.existing("serviceaccounts", Some("shop"), "app")?;
    let main = file(estates, "app", "main.tf");
    let text = read(&main)?;
    let text = replace_all(
        &text,
        "resource \"kubernetes_service_account\" \"app\"",
        "resource \"kubernetes_service_account\" \"team\"",
    )?;
    let text = replace_all(
        &text,
        "kubernetes_service_account.app.",
        "kubernetes_service_account.team.",
    )?;
    write(&main, &text)?;
    if !broken(5) {
        let moved =
            "moved {\n  from = kubernetes_service_account.app\n  to   = kubernetes_service_account.team\n}\n";
        write(&file(estates, "app", "moved.tf"), moved)?;
    }
    let plan = plan(&estates.app, &[])?;
    ensure!(
        plan.is_empty(),
        "the rename plans {:?}, expected nothing",
        pending(&plan)
    );
    let change = resource_change(&plan, "kubernetes_service_account.team")
        .ok_or("the plan does not mention kubernetes_service_account.team")?;
    ensure!(
        change["previous_address"] == "kubernetes_service_account.app",
        "kubernetes_service_account.team's previous address is {}",
        change["previous_address"]
    );
    apply(&estates.app, &[], (0, 0, 0))?;
    let after = estates.existing("serviceaccounts", Some("shop"), "app")?;
    ensure!(
        after["metadata"]["uid"] == before["metadata"]["uid"]
            && after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"],
        "ServiceAccount app was touched by the rename: {} -> {}",
        before["metadata"],
        after["metadata"]
    );
    expect_label(&after, "app")
}

pub(super) const HPA_BLOCK: &str = "resource \"kubernetes_horizontal_pod_autoscaler_v2\" \"web\" {";

/// Stage 6: Deleting a resource block destroys exactly that object; putting it back recreates it.
pub(super) fn remove_a_block(estates: &Estates) -> Check {
    let main = file(estates, "app", "main.tf");
    let original = read(&main)?;
    let mut edited = remove_block(&original, HPA_BLOCK)?;
    if broken(6) {
        edited = remove_block(&edited, "resource \"kubernetes_manifest\" \"handoff\" {")?;
    }
    write(&main, &edited)?;
    let plan = plan(&estates.app, &[])?;
    expect_pending(
        &plan,
        &[("kubernetes_horizontal_pod_autoscaler_v2.web", &["delete"])],
    )?;
    apply(&estates.app, &[], (0, 0, 1))?;
    ensure!(
        estates
            .object("horizontalpodautoscalers.autoscaling", Some("shop"), "web")?
            .is_none(),
        "the HPA web still exists after its block was removed and applied"
    );
    expect_no_changes(&estates.app)?;
    write(&main, &original)?;
    apply(&estates.app, &[], (1, 0, 0))?;
    expect_label(
        &estates.existing("horizontalpodautoscalers.autoscaling", Some("shop"), "web")?,
        "app",
    )
}

/// Stage 7: shard_count 2 -> 1 destroys exactly shard-1; back to 2 creates it again.
pub(super) fn change_count(estates: &Estates) -> Check {
    let shard_0 = estates.existing("configmaps", Some("shop"), "shard-0")?;
    let fewer = if broken(7) {
        "shard_count=0"
    } else {
        "shard_count=1"
    };
    let plan_fewer = plan(&estates.app, &["-var", fewer])?;
    expect_pending(&plan_fewer, &[("kubernetes_config_map.shard[1]", &["delete"])])?;
    apply(&estates.app, &["-var", fewer], (0, 0, 1))?;
    ensure!(
        estates.object("configmaps", Some("shop"), "shard-1")?.is_none(),
        "shard-1 still exists"
    );
    let shard_0_after = estates.existing("configmaps", Some("shop"), "shard-0")?;
    ensure!(
        shard_0_after["metadata"]["resourceVersion"] == shard_0["metadata"]["resourceVersion"],
        "shard-0 changed while shard-1 was removed"
    );
    let plan_back = plan(&estates.app, &[])?;
    expect_pending(&plan_back, &[("kubernetes_config_map.shard[1]", &["create"])])?;
    apply(&estates.app, &[], (1, 0, 0))?;
    expect_label(&estates.existing("configmaps", Some("shop"), "shard-1")?, "app")
}

/// Stage 8: A renamed create_before_destroy ConfigMap: cfg-b is created before cfg-a is deleted.
pub(super) fn create_before_destroy(estates: &Estates) -> Check {
    let lifecycle = if broken(8) {
        ""
    } else {
        "\n  lifecycle {\n    create_before_destroy = true\n  }\n"
    };
    let cbd = file(estates, "app", "cbd.tf");
    write(
        &cbd,
        &format!(
            r#"variable "cfg_name" {{
  type    = string
  default = "cfg-a"
}}

resource "kubernetes_config_map" "cfg" {{
  metadata {{
    name      = var.cfg_name
    namespace = kubernetes_namespace.shop.metadata[0].name
  }}

  data = {{
    purpose = "replaced on rename"
  }}
{lifecycle}}}
"#
        ),
    )?;
    apply(&estates.app, &[], (1, 0, 0))?;
    estates.existing("configmaps", Some("shop"), "cfg-a")?;
    let plan = plan(&estates.app, &["-var", "cfg_name=cfg-b"])?;
    expect_pending(&plan, &[("kubernetes_config_map.cfg", &["create", "delete"])])?;
    let out = apply(
        &estates.app,
        &["-parallelism=1", "-var", "cfg_name=cfg-b"],
        (1, 0, 1),
    )?;
    let created = out.stdout.find("kubernetes_config_map.cfg: Creation complete");
    let destroying = out.stdout.find("kubernetes_config_map.cfg (deposed object");
    ensure!(
        matches!((created, destroying), (Some(c), Some(d)) if c < d),
        "the apply log does not show cfg-b created before cfg-a's delete:\n{out}"
    );
    ensure!(
        estates.object("configmaps", Some("shop"), "cfg-a")?.is_none(),
        "cfg-a still exists"
    );
    expect_label(&estates.existing("configmaps", Some("shop"), "cfg-b")?, "app")?;
    remove(&cbd)?;
    apply(&estates.app, &[], (0, 0, 1))?;
    Ok(())
}
