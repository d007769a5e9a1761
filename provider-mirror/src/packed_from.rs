//! What the mirror was last packed from, so that packing the same binaries again is skipped:
//! every test process makes sure of the mirror, and packing means deflating each provider
//! binary once per address (about a second of CPU a time).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::{LOCK_FILE, MirrorError, PROVIDERS, VERSION};

/// The record's file, in `dist/` beside the mirror (the engine reads every file inside it).
const FILE: &str = "packed-from";

/// The inputs of a packing: each binary's path, size and modification time (a rebuild rewrites
/// the file), the mirror's own path (it is written into `terraformrc`) and the version.
pub(crate) fn inputs(release_dir: &Path, dist: &Path) -> Result<String, MirrorError> {
    let mut record = format!("version {VERSION}\ndist {}\n", dist.display());
    let mut binaries: Vec<PathBuf> = PROVIDERS
        .iter()
        .map(|a| release_dir.join(a.binary_file()))
        .collect();
    binaries.dedup();
    for binary in binaries {
        let meta = fs::metadata(&binary).map_err(|_| MirrorError::MissingBinary(binary.clone()))?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        record.push_str(&format!("{} {} {modified}\n", binary.display(), meta.len()));
    }
    Ok(record)
}

/// Whether `dist` already holds a packing of exactly `inputs`, every output file present.
pub(crate) fn is_current(dist: &Path, inputs: &str, outputs: &[PathBuf]) -> bool {
    let recorded = fs::read_to_string(dist.join(FILE)).ok();
    recorded.as_deref() == Some(inputs)
        && dist.join(LOCK_FILE).is_file()
        && dist.join("terraformrc").is_file()
        && outputs.iter().all(|p| p.is_file())
}

/// Where the record of a finished packing goes (written last, after every output).
pub(crate) fn record_path(dist: &Path) -> PathBuf {
    dist.join(FILE)
}
