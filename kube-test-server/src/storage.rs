//! Volumes as on `make test-real`'s cluster: the StorageClass `standard` (the default, with
//! the provisioner `realk8s.local/hostpath`, `Delete`, `Immediate`, expansion allowed), that
//! provisioner (a hostPath volume per claim, a path only, deleted again once Released; a larger
//! request resizes volume and claim), and the parts of kube-controller-manager that move
//! volumes and claims: the binder (a claim binds to the volume provisioned for it, the one it
//! names, or the smallest Available one that matches; volumes become Available, Bound,
//! Released), the pv- and pvc-protection controllers (a deleted claim goes once no running
//! pod uses it, a deleted volume once it is no longer bound) and the ephemeral-volume
//! controller (a pod's ephemeral volume's claim, `<pod>-<volume>`, owned by the pod), as
//! kube-controller-manager v1.36 writes them.

use serde_json::{Value, json};

use crate::defaults::Quantity;
use crate::pass::Pass;
use crate::pods::terminal;
use crate::resources::{PERSISTENTVOLUMECLAIMS, PERSISTENTVOLUMES, PODS, STORAGECLASSES};
use crate::scheduler::SELECTED_NODE;

pub const PROVISIONER: &str = "realk8s.local/hostpath";
const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const STORAGE_PROVISIONER: [&str; 2] = [
    "volume.beta.kubernetes.io/storage-provisioner",
    "volume.kubernetes.io/storage-provisioner",
];
const MANAGER: &str = "kube-controller-manager";

/// The default StorageClass a cluster with nodes starts with.
pub fn standard_class() -> Value {
    json!({
        "kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
        "allowVolumeExpansion": true,
    })
}

pub fn sync(pass: &mut Pass) {
    for pod in pass.list(&PODS, None) {
        ephemeral_claims(pass, &pod);
    }
    for claim in pass.list(&PERSISTENTVOLUMECLAIMS, None) {
        if claim["metadata"].get("deletionTimestamp").is_some() {
            protect_claim(pass, &claim);
        } else {
            bind_claim(pass, &claim);
        }
    }
    for volume in pass.list(&PERSISTENTVOLUMES, None) {
        sync_volume(pass, &volume);
    }
}

fn storage(value: &Value) -> f64 {
    value
        .as_str()
        .and_then(Quantity::parse)
        .map_or(0.0, |q| q.as_f64())
}

fn name(obj: &Value) -> &str {
    obj["metadata"]["name"].as_str().unwrap_or("")
}

fn claim_ref(claim: &Value) -> Value {
    let m = &claim["metadata"];
    json!({"kind": "PersistentVolumeClaim", "namespace": m["namespace"], "name": m["name"], "uid": m["uid"],
           "apiVersion": "v1", "resourceVersion": m["resourceVersion"]})
}

/// Whether `volume` is reserved for, or may serve, `claim`.
fn matches(volume: &Value, claim: &Value) -> bool {
    let reserved = &volume["spec"]["claimRef"];
    if reserved.is_object() {
        return reserved["name"] == claim["metadata"]["name"]
            && reserved["namespace"] == claim["metadata"]["namespace"]
            && reserved["uid"]
                .as_str()
                .is_none_or(|u| u.is_empty() || claim["metadata"]["uid"] == u);
    }
    let class = |o: &Value| o["spec"]["storageClassName"].as_str().unwrap_or("").to_string();
    let modes = volume["spec"]["accessModes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let selector = &claim["spec"]["selector"];
    let selected = selector.is_null()
        || crate::selectors::LabelSelector::from_label_selector(selector)
            .is_ok_and(|s| s.matches_object(volume));
    volume["status"]["phase"] == "Available"
        && class(volume) == class(claim)
        && claim["spec"]["accessModes"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|m| modes.contains(m))
        && storage(&volume["spec"]["capacity"]["storage"])
            >= storage(&claim["spec"]["resources"]["requests"]["storage"])
        && volume["spec"]["volumeMode"].as_str().unwrap_or("Filesystem")
            == claim["spec"]["volumeMode"].as_str().unwrap_or("Filesystem")
        && selected
}

/// The ephemeral-volume controller: the claims of a pod's ephemeral volumes.
fn ephemeral_claims(pass: &mut Pass, pod: &Value) {
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return;
    }
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or("");
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        let template = &volume["ephemeral"]["volumeClaimTemplate"];
        if !template.is_object() {
            continue;
        }
        let claim = format!("{}-{}", name(pod), volume["name"].as_str().unwrap_or(""));
        if pass.get(&PERSISTENTVOLUMECLAIMS, namespace, &claim).is_some() {
            continue;
        }
        let mut metadata = template["metadata"].clone();
        if !metadata.is_object() {
            metadata = json!({});
        }
        metadata["name"] = json!(claim);
        metadata["namespace"] = json!(namespace);
        metadata["ownerReferences"] = crate::pass::owner_reference(pod, "v1", "Pod");
        let object = json!({"metadata": metadata, "spec": template["spec"]});
        pass.create(PERSISTENTVOLUMECLAIMS, object, MANAGER);
    }
}

