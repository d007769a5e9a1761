//! Support for the acceptance tests: the real engine run as a user runs it, the cluster the tests
//! run against (a real one from `KUBECONFIG`, else the in-memory test server), and the provider
//! mirror the engine installs the providers from.

mod api_calls;
pub mod beyond;
pub mod build;
pub mod cluster;
pub mod corpus;
mod credentials;
pub mod differential;
pub mod engine;
pub mod engine_info;
pub mod flaky;
pub mod hcl;
pub mod imports;
pub mod migration;
pub mod mirror;
pub mod neighbours;
pub mod objects;
pub mod paths;
pub mod plugin_process;
pub mod records_fixtures;
pub mod requests;
pub mod scenario;
pub mod stand_in;

pub use cluster::Cluster;
pub use engine::{Engine, EngineOutput, PlanSummary};
pub use engine_info::{EngineInfo, Feature, engine_info, opentofu, skip, skip_part_without, skip_without};
