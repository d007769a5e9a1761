//! Validation of Pods and the kinds with pod templates, after `pkg/apis/{core,apps,batch}/
//! validation`: pod specs, selectors against template labels, restart policies per kind,
//! CronJob schedules, and the fields updates may not change.

use serde_json::{Map, Value, json};

use super::{FieldError, go_quote, validate_port_number, validate_protocol, validate_resources};
use crate::names::dns1123_label_errors;

pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let old_spec = old.map(|o| o.get("spec").unwrap_or(&Value::Null));
    let mut errs = Vec::new();
    match kind {
        "Pod" => {
            errs.extend(pod_spec(spec, "spec", &[]));
            if let Some(old_spec) = old_spec {
                errs.extend(pod_update(spec, old_spec));
            }
        }
        "Deployment" => {
            errs.extend(replicas(spec));
            errs.extend(label_selector_and_template(spec, "deployment"));
            errs.extend(template(spec, "spec.template", &["Always"], &[]));
            if let Some(t) = spec.pointer("/strategy/type").and_then(Value::as_str)
                && !["Recreate", "RollingUpdate"].contains(&t)
            {
                errs.push(FieldError::not_supported(
                    "spec.strategy.type",
                    &json!(t),
                    &["Recreate", "RollingUpdate"],
                ));
            }
            // apps/validation ValidateDeploymentStrategy: the block belongs to RollingUpdate.
            if spec.pointer("/strategy/type").and_then(Value::as_str) == Some("Recreate")
                && spec
                    .pointer("/strategy/rollingUpdate")
                    .is_some_and(Value::is_object)
            {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
            errs.extend(immutable_selector(spec, old_spec));
        }
        "StatefulSet" => errs.extend(stateful_set(spec, old_spec)),
        "DaemonSet" => {
            errs.extend(immutable_selector(spec, old_spec));
            errs.extend(label_selector_and_template(spec, "daemonset"));
            errs.extend(template(spec, "spec.template", &["Always"], &[]));
        }
        "ReplicationController" => errs.extend(replication_controller(spec)),
        "Job" => {
            errs.extend(job_spec(spec, "spec", object.pointer("/metadata/uid")));
            if let Some(old_spec) = old_spec {
                errs.extend(job_update(spec, old_spec));
            }
        }
        "CronJob" => errs.extend(cron_job(spec)),
        _ => {}
    }
    errs
}

