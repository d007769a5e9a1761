//! `make release`: the signed registry artifacts of both providers (see `tools::release`).
//!
//! ```text
//! release [--out DIR] [--signing-key FILE] [--platforms "OS_ARCH ..."] [--binary TYPE:OS_ARCH:PATH]...
//! release --cross-targets --platforms "OS_ARCH ..."
//! ```
//!
//! `--cross-targets` prints `OS_ARCH TARGET` for each platform named that is cross-built (not
//! this machine's), for `scripts/build-platforms.sh`, and packs nothing.
//!
//! Without `--binary`, the built binaries of the `--platforms` named (default: this machine's,
//! from `target/release`; the others from `target/cross`, see `release::platforms`). The signing key is
//! `--signing-key`, else `RELEASE_SIGNING_KEY` (a file) or `RELEASE_SIGNING_KEY_ARMOR` (the key),
//! with `RELEASE_SIGNING_PASSPHRASE`; without any, a throwaway key, for testing only.

use std::path::PathBuf;
use std::process::ExitCode;

use provider_mirror::paths;
use tools::release::platforms::Platform;
use tools::release::{self, Binary, ReleaseError};

struct Args {
    out: PathBuf,
    key: Option<PathBuf>,
    platforms: Vec<String>,
    binaries: Vec<Binary>,
    cross_targets: bool,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        out: paths::dist_dir().join("release"),
        key: None,
        platforms: Vec::new(),
        binaries: Vec::new(),
        cross_targets: false,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = || words.next().ok_or(format!("{word} needs a value"));
        match word.as_str() {
            "--out" => args.out = PathBuf::from(value()?),
            "--signing-key" => args.key = Some(PathBuf::from(value()?)),
            "--cross-targets" => args.cross_targets = true,
            "--platforms" => args.platforms = value()?.split_whitespace().map(str::to_string).collect(),
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

/// The cross-built platforms among `names`, as `OS_ARCH TARGET` lines.
fn print_cross_targets(names: &[String]) -> Result<(), String> {
    let host = provider_mirror::platform().map_err(|e| e.to_string())?;
    for name in names.iter().filter(|n| **n != host) {
        let platform =
            Platform::named(name).ok_or_else(|| ReleaseError::UnknownPlatform(name.clone()).to_string())?;
        println!("{} {}", platform.name, platform.target);
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let mut args = parse()?;
    if args.cross_targets {
        return print_cross_targets(&args.platforms);
    }
    if args.binaries.is_empty() {
        if args.platforms.is_empty() {
            args.platforms = vec![provider_mirror::platform().map_err(|e| e.to_string())?];
        }
        args.binaries = Binary::built_for(&args.platforms).map_err(|e| e.to_string())?;
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
