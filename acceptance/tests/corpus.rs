//! The drop-in corpus (`acceptance/corpus/`): one configuration per hashicorp/kubernetes
//! resource type, written the way hashicorp's documentation writes it, with the nested blocks
//! real configurations use. All of them but the APIService (`corpus_api_service.rs`), each as a
//! module, go through one life with the real engine ([`acceptance::corpus::life`]).

use acceptance::Cluster;
use acceptance::corpus::{Module, life};

#[test]
fn the_corpus_applies_plans_empty_imports_recreates_updates_and_destroys() {
    life::run(&Cluster::start(), |m: &Module| !m.changes_discovery());
}