fn replicas(spec: &Value) -> Vec<FieldError> {
    match spec.get("replicas").and_then(Value::as_i64) {
        Some(r) if r < 0 => vec![FieldError::invalid(
            "spec.replicas",
            &json!(r),
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
}

/// A `LabelSelector` that must be set, non-empty and match the template's labels.
fn label_selector_and_template(spec: &Value, kind: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(s) => {
            let empty = |f: &str| {
                s.get(f).is_none_or(|v| {
                    v.as_object().is_some_and(Map::is_empty)
                        || v.as_array().is_some_and(Vec::is_empty)
                        || v.is_null()
                })
            };
            if empty("matchLabels") && empty("matchExpressions") {
                errs.push(FieldError::invalid(
                    "spec.selector",
                    s,
                    &format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    if let Some(s) = selector
        && let Ok(parsed) = crate::selectors::LabelSelector::from_label_selector(s)
        && !parsed.is_empty()
        && !parsed.matches_object(template)
    {
        let labels = template
            .pointer("/metadata/labels")
            .cloned()
            .unwrap_or(Value::Null);
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            &labels,
            "`selector` does not match template `labels`",
        ));
    }
    errs
}

/// The pod template at `spec.template` with the restart policies the kind allows.
fn template(spec: &Value, base: &str, restart: &[&str], claims: &[&str]) -> Vec<FieldError> {
    let pod = spec.pointer("/template/spec").unwrap_or(&Value::Null);
    let mut errs = pod_spec(pod, &format!("{base}.spec"), claims);
    if let Some(policy) = pod.get("restartPolicy").and_then(Value::as_str)
        && !restart.contains(&policy)
        && RESTART_POLICIES.contains(&policy)
    {
        errs.push(FieldError::not_supported(
            format!("{base}.spec.restartPolicy"),
            &json!(policy),
            restart,
        ));
    }
    errs
}

const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];

fn immutable_selector(spec: &Value, old_spec: Option<&Value>) -> Vec<FieldError> {
    match old_spec {
        Some(old) if old.get("selector") != spec.get("selector") => vec![FieldError::invalid(
            "spec.selector",
            spec.get("selector").unwrap_or(&Value::Null),
            "field is immutable",
        )],
        _ => Vec::new(),
    }
}

fn stateful_set(spec: &Value, old_spec: Option<&Value>) -> Vec<FieldError> {
    let mut errs = replicas(spec);
    if let Some(p) = spec.get("podManagementPolicy").and_then(Value::as_str)
        && !["OrderedReady", "Parallel"].contains(&p)
    {
        errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            &json!(p),
            "must be 'OrderedReady' or 'Parallel'",
        ));
    }
    let strategy = spec.pointer("/updateStrategy/type").and_then(Value::as_str);
    if let Some(t) = strategy
        && !["OnDelete", "RollingUpdate"].contains(&t)
    {
        errs.push(FieldError::invalid(
            "spec.updateStrategy",
            &json!(t),
            "must be 'RollingUpdate' or 'OnDelete'",
        ));
    }
    if let Some(rolling) = spec
        .pointer("/updateStrategy/rollingUpdate")
        .filter(|r| r.is_object())
        && strategy != Some("RollingUpdate")
    {
        // The internal Go struct, printed in field order.
        let printed = format!(
            "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
            super::canonical_json(rolling.get("partition").unwrap_or(&Value::Null)),
            super::canonical_json(rolling.get("maxUnavailable").unwrap_or(&Value::Null)),
        );
        errs.push(FieldError::invalid_printed(
            "spec.updateStrategy.rollingUpdate",
            &printed,
            "only allowed for updateStrategy 'RollingUpdate'",
        ));
    }
    errs.extend(label_selector_and_template(spec, "statefulset"));
    let claims: Vec<&Value> = spec["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    let claim_names: Vec<&str> = claims
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    for (i, claim) in claims.iter().enumerate() {
        let base = format!("spec.volumeClaimTemplates[{i}].spec");
        errs.extend(super::storage::claim_spec(&claim["spec"], &base));
    }
    errs.extend(template(spec, "spec.template", &["Always"], &claim_names));
    if let Some(old) = old_spec {
        let mutable = [
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "revisionHistoryLimit",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
        ];
        let rest = |s: &Value| {
            let mut m = s.as_object().cloned().unwrap_or_default();
            m.retain(|k, _| !mutable.contains(&k.as_str()));
            m
        };
        if rest(spec) != rest(old) {
            errs.push(FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
    }
    errs
}

fn replication_controller(spec: &Value) -> Vec<FieldError> {
    let mut errs = replicas(spec);
    let selector = spec
        .get("selector")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty());
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(selector) => {
            let labels = spec
                .pointer("/template/metadata/labels")
                .and_then(Value::as_object);
            let matches = labels.is_some_and(|l| selector.iter().all(|(k, v)| l.get(k) == Some(v)));
            if !matches {
                errs.push(FieldError::invalid(
                    "spec.template.metadata.labels",
                    &labels.cloned().map(Value::Object).unwrap_or(Value::Null),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    if spec.get("template").is_none_or(Value::is_null) {
        errs.push(FieldError::required("spec.template", ""));
    } else {
        errs.extend(template(spec, "spec.template", &["Always"], &[]));
    }
    errs
}

/// A Job spec (also a CronJob's `jobTemplate.spec`, which has no `uid` to check the
/// generated selector against).
fn job_spec(spec: &Value, base: &str, uid: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        if let Some(n) = spec.get(field).and_then(Value::as_i64)
            && n < 0
        {
            errs.push(FieldError::invalid(
                format!("{base}.{field}"),
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
    // A created Job's generated selector is exactly its uid label.
    if let Some(uid) = uid
        && spec.get("manualSelector") != Some(&json!(true))
        && spec["selector"] != json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    {
        errs.push(FieldError::invalid(
            format!("{base}.selector"),
            &spec["selector"],
            "`selector` not auto-generated",
        ));
    }
    let pod = spec.pointer("/template/spec").unwrap_or(&Value::Null);
    errs.extend(pod_spec(pod, &format!("{base}.template.spec"), &[]));
    match pod.get("restartPolicy").and_then(Value::as_str) {
        Some("OnFailure" | "Never") => {}
        Some("Always") | None => errs.push(FieldError::required(
            format!("{base}.template.spec.restartPolicy"),
            "valid values: \"OnFailure\", \"Never\"",
        )),
        Some(_) => {}
    }
    errs
}

fn job_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in [
        "selector",
        "completions",
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
    ] {
        if spec.get(field) != old.get(field) {
            errs.push(FieldError::invalid(
                format!("spec.{field}"),
                spec.get(field).unwrap_or(&Value::Null),
                "field is immutable",
            ));
        }
    }
    if spec.get("template") != old.get("template") {
        errs.push(FieldError::invalid(
            "spec.template",
            &spec["template"],
            "field is immutable",
        ));
    }
    errs
}

fn cron_job(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let schedule = spec.get("schedule").and_then(Value::as_str).unwrap_or("");
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    } else if schedule.contains("TZ") {
        errs.push(FieldError::invalid(
            "spec.schedule",
            &json!(schedule),
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    } else if let Err(e) = parse_schedule(schedule) {
        errs.push(FieldError::invalid("spec.schedule", &json!(schedule), &e));
    }
    if let Some(p) = spec.get("concurrencyPolicy").and_then(Value::as_str)
        && !["Allow", "Forbid", "Replace"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            &json!(p),
            &["Allow", "Forbid", "Replace"],
        ));
    }
    for field in [
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    ] {
        if let Some(n) = spec.get(field).and_then(Value::as_i64)
            && n < 0
        {
            errs.push(FieldError::invalid(
                format!("spec.{field}"),
                &json!(n),
                "must be greater than or equal to 0",
            ));
        }
    }
    let job = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
    errs.extend(job_spec(job, "spec.jobTemplate.spec", None));
    errs
}

/// robfig/cron's standard parser (5 fields or a `@` descriptor), with its error texts.
fn parse_schedule(schedule: &str) -> Result<(), String> {
    let schedule = schedule.trim();
    if let Some(descriptor) = schedule.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => Ok(()),
            d if d.starts_with("every ") => Ok(()),
            _ => Err(format!("unrecognized descriptor: {schedule}")),
        };
    }
    let fields: Vec<&str> = schedule.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    const MONTHS: &[&str] = &[
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: &[&str] = &["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let bounds: [(u32, u32, &[&str], u32); 5] = [
        (0, 59, &[], 0),
        (0, 23, &[], 0),
        (1, 31, &[], 0),
        (1, 12, MONTHS, 1),
        (0, 6, DAYS, 0),
    ];
    for (field, (min, max, names, first)) in fields.iter().zip(bounds) {
        for range in field.split(',') {
            cron_range(range, min, max, names, first)?;
        }
    }
    Ok(())
}

fn cron_range(expr: &str, min: u32, max: u32, names: &[&str], first: u32) -> Result<(), String> {
    let (range, step) = match expr.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (expr, None),
    };
    let number = |s: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
            return Ok(i as u32 + first);
        }
        s.parse::<u32>().map_err(|_| {
            format!(
                "failed to parse int from {s}: strconv.Atoi: parsing {}: invalid syntax",
                go_quote(s)
            )
        })
    };
    let (start, end) = if range == "*" || range == "?" {
        (min, max)
    } else {
        match range.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(range)?;
                (n, if step.is_some() { max } else { n })
            }
        }
    };
    if let Some(step) = step {
        let s = step.parse::<u32>().map_err(|_| {
            format!(
                "failed to parse int from {step}: strconv.Atoi: parsing {}: invalid syntax",
                go_quote(step)
            )
        })?;
        if s == 0 {
            return Err(format!("step of range should be a positive number: {expr}"));
        }
    }
    if start < min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({min}): {expr}"
        ));
    }
    if end > max {
        return Err(format!("end of range ({end}) above maximum ({max}): {expr}"));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    Ok(())
}

/// A Pod update may only change images, the active deadline and add tolerations.
fn pod_update(spec: &Value, old: &Value) -> Vec<FieldError> {
    let strip = |s: &Value| {
        let mut s = s.clone();
        for key in ["containers", "initContainers"] {
            for c in s.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(m) = c.as_object_mut() {
                    m.shift_remove("image");
                }
            }
        }
        if let Some(m) = s.as_object_mut() {
            m.shift_remove("activeDeadlineSeconds");
            m.shift_remove("tolerations");
        }
        s
    };
    let old_tolerations = old["tolerations"].as_array().cloned().unwrap_or_default();
    let kept = old_tolerations
        .iter()
        .all(|t| spec["tolerations"].as_array().is_some_and(|new| new.contains(t)));
    if strip(spec) == strip(old) && kept {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )]
}

