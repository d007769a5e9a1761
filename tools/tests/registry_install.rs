//! Installing the providers the way users do, from a registry: `make release` (with a
//! throwaway key) writes signed artifacts, the test registry serves them over HTTPS, and
//! `terraform init` on a configuration with `source = "choudoufu/live"`, `"choudoufu/kubectl"`
//! (provider-live's binary under its second address) and `"choudoufu/records"` (no mirror
//! configured) downloads through the provider registry protocol, verifies the signatures and
//! locks `zh:` and `h1:` hashes; then `plan` runs with the installed providers.
//! The same through the network mirror protocol, and through service discovery when sources name
//! the registry's own host; a zip changed after signing and checksums signed by another key are
//! refused with nothing installed; stock `gpg --verify` accepts the signatures with the published
//! public key.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use acceptance::hcl::{quote, required_providers, unique_name};
use acceptance::mirror::{self, VERSION};
use acceptance::{Cluster, Engine, EngineInfo, EngineOutput, engine_info, opentofu, paths, skip};
use tools::registry::{Options, Protocol, Registry, openpgp};
use tools::release::{self, signing};

/// The artifacts of one `make release` run, shared by this process's tests.
struct Released {
    dir: PathBuf,
    /// What `make release` printed.
    output: String,
}

/// Runs `make release` once per test process, without any signing key in the environment, into
/// a temporary folder that is removed when the process exits.
fn released() -> &'static Released {
    static RELEASED: OnceLock<Released> = OnceLock::new();
    RELEASED.get_or_init(|| {
        extern "C" fn remove() {
            if let Some(released) = RELEASED.get() {
                let _ = fs::remove_dir_all(&released.dir);
            }
        }
        let dir = tempfile::tempdir().expect("a release folder");
        let started = Instant::now();
        let output = make_release(dir.path(), &[], &[]);
        eprintln!("make release: {:.1?}", started.elapsed());
        // SAFETY: registers a plain function, run once at exit.
        unsafe { libc::atexit(remove) };
        Released {
            dir: dir.keep(),
            output,
        }
    })
}

/// `make release RELEASE_DIR=<dir> <variables>` for this machine's platform alone (the cross
/// builds of the others are `make release`'s own, too slow for every test run), with no signing
/// key in the environment but `envs`; what it printed.
fn make_release(dir: &Path, variables: &[&str], envs: &[(&str, &str)]) -> String {
    let mut make = Command::new("make");
    make.current_dir(paths::workspace_root())
        .args(["--no-print-directory", "release"])
        .arg(format!("RELEASE_DIR={}", dir.display()))
        .arg(format!("PLATFORMS={}", mirror::platform().expect("a platform")))
        .args(variables);
    for name in [
        release::KEY_FILE_ENV,
        release::KEY_TEXT_ENV,
        release::PASSPHRASE_ENV,
    ] {
        make.env_remove(name);
    }
    make.envs(envs.iter().copied());
    let output = make.output().expect("run make");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "make release failed:\n{text}");
    text
}

/// A copy of the release, to tamper with.
fn release_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().expect("a folder");
    for entry in fs::read_dir(&released().dir).expect("the release folder") {
        let path = entry.expect("an entry").path();
        fs::copy(&path, copy.path().join(path.file_name().expect("a name"))).expect("copy an artifact");
    }
    copy
}

/// The key id the engine should name: that of the published public key.
fn published_key_id() -> String {
    let armor = fs::read_to_string(released().dir.join(release::PUBLIC_KEY_FILE)).expect("the public key");
    openpgp::key_id(&armor).expect("a key id")
}

/// A working folder whose configuration declares every address by its short source, with one
/// resource through each on the test cluster, and an engine installing through `registry`.
struct Workspace {
    dir: tempfile::TempDir,
    engine: Engine,
    /// Holds the CLI configuration and the registry's CA.
    _config: tempfile::TempDir,
}

impl Workspace {
    /// One resource through each address, declared by their short sources, installed by the
    /// engine of the run.
    fn new(registry: &Registry, protocol: Protocol, kubeconfig: &Path) -> Workspace {
        Workspace::new_for(engine_info(), registry, protocol, kubeconfig)
    }

