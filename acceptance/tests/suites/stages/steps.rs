//! What every stage uses: the estates' objects, the engine steps and checks (plan, apply,
//! counts, no changes, pending changes, labels, how many instances a state holds), and whether
//! this stage is the one `BREAK_STAGE` breaks on purpose.

use acceptance::ensure;
use acceptance::scenario::{Check, Estates, applied_counts, estate_of, pending};
use acceptance::{Engine, EngineOutput, PlanSummary};
use serde_json::Value;

pub(super) const GATEWAY_HOST: &str = "gateway.platform.svc.cluster.local";
pub(super) const GATEWAY_URL: &str = "http://gateway.platform.svc.cluster.local:80";

/// An object of the estates: its address, kubectl resource name, namespace and name.
pub(super) type Object = (&'static str, &'static str, Option<&'static str>, &'static str);

pub(super) const NETWORK_OBJECTS: [Object; 5] = [
    ("kubernetes_namespace.platform", "namespaces", None, "platform"),
    (
        "kubernetes_network_policy.default_deny",
        "networkpolicies.networking.k8s.io",
        Some("platform"),
        "default-deny",
    ),
    (
        "kubernetes_service.gateway",
        "services",
        Some("platform"),
        "gateway",
    ),
    (
        "kubernetes_config_map.routes",
        "configmaps",
        Some("platform"),
        "routes",
    ),
    (
        "kubernetes_config_map.limits",
        "configmaps",
        Some("platform"),
        "limits",
    ),
];

pub(super) const APP_OBJECTS: [Object; 9] = [
    ("kubernetes_namespace.shop", "namespaces", None, "shop"),
    (
        "kubernetes_config_map.app",
        "configmaps",
        Some("shop"),
        "app-config",
    ),
    (
        "kubernetes_config_map.shard[0]",
        "configmaps",
        Some("shop"),
        "shard-0",
    ),
    (
        "kubernetes_config_map.shard[1]",
        "configmaps",
        Some("shop"),
        "shard-1",
    ),
    (
        "kubernetes_service_account.app",
        "serviceaccounts",
        Some("shop"),
        "app",
    ),
    ("kubernetes_service.web", "services", Some("shop"), "web"),
    (
        "kubernetes_deployment.web",
        "deployments.apps",
        Some("shop"),
        "web",
    ),
    (
        "kubernetes_horizontal_pod_autoscaler_v2.web",
        "horizontalpodautoscalers.autoscaling",
        Some("shop"),
        "web",
    ),
    (
        "kubernetes_manifest.handoff",
        "configmaps",
        Some("platform"),
        "handoff",
    ),
];

/// The resource each estate records its outputs with.
pub(super) const RECORDS: &str = "records_outputs.this";

/// The stage `BREAK_STAGE` names, if any.
pub(super) fn break_stage() -> Option<u32> {
    let value = std::env::var("BREAK_STAGE").ok()?;
    let n = value
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("BREAK_STAGE={value}: expected a stage number 1..=13"));
    assert!(
        (1..=13).contains(&n),
        "BREAK_STAGE={value}: expected a stage number 1..=13"
    );
    Some(n)
}

/// True when stage `n` is to be broken on purpose.
pub(super) fn broken(n: u32) -> bool {
    break_stage() == Some(n)
}

/// `plan` saved and read back with `show -json`; the plan must succeed.
pub(super) fn plan(engine: &Engine, extra: &[&str]) -> Result<PlanSummary, String> {
    let (out, summary) = engine.plan_json(extra);
    ensure!(out.success(), "plan {} failed:\n{out}", extra.join(" "));
    summary.ok_or_else(|| format!("plan succeeded but wrote no plan file:\n{out}"))
}

/// `apply -auto-approve`; it must succeed and report `(added, changed, destroyed)`.
pub(super) fn apply(
    engine: &Engine,
    extra: &[&str],
    counts: (u64, u64, u64),
) -> Result<EngineOutput, String> {
    let mut args = vec!["apply", "-auto-approve"];
    args.extend_from_slice(extra);
    let out = engine.run(&args);
    ensure!(out.success(), "apply {} failed:\n{out}", extra.join(" "));
    expect_counts(&out, counts)?;
    Ok(out)
}

pub(super) fn expect_counts(out: &EngineOutput, counts: (u64, u64, u64)) -> Check {
    let seen = applied_counts(out);
    ensure!(
        seen == Some(counts),
        "expected {counts:?} (added, changed, destroyed), the engine said {seen:?}:\n{out}"
    );
    Ok(())
}

/// The next plan is empty: `plan -detailed-exitcode` exits 0.
pub(super) fn expect_no_changes(engine: &Engine) -> Check {
    let out = engine.run(&["plan", "-detailed-exitcode"]);
    ensure!(
        out.code == 0,
        "expected an empty plan (exit code 0), got exit code {}:\n{out}",
        out.code
    );
    Ok(())
}

/// The plan's changes other than no-op, exactly `expected` (address, actions) in any order.
pub(super) fn expect_pending(plan: &PlanSummary, expected: &[(&str, &[&str])]) -> Check {
    let mut seen = pending(plan);
    seen.sort();
    let mut want: Vec<(String, Vec<String>)> = expected
        .iter()
        .map(|(a, actions)| (a.to_string(), actions.iter().map(|s| s.to_string()).collect()))
        .collect();
    want.sort();
    ensure!(
        seen == want,
        "the plan proposes {seen:?}, expected exactly {want:?}"
    );
    Ok(())
}

pub(super) fn expect_label(object: &Value, estate: &str) -> Check {
    let label = estate_of(object);
    ensure!(
        label == Some(estate),
        "{} {} carries tofu-estate={label:?}, expected {estate:?}",
        object["kind"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    );
    Ok(())
}

pub(super) fn field<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(super) fn file(estates: &Estates, estate: &str, name: &str) -> std::path::PathBuf {
    estates.module_dir(estate).join(name)
}

/// How many resource instances the estate's state holds (data sources aside).
pub(super) fn managed_count(engine: &Engine) -> Result<usize, String> {
    let listed = engine.run(&["state", "list"]);
    ensure!(listed.success(), "state list failed:\n{listed}");
    Ok(listed
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("data."))
        .count())
}