/// The checks of a pod spec shared by Pods and every pod template; `claim_volumes` are the
/// names a StatefulSet's claim templates add to the volumes mounts may use.
pub(super) fn pod_spec(pod_spec: &Value, base: &str, claim_volumes: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut volumes: Vec<&str> = claim_volumes.to_vec();
    for (i, v) in pod_spec["volumes"].as_array().into_iter().flatten().enumerate() {
        let path = format!("{base}.volumes[{i}].name");
        match v["name"].as_str().filter(|n| !n.is_empty()) {
            None => errs.push(FieldError::required(path, "")),
            Some(name) => {
                for msg in dns1123_label_errors(name) {
                    errs.push(FieldError::invalid(&path, &json!(name), &msg));
                }
                if volumes.contains(&name) {
                    errs.push(FieldError::duplicate(&path, &json!(name)));
                }
                volumes.push(name);
            }
        }
    }
    if let Some(policy) = pod_spec.get("restartPolicy").and_then(Value::as_str)
        && !RESTART_POLICIES.contains(&policy)
    {
        errs.push(FieldError::not_supported(
            format!("{base}.restartPolicy"),
            &json!(policy),
            RESTART_POLICIES,
        ));
    }
    if let Some(policy) = pod_spec.get("dnsPolicy").and_then(Value::as_str) {
        const DNS: &[&str] = &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
        if !DNS.contains(&policy) {
            errs.push(FieldError::not_supported(
                format!("{base}.dnsPolicy"),
                &json!(policy),
                DNS,
            ));
        }
    }
    let containers = pod_spec
        .get("containers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if containers.is_empty() {
        errs.push(FieldError::required(format!("{base}.containers"), ""));
    }
    let mut names: Vec<&str> = Vec::new();
    let init: Vec<(String, &Value)> = pod_spec["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| (format!("{base}.initContainers[{i}]"), c))
        .collect();
    let main = containers
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("{base}.containers[{i}]"), c));
    for (path, c) in init.into_iter().chain(main) {
        errs.extend(container(c, &path, &mut names, &volumes));
    }
    errs
}