    /// As [`Workspace::new`], installed by the engine `info` describes.
    fn new_for(info: &EngineInfo, registry: &Registry, protocol: Protocol, kubeconfig: &Path) -> Workspace {
        let estate = unique_name("reg");
        let kubeconfig = quote(&kubeconfig.to_string_lossy());
        let main = format!(
            "{}\n\
             provider \"kubernetes\" {{\n  estate      = \"{estate}\"\n  config_path = {kubeconfig}\n}}\n\n\
             provider \"kubectl\" {{\n  estate      = \"{estate}\"\n  config_path = {kubeconfig}\n}}\n\n\
             provider \"records\" {{\n  estate      = \"{estate}\"\n  config_path = {kubeconfig}\n}}\n\n\
             resource \"kubernetes_config_map\" \"installed\" {{\n  metadata {{\n    name      = \"{estate}\"\n    \
             namespace = \"default\"\n  }}\n  data = {{ from = \"registry\" }}\n}}\n\n\
             resource \"kubernetes_config_map\" \"through_kubectl\" {{\n  provider = kubectl\n  metadata {{\n    \
             name      = \"{estate}-kubectl\"\n    namespace = \"default\"\n  }}\n}}\n\n\
             resource \"records_outputs\" \"this\" {{\n  values = {{ config_map = kubernetes_config_map.installed.id }}\n}}\n",
            required_providers("")
        );
        Workspace::with(info, registry, &registry.cli_config(protocol), &main)
    }

    /// `main` installed by the engine `info` describes with the CLI configuration `cli_config`,
    /// trusting the registry's CA.
    fn with(info: &EngineInfo, registry: &Registry, cli_config: &str, main: &str) -> Workspace {
        let config = tempfile::tempdir().expect("a folder");
        let cli_config_file = config.path().join("terraformrc");
        fs::write(&cli_config_file, cli_config).expect("write the CLI configuration");
        let ca = config.path().join("ca.pem");
        fs::write(&ca, registry.ca_pem().expect("the registry's own CA")).expect("write the CA");
        let dir = tempfile::tempdir().expect("a working folder");
        fs::write(dir.path().join("main.tf"), main).expect("write main.tf");
        let engine = Engine::of(info, dir.path())
            .env("TF_CLI_CONFIG_FILE", &cli_config_file.to_string_lossy())
            .env("SSL_CERT_FILE", &ca.to_string_lossy());
        Workspace {
            dir,
            engine,
            _config: config,
        }
    }

    fn lock_file(&self) -> Option<String> {
        fs::read_to_string(self.dir.path().join(".terraform.lock.hcl")).ok()
    }

    /// The provider packages under `.terraform/providers`, as `<type>/<version>/<platform>`: the
    /// unpacked folders only. OpenTofu leaves the `<platform>.lock` file of its install lock
    /// (and so the folders above it) even when it refused the package.
    fn installed(&self) -> Vec<String> {
        let root = self
            .dir
            .path()
            .join(".terraform/providers")
            .join(self.engine.info().registry_host())
            .join(mirror::NAMESPACE);
        let folders = |dir: &Path| -> Vec<String> {
            let Ok(entries) = fs::read_dir(dir) else {
                return Vec::new();
            };
            let entries = entries.map(|e| e.expect("an entry"));
            (entries.filter(|e| e.path().is_dir()))
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        };
        let mut packages = Vec::new();
        for type_name in folders(&root) {
            for version in folders(&root.join(&type_name)) {
                for platform in folders(&root.join(&type_name).join(&version)) {
                    packages.push(format!("{type_name}/{version}/{platform}"));
                }
            }
        }
        packages
    }
}

/// The `provider "<address>" { ... }` block of a lock file written by the engine `info` describes.
fn lock_block<'a>(info: &EngineInfo, lock: &'a str, type_name: &str) -> &'a str {
    let address = format!("provider \"{}\"", info.provider_address(type_name));
    let start = lock
        .find(&address)
        .unwrap_or_else(|| panic!("{address} is not in the lock file:\n{lock}"));
    let block = &lock[start..];
    &block[..block.find("\n}").map_or(block.len(), |end| end + 2)]
}

/// The published archive of `type_name` for this machine.
fn archive(dir: &Path, type_name: &str) -> PathBuf {
    dir.join(release::archive_name(
        type_name,
        VERSION,
        &mirror::platform().expect("a platform"),
    ))
}

