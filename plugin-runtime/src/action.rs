//! Actions (`action "type" "name" { config { … } }`, Terraform 1.14 and later): operations a
//! provider carries out on request, with no state of their own. The engine runs one when a
//! resource's `lifecycle { action_trigger { … } }` fires (before or after its create or
//! update), or ad hoc with `terraform apply -invoke=action.<type>.<name>`.
//!
//! Planning checks the configuration, whose values may still be unknown; invoking does the
//! work and reports [`Progress`] lines while it goes, then its outcome as diagnostics (an error
//! fails the apply). As with resources, the trait sees plain [`Value`]s only. OpenTofu has no
//! actions; nothing else depends on them.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::diagnostics::Diagnostics;
use crate::schema::Schema;
use crate::value::Value;

/// One action type.
#[async_trait]
pub trait Action: Send + Sync + 'static {
    /// The type name, e.g. `kubernetes_rollout_restart`.
    fn type_name(&self) -> &'static str;

    /// The schema of the action block's `config` body.
    fn schema(&self) -> Schema;

    /// Checks a configuration; values may be unknown.
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// Checks an invocation while the engine plans it (the provider is configured by then);
    /// values may still be unknown. The default is [`Action::validate`].
    async fn plan(&self, config: &Value) -> Diagnostics {
        self.validate(config)
    }

    /// Carries out the action for a wholly known configuration, reporting progress as it goes.
    /// Errors in the result fail the run.
    async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics;
}

/// Run an action.
#[derive(Clone, Debug)]
pub struct InvokeRequest {
    /// The action type called.
    pub type_name: String,
    /// The wholly known `config` body.
    pub config: Value,
}

/// Where an invocation reports how it is getting on: short lines the engine shows as they
/// come. They are paced so that a busy loop cannot flood the engine's output: at most one a
/// [`Progress::INTERVAL`], a line equal to the last one sent is dropped, and a line held back
/// by the pace goes out when the next one may (if no newer line replaced it) or right before
/// the outcome. Lines are cut to [`Progress::MAX_CHARS`] characters, on one line.
pub struct Progress {
    sink: Box<dyn Fn(String) + Send + Sync>,
    interval: Duration,
    paced: Mutex<Paced>,
}

#[derive(Default)]
struct Paced {
    /// The last line sent, and when.
    sent: Option<(String, Instant)>,
    /// The newest line the pace held back.
    held: Option<String>,
}

impl Progress {
    /// The shortest time between two lines.
    pub const INTERVAL: Duration = Duration::from_secs(1);
    /// The longest line, in characters.
    pub const MAX_CHARS: usize = 160;

    /// Progress whose lines go to `sink`, paced by `interval`.
    pub fn new(interval: Duration, sink: impl Fn(String) + Send + Sync + 'static) -> Progress {
        Progress {
            sink: Box::new(sink),
            interval,
            paced: Mutex::new(Paced::default()),
        }
    }

    /// Reports `line` (see the type's documentation for what is sent when).
    pub fn report(&self, line: impl Into<String>) {
        let line = shorten(&line.into());
        let mut paced = self.paced.lock().unwrap_or_else(|e| e.into_inner());
        if paced.sent.as_ref().is_some_and(|(last, _)| *last == line) {
            paced.held = None;
            return;
        }
        let now = Instant::now();
        match &paced.sent {
            Some((_, at)) if now.duration_since(*at) < self.interval => paced.held = Some(line),
            _ => self.send(&mut paced, line, now),
        }
    }

    /// Sends the line the pace held back, if any: before the outcome.
    pub fn flush(&self) {
        let mut paced = self.paced.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(line) = paced.held.take() {
            self.send(&mut paced, line, Instant::now());
        }
    }

    fn send(&self, paced: &mut Paced, line: String, now: Instant) {
        paced.held = None;
        paced.sent = Some((line.clone(), now));
        (self.sink)(line);
    }
}

/// `text` on one line, at most [`Progress::MAX_CHARS`] characters (the last one `…` when cut).
fn shorten(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= Progress::MAX_CHARS {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(Progress::MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn collecting(interval: Duration) -> (Progress, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let progress = Progress::new(interval, move |line| sink.lock().unwrap().push(line));
        (progress, lines)
    }

    #[test]
    fn a_burst_sends_its_first_line_and_holds_the_newest_for_the_end() {
        let (progress, lines) = collecting(Duration::from_secs(3600));
        for i in 0..100 {
            progress.report(format!("step {i}"));
        }
        assert_eq!(*lines.lock().unwrap(), ["step 0"]);
        progress.flush();
        assert_eq!(*lines.lock().unwrap(), ["step 0", "step 99"]);
        progress.flush();
        assert_eq!(lines.lock().unwrap().len(), 2, "a flush sends a held line once");
    }

    #[test]
    fn repeated_lines_are_dropped_and_a_held_line_goes_when_the_pace_allows() {
        let (progress, lines) = collecting(Duration::from_millis(50));
        progress.report("waiting");
        progress.report("waiting");
        progress.report("almost");
        // Back to the line already sent: the held one is stale, nothing is owed.
        progress.report("waiting");
        progress.flush();
        assert_eq!(*lines.lock().unwrap(), ["waiting"]);
        std::thread::sleep(Duration::from_millis(60));
        progress.report("done");
        assert_eq!(*lines.lock().unwrap(), ["waiting", "done"]);
    }

    #[test]
    fn lines_are_short_and_single() {
        let (progress, lines) = collecting(Duration::ZERO);
        progress.report("two\nlines");
        progress.report("x".repeat(500));
        let lines = lines.lock().unwrap();
        assert_eq!(lines[0], "two lines");
        assert_eq!(lines[1].chars().count(), Progress::MAX_CHARS);
        assert!(lines[1].ends_with('…'));
    }
}
