//! `make catalog`: regenerates `provider-live/catalog/kinds.tsv`; `--check` only compares.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let check = std::env::args().any(|a| a == "--check");
    let generated = match kind_catalog::generate(&root) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("kind-catalog: {err}");
            return ExitCode::FAILURE;
        }
    };
    let out = root.join(kind_catalog::OUTPUT);
    let current = std::fs::read_to_string(&out).unwrap_or_default();
    if check {
        if current == generated {
            return ExitCode::SUCCESS;
        }
        eprintln!(
            "kind-catalog: {} is out of date; run `make catalog`",
            out.display()
        );
        return ExitCode::FAILURE;
    }
    if let Err(err) = std::fs::write(&out, generated) {
        eprintln!("kind-catalog: {}: {err}", out.display());
        return ExitCode::FAILURE;
    }
    println!("kind-catalog: wrote {}", out.display());
    ExitCode::SUCCESS
}