/// `plan` with the installed providers: the resource through each address to create.
fn plans_with_the_installed_providers(workspace: &Workspace) {
    let (plan, summary) = workspace.engine.plan_json(&[]);
    assert!(plan.success(), "plan failed:\n{plan}");
    let summary = summary.expect("a saved plan");
    assert_eq!(
        summary.count("create"),
        mirror::PROVIDERS.len(),
        "{:?}",
        summary.changes
    );
    let planned_by: BTreeSet<&str> = (summary.raw["resource_changes"].as_array().into_iter().flatten())
        .filter_map(|change| change["provider_name"].as_str())
        .collect();
    let info = workspace.engine.info();
    let addresses: Vec<String> = (mirror::PROVIDER_TYPES.iter())
        .map(|t| info.provider_address(t))
        .collect();
    assert_eq!(
        planned_by,
        addresses.iter().map(String::as_str).collect(),
        "each address plans its resource"
    );
}

fn assert_nothing_installed(workspace: &Workspace, init: &EngineOutput) {
    assert!(
        workspace.installed().is_empty(),
        "installed {:?}:\n{init}",
        workspace.installed()
    );
    if let Some(lock) = workspace.lock_file() {
        assert!(
            !lock.contains(mirror::NAMESPACE),
            "a refused provider was locked:\n{lock}"
        );
    }
}

#[test]
fn init_installs_through_the_registry_protocol_verifying_the_signature() {
    installs_through_the_registry_protocol(engine_info());
}

/// OpenTofu's own installer (its signing-key rules differ from Terraform's: see
/// docs/guides/registry.md) wherever a `tofu` is at hand, whichever engine the run uses.
#[test]
fn tofu_init_installs_through_the_registry_protocol_verifying_the_signature() {
    match opentofu() {
        Ok(tofu) => installs_through_the_registry_protocol(&tofu),
        Err(why) => skip(&why),
    }
}

/// `init` by the engine `info` describes through the registry protocol: the signature checked
/// against the published key, both hashes locked, the version reported, and a plan.
fn installs_through_the_registry_protocol(info: &EngineInfo) {
    let cluster = Cluster::start();
    let registry = Registry::start(Options::local(&released().dir)).expect("start the registry");
    let workspace = Workspace::new_for(info, &registry, Protocol::Registry, cluster.kubeconfig());

    let init = workspace.engine.init();
    assert!(
        init.success(),
        "init failed:\n{init}\nregistry requests: {:#?}",
        registry.requests()
    );
    let key_id = published_key_id();
    for type_name in mirror::PROVIDER_TYPES {
        let source = format!("{}/{type_name}", mirror::NAMESPACE);
        assert_installed_signed(&init, &source, &key_id);
        // Through the registry protocol: versions, download, then the package and its signed sums.
        for path in [
            format!("/v1/providers/{}/{type_name}/versions", mirror::NAMESPACE),
            format!(
                "/v1/providers/{}/{type_name}/{VERSION}/download/",
                mirror::NAMESPACE
            ),
            format!("/files/{}", release::sums_name(type_name, VERSION)),
            format!("/files/{}", release::signature_name(type_name, VERSION)),
            format!("/files/{}", file_name(&archive(&released().dir, type_name))),
        ] {
            assert!(
                registry
                    .requests()
                    .iter()
                    .any(|r| r.starts_with(&format!("GET {path}")) && r.ends_with(" 200")),
                "the engine did not get {path}: {:#?}",
                registry.requests()
            );
        }
    }

    let lock = workspace.lock_file().expect("init writes the lock file");
    for type_name in mirror::PROVIDER_TYPES {
        let block = lock_block(info, &lock, type_name);
        let zip = archive(&released().dir, type_name);
        let zh = format!(
            "\"zh:{}\"",
            release::sha256_hex(&fs::read(&zip).expect("the archive"))
        );
        let h1 = format!("\"{}\"", mirror::archive_h1(&zip).expect("the archive's h1"));
        assert!(
            block.contains(&zh) && block.contains(&h1),
            "{zh} and {h1} not locked:\n{block}"
        );
    }

    // The version is reported by the engine ...
    let version = workspace.engine.run(&["version"]);
    for type_name in mirror::PROVIDER_TYPES {
        let line = format!("+ provider {} v{VERSION}", info.provider_address(type_name));
        assert!(version.stdout.contains(&line), "no {line:?}:\n{version}");
    }
    // ... and by the plugins in their logs.
    let validate = workspace
        .engine
        .clone()
        .env("TF_LOG_PROVIDER", "DEBUG")
        .run(&["validate"]);
    assert!(validate.success(), "validate failed:\n{validate}");
    assert!(
        validate
            .stderr
            .contains(&format!("provider plugin starting version={VERSION}")),
        "no version in the plugins' logs:\n{}",
        validate.stderr
    );

    plans_with_the_installed_providers(&workspace);
}

