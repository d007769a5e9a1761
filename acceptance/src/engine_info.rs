//! Which engine the tests run ([`paths::engine`]: `ENGINE=...`), asked once per build of it and
//! remembered in the target folder.
//! The tests themselves never look: they run the same commands whichever engine it is. Only
//! tests of a feature that one engine lacks ask [`skip_without`], which prints why they skip,
//! and tests of OpenTofu's own behaviour ask for [`opentofu`].

use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::UNIX_EPOCH;

use crate::{mirror, paths};

/// The two engines: same command line, same plugin protocol, a few features apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Product {
    Terraform,
    OpenTofu,
}

/// The engine the tests run: its path, product and version (`1.15.5`, `1.12.6-dev`).
#[derive(Debug, Clone)]
pub struct EngineInfo {
    pub program: PathBuf,
    pub product: Product,
    pub version: String,
}

impl EngineInfo {
    /// The registry host a short source address (`choudoufu/live`) means to this engine: the
    /// one it records in the lock file and the state.
    pub fn registry_host(&self) -> &'static str {
        match self.product {
            Product::Terraform => mirror::TERRAFORM_HOST,
            Product::OpenTofu => mirror::OPENTOFU_HOST,
        }
    }

    /// `registry.terraform.io/choudoufu/<type_name>` or its OpenTofu equivalent.
    pub fn provider_address(&self, type_name: &str) -> String {
        format!("{}/{}/{type_name}", self.registry_host(), mirror::NAMESPACE)
    }

    /// As the engine names itself: `Terraform v1.15.5`, `OpenTofu v1.12.6-dev`.
    pub fn name(&self) -> String {
        let product = match self.product {
            Product::Terraform => "Terraform",
            Product::OpenTofu => "OpenTofu",
        };
        format!("{product} v{}", self.version)
    }

    /// What `program` is: asked once per build of it, then remembered in the
    /// target folder, since every test process asks and each answer costs two engine runs.
    pub fn of(program: PathBuf) -> EngineInfo {
        let record = remembered(&program);
        if let Some((product, version)) = record.as_ref().and_then(|(path, key)| recall(path, key)) {
            return EngineInfo {
                program,
                product,
                version,
            };
        }
        let info = EngineInfo::ask(program);
        if let Some((path, key)) = record {
            remember(&path, &key, &info);
        }
        info
    }

    /// Asks `program` what it is: `version -json` for the version (OpenTofu's names it
    /// `terraform_version` too), `version` for the product, which its first line names.
    fn ask(program: PathBuf) -> EngineInfo {
        let run = |args: &[&str]| {
            let output = Command::new(&program)
                .args(args)
                // A missing CLI configuration file only adds a warning; none is needed here.
                .env_remove("TF_CLI_CONFIG_FILE")
                .env("CHECKPOINT_DISABLE", "1")
                .output()
                .unwrap_or_else(|e| panic!("cannot run the engine {}: {e}", program.display()));
            assert!(
                output.status.success(),
                "{} {args:?} failed: {output:?}",
                program.display()
            );
            String::from_utf8_lossy(&output.stdout).into_owned()
        };
        let json: serde_json::Value = serde_json::from_str(&run(&["version", "-json"]))
            .unwrap_or_else(|e| panic!("{} version -json printed no JSON: {e}", program.display()));
        let version = json["terraform_version"].as_str().unwrap_or_default().to_string();
        let product = if run(&["version"]).starts_with("OpenTofu ") {
            Product::OpenTofu
        } else {
            Product::Terraform
        };
        EngineInfo {
            program,
            product,
            version,
        }
    }
}

/// Where the answer about `program` is remembered, and what identifies that build of it: its
/// path, size and modification time (`make setup` or a new engine rewrites the file). `None`
/// when the program cannot be looked at; it is then asked.
fn remembered(program: &Path) -> Option<(PathBuf, String)> {
    let meta = std::fs::metadata(program).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    let key = format!("{}\t{}\t{modified}", program.display(), meta.len());
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    let path = paths::target_dir()
        .join("engine-info")
        .join(format!("{:016x}", hasher.finish()));
    Some((path, key))
}

/// How a record names each product.
const PRODUCT_NAMES: [(Product, &str); 2] =
    [(Product::Terraform, "terraform"), (Product::OpenTofu, "opentofu")];