/// The binder and the provisioner for one claim.
fn bind_claim(pass: &mut Pass, claim: &Value) {
    let volumes = pass.list(&PERSISTENTVOLUMES, None);
    if claim["status"]["phase"] == "Bound" {
        resize(pass, claim, &volumes);
        return;
    }
    let wanted = claim["spec"]["volumeName"].as_str().filter(|v| !v.is_empty());
    let volume = match wanted {
        Some(wanted) => volumes.iter().find(|v| name(v) == wanted && matches(v, claim)),
        None => volumes
            .iter()
            .filter(|v| v["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"] || matches(v, claim))
            .min_by(|a, b| {
                storage(&a["spec"]["capacity"]["storage"])
                    .total_cmp(&storage(&b["spec"]["capacity"]["storage"]))
            }),
    };
    if let Some(volume) = volume {
        bind(pass, claim, volume, wanted.is_none());
        return;
    }
    let class_name = claim["spec"]["storageClassName"].as_str().unwrap_or("");
    let Some(class) = pass.get(&STORAGECLASSES, "", class_name) else {
        return;
    };
    let provisioner = class["provisioner"].as_str().unwrap_or("");
    if wanted.is_some() || provisioner == "kubernetes.io/no-provisioner" {
        return;
    }
    // The binder hands the claim to its class's provisioner.
    let mut handed = claim.clone();
    for key in STORAGE_PROVISIONER {
        handed["metadata"]["annotations"][key] = json!(provisioner);
    }
    let claim = pass.update(PERSISTENTVOLUMECLAIMS, claim, handed, MANAGER, None);
    let delayed = class["volumeBindingMode"] == "WaitForFirstConsumer";
    let node = claim["metadata"]["annotations"][SELECTED_NODE].as_str();
    if provisioner != PROVISIONER || (delayed && node.is_none()) {
        return;
    }
    let volume_name = format!("pvc-{}", claim["metadata"]["uid"].as_str().unwrap_or(""));
    let mut spec = json!({
        "capacity": {"storage": claim["spec"]["resources"]["requests"]["storage"]},
        "accessModes": claim["spec"]["accessModes"],
        "persistentVolumeReclaimPolicy": class["reclaimPolicy"].as_str().unwrap_or("Delete"),
        "storageClassName": class_name,
        "volumeMode": claim["spec"]["volumeMode"].as_str().unwrap_or("Filesystem"),
        "hostPath": {"path": format!("/var/lib/realk8s/volumes/{volume_name}"), "type": "DirectoryOrCreate"},
        "claimRef": claim_ref(&claim),
    });
    if let Some(options) = class["mountOptions"].as_array() {
        spec["mountOptions"] = json!(options);
    }
    if let (true, Some(node)) = (delayed, node) {
        spec["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}});
    }
    let volume = json!({"metadata": {"name": volume_name, "annotations": {PROVISIONED_BY: PROVISIONER}}, "spec": spec});
    pass.create(PERSISTENTVOLUMES, volume, PROVISIONER);
}

/// Binds a claim and a volume both ways (`bound_by_controller`: the binder chose the volume).
fn bind(pass: &mut Pass, claim: &Value, volume: &Value, bound_by_controller: bool) {
    if !volume["spec"]["claimRef"].is_object()
        || volume["spec"]["claimRef"]["uid"]
            .as_str()
            .is_none_or(str::is_empty)
    {
        let mut reserved = volume.clone();
        reserved["spec"]["claimRef"] = claim_ref(claim);
        if !volume["spec"]["claimRef"].is_object() {
            reserved["metadata"]["annotations"][BOUND_BY_CONTROLLER] = json!("yes");
        }
        pass.update(PERSISTENTVOLUMES, volume, reserved, MANAGER, None);
    }
    let mut bound = claim.clone();
    bound["spec"]["volumeName"] = json!(name(volume));
    bound["metadata"]["annotations"][BIND_COMPLETED] = json!("yes");
    if bound_by_controller {
        bound["metadata"]["annotations"][BOUND_BY_CONTROLLER] = json!("yes");
    }
    let bound = pass.update(PERSISTENTVOLUMECLAIMS, claim, bound, MANAGER, None);
    let mut status = bound.clone();
    status["status"] = json!({"phase": "Bound", "accessModes": volume["spec"]["accessModes"],
                              "capacity": volume["spec"]["capacity"]});
    pass.update(PERSISTENTVOLUMECLAIMS, &bound, status, MANAGER, Some("status"));
}

/// A bound claim asking for more than its provisioned volume holds: both grow.
fn resize(pass: &mut Pass, claim: &Value, volumes: &[Value]) {
    let wanted = &claim["spec"]["resources"]["requests"]["storage"];
    let Some(volume) = volumes
        .iter()
        .find(|v| Some(name(v)) == claim["spec"]["volumeName"].as_str())
    else {
        return;
    };
    if volume["metadata"]["annotations"][PROVISIONED_BY] != PROVISIONER {
        return;
    }
    if storage(wanted) > storage(&volume["spec"]["capacity"]["storage"]) {
        let mut grown = volume.clone();
        grown["spec"]["capacity"]["storage"] = wanted.clone();
        pass.update(PERSISTENTVOLUMES, volume, grown, PROVISIONER, None);
    }
    if storage(wanted) > storage(&claim["status"]["capacity"]["storage"]) {
        let mut grown = claim.clone();
        grown["status"]["capacity"]["storage"] = wanted.clone();
        pass.update(PERSISTENTVOLUMECLAIMS, claim, grown, PROVISIONER, Some("status"));
    }
}

/// The pvc-protection controller: a deleted claim goes once no pod that still runs uses it.
fn protect_claim(pass: &mut Pass, claim: &Value) {
    let namespace = claim["metadata"]["namespace"].as_str().unwrap_or("");
    let claim_name = name(claim);
    let used = pass.list(&PODS, Some(namespace)).iter().any(|pod| {
        !terminal(pod)
            && pod["spec"]["volumes"].as_array().into_iter().flatten().any(|v| {
                v["persistentVolumeClaim"]["claimName"] == claim_name
                    || (v.get("ephemeral").is_some()
                        && format!("{}-{}", name(pod), v["name"].as_str().unwrap_or("")) == claim_name)
            })
    });
    if !used {
        pass.release(PERSISTENTVOLUMECLAIMS, claim, "kubernetes.io/pvc-protection");
    }
}

/// Phases, release and reclaim of one volume, and the pv-protection controller.
fn sync_volume(pass: &mut Pass, volume: &Value) {
    let reserved = &volume["spec"]["claimRef"];
    let claim = reserved["namespace"]
        .as_str()
        .zip(reserved["name"].as_str())
        .and_then(|(ns, n)| pass.get(&PERSISTENTVOLUMECLAIMS, ns, n))
        .filter(|c| {
            reserved["uid"]
                .as_str()
                .is_none_or(|u| u.is_empty() || c["metadata"]["uid"] == u)
        });
    let phase = match &claim {
        _ if !reserved.is_object() => "Available",
        Some(c) if c["spec"]["volumeName"] == name(volume) => "Bound",
        Some(_) => "Available",
        None if reserved["uid"].as_str().is_some_and(|u| !u.is_empty()) => "Released",
        None => "Available",
    };
    let volume = if volume["status"]["phase"] == phase {
        volume.clone()
    } else {
        let mut moved = volume.clone();
        moved["status"] = json!({"phase": phase, "lastPhaseTransitionTime": pass.time});
        pass.update(PERSISTENTVOLUMES, volume, moved, MANAGER, Some("status"))
    };
    if volume["metadata"].get("deletionTimestamp").is_some() {
        if phase != "Bound" {
            pass.release(PERSISTENTVOLUMES, &volume, "kubernetes.io/pv-protection");
        }
        return;
    }
    let ours = volume["metadata"]["annotations"][PROVISIONED_BY] == PROVISIONER;
    if ours && phase == "Released" && volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete" {
        pass.delete(PERSISTENTVOLUMES, &volume);
    }
}
