//! `make release`: the signed registry artifacts of both providers (see `estate_tools::release`).
//!
//! ```text
//! release [--out DIR] [--signing-key FILE] [--binary TYPE:OS_ARCH:PATH]...
//! ```
//!
//! Without `--binary`, the binaries of `target/release` for this machine. The signing key is
//! `--signing-key`, else `RELEASE_SIGNING_KEY` (a file) or `RELEASE_SIGNING_KEY_ARMOR` (the key),
//! with `RELEASE_SIGNING_PASSPHRASE`; without any, a throwaway key, for testing only.

use std::path::PathBuf;
use std::process::ExitCode;

use estate_tools::release::{self, Binary};
use provider_mirror::paths;

struct Args {
    out: PathBuf,
    key: Option<PathBuf>,
    binaries: Vec<Binary>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        out: paths::dist_dir().join("release"),
        key: None,
        binaries: Vec::new(),
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = || words.next().ok_or(format!("{word} needs a value"));
        match word.as_str() {
            "--out" => args.out = PathBuf::from(value()?),
            "--signing-key" => args.key = Some(PathBuf::from(value()?)),
            "--binary" => {
                let spec = value()?;
                let mut parts = spec.splitn(3, ':');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(type_name), Some(platform), Some(path)) => args.binaries.push(Binary {
                        type_name: type_name.to_string(),
                        platform: platform.to_string(),
                        path: PathBuf::from(path),
                    }),
                    _ => return Err(format!("--binary {spec}: expected TYPE:OS_ARCH:PATH")),
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

fn run() -> Result<(), String> {
    let mut args = parse()?;
    if args.binaries.is_empty() {
        args.binaries = Binary::local().map_err(|e| e.to_string())?;
    }
    let signer = release::signer(args.key.as_deref()).map_err(|e| e.to_string())?;
    if signer.is_throwaway() {
        eprintln!(
            "release: WARNING: no signing key given ({} or {}): signing with a throwaway key.\n\
             release: These artifacts are for testing only; do not publish them.",
            release::KEY_FILE_ENV,
            release::KEY_TEXT_ENV
        );
    }
    let released = release::release(&args.binaries, &args.out, &signer).map_err(|e| e.to_string())?;
    for file in &released.files {
        println!("{}", file.display());
    }
    let kind = if released.throwaway {
        "throwaway key (testing only)"
    } else {
        "key"
    };
    println!("signed with {kind} {}", released.key_id);
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("release: {e}");
            ExitCode::FAILURE
        }
    }
}
