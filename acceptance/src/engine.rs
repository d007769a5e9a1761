//! The real engine (Terraform or OpenTofu), run as a user runs it: installed providers come from
//! the project's mirror (unpacked, `dist/terraformrc-unpacked`, unless [`Engine::from_archives`]),
//! never from `dev_overrides`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::engine_info::{EngineInfo, engine_info};
use crate::{mirror, requests};

/// What one run of the engine (or kubectl) printed, and how it ended.
#[derive(Debug, Clone)]
pub struct EngineOutput {
    /// The exit code; 128 + N when the process was ended by signal N.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Engine output with the diagnostic box drawing and line wrapping taken out, so a message
/// can be looked for whatever the terminal width.
pub fn flat(text: &str) -> String {
    text.replace(['│', '╷', '╵'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

impl EngineOutput {
    /// Both streams, [`flat`]tened.
    pub fn flat(&self) -> String {
        flat(&self.combined())
    }

    pub fn success(&self) -> bool {
        self.code == 0
    }

    /// Stdout then stderr, for assertions on a message wherever it was printed.
    pub fn combined(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

impl std::fmt::Display for EngineOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Commands that accept `-no-color` (it must follow the command name).
const NO_COLOR_COMMANDS: [&str; 12] = [
    "init", "validate", "plan", "apply", "destroy", "refresh", "import", "show", "output", "console",
    "taint", "untaint",
];

/// Runs a blocking program with a deadline, capturing its output.
pub(crate) fn run_command(mut command: Command, timeout: Duration) -> EngineOutput {
    // Not while another test counts the requests it makes (see `requests`).
    let _traffic = requests::shared();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    collect(child, timeout, &command)
}

/// What `child` (started with its stdout and stderr piped) prints until it ends, and how it
/// ended; killed when it still runs after `timeout`, which its stderr then says, naming `what`.
pub fn collect(child: Child, timeout: Duration, what: &dyn std::fmt::Debug) -> EngineOutput {
    Running::of(child).finish(timeout, what)
}

/// A process started with its stdout and stderr piped, whose output can be watched while it
/// runs (e.g. an engine's progress lines) before it is collected.
pub struct Running {
    child: Child,
    stdout: Captured,
    stderr: Captured,
}

/// What one pipe has printed so far, and the thread reading it.
struct Captured {
    text: Arc<Mutex<Vec<u8>>>,
    reader: thread::JoinHandle<()>,
}

impl Captured {
    fn of(pipe: Option<impl Read + Send + 'static>) -> Captured {
        let text = Arc::new(Mutex::new(Vec::new()));
        let sink = text.clone();
        let reader = thread::spawn(move || {
            let Some(mut pipe) = pipe else { return };
            let mut chunk = [0u8; 8192];
            // A read error ends the capture; the exit code tells the rest.
            while let Ok(n) = pipe.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock().expect("capture lock").extend_from_slice(&chunk[..n]);
            }
        });
        Captured { text, reader }
    }

    fn so_far(&self) -> String {
        String::from_utf8_lossy(&self.text.lock().expect("capture lock")).into_owned()
    }

    fn into_text(self) -> String {
        self.reader.join().expect("a pipe reader");
        String::from_utf8_lossy(&self.text.lock().expect("capture lock")).into_owned()
    }
}

impl Running {
    /// Starts capturing `child`'s piped output.
    pub fn of(mut child: Child) -> Running {
        Running {
            stdout: Captured::of(child.stdout.take()),
            stderr: Captured::of(child.stderr.take()),
            child,
        }
    }

    /// What it printed so far, stdout then stderr, [`flat`]tened.
    pub fn output_so_far(&self) -> String {
        flat(&format!("{}{}", self.stdout.so_far(), self.stderr.so_far()))
    }

    /// Waits until its output (flattened) contains `text`: true, or false when it ended or
    /// `timeout` passed first.
    pub fn wait_for_output(&mut self, text: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.output_so_far().contains(text) {
                return true;
            }
            let ended = self
                .child
                .try_wait()
                .expect("waiting for a child process")
                .is_some();
            if ended || Instant::now() >= deadline {
                // One last look: the line may have come with the end.
                return self.output_so_far().contains(text);
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    pub fn interrupt(&self) {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) on a child we started and have not reaped.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0, "SIGINT to {pid}");
    }

    /// Waits for it to end and returns what it printed; killed when it still runs after
    /// `timeout`, which its stderr then says, naming `what`.
    pub fn finish(mut self, timeout: Duration, what: &dyn std::fmt::Debug) -> EngineOutput {
        let deadline = Instant::now() + timeout;
        let mut timed_out = false;
        let status = loop {
            match self.child.try_wait().expect("waiting for a child process") {
                Some(status) => break status,
                None if Instant::now() >= deadline => {
                    timed_out = true;
                    // Already exited between the check and the kill: fine, wait() collects it.
                    let _ = self.child.kill();
                    break self.child.wait().expect("waiting for a killed child process");
                }
                None => thread::sleep(Duration::from_millis(20)),
            }
        };
        use std::os::unix::process::ExitStatusExt;
        let code = status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
        let mut stderr = self.stderr.into_text();
        if timed_out {
            stderr.push_str(&format!("\n[acceptance] killed after {timeout:?}: {what:?}\n"));
        }
        EngineOutput {
            code,
            stdout: self.stdout.into_text(),
            stderr,
        }
    }
}

/// The engine in one working directory, with the environment a test gives it.
#[derive(Debug, Clone)]
pub struct Engine {
    info: EngineInfo,
    workdir: PathBuf,
    envs: Vec<(String, String)>,
    timeout: Duration,
}

impl Engine {
    /// The engine ([`engine_info`]: `$ENGINE`, else the Terraform `make setup` installed) in
    /// `workdir`. Builds and packs the providers first (once per test process).
    pub fn new(workdir: &Path) -> Engine {
        Engine::of(engine_info(), workdir)
    }

    /// The engine `info` describes in `workdir`, whichever engine the run uses otherwise.
    pub fn of(info: &EngineInfo, workdir: &Path) -> Engine {
        let cli_config = mirror::ensure();
        let cli_config = cli_config.to_string_lossy();
        let envs = [
            ("TF_CLI_CONFIG_FILE", cli_config.as_ref()),
            ("TF_IN_AUTOMATION", "1"),
            ("TF_INPUT", "0"),
        ];
        Engine {
            info: info.clone(),
            workdir: workdir.to_path_buf(),
            envs: envs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            timeout: Duration::from_secs(300),
        }
    }

    /// Adds an environment variable for every run (e.g. `KUBECONFIG`, `TF_VAR_*`).
    pub fn env(mut self, key: &str, val: &str) -> Engine {
        self.envs.push((key.to_string(), val.to_string()));
        self
    }

    /// Installs the providers from the mirror's archives (`dist/terraformrc`), as users do,
    /// instead of the unpacked layout the tests use otherwise.
    pub fn from_archives(self) -> Engine {
        let config = mirror::archives();
        self.env("TF_CLI_CONFIG_FILE", &config.to_string_lossy())
    }

    /// How long one run may take before it is killed (default 300 s).
    pub fn timeout(mut self, timeout: Duration) -> Engine {
        self.timeout = timeout;
        self
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Which engine this is.
    pub fn info(&self) -> &EngineInfo {
        &self.info
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.info.program);
        command.current_dir(&self.workdir);
        // Providers must come from the mirror: a user's plugin cache would bypass it.
        command.env_remove("TF_PLUGIN_CACHE_DIR");
        command.envs(self.envs.iter().map(|(k, v)| (k, v)));
        match args.split_first() {
            Some((first, rest)) if NO_COLOR_COMMANDS.contains(first) => {
                command.arg(first).arg("-no-color").args(rest);
            }
            _ => {
                command.args(args);
            }
        }
        command
    }

    /// Runs the engine to completion (stdin closed, colours off).
    pub fn run(&self, args: &[&str]) -> EngineOutput {
        run_command(self.command(args), self.timeout)
    }

    /// Starts the engine in the background, its output watched as it comes ([`Running`]).
    pub fn start(&self, args: &[&str]) -> Running {
        Running::of(self.spawn(args))
    }

    /// Starts the engine with stdout and stderr piped, e.g. to kill it mid-apply; [`collect`]
    /// reads what it printed.
    pub fn spawn(&self, args: &[&str]) -> Child {
        let mut command = self.command(args);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"))
    }

    /// `init -input=false`: installs the providers from the mirror.
    pub fn init(&self) -> EngineOutput {
        self.run(&["init", "-input=false"])
    }

    /// `plan -out=<file> <extra>`, then `show -json <file>` when the plan was written.
    pub fn plan_json(&self, extra: &[&str]) -> (EngineOutput, Option<PlanSummary>) {
        let dir = tempfile::tempdir().expect("a temporary folder for the plan file");
        let plan_file = dir.path().join("plan.tfplan");
        let out_arg = format!("-out={}", plan_file.display());
        let mut args = vec!["plan", "-input=false", out_arg.as_str()];
        args.extend_from_slice(extra);
        let plan = self.run(&args);
        if !plan_file.exists() {
            return (plan, None);
        }
        let show = self.run(&["show", "-json", &plan_file.to_string_lossy()]);
        assert!(show.success(), "show -json of a written plan failed:\n{show}");
        let raw = serde_json::from_str(&show.stdout)
            .unwrap_or_else(|e| panic!("show -json printed no JSON ({e}):\n{show}"));
        (plan, Some(PlanSummary::from_json(raw)))
    }
}

/// A saved plan as `show -json` describes it.
#[derive(Debug, Clone)]
pub struct PlanSummary {
    pub raw: serde_json::Value,
    /// Every resource change: its address and actions (e.g. `["create"]`, `["delete","create"]`).
    pub changes: Vec<(String, Vec<String>)>,
}

impl PlanSummary {
    pub fn from_json(raw: serde_json::Value) -> PlanSummary {
        let changes = raw["resource_changes"]
            .as_array()
            .map(|changes| {
                changes
                    .iter()
                    .map(|change| {
                        let address = change["address"].as_str().unwrap_or_default().to_string();
                        let actions = change["change"]["actions"]
                            .as_array()
                            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                            .unwrap_or_default();
                        (address, actions)
                    })
                    .collect()
            })
            .unwrap_or_default();
        PlanSummary { raw, changes }
    }

    /// The actions planned for `address`, if the plan mentions it.
    pub fn actions(&self, address: &str) -> Option<&[String]> {
        self.changes
            .iter()
            .find(|(a, _)| a == address)
            .map(|(_, actions)| actions.as_slice())
    }

    /// How many resources have `action` among their actions (a replace counts as both).
    pub fn count(&self, action: &str) -> usize {
        self.changes
            .iter()
            .filter(|(_, actions)| actions.iter().any(|a| a == action))
            .count()
    }

    /// True when no resource changes: every action is `no-op` or `read`.
    pub fn is_empty(&self) -> bool {
        self.changes
            .iter()
            .all(|(_, actions)| actions.iter().all(|a| a == "no-op" || a == "read"))
    }
}
