//! `kubectl_manifest`'s schema: the kubectl providers' attributes (alekc/kubectl v3's, schema
//! version 2, whose states of versions 0 and 1, gavinbunney's and alekc v2's, read as their
//! own), with the two fingerprints those kept, plus this provider's `estate`.

use plugin_runtime::{Attribute, Block, NestedBlock, Nesting, Schema, Type, Value};

/// alekc/kubectl v3's schema version; gavinbunney's and alekc v2's states are at 1, older at 0.
pub const VERSION: i64 = 2;
/// The field manager of the kubectl providers' writes.
pub const FIELD_MANAGER: &str = "kubectl";

fn flag(name: &str, default: bool, description: &str) -> Attribute {
    Attribute::optional(name, Type::Bool, description).with_default(Value::Bool(default))
}

fn text(name: &str, description: &str) -> Attribute {
    Attribute::computed(name, Type::String, description)
}

fn strings(name: &str, description: &str) -> Attribute {
    Attribute::optional(name, Type::list(Type::String), description)
}

/// The schema.
pub fn schema() -> Schema {
    let condition =
        Block::new("A status condition: an element of `status.conditions` with this type and status.")
            .attribute(Attribute::required("type", Type::String, "The condition's type."))
            .attribute(Attribute::required(
                "status",
                Type::String,
                "The condition's status.",
            ));
    let field = Block::new("A field whose value must match.")
        .attribute(Attribute::required(
            "key",
            Type::String,
            "The field's path: `status.phase`, `spec.ports[0].port`, `metadata.annotations[\"a.b/c\"]`.",
        ))
        .attribute(Attribute::required("value", Type::String, "The value wanted."))
        .attribute(
            Attribute::optional(
                "value_type",
                Type::String,
                "`eq` (the default): the value as text equals `value`; `regex`: it matches the regular expression `value`.",
            )
            .with_default(Value::string("eq")),
        );
    let wait_for = Block::new("After the write, wait until all of these hold on the object at once.")
        .block(NestedBlock::new("condition", Nesting::List, condition))
        .block(NestedBlock::new("field", Nesting::List, field));
    let timeouts = ["create", "update", "delete"].iter().fold(
        Block::new("How long each operation may take, with its waits (default 10m)."),
        |b, op| {
            b.attribute(Attribute::optional(
                op,
                Type::String,
                &format!("The {op} timeout, e.g. `10m`."),
            ))
        },
    );
    let block = Block::new(
        "One Kubernetes object of any kind, written as YAML, applied as the kubectl providers' \
         `kubectl_manifest` is, and stamped with its estate's label `tofu-estate` like every object \
         of this provider: adopted after a lost state, never written over another estate's, and \
         guarded against a stale plan.",
    )
    .attribute(text("id", "The object's path: `/apis/apps/v1/namespaces/shop/deployments/web`."))
    .attribute(Attribute::required("yaml_body", Type::String, "The object's manifest, as YAML (the first document).").sensitive())
    .attribute(text(
        "yaml_body_parsed",
        "`yaml_body` as applied (in `override_namespace`), with `sensitive_fields` masked; a Secret's values always are.",
    ))
    .attribute(text("drift", "The paths whose live values differ from the manifest, as YAML; empty when in sync."))
    .attribute(
        Attribute::optional("show_drift_values", Type::String, "How `drift` shows a drifted value: `none` (the default), `hash` or `full`.")
            .with_default(Value::string("none")),
    )
    .attribute(strings("mask_paths", "Paths (`*` one segment, `**` any) whose drift never shows a value."))
    .attribute(
        Attribute::optional(
            "drift_engine",
            Type::String,
            "`client` (the default): the manifest against the live object; `server`: a server-side dry run of the manifest against it.",
        )
        .with_default(Value::string("client")),
    )
    .attribute(text(
        "yaml_incluster",
        "The fingerprint (sha256) of the manifest's fields as the last write left them in the cluster, as gavinbunney's provider keeps it.",
    ).sensitive())
    .attribute(text(
        "live_manifest_incluster",
        "The same fingerprint at the last refresh: it differs from `yaml_incluster` when the object drifted.",
    ).sensitive())
    .attribute(text("uid", "The object's uid at the last apply."))
    .attribute(text("live_uid", "The object's uid at the last refresh (another uid: it was replaced; the next apply writes it again)."))
    .attribute(text("api_version", "The manifest's apiVersion."))
    .attribute(text("kind", "The manifest's kind."))
    .attribute(text("name", "The manifest's metadata.name."))
    .attribute(text("namespace", "The manifest's namespace (after `override_namespace`); null when it names none."))
    .attribute(Attribute::optional("override_namespace", Type::String, "The namespace to write the object in, whatever the YAML says."))
    .attribute(strings("sensitive_fields", "Dot paths masked in `yaml_body_parsed` (a Secret's `data` and `stringData` when none)."))
    .attribute(flag("force_new", false, "Any change of `yaml_body` replaces the object."))
    .attribute(flag("upgrade_api_version", false, "A change of apiVersion is applied in place instead of replacing the object."))
    .attribute(flag("server_side_apply", false, "Conflicts with other field managers are errors unless `force_conflicts`; without it, the manifest's values win, as with client-side apply."))
    .attribute(
        Attribute::optional("field_manager", Type::String, "The field manager of the writes (default `kubectl`).")
            .with_default(Value::string(FIELD_MANAGER)),
    )
    .attribute(flag("force_conflicts", false, "With `server_side_apply`, take over fields other managers own."))
    .attribute(flag("apply_only", false, "Destroy leaves the object in the cluster."))
    .attribute(strings("ignore_fields", "Paths left out of `drift` (`a.b`, a list index as `a.0` or `a.[0]`)."))
    .attribute(flag("wait", false, "Destroy waits until the object is gone (foreground deletion)."))
    .attribute(flag("wait_for_rollout", true, "After a write, wait for a Deployment, StatefulSet or DaemonSet to roll out, an APIService to be Available."))
    .attribute(flag("validate_schema", true, "Accepted for the kubectl providers' configurations: the API server validates every write."))
    .attribute(Attribute::optional("delete_cascade", Type::String, "`Background` or `Foreground` propagation on delete (default: Foreground with `wait`, else Background)."))
    .attribute(Attribute::computed("estate", Type::String, "The estate whose label `tofu-estate` the object carries (null when unlabelled)."))
    .block(NestedBlock::at_most_one("wait_for", wait_for))
    .block(NestedBlock::new("timeouts", Nesting::Single, timeouts));
    Schema::new(VERSION, block)
}
