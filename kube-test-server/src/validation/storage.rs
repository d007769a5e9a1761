//! Validation of PersistentVolumes, PersistentVolumeClaims (and claim templates),
//! StorageClasses and CSIDrivers, after `pkg/apis/{core,storage}/validation`.
//!
//! The real immutability errors of volumes and claims end in a diff of Go structs; these
//! carry the same message without it.

use serde_json::{Value, json};

use super::{FieldError, str_at};
use crate::defaults::Quantity;
use crate::names::qualified_name_errors;

pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    match kind {
        "PersistentVolume" => volume(spec, old.map(|o| &o["spec"])),
        "PersistentVolumeClaim" => {
            let mut errs = claim_spec(spec, "spec");
            if let Some(old) = old
                && old["spec"] != *spec
            {
                errs.push(FieldError::forbidden(
                    "spec",
                    "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
                ));
            }
            errs
        }
        "StorageClass" => storage_class(object, old),
        "CSIDriver" => csi_driver(spec, old.map(|o| &o["spec"])),
        _ => Vec::new(),
    }
}

const ACCESS_MODES: &[&str] = &[
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

fn access_modes(spec: &Value, base: &str, required_detail: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let modes = spec["accessModes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if modes.is_empty() {
        errs.push(FieldError::required(
            format!("{base}.accessModes"),
            required_detail,
        ));
    }
    for mode in modes {
        if !mode.as_str().is_some_and(|m| ACCESS_MODES.contains(&m)) {
            errs.push(FieldError::not_supported(
                format!("{base}.accessModes"),
                mode,
                ACCESS_MODES,
            ));
        }
    }
    errs
}

fn volume_mode(spec: &Value, base: &str) -> Vec<FieldError> {
    match spec["volumeMode"].as_str() {
        Some(m) if !["Block", "Filesystem"].contains(&m) => vec![FieldError::not_supported(
            format!("{base}.volumeMode"),
            &json!(m),
            &["Block", "Filesystem"],
        )],
        _ => Vec::new(),
    }
}

/// A claim's spec, also of a StatefulSet's claim templates.
pub(super) fn claim_spec(spec: &Value, base: &str) -> Vec<FieldError> {
    let mut errs = access_modes(spec, base, "at least 1 access mode is required");
    match spec.pointer("/resources/requests/storage") {
        None => errs.push(FieldError::required(format!("{base}.resources[storage]"), "")),
        Some(q) => {
            if q.as_str()
                .and_then(Quantity::parse)
                .is_some_and(|q| q <= Quantity::parse("0").expect("zero"))
            {
                errs.push(FieldError::invalid(
                    format!("{base}.resources[storage]"),
                    q,
                    "must be greater than zero",
                ));
            }
        }
    }
    errs.extend(volume_mode(spec, base));
    errs
}

/// The volume source fields of a PersistentVolume spec (exactly one may be set).
const SOURCES: &[&str] = &[
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "csi",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "glusterfs",
    "hostPath",
    "iscsi",
    "local",
    "nfs",
    "photonPersistentDisk",
    "portworxVolume",
    "quobyte",
    "rbd",
    "scaleIO",
    "storageos",
    "vsphereVolume",
];

fn volume(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = access_modes(spec, "spec", "");
    let capacity = spec["capacity"].as_object();
    if capacity.is_none_or(|c| c.is_empty()) {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if capacity.is_none_or(|c| !c.contains_key("storage") || c.len() > 1) {
        errs.push(FieldError::not_supported(
            "spec.capacity",
            &spec["capacity"],
            &["storage"],
        ));
    }
    let sources: Vec<&&str> = SOURCES
        .iter()
        .filter(|s| spec.get(**s).is_some_and(|v| !v.is_null()))
        .collect();
    match sources.as_slice() {
        [] => errs.push(FieldError::required("spec", "must specify a volume type")),
        [_] => {}
        [_, extra @ ..] => {
            for s in extra {
                errs.push(FieldError::forbidden(
                    format!("spec.{s}"),
                    "may not specify more than 1 volume type",
                ));
            }
        }
    }
    if let Some(host) = spec.get("hostPath").filter(|h| !h.is_null())
        && str_at(host, "/path").is_empty()
    {
        errs.push(FieldError::required("spec.hostPath.path", ""));
    }
    if let Some(p) = spec["persistentVolumeReclaimPolicy"].as_str()
        && !["Delete", "Recycle", "Retain"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            &json!(p),
            &["Delete", "Recycle", "Retain"],
        ));
    }
    errs.extend(volume_mode(spec, "spec"));
    if let Some(old) = old {
        if SOURCES.iter().any(|s| old.get(*s) != spec.get(*s)) {
            errs.push(FieldError::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        if old.get("volumeMode") != spec.get("volumeMode") {
            errs.push(FieldError::invalid(
                "spec.volumeMode",
                &spec["volumeMode"],
                "field is immutable",
            ));
        }
    }
    errs
}

fn storage_class(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let provisioner = str_at(object, "/provisioner");
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        for msg in qualified_name_errors(&provisioner.to_lowercase()) {
            errs.push(FieldError::invalid("provisioner", &json!(provisioner), &msg));
        }
    }
    if let Some(p) = object["reclaimPolicy"].as_str()
        && !["Delete", "Retain"].contains(&p)
    {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            &json!(p),
            &["Delete", "Retain"],
        ));
    }
    if let Some(m) = object["volumeBindingMode"].as_str()
        && !["Immediate", "WaitForFirstConsumer"].contains(&m)
    {
        errs.push(FieldError::not_supported(
            "volumeBindingMode",
            &json!(m),
            &["Immediate", "WaitForFirstConsumer"],
        ));
    }
    if let Some(old) = old {
        for field in ["parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"] {
            if old.get(field) != object.get(field) {
                errs.push(FieldError::invalid(
                    field,
                    object.get(field).unwrap_or(&Value::Null),
                    "field is immutable",
                ));
            }
        }
    }
    errs
}

fn csi_driver(spec: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    const POLICIES: &[&str] = &["File", "None", "ReadWriteOnceWithFSType"];
    if let Some(p) = spec["fsGroupPolicy"].as_str()
        && !POLICIES.contains(&p)
    {
        errs.push(FieldError::not_supported(
            "spec.fsGroupPolicy",
            &json!(p),
            POLICIES,
        ));
    }
    for mode in spec["volumeLifecycleModes"].as_array().into_iter().flatten() {
        if !mode
            .as_str()
            .is_some_and(|m| ["Ephemeral", "Persistent"].contains(&m))
        {
            errs.push(FieldError::not_supported(
                "spec.volumeLifecycleModes",
                mode,
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    if let Some(old) = old {
        // The recorded apiserver names the first field `attachedRequired`.
        for (field, path) in [
            ("attachRequired", "spec.attachedRequired"),
            ("volumeLifecycleModes", "spec.volumeLifecycleModes"),
        ] {
            if old.get(field) != spec.get(field) {
                errs.push(FieldError::invalid(path, &spec[field], "field is immutable"));
            }
        }
    }
    errs
}