/// A team hosting the registry under its own name: sources name that host, and the engine finds
/// the registry through service discovery (`/.well-known/terraform.json`), no `host` block.
#[test]
fn under_its_own_host_the_registry_is_found_through_service_discovery() {
    let registry = Registry::start(Options::local(&released().dir)).expect("start the registry");
    let port = registry.base_url().rsplit(':').next().expect("a port");
    let host = format!("localhost:{port}/");
    let cli_config = "provider_installation {\n  direct {}\n}\n";
    let workspace = Workspace::with(engine_info(), &registry, cli_config, &required_providers(&host));

    let init = workspace.engine.init();
    assert!(
        init.success(),
        "init failed:\n{init}\nregistry requests: {:#?}",
        registry.requests()
    );
    assert!(
        registry
            .requests()
            .contains(&"GET /.well-known/terraform.json 200".to_string()),
        "no service discovery: {:#?}",
        registry.requests()
    );
    for type_name in mirror::PROVIDER_TYPES {
        let source = format!("{host}{}/{type_name}", mirror::NAMESPACE);
        assert_installed_signed(&init, &source, &published_key_id());
    }
}

#[test]
fn init_installs_through_the_network_mirror_protocol() {
    let cluster = Cluster::start();
    let registry = Registry::start(Options::local(&released().dir)).expect("start the registry");
    let workspace = Workspace::new(&registry, Protocol::NetworkMirror, cluster.kubeconfig());

    let init = workspace.engine.init();
    assert!(
        init.success(),
        "init failed:\n{init}\nregistry requests: {:#?}",
        registry.requests()
    );
    let lock = workspace.lock_file().expect("init writes the lock file");
    for type_name in mirror::PROVIDER_TYPES {
        let installed = format!(
            "Installed {}/{type_name} v{VERSION} (verified checksum)",
            mirror::NAMESPACE
        );
        assert!(init.stdout.contains(&installed), "no {installed:?}:\n{init}");
        let host = workspace.engine.info().registry_host();
        let base = format!("/mirror/{host}/{}/{type_name}/", mirror::NAMESPACE);
        for path in [format!("{base}index.json"), format!("{base}{VERSION}.json")] {
            assert!(
                registry.requests().contains(&format!("GET {path} 200")),
                "the engine did not get {path}: {:#?}",
                registry.requests()
            );
        }
        // A mirror's packages are not signed: the lock holds the h1 hash the mirror announced.
        let h1 = mirror::archive_h1(&archive(&released().dir, type_name)).expect("the archive's h1");
        assert!(
            lock_block(workspace.engine.info(), &lock, type_name).contains(&format!("\"{h1}\"")),
            "{h1} not locked:\n{lock}"
        );
    }
    plans_with_the_installed_providers(&workspace);
}

