//! Compiles the plugin protocol and go-plugin's own services from `proto/` with protox,
//! so building needs no system `protoc`.

use std::error::Error;
use std::path::Path;

const PROTOS: [&str; 4] = [
    "tfplugin6.proto",
    "plugin/grpc_controller.proto",
    "plugin/grpc_stdio.proto",
    "plugin/grpc_broker.proto",
];

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
    for file in PROTOS {
        println!("cargo:rerun-if-changed={}", root.join(file).display());
    }
    let descriptors = protox::compile(PROTOS, [&root])?;
    tonic_prost_build::configure()
        // Default stubs answer `Unimplemented` for the RPCs this runtime does not serve.
        .generate_default_stubs(true)
        .compile_fds(descriptors)?;
    Ok(())
}