fn recall(path: &Path, key: &str) -> Option<(Product, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    if lines.next()? != key {
        return None;
    }
    let name = lines.next()?;
    let (product, _) = PRODUCT_NAMES.iter().find(|(_, n)| *n == name)?;
    Some((*product, lines.next()?.to_string()))
}

/// Best effort: a test process that cannot write the record asks again next time.
fn remember(path: &Path, key: &str, info: &EngineInfo) {
    let Some((_, name)) = PRODUCT_NAMES.iter().find(|(p, _)| *p == info.product) else {
        return;
    };
    if let Some(folder) = path.parent()
        && std::fs::create_dir_all(folder).is_ok()
    {
        let _ = mirror::write_atomic(path, format!("{key}\n{name}\n{}\n", info.version).as_bytes());
    }
}

/// The engine of this test process ([`paths::engine`]), asked once. Printed once (past the
/// harness's capture) so a run's summary says which engine it used.
pub fn engine_info() -> &'static EngineInfo {
    static INFO: OnceLock<EngineInfo> = OnceLock::new();
    INFO.get_or_init(|| {
        let info = EngineInfo::of(paths::engine());
        report(&format!("engine: {} ({})", info.name(), info.program.display()));
        info
    })
}

/// An OpenTofu to run tests of OpenTofu's own behaviour with, whatever the engine of the run:
/// `$TOFU`, else the engine itself when it is OpenTofu; `Err` says why there is none.
pub fn opentofu() -> Result<EngineInfo, String> {
    if let Some(tofu) = std::env::var_os("TOFU").filter(|t| !t.is_empty()) {
        let info = EngineInfo::of(PathBuf::from(tofu));
        return match info.product {
            Product::OpenTofu => Ok(info),
            Product::Terraform => Err(format!("TOFU={} is {}", info.program.display(), info.name())),
        };
    }
    let info = engine_info();
    match info.product {
        Product::OpenTofu => Ok(info.clone()),
        Product::Terraform => Err(format!(
            "no OpenTofu binary: the engine is {}; set TOFU=/path/to/tofu (or ENGINE)",
            info.name()
        )),
    }
}

/// Prints past the test harness's capture, so `scripts/test.sh` sees the line.
fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A feature that only some engines have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// `terraform query` and `list` blocks (the providers' list resources): Terraform 1.14+.
    Query,
    /// `action` blocks, `action_trigger` and `apply -invoke`: Terraform 1.14+.
    Actions,
}

impl Feature {
    /// What the skip line names.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::Query => "`terraform query` and list resources are Terraform-only",
            Feature::Actions => "actions (`action` blocks, `apply -invoke`) are Terraform-only",
        }
    }

    fn available(self, info: &EngineInfo) -> bool {
        match self {
            Feature::Query | Feature::Actions => info.product == Product::Terraform,
        }
    }
}

/// True when the engine lacks `feature`: the calling test then returns at once. It prints
/// `skipped: <test>: <reason>` past the capture, which `scripts/test.sh` counts as a skip, not
/// a pass, and lists with its reason.
pub fn skip_without(feature: Feature) -> bool {
    lacks(feature, None)
}

/// Like [`skip_without`] for the last `part` of a test whose other parts every engine runs:
/// prints `skipped part: <test>: <part>: <reason>`, which the summary lists without counting
/// the test as skipped.
pub fn skip_part_without(feature: Feature, part: &str) -> bool {
    lacks(feature, Some(part))
}

fn lacks(feature: Feature, part: Option<&str>) -> bool {
    let info = engine_info();
    if feature.available(info) {
        return false;
    }
    let reason = format!("{} (engine: {})", feature.describe(), info.name());
    match part {
        None => skip(&reason),
        Some(part) => report(&format!("skipped part: {}: {part}: {reason}", test_name())),
    }
    true
}

/// Prints `skipped: <test>: <reason>` for the calling test, which then returns: `scripts/test.sh`
/// counts it as skipped, not passed, and lists the reason.
pub fn skip(reason: &str) {
    report(&format!("skipped: {}: {reason}", test_name()));
}

/// The running test's name (the harness names each test's thread after it).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("a test").to_string()
}
