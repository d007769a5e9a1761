//! Generated gRPC code: tfplugin6 and go-plugin's `plugin` services (see `proto/`).
//!
//! Public so tests and tools can act as the engine with the generated clients.

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod plugin {
    tonic::include_proto!("plugin");
}
