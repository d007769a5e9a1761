//! `make docs`: regenerates the registry documentation in `docs/` from the providers' schemas
//! and the hand-written parts. `--check` only lists stale pages (exit 1 when there are any).

use std::process::ExitCode;

use provider_mirror::paths;
use tools::docs;

fn main() -> ExitCode {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    let root = paths::workspace_root();
    let docs_dir = root.join("docs");
    let result = docs::generate(&root).and_then(|pages| {
        let stale = docs::stale(&docs_dir, &pages)?;
        if !check {
            docs::write(&docs_dir, &pages)?;
        }
        Ok((pages.len(), stale))
    });
    match result {
        Ok((count, stale)) => {
            for path in &stale {
                let verb = if check { "stale" } else { "wrote" };
                println!("{verb} docs/{}", path.display());
            }
            println!(
                "{count} pages, {} {}",
                stale.len(),
                if check { "stale" } else { "updated" }
            );
            if check && !stale.is_empty() {
                println!("run `make docs` to regenerate them");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("docs: {e}");
            ExitCode::FAILURE
        }
    }
}