/// Every platform of the release (stand-in files: `providers lock` hashes packages, it does
/// not run them), signed by the `release` tool and served by the registry.
fn every_platform_released() -> tempfile::TempDir {
    let staged = tempfile::tempdir().expect("a folder");
    let out = tempfile::tempdir().expect("a release folder");
    let mut release = Command::new(env!("CARGO_BIN_EXE_release"));
    release.arg("--out").arg(out.path());
    for platform in release::platforms::PLATFORMS {
        for binary in ["live", "records"] {
            let path = staged.path().join(format!("{binary}_{}", platform.name));
            fs::write(
                &path,
                format!("stand-in for terraform-provider-{binary} on {}", platform.name),
            )
            .expect("write a stand-in");
            for address in mirror::PROVIDERS.iter().filter(|a| a.binary == binary) {
                let spec = format!("{}:{}:{}", address.type_name, platform.name, path.display());
                release.args(["--binary", &spec]);
            }
        }
    }
    for name in [
        release::KEY_FILE_ENV,
        release::KEY_TEXT_ENV,
        release::PASSPHRASE_ENV,
    ] {
        release.env_remove(name);
    }
    let output = release.output().expect("run release");
    assert!(
        output.status.success(),
        "release failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

#[test]
fn providers_lock_records_every_platforms_hashes() {
    providers_lock_records_every_platform(engine_info());
}

#[test]
fn tofu_providers_lock_records_every_platforms_hashes() {
    match opentofu() {
        Ok(tofu) => providers_lock_records_every_platform(&tofu),
        Err(why) => skip(&why),
    }
}

/// What a team runs before committing its lock file: `providers lock` for every platform its
/// members use, against the registry; each platform's `zh:` (signed) and `h1:` hashes are locked.
fn providers_lock_records_every_platform(info: &EngineInfo) {
    let published = every_platform_released();
    let registry = Registry::start(Options::local(published.path())).expect("start the registry");
    let workspace = Workspace::new_for(info, &registry, Protocol::Registry, Path::new("kubeconfig"));
    let mut args = vec!["providers".to_string(), "lock".to_string()];
    args.extend(release::platforms::PLATFORMS.map(|p| format!("-platform={}", p.name)));
    let lock_run = workspace
        .engine
        .run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        lock_run.success(),
        "providers lock failed:\n{lock_run}\nregistry requests: {:#?}",
        registry.requests()
    );
    let lock = workspace
        .lock_file()
        .expect("providers lock writes the lock file");
    for type_name in mirror::PROVIDER_TYPES {
        let block = lock_block(info, &lock, type_name);
        for platform in release::platforms::PLATFORMS {
            let zip = published
                .path()
                .join(release::archive_name(type_name, VERSION, platform.name));
            let zh = format!(
                "\"zh:{}\"",
                release::sha256_hex(&fs::read(&zip).expect("the archive"))
            );
            let h1 = format!("\"{}\"", mirror::archive_h1(&zip).expect("the archive's h1"));
            assert!(
                block.contains(&zh) && block.contains(&h1),
                "{} of {type_name}: {zh} and {h1} not locked:\n{block}",
                platform.name
            );
        }
    }
}

#[test]
fn an_archive_changed_after_signing_is_refused() {
    let cluster = Cluster::start();
    let copy = release_copy();
    for type_name in mirror::PROVIDER_TYPES {
        let zip = archive(copy.path(), type_name);
        let mut bytes = fs::read(&zip).expect("the archive");
        // Past the end of the zip's directory: still a valid archive, no longer the signed bytes.
        bytes.extend_from_slice(b"changed after signing");
        fs::write(&zip, bytes).expect("tamper with the archive");
    }
    let registry = Registry::start(Options::local(copy.path())).expect("start the registry");
    let workspace = Workspace::new(&registry, Protocol::Registry, cluster.kubeconfig());

    let init = workspace.engine.init();
    assert!(!init.success(), "init installed a changed archive:\n{init}");
    assert!(
        says(&init, "archive has incorrect checksum"),
        "not the engine's checksum error:\n{init}"
    );
    assert_nothing_installed(&workspace, &init);
}

#[test]
fn checksums_signed_by_another_key_are_refused() {
    let cluster = Cluster::start();
    let copy = release_copy();
    let other = signing::Signer::throwaway().expect("another key");
    for type_name in mirror::PROVIDER_TYPES {
        let sums = copy.path().join(release::sums_name(type_name, VERSION));
        let signature = copy.path().join(release::signature_name(type_name, VERSION));
        other.sign(&sums, &signature).expect("sign with the other key");
    }
    let registry = Registry::start(Options::local(copy.path())).expect("start the registry");
    let workspace = Workspace::new(&registry, Protocol::Registry, cluster.kubeconfig());

    let init = workspace.engine.init();
    assert!(
        !init.success(),
        "init accepted a signature by another key:\n{init}"
    );
    assert!(
        says(&init, "authentication signature from unknown issuer"),
        "not the engine's signature error:\n{init}"
    );
    assert_nothing_installed(&workspace, &init);
}

#[test]
fn gpg_verifies_the_signatures_with_the_published_key() {
    let released = released();
    let public_key = released.dir.join(release::PUBLIC_KEY_FILE);
    for type_name in mirror::PROVIDER_TYPES {
        let sums = released.dir.join(release::sums_name(type_name, VERSION));
        let signature = released.dir.join(release::signature_name(type_name, VERSION));
        let report = signing::verify(&public_key, &signature, &sums).unwrap_or_else(|e| panic!("{e}"));
        assert!(report.contains("Good signature from"), "{report}");
        assert!(report.contains(signing::THROWAWAY_UID), "{report}");
    }
    // Without a key, `make release` says plainly what the artifacts are good for ...
    assert!(
        released.output.contains("for testing only"),
        "{}",
        released.output
    );
    assert!(released.dir.join(release::TEST_ONLY_NOTICE).is_file());
    // ... and no secret key is left beside them.
    for entry in fs::read_dir(&released.dir).expect("the release folder") {
        let path = entry.expect("an entry").path();
        let bytes = fs::read(&path).expect("an artifact");
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("PRIVATE KEY"),
            "{} holds a private key",
            path.display()
        );
    }
}

