//! `make release-check`'s check of the darwin builds, which cannot run here:
//!
//! ```text
//! macho_check ARCH FILE...
//! ```
//!
//! Each FILE must be a Mach-O executable for ARCH (`arm64`, `x86_64`), signed when arm64, linking only the system's
//! own libraries (`tools::macho`). Prints what each is; exits 1 when one is not.

use std::process::ExitCode;

use tools::macho::MachO;

fn check(arch: &str, file: &str) -> Result<String, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    let macho = MachO::parse(&bytes).map_err(|e| format!("{file}: {e}"))?;
    if macho.arch != arch {
        return Err(format!("{file}: built for {}, not {arch}", macho.arch));
    }
    if !macho.executable {
        return Err(format!("{file}: not an executable with an entry point"));
    }
    // Apple silicon runs no unsigned arm64 code; Intel Macs (and Rosetta) need no signature.
    if macho.arch == "arm64" && !macho.signed {
        return Err(format!(
            "{file}: no code signature (Apple silicon runs no unsigned code)"
        ));
    }
    let foreign = macho.foreign_dylibs();
    if !foreign.is_empty() {
        return Err(format!(
            "{file}: links libraries a Mac may lack: {}",
            foreign.join(", ")
        ));
    }
    Ok(format!(
        "{file}: Mach-O 64-bit executable, {}, {}, macOS {} or later, links {}",
        macho.arch,
        if macho.signed { "code-signed" } else { "unsigned" },
        macho.min_macos.as_deref().unwrap_or("(not stated)"),
        macho.dylibs.join(", ")
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((arch, files)) = args.split_first().filter(|(_, files)| !files.is_empty()) else {
        eprintln!("usage: macho_check ARCH FILE...");
        return ExitCode::from(2);
    };
    let mut code = ExitCode::SUCCESS;
    for file in files {
        match check(arch, file) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("macho_check: {e}");
                code = ExitCode::FAILURE;
            }
        }
    }
    code
}
