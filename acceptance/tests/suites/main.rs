//! The acceptance suites: the real engine and the plugin binaries against a Kubernetes API, one
//! module per suite, each module's first line saying what it covers.
//!
//! They are one test binary so that a build links one executable instead of one per suite.
//! `scripts/test.sh` still runs each suite as a process of its own (`suites <module>::`), so a
//! suite's time and output stay its own and the slow ones start first.

mod actions;
mod api_strictness;
mod beyond_fields;
mod cluster;
mod compaction;
mod context_namespace;
mod corpus;
mod crd_one_apply;
mod credentials;
mod data_sources;
mod deployment_strategy;
mod differential;
mod duplicate_keys;
mod engine_install;
mod flaky_api;
mod functions_ephemeral;
mod handshake;
mod hashicorp_corpus_states;
mod hashicorp_moves;
mod hashicorp_record;
mod hashicorp_state;
mod identity;
mod immutable_fields;
mod kubectl;
mod kubectl_documents;
mod kubectl_moves;
mod live_behaviour;
mod live_ownership;
mod live_resources;
mod manifest;
mod manifest_ignore;
mod manifest_server_writes;
mod manifest_wait;
mod migrate_in;
mod minimal;
mod neighbours;
mod new_types;
mod others_configs;
mod patch_resources;
mod plan_before_cluster;
mod platform_run;
mod pod_replacement;
mod query;
mod records;
mod records_races;
mod records_versions;
mod refusing_webhook;
mod sdk_reads;
mod signing_requests;
mod stages;
mod waits;
mod workload;
