//! `make catalog`: regenerates `provider-live/catalog/kinds.tsv`, `data_sources.tsv`, `facts.tsv`
//! `docs/hashicorp-behaviour.md` and `docs/beyond-3.4.0.md`, and prints the comparison's counts;
//! `--check` only compares.

use std::path::Path;
use std::process::ExitCode;

type Generator = fn(&Path) -> Result<String, kind_catalog::Error>;

fn main() -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let check = std::env::args().any(|a| a == "--check");
    let outputs: [(&str, Generator); 5] = [
        (kind_catalog::OUTPUT, kind_catalog::generate),
        (kind_catalog::DATA_OUTPUT, kind_catalog::generate_data_sources),
        (kind_catalog::FACTS_OUTPUT, kind_catalog::generate_facts),
        (kind_catalog::BEHAVIOUR_DOC, kind_catalog::generate_behaviour_doc),
        (kind_catalog::BEYOND_DOC, kind_catalog::generate_beyond_doc),
    ];
    let mut status = ExitCode::SUCCESS;
    for (output, generate) in outputs {
        let generated = match generate(&root) {
            Ok(text) => text,
            Err(err) => {
                eprintln!("kind-catalog: {err}");
                return ExitCode::FAILURE;
            }
        };
        let out = root.join(output);
        let current = std::fs::read_to_string(&out).unwrap_or_default();
        if check {
            if current != generated {
                eprintln!(
                    "kind-catalog: {} is out of date; run `make catalog`",
                    out.display()
                );
                status = ExitCode::FAILURE;
            }
            continue;
        }
        if let Err(err) = std::fs::write(&out, generated) {
            eprintln!("kind-catalog: {}: {err}", out.display());
            return ExitCode::FAILURE;
        }
        println!("kind-catalog: wrote {}", out.display());
    }
    // The comparison of the server's OpenAPI with hashicorp's schema, in counts.
    match kind_catalog::beyond_summary(&root) {
        Ok(summary) => print!("kind-catalog: beyond hashicorp/kubernetes 3.4.0:\n{summary}"),
        Err(err) => {
            eprintln!("kind-catalog: {err}");
            return ExitCode::FAILURE;
        }
    }
    status
}