fn container<'a>(c: &'a Value, path: &str, names: &mut Vec<&'a str>, volumes: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = c.get("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    } else {
        for msg in dns1123_label_errors(name) {
            errs.push(FieldError::invalid(format!("{path}.name"), &json!(name), &msg));
        }
        if names.contains(&name) {
            errs.push(FieldError::duplicate(format!("{path}.name"), &json!(name)));
        }
        names.push(name);
    }
    if c.get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .is_empty()
    {
        errs.push(FieldError::required(format!("{path}.image"), ""));
    }
    if let Some(policy) = c.get("imagePullPolicy").and_then(Value::as_str) {
        const POLICIES: &[&str] = &["Always", "IfNotPresent", "Never"];
        if !POLICIES.contains(&policy) {
            errs.push(FieldError::not_supported(
                format!("{path}.imagePullPolicy"),
                &json!(policy),
                POLICIES,
            ));
        }
    }
    for (j, port) in c
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("{path}.ports[{j}]");
        match port.get("containerPort").and_then(Value::as_i64) {
            None | Some(0) => errs.push(FieldError::required(format!("{p}.containerPort"), "")),
            Some(n) => validate_port_number(&format!("{p}.containerPort"), Some(&json!(n)), &mut errs),
        }
        if let Some(host) = port.get("hostPort").and_then(Value::as_i64)
            && host != 0
        {
            validate_port_number(&format!("{p}.hostPort"), Some(&json!(host)), &mut errs);
        }
        validate_protocol(&format!("{p}.protocol"), port.get("protocol"), &mut errs);
    }
    for (j, env) in c
        .get("env")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if env.get("name").and_then(Value::as_str).unwrap_or("").is_empty() {
            errs.push(FieldError::required(format!("{path}.env[{j}].name"), ""));
        }
    }
    for (j, mount) in c
        .get("volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("{path}.volumeMounts[{j}]");
        let name = mount["name"].as_str().unwrap_or("");
        if name.is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        } else if !volumes.contains(&name) {
            errs.push(FieldError::with_value(
                format!("{p}.name"),
                "FieldValueNotFound",
                "Not found",
                &json!(name),
                "",
            ));
        }
        if mount["mountPath"].as_str().unwrap_or("").is_empty() {
            errs.push(FieldError::required(format!("{p}.mountPath"), ""));
        }
    }
    errs.extend(validate_resources(
        c.get("resources"),
        &format!("{path}.resources"),
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_schedules() {
        assert!(parse_schedule("*/15 * * * *").is_ok());
        assert!(parse_schedule("0 3 * jan-mar mon,fri").is_ok());
        assert!(parse_schedule("@daily").is_ok());
        assert_eq!(
            parse_schedule("every 15 minutes").unwrap_err(),
            "expected exactly 5 fields, found 3: [every 15 minutes]"
        );
        assert_eq!(
            parse_schedule("61 * * * *").unwrap_err(),
            "end of range (61) above maximum (59): 61"
        );
        assert_eq!(
            parse_schedule("x * * * *").unwrap_err(),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
    }
}