/// A team's own key, with a passphrase, given to `make release` as a file: it signs, and nothing
/// says "testing only".
#[test]
fn a_given_signing_key_signs_instead_of_a_throwaway_one() {
    let home = tempfile::Builder::new()
        .prefix("gpg.")
        .tempdir_in("/tmp")
        .expect("a GnuPG home");
    let gpg = |args: &[&str]| {
        let output = Command::new("gpg")
            .arg("--homedir")
            .arg(home.path())
            .args([
                "--batch",
                "--pinentry-mode",
                "loopback",
                "--passphrase",
                "team secret",
            ])
            .args(args)
            .output()
            .expect("run gpg");
        assert!(
            output.status.success(),
            "gpg {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    gpg(&[
        "--quick-gen-key",
        "Team release key <release@example.invalid>",
        "ed25519",
        "sign",
        "never",
    ]);
    let key_file = home.path().join("secret.asc");
    fs::write(&key_file, gpg(&["--armor", "--export-secret-keys"])).expect("write the secret key");
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(home.path())
        .args(["--kill", "gpg-agent"])
        .status();

    let out = tempfile::tempdir().expect("a release folder");
    let key_arg = format!("{}={}", release::KEY_FILE_ENV, key_file.display());
    let printed = make_release(
        out.path(),
        &[&key_arg],
        &[(release::PASSPHRASE_ENV, "team secret")],
    );

    let public_key = out.path().join(release::PUBLIC_KEY_FILE);
    let key_id =
        openpgp::key_id(&fs::read_to_string(&public_key).expect("the public key")).expect("a key id");
    assert!(
        printed.contains(&format!("signed with key {key_id}")),
        "{printed}"
    );
    assert!(!printed.contains("testing only"), "{printed}");
    assert!(!out.path().join(release::TEST_ONLY_NOTICE).exists());
    for type_name in mirror::PROVIDER_TYPES {
        let sums = out.path().join(release::sums_name(type_name, VERSION));
        let signature = out.path().join(release::signature_name(type_name, VERSION));
        let report = signing::verify(&public_key, &signature, &sums).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.contains("Good signature from \"Team release key"),
            "{report}"
        );
    }
}

/// `init` installed `source` after checking its signature by `key_id`: Terraform says
/// `(self-signed, key ID …)` of a key that is not HashiCorp's, OpenTofu `(signed, key ID …)` of
/// any key, and nothing else is a checked signature to either.
fn assert_installed_signed(init: &EngineOutput, source: &str, key_id: &str) {
    let line = format!(
        r"Installed {} v{} \((self-)?signed, key ID {key_id}\)",
        regex::escape(source),
        regex::escape(VERSION)
    );
    let pattern = regex::Regex::new(&line).expect("a valid pattern");
    assert!(pattern.is_match(&init.stdout), "no {line:?}:\n{init}");
}

/// Whether the engine printed `message`, wherever it wrapped the lines.
fn says(output: &EngineOutput, message: &str) -> bool {
    let flat = output.combined().split_whitespace().collect::<Vec<_>>().join(" ");
    flat.contains(message)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
