//! A type's schema version and the upgrades of its older states, as hashicorp declares them
//! (`schema_version` and `state_upgrade` facts, from `catalog/hashicorp/versions.tsv`): the
//! runtime applies them to a stored state before reading it ([`plugin_runtime::upgrade`]).

use plugin_runtime::{Change, StateUpgrade};

use super::of;

/// hashicorp's `SchemaVersion` of `type_name`; 0 when it declares none.
pub fn schema_version(type_name: &str) -> i64 {
    of(type_name)
        .iter()
        .find(|f| f.kind == "schema_version")
        .and_then(|f| f.argument.parse().ok())
        .unwrap_or(0)
}

/// What hashicorp's state upgraders do to an older state of `type_name`, step by step.
pub fn state_upgrades(type_name: &str) -> Vec<StateUpgrade> {
    of(type_name)
        .iter()
        .filter(|f| f.kind == "state_upgrade")
        .filter_map(|f| {
            let (from, change) = f.argument.split_once(' ')?;
            let change = match change {
                "block_to_map" => Change::BlockToMap,
                "drop" => Change::Drop,
                _ => return None,
            };
            Some(StateUpgrade::new(from.parse().ok()?, f.path, change))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_hashicorps() {
        for ty in [
            "kubernetes_deployment",
            "kubernetes_deployment_v1",
            "kubernetes_daemonset",
            "kubernetes_daemon_set_v1",
            "kubernetes_stateful_set_v1",
            "kubernetes_job",
            "kubernetes_pod_v1",
            "kubernetes_replication_controller",
            "kubernetes_service",
            "kubernetes_service_v1",
            "kubernetes_cron_job",
            "kubernetes_ingress",
        ] {
            assert_eq!(schema_version(ty), 1, "{ty}");
        }
        for ty in [
            "kubernetes_config_map",
            "kubernetes_cron_job_v1",
            "kubernetes_ingress_v1",
        ] {
            assert_eq!(schema_version(ty), 0, "{ty}");
            assert!(state_upgrades(ty).is_empty(), "{ty}");
        }
    }

    #[test]
    fn workload_resources_blocks_become_maps_and_services_lose_top_level_ingress() {
        let deployment = state_upgrades("kubernetes_deployment_v1");
        assert_eq!(deployment.len(), 4);
        assert!(deployment.contains(&StateUpgrade::new(
            0,
            "spec.template.spec.container.resources.limits",
            Change::BlockToMap
        )));
        assert!(state_upgrades("kubernetes_pod").contains(&StateUpgrade::new(
            0,
            "spec.init_container.resources.requests",
            Change::BlockToMap
        )));
        assert!(state_upgrades("kubernetes_cron_job").contains(&StateUpgrade::new(
            0,
            "spec.job_template.spec.template.spec.container.resources.requests",
            Change::BlockToMap
        )));
        assert_eq!(
            state_upgrades("kubernetes_service"),
            vec![StateUpgrade::new(0, "load_balancer_ingress", Change::Drop)]
        );
    }
}
