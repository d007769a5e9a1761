//! The corpus's APIService files (`kubernetes_api_service_v1` and its unversioned twin) through
//! the same life as the rest of the corpus ([`acceptance::corpus::life`]). Apart, because an
//! APIService no server backs stalls every namespace deletion on the cluster while it exists:
//! on a shared cluster this suite runs first and alone (`scripts/test.sh`).

use acceptance::Cluster;
use acceptance::corpus::{Module, life};

#[test]
fn the_api_services_apply_plan_empty_import_recreate_update_and_destroy() {
    life::run(&Cluster::start(), Module::changes_discovery);
}
